// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The attach session: check, load, attach per process, consume the ring
 * buffer, hand closed segments to the writer thread, detach, report.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "attach/session_wiring.h"
#include "attach/attach.h"
#include "attach/attach_run.h"
#include "attach/cuda_hook_attach.h"
#include "attach/cut_gate.h"
#include "attach/progress.h"
#include "attach/py_request.h"
#include "attach/pystack_attach.h"
#include "attach/session_regions.h"
#include "attach/stall_watch.h"
#include "probes/bpf_setup.h"
#include "pipeline/pystack.h"
#include "pipeline/drops.h"
#include "pipeline/events.h"
#include "pipeline/windows.h"
#include "attach/follow.h"
#include "pipeline/ring_consume.h"
#include "pipeline/seg_close.h"
#include "proc/inject/inject.h"
#include "util/log.h"
#include "util/serial_arm.h"
#include "pipeline/torch/torch_events.h"
#include "util/file/cache_drop.h"
#include "output/manifest.h"
#include "output/earlier_run.h"
#include "util/file/output_files.h"
#include "attach/preflight.h"
#include "output/exit_report.h"
#include "output/stale_tmp.h"
#include "proc/elf/symbolizer.h"
#include "proc/torch/torch_layout.h"
#include "attach/target.h"
#include "pipeline/py_status.h"
#include "pipeline/torch/callback_ops.h"
#include "probes/torch_probes.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	if (stop_requested) {
		/* Second signal: leave now; closing our fds detaches every probe.
		 * A torch layout measurement would outlive us: killed first. */
		torch_layout_kill_now();
		signal(sig, SIG_DFL);
		raise(sig);
	}
	stop_requested = 1;
}

static int setup_epoll(struct session *s)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int i;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	ev.data.u32 = UINT32_MAX; /* the ring buffer */
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, ring_buffer__epoll_fd(s->rb), &ev))
		return -errno;
	for (i = 0; i < s->ntargets; i++) {
		if (s->targets[i].pidfd < 0)
			continue;
		ev.data.u32 = (uint32_t)i;
		if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->targets[i].pidfd, &ev))
			return -errno;
	}
	return 0;
}

/*
 * Whose -n need not wait: a process without a rank in its environment
 * beside others that have one (torchrun's agent, srun's helpers, a shell),
 * as long as it has opened no segment.  The ranks, and every process of
 * an attach where none has a rank, are waited for.
 */
static bool exempt_from_n(const struct session *s, const struct session_target *t)
{
	int i;

	if (t->proc->rank_from_env || t->tracker->counted || t->tracker->cur || t->tracker->held_child)
		return false;
	for (i = 0; i < s->ntargets; i++)
		if (s->targets[i].proc->rank_from_env)
			return true;
	return false;
}

static bool all_done(struct session *s, const struct attach_opts *o)
{
	bool limited = o->max_segments || o->schedule.set;
	int i;

	/* A followed tree may start, restart or fork more processes: without
	 * -n it ends when all of them are gone (or -d, or Ctrl-C); with it,
	 * once its ranks have their segments and none is still starting. */
	if (s->follow && (limited ? follow_ranks_pending(s) : !follow_tree_gone(s)))
		return false;
	for (i = 0; i < s->ntargets; i++) {
		struct session_target *t = &s->targets[i];

		if (t->held->n)
			return false;
		if (t->finished || cut_gate_target_done(t) || (limited && exempt_from_n(s, t)))
			continue;
		return false;
	}
	/* a followed tree with nothing traced yet waits for its processes */
	return !s->follow || s->ntargets || follow_tree_gone(s);
}

/* The longest the ends of a target and of the session read the ring for
 * (ring_drain()): their last records, unless fvbpf fell behind. */
#define RING_END_NS 2000000000ull

/* How long before a consume its BPF records are surely all in the ring. */
#define FAST_SETTLE_NS 2000000ull

/* The consumer loop: the ring is drained on a short timer, since BPF submits
 * records without waking us (see SUBMIT_FLAGS in the BPF code). */
static void run_loop(struct session *s, const struct attach_opts *o)
{
	uint64_t deadline = o->duration_s > 0 ?
		clock_ns(CLOCK_MONOTONIC) + (uint64_t)(o->duration_s * 1e9) : 0;
	struct epoll_event evs[16];
	bool behind = false;
	uint64_t settled;
	int n, i;

	progress_start();
	while (!stop_requested) {
		/* a pass that left records in the ring: the next one at once */
		n = epoll_wait(s->epfd, evs, 16, behind ? 0 : 20);
		/* The fast path's records go after BPF's, and only as far as
		 * BPF's are surely in the ring: a record is stamped a few µs
		 * before its submit.  One newer than that could overtake the
		 * region begin that holds it (the next tick takes it). */
		settled = clock_ns(CLOCK_MONOTONIC) - FAST_SETTLE_NS;
		behind = !ring_pass(s);
		for (i = 0; i < s->ntargets; i++) {
			cuda_hook_check(s, &s->targets[i]);
			callback_ops_drain(s, &s->targets[i], settled);
			target_shapes_tick(s, &s->targets[i]);
		}
		for (i = 0; i < n; i++) {
			struct session_target *t;

			if (evs[i].data.u32 == UINT32_MAX)
				continue;
			t = &s->targets[evs[i].data.u32];
			/* The target is gone: its last events are already in the ring. */
			ring_drain(s, RING_END_NS);
			log_info("PID %d exited", t->proc->pid);
			t->exited = true;
			follow_target_exited(s, t);
			target_finish(s, t, "exited");
			seg_close_release(t, true); /* no more GPU records will come */
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
		}
		if (s->api_probes && clock_ns(CLOCK_MONOTONIC) - s->last_scan_ns >= 1000000000ULL) {
			s->last_scan_ns = clock_ns(CLOCK_MONOTONIC);
			for (i = 0; i < s->ntargets; i++)
				if (!s->targets[i].finished && !s->targets[i].quiet)
					target_scan_cuda(s, &s->targets[i], false);
		}
		cut_gate_tick(s);
		follow_tick(s);
		progress_tick(s);
		stall_watch_tick(s);
		for (i = 0; i < s->ntargets; i++)
			py_status_tick(&s->targets[i], clock_ns(CLOCK_MONOTONIC));
		for (i = 0; i < s->ntargets; i++)
			window_idle_cut(s, &s->targets[i]);
		for (i = 0; i < s->ntargets; i++) {
			if (s->targets[i].held->n)
				seg_close_release(&s->targets[i], false);
			if (!s->targets[i].quiet && cut_gate_target_done(&s->targets[i]))
				target_quiet(&s->targets[i]);
		}
		if (deadline && clock_ns(CLOCK_MONOTONIC) >= deadline) {
			log_info("duration of %.1f s reached", o->duration_s);
			break;
		}
		if (all_done(s, o))
			break;
	}
	progress_stop();
}

/*
 * --record-shapes: a torch build's measurement still running when the
 * attach ends by -d (or -n) is let finish, so that its cache spares the
 * next attach the 6-7 s: at most FINISH_MEASURE_NS more, and not after a
 * Ctrl-C (the user wants out).
 */
#define FINISH_MEASURE_NS (15ull * 1000000000ull)

static void finish_measurements(struct session *s)
{
	uint64_t until = clock_ns(CLOCK_MONOTONIC) + FINISH_MEASURE_NS;
	bool said = false, any;
	int i;

	while (!stop_requested && clock_ns(CLOCK_MONOTONIC) < until) {
		any = false;
		for (i = 0; i < s->ntargets; i++) {
			struct session_target *t = &s->targets[i];

			if (!t->torchp->plans_job || t->exited)
				continue;
			if (!said)
				log_info("finishing the torch build's layout measurement for the next "
					 "attach's cache (Ctrl-C again to skip it)");
			said = true;
			target_shapes_tick(s, t);
			any |= t->torchp->plans_job != NULL;
		}
		if (!any)
			return;
		usleep(20000);
	}
}

/* CLOCK_MONOTONIC and CLOCK_REALTIME as close together as this machine
 * reads them: the narrowest of a few tries, and how narrow it was. */
static void clock_pair_read(uint64_t *mono, uint64_t *real, uint64_t *span)
{
	uint64_t a, r, b;
	int i;

	*span = UINT64_MAX;
	for (i = 0; i < 5; i++) {
		a = clock_ns(CLOCK_MONOTONIC);
		r = clock_ns(CLOCK_REALTIME);
		b = clock_ns(CLOCK_MONOTONIC);
		if (b - a < *span) {
			*span = b - a;
			*mono = a + (b - a) / 2;
			*real = r;
		}
	}
}

static void init_meta(struct session *s)
{
	clock_pair_read(&s->meta.mono_at_start_ns, &s->meta.real_at_start_ns,
			&s->meta.read_span_start_ns);
	if (gethostname(s->meta.hostname, sizeof(s->meta.hostname) - 1))
		snprintf(s->meta.hostname, sizeof(s->meta.hostname), "unknown");
}

void session_free(struct session *s)
{
	int i;

	for (i = 0; i < s->ntargets; i++)
		target_free(&s->targets[i]);
	follow_free(s);
	stall_watch_free(s);
	for (i = 0; i < 3; i++)
		bpf_link__destroy(s->tree_links[i]);
	seg_writer__free(s->writer);
	s->writer = NULL;
	ring_buffer__free(s->rb);
	if (s->epfd > 0)
		close(s->epfd);
	bpf_setup_destroy(s->skel);
	free(s->targets);
	if (s->sym)
		symbolizer_free(s->sym);
	torch_table__free(s->torch);
	s->torch = NULL;
	torch_layout_end(); /* no measurement outlives the session */
	addr_cache_free(&s->fast_ids);
	pystack_session_free(s);
	name_table_free(&s->knames);
	free(s->region_list);
	free(s->torch_copy);
	registry__free(s->reg);
	s->reg = NULL;
}

/*
 * --max-memory: what is left for segments once everything else is set up
 * (BTF, skeleton, probes, symbol tables read so far).  Too little is a
 * usage error, said before a single event is traced.
 */
/* FastVideo's boolean variables: "1", "true", "yes" (any case) turn them on. */
static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcasecmp(v, "yes"));
}

/* --max-memory against what fvbpf holds now (@when: "after setup", or
 * "already" for the check before any target is touched). */
static int memory_fits(struct budget *m, const struct attach_opts *o, const char *when)
{
	uint64_t mib = 1ULL << 20;

	if (!budget_setup(m, o->max_memory, (uint64_t)o->ringbuf_mb * mib))
		return 0;
	log_error("--max-memory %llu MiB leaves %llu MiB for segments: fvbpf holds %llu MiB (RSS) "
		  "%s plus %llu MiB for buffers (the %u MiB ring buffer counts twice), and segments "
		  "need %llu MiB; give at least --max-memory %lluM or a smaller --ringbuf-size",
		  (unsigned long long)(o->max_memory / mib), (unsigned long long)(m->budget / mib),
		  (unsigned long long)(m->rss_setup / mib), when,
		  (unsigned long long)(m->slack / mib), o->ringbuf_mb,
		  (unsigned long long)(BUDGET_MIN / mib),
		  (unsigned long long)(budget_least(m) / mib + 1));
	return -ENOSPC;
}

static int session_memory_setup(struct session *s, const struct attach_opts *o)
{
	if (memory_fits(&s->mem, o, "after setup"))
		return -ENOSPC;
	/* what the target names and the stacks it runs: within their share */
	name_table_set_charge(&s->knames, &s->mem.tables_charge);
	if (s->pystacks)
		s->pystacks->charge = &s->mem.tables_charge;
	return 0;
}

/*
 * The ring buffer when --ringbuf-size is not given: 8 MiB, 32 MiB for the
 * knobs that put shapes, stacks and allocations into it, twice that for a
 * job of several processes (one ring for all).  A --max-memory that cannot
 * hold it is refused before any process is touched (memory_fits): a ring
 * shrunk to fit would drop what the knobs asked for.
 */
static unsigned int ringbuf_auto(const struct attach_opts *o)
{
	unsigned int mb = o->record_shapes || o->with_stack || o->profile_memory ? 32 : 8;

	if (o->children || o->match || o->npids > 2)
		mb *= 2;
	return mb;
}

/* A directory with an earlier attach's files: refused before anything
 * touches a target, unless --overwrite. */
static int outdir_check_earlier(const struct attach_opts *o)
{
	int n = earlier_run_files(o->outdir, false);

	if (n <= 0 || o->overwrite)
		return 0;
	log_error("output directory %s holds %d file%s of an earlier attach (manifest.json, "
		  "trace_*, summary_*): give a new or empty -o, or --overwrite to remove them first",
		  o->outdir, n, n == 1 ? "" : "s");
	return -EEXIST;
}

static int outdir_clear_earlier(const struct attach_opts *o, char *err, size_t len)
{
	int n;

	if (!o->overwrite)
		return 0;
	n = earlier_run_files(o->outdir, true);
	if (n < 0) {
		snprintf(err, len, "--overwrite: cannot remove an earlier attach's files from %s: %s",
			 o->outdir, strerror(-n));
		return n;
	}
	if (n)
		log_info("removed %d file%s of an earlier attach from %s (--overwrite)", n,
			 n == 1 ? "" : "s", o->outdir);
	return 0;
}

/*
 * One of several processes could not be armed (it exited, a tracer holds
 * its markers, its library refused): it is left out, said, and the others
 * are traced.  -1 when none is left: the attach ends.
 */
static int leave_out(struct session *s, struct session_target *t)
{
	int i;

	t->finished = true;
	t->exited = !proc_alive(t->proc->pid);
	target_detach(t);
	for (i = 0; i < s->ntargets; i++)
		if (!s->targets[i].finished)
			break;
	if (i == s->ntargets) {
		if (s->ntargets > 1)
			log_error("none of the %d processes could be armed (above): nothing is traced",
				  s->ntargets);
		return -1;
	}
	log_warn("PID %d (%s) is left out: it could not be armed (the error above); the other "
		 "processes are traced", t->proc->pid, t->proc->comm);
	return 0;
}

/* The BPF object for these options and the regions enabled: bpf_setup()
 * takes what it needs of them; the session keeps what it made. */
static int session_bpf_setup(struct session *s, const struct attach_opts *o)
{
	struct bpf_setup_region *regions = calloc(s->reg->count ? s->reg->count : 1, sizeof(*regions));
	struct bpf_setup_opts bo = {
		.ringbuf_mb = o->ringbuf_mb, .tree = o->children || o->match,
		.report_all_execs = o->match != NULL,
		.record_shapes = o->record_shapes || o->with_flops,
		.py_wanted = s->pystacks != NULL, .regions = regions,
	};
	struct bpf_setup_result r;
	unsigned int i;
	int err;

	if (!regions) {
		log_error("out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < s->reg->count; i++)
		if (s->reg->defs[i].enabled)
			regions[bo.nregions++] = (struct bpf_setup_region){
				.hash = s->reg->defs[i].hash, .id = i, .name = s->reg->defs[i].name };
	err = bpf_setup(&bo, &r);
	free(regions);
	s->skel = r.skel;
	s->api_probes = r.api_probes;
	s->marker_multi = r.marker_multi;
	for (i = 0; i < 3; i++)
		s->tree_links[i] = r.tree_links[i];
	return err;
}

/* --inject: the library to load, found before anything is attached. */
static int session_inject_setup(struct session *s, const struct attach_opts *o)
{
	if (inject_find_library(o->inject_lib, s->inject_lib, sizeof(s->inject_lib))) {
		if (o->inject_lib)
			log_error("--inject-lib %s: no such regular file: give the path of libfvbpf.so",
				  o->inject_lib);
		else
			log_error("--inject: no libfvbpf.so beside fvbpf (its directory, .. or ../lib): "
				  "give it with --inject-lib FILE");
		return -ENOENT;
	}
	s->inject = true;
	s->inject_timeout_s = o->inject_timeout_s > 0 ? o->inject_timeout_s : INJECT_TIMEOUT_DEFAULT;
	return 0;
}

int attach_run(const struct attach_opts *given)
{
	struct attach_opts opts = *given;
	const struct attach_opts *o = &opts;
	struct budget early;
	struct sigaction sa = { .sa_handler = on_signal };
	struct session s = { .epfd = -1, .cut_waiting = true };
	uint64_t arming_began = 0;
	struct seg_writer_opts wo;
	char err[512];
	unsigned int nerr;
	int i, ret = 1, werr;

	/* Before the first big allocation: see budget_tune_malloc(). */
	budget_tune_malloc();
	bpf_setup_log();
	name_table_init(&s.knames);
	s.reg = registry__new();
	s.torch = torch_table__new();
	if (!s.reg || !s.torch) {
		log_error("out of memory");
		goto cleanup;
	}
	torch_table_init(s.torch, &s.knames);
	s.torch_ops = !o->no_torch_ops;
	s.op_source = o->op_source;
	s.launch_source = o->launch_source;
	s.record_shapes = o->record_shapes;
	s.with_flops = o->with_flops;
	if (pystack_session_start(&s, o))
		goto cleanup; /* said why */
	s.profile_memory = o->profile_memory || env_on("FASTVIDEO_TORCH_PROFILER_WITH_PROFILE_MEMORY");
	s.step_by = o->step_by;
	s.schedule = o->schedule;
	s.sym = symbolizer_new();
	if (!s.sym) {
		log_error("out of memory");
		goto cleanup;
	}
	if (session_regions_setup(&s, o))
		goto cleanup;
	if (preflight_privileges() || preflight_btf())
		goto cleanup;
	if (!opts.ringbuf_mb) {
		opts.ringbuf_mb = ringbuf_auto(o);
		log_debug("ring buffer %u MiB (for the knobs asked and the processes)", opts.ringbuf_mb);
	}
	/* what fvbpf holds now only grows: refused before any target is touched */
	if (outdir_check_earlier(o) || memory_fits(&early, o, "already"))
		goto cleanup;
	if (o->inject && session_inject_setup(&s, o))
		goto cleanup;
	arming_began = clock_ns(CLOCK_MONOTONIC); /* BPF's load is in the arming */
	if (targets_check(&s, o))
		goto cleanup;
	if ((o->children || o->match) && follow_prepare(&s, o))
		goto cleanup;
	if (outdir_prepare(o->outdir, err, sizeof(err)) || outdir_clear_earlier(o, err, sizeof(err))) {
		log_error("%s", err);
		goto cleanup;
	}
	stale_tmp_clean(o->outdir);
	init_meta(&s);
	s.gpu_wait_ns = (uint64_t)(o->gpu_wait_s * 1e9);
	if (session_bpf_setup(&s, o))
		goto cleanup;
	torch_gates_preload(&s);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	wo = (struct seg_writer_opts){ .format = o->format, .record_shapes = o->record_shapes,
				       .with_flops = o->with_flops, .pystacks = s.pystacks,
				       .mem = &s.mem };
	werr = session_writer_start(&s, o->outdir, &wo);
	if (werr) {
		log_error("cannot start the writer in %s: %s", o->outdir, strerror(-werr));
		goto cleanup;
	}
	s.rb = ring_buffer__new(bpf_setup_map_fd(s.skel, FVBPF_MAP_EVENTS), events_ring_cb, &s, NULL);
	if (!s.rb) {
		log_error("cannot open the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	/* Every process's probes first, then their answers: the libraries
	 * answer together (target.c). */
	for (i = 0; i < s.ntargets; i++) {
		target_init(&s.targets[i], o->max_segments);
		if ((target_attach_begin(&s, &s.targets[i]) ||
		     (serial_arm() && target_attach_end(&s, &s.targets[i]))) &&
		    leave_out(&s, &s.targets[i]))
			goto cleanup;
	}
	for (i = 0; i < s.ntargets; i++)
		if (!s.targets[i].finished && target_attach_end(&s, &s.targets[i]) &&
		    leave_out(&s, &s.targets[i]))
			goto cleanup;
	if (setup_epoll(&s)) {
		log_error("cannot watch the targets: %s", strerror(errno));
		goto cleanup;
	}
	if (s.follow && follow_start(&s))
		goto cleanup;
	if (session_memory_setup(&s, o) || stall_watch_start(&s, o))
		goto cleanup;
	cut_gate_open(&s, o, arming_began);
	log_info("tracing %u region%s in %d process%s into %s; Ctrl-C to stop", s.nrequested,
		 s.nrequested == 1 ? "" : "s", s.ntargets, s.ntargets == 1 ? "" : "es", o->outdir);

	run_loop(&s, o);
	finish_measurements(&s);

	/* Cut what is still open; GPU records of closed segments may still be
	 * on their way, so the probes stay until they came or the wait ends. */
	s.ring_unread = !ring_drain(&s, RING_END_NS);
	for (i = 0; i < s.ntargets; i++)
		target_finish(&s, &s.targets[i], "was still");
	cut_gate_end(&s);
	seg_close_wait(&s);
	targets_detach_all(&s);
	s.ring_unread |= !ring_drain(&s, RING_END_NS);
	if (s.ring_unread)
		log_warn("fvbpf fell behind its targets: records still in the ring when it stopped "
			 "were not read; the last segments may lack their ends");
	/* Drops after the last segment closed: between segments. */
	for (i = 0; i < s.ntargets; i++)
		drops_settle(s.targets[i].loss, s.targets[i].tracker, target_drops(&s.targets[i]));
	for (i = 0; i < s.ntargets; i++)
		seg_close_release(&s.targets[i], true);
	seg_writer_stop(s.writer);
	clock_pair_read(&s.meta.mono_at_end_ns, &s.meta.real_at_end_ns, &s.meta.read_span_end_ns);
	report_print(&s, o);
	follow_report(&s);
	stall_watch_report(&s);
	if (manifest_write(&s, o))
		log_warn("cannot write %s/manifest.json", o->outdir);
	cache_drop_flush();
	ret = 0;
	nerr = seg_writer_write_errors(s.writer);
	if (nerr) {
		werr = seg_writer_first_error(s.writer);
		log_error("%u segment%s could not be written to %s: %s", nerr, nerr == 1 ? "" : "s",
			  o->outdir, werr == -ENOSPC ? "disk full; free space or choose another -o"
						  : strerror(-werr));
		ret = 1;
	}
	if (s.follow && !s.ntargets) {
		log_error("no process of the followed tree mapped fvbpf markers or libtorch_cpu: "
			  "nothing was traced (see \"followed\" in %s/manifest.json)", o->outdir);
		ret = 1;
	}
cleanup:
	session_free(&s);
	return ret;
}
