// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The attach session: check, load, attach per process, consume the ring
 * buffer, hand closed segments to the writer thread, detach, report.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "api_pairing.h"
#include "cuda_api.h"
#include "uprobe_multi.h"
#include "fvbpf.skel.h"
#include "grow.h"
#include "log.h"
#include "manifest.h"
#include "output_files.h"
#include "over_limits.h"
#include "preflight.h"
#include "proc_info.h"
#include "registry.h"
#include "seg_writer.h"
#include "segment.h"
#include "session.h"
#include "symbolizer.h"
#include "text_sanitize.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	if (stop_requested) {
		/* Second signal: leave now; closing our fds detaches every probe. */
		signal(sig, SIG_DFL);
		raise(sig);
	}
	stop_requested = 1;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_verbosity < 2)
		return 0;
	if (level == LIBBPF_INFO && log_verbosity < 1)
		return 0;
	return log_libbpf(fmt, ap); /* cleaned: libbpf names the target's files */
}

static struct session_target *find_target(struct session *s, uint32_t tgid)
{
	int i;

	for (i = 0; i < s->ntargets; i++)
		if ((uint32_t)s->targets[i].proc.pid == tgid)
			return &s->targets[i];
	return NULL;
}

static uint64_t proc_drops(struct session *s, uint32_t slot)
{
	struct fvbpf_proc_state st;

	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.procs), &slot, &st))
		return 0;
	return st.drops;
}

static bool segment_waits(const struct session_target *t, const struct segment *seg)
{
	return !t->agent_heard || (t->agent_active && gpu_join_missing(seg));
}

static void submit_segment(struct session_target *t, struct segment *seg)
{
	snprintf(seg->gpu_status, sizeof(seg->gpu_status), "%s", t->gpu_status);
	seg->gpu_clock = t->gpu_clock;
	seg->cupti_dropped = t->cupti_dropped;
	seg->gpu_missing = gpu_join_missing(seg);
	t->gpu_missing += seg->gpu_missing;
	gpu_join_forget(&t->gpu, seg);
	if (seg_writer_submit(&t->session->writer, seg, &t->proc))
		log_warn("out of memory queueing segment of pid %d", t->proc.pid);
}

static int hold_segment(struct session_target *t, struct segment *seg)
{
	if (grow_one(&t->pending, t->npending, &t->cappending, sizeof(*t->pending), 8))
		return -ENOMEM;
	t->pending[t->npending].seg = seg;
	t->pending[t->npending].until = now_ns(CLOCK_MONOTONIC) + t->session->gpu_wait_ns;
	t->npending++;
	return 0;
}

/* Write held segments that are whole, or whose wait is over (@force: all). */
static void release_pending(struct session_target *t, bool force)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	size_t i = 0;

	while (i < t->npending) {
		if (!force && segment_waits(t, t->pending[i].seg) && now < t->pending[i].until) {
			i++;
			continue;
		}
		submit_segment(t, t->pending[i].seg);
		t->npending--;
		memmove(&t->pending[i], &t->pending[i + 1], (t->npending - i) * sizeof(*t->pending));
	}
}

/* Where segment @seq of a target is, for GPU records that arrive late. */
static struct segment *find_segment(void *ctx, uint32_t seq)
{
	struct session_target *t = ctx;
	size_t i;

	if (t->tracker.cur && t->tracker.cur->seq == seq)
		return t->tracker.cur;
	for (i = 0; i < t->npending; i++)
		if (t->pending[i].seg->seq == seq)
			return t->pending[i].seg;
	return NULL;
}

static void on_segment_closed(struct segment *seg, void *ctx)
{
	struct session_target *t = ctx;
	uint64_t drops = proc_drops(t->session, (uint32_t)(t - t->session->targets));

	seg->drops = drops - t->drops_seen;
	t->drops_seen = drops;
	t->segments++;
	if (seg->incomplete)
		t->incomplete++;
	log_debug("pid %d: segment %u (%s) closed, %zu slices%s", seg->pid, seg->seq,
		  t->session->reg.defs[seg->region].name, seg->nslices,
		  seg->incomplete ? ", incomplete" : "");
	/* Its GPU records come later (the agent flushes when the outermost
	 * region ends), and the agent may not have said yet whether it runs:
	 * wait for both, for a bounded time. */
	if (!t->exited && segment_waits(t, seg) && hold_segment(t, seg) == 0)
		return;
	submit_segment(t, seg);
}

static void resync(struct session_target *t, uint64_t ts)
{
	if (!t->resyncs++)
		log_warn("PID %d: a ring-buffer drop lost a region end; the segment is cut there and "
			 "written as incomplete (raise --ringbuf-size)", t->proc.pid);
	seg_tracker_finish(&t->tracker, ts);
	t->tracker.depth = 0;
}

/* What the in-process agent could or could not do. */
static void handle_status(struct session_target *t, const struct fvbpf_agent_status_event *ev)
{
	char msg[FVBPF_STATUS_MSG + 1], status[sizeof(t->gpu_status)];

	memcpy(msg, ev->msg, FVBPF_STATUS_MSG);
	msg[FVBPF_STATUS_MSG] = '\0';
	t->agent_heard = true;
	switch (ev->code) {
	case FVBPF_AGENT_ACTIVE:
		t->agent_active = true;
		t->gpu_clock = ev->detail;
		snprintf(t->gpu_status, sizeof(t->gpu_status), "cupti");
		log_info("PID %d: GPU activity on: %s, clock %s", t->proc.pid, msg,
			 ev->detail == FVBPF_CLOCK_CALLBACK ? "CLOCK_MONOTONIC callback" :
			 "calibrated against cuptiGetTimestamp");
		return;
	case FVBPF_AGENT_DROPPED:
		t->cupti_dropped += (uint64_t)ev->value;
		break;
	default:
		t->agent_active = false;
		snprintf(status, sizeof(status), "unavailable: %s", msg);
		/* The target's text, kept clean for the report and every file. */
		text_clean_terminal(t->gpu_status, sizeof(t->gpu_status), status);
		break;
	}
	/* One warning per kind of trouble and process. */
	if (ev->code < 32 && !(t->status_warned & (1u << ev->code))) {
		t->status_warned |= 1u << ev->code;
		log_warn("PID %d: %s%s", t->proc.pid, msg, ev->code == FVBPF_AGENT_DROPPED ? "" :
			 "; no GPU time, CUDA calls are still traced");
	}
}

/* A thread's first marker since attach: which enabled regions were open. */
static int handle_sync(struct session *s, struct session_target *t,
		       const struct fvbpf_sync_event *ev)
{
	char name[FVBPF_NAME_LEN + 1];
	uint32_t i;
	int idx, err;

	if (ev->depth > ev->nnames && !t->deep_stack_warned) {
		t->deep_stack_warned = true;
		log_warn("PID %d thread %u had %u regions open when fvbpf attached; only the outer %u "
			 "are known", t->proc.pid, ev->hdr.tid, ev->depth, ev->nnames);
	}
	for (i = 0; i < ev->nnames && i < FVBPF_SYNC_NAMES; i++) {
		memcpy(name, ev->names[i], FVBPF_NAME_LEN);
		name[FVBPF_NAME_LEN] = '\0';
		idx = registry_find(&s->reg, name);
		if (idx < 0 || !s->reg.defs[idx].enabled)
			continue;
		log_debug("pid %d: thread %u was inside %s when fvbpf attached", t->proc.pid,
			  ev->hdr.tid, s->reg.defs[idx].name);
		err = seg_on_open_before_attach(&t->tracker, ev->hdr.tid, (uint32_t)idx, t->attach_ns);
		if (err)
			return err;
	}
	return 0;
}

/* The kernel a host function names, symbolised once per address. */
static uint32_t kernel_of(struct session *s, struct session_target *t, uint64_t func)
{
	char name[512];
	uint32_t id;

	id = (uint32_t)addr_cache_get(&t->kernels, func);
	if (id)
		return id;
	if (symbolizer_lookup(s->sym, t->proc.pid, func, name, sizeof(name)))
		s->kernels_unknown++;
	id = name_table_intern(&s->knames, name);
	if (id)
		addr_cache_put(&t->kernels, func, id);
	return id;
}

static void record_call(struct session *s, struct session_target *t, struct api_call *c)
{
	const struct api_row *r = cuda_api_row(c->api_id);
	uint32_t id;
	int err;

	if (r && r->decoder == DEC_GET_KERNEL) {
		/* Plumbing, not shown: remember what the handle stands for. */
		if (c->out && !c->no_return && (id = kernel_of(s, t, c->args[1]))) {
			addr_cache_put(&t->kernels, c->out, id);
			t->kernel_handles++;
		}
		return;
	}
	if (r && (r->decoder == DEC_LAUNCH_RT || r->decoder == DEC_LAUNCH_RT_EXC))
		c->kernel = kernel_of(s, t, cuda_api_launch_func(c));
	err = seg_add_call(&t->tracker, c);
	if (err) {
		if (err == -ENOENT)
			t->calls_outside++; /* -ENOSPC: the segment counts it */
		return;
	}
	t->calls++;
	if (c->correlation)
		gpu_join_note_call(&t->gpu, c->correlation, t->tracker.cur->seq,
				   t->tracker.cur->ncalls - 1);
	if (c->correlation2)
		gpu_join_note_call(&t->gpu, c->correlation2, t->tracker.cur->seq,
				   t->tracker.cur->ncalls - 1);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	const struct fvbpf_event_hdr *h = data;
	const struct fvbpf_region_event *re = data;
	struct session *s = ctx;
	struct session_target *t;
	int err = 0;

	if (size < sizeof(*h) || h->version != FVBPF_EVENT_VERSION || h->size > size) {
		s->bad_records++;
		return 0;
	}
	t = find_target(s, h->tgid);
	if (!t) {
		s->bad_records++;
		return 0;
	}
	/* A finished process still gets its GPU records. */
	if (t->finished && h->type != FVBPF_EV_GPU_CHUNK && h->type != FVBPF_EV_AGENT_STATUS)
		return 0;
	switch (h->type) {
	case FVBPF_EV_REGION_BEGIN:
	case FVBPF_EV_REGION_END:
		if (size < sizeof(*re) || re->region_id >= s->reg.count) {
			s->bad_records++;
			return 0;
		}
		/* BPF's depth says an outermost begin while we still hold a
		 * segment open: a dropped record lost its end.  Only trusted
		 * after drops (without them, threads can reorder depths). */
		if (h->type == FVBPF_EV_REGION_BEGIN && re->depth == 1 && t->tracker.cur &&
		    t->drops_now > t->drops_seen)
			resync(t, h->ts_ns);
		if (h->type == FVBPF_EV_REGION_BEGIN) {
			s->reg.defs[re->region_id].entered++;
			err = seg_on_begin(&t->tracker, h->tid, re->region_id, h->ts_ns);
		} else {
			err = seg_on_end(&t->tracker, h->tid, re->region_id, h->ts_ns);
			if (!err && re->depth == 0 && t->tracker.cur && t->drops_now > t->drops_seen)
				resync(t, h->ts_ns);
		}
		break;
	case FVBPF_EV_API_ENTER:
		if (size < sizeof(struct fvbpf_api_enter)) {
			s->bad_records++;
			return 0;
		}
		/* Calls still open from before this segment lost their
		 * return to a drop: do not let them parent everything after. */
		if (t->drops_now && t->tracker.cur)
			api_pairing_drop_before(&t->pairing, h->tid, t->tracker.cur->start_ns);
		err = api_pairing_enter(&t->pairing, data);
		break;
	case FVBPF_EV_API_EXIT: {
		struct api_call call;

		if (size < sizeof(struct fvbpf_api_exit)) {
			s->bad_records++;
			return 0;
		}
		if (api_pairing_exit(&t->pairing, data, &call) == 1)
			record_call(s, t, &call);
		break;
	}
	case FVBPF_EV_CORRELATION: {
		const struct fvbpf_corr_event *ce = data;

		if (size < sizeof(*ce)) {
			s->bad_records++;
			return 0;
		}
		if (api_pairing_set_correlation(&t->pairing, h->tid, ce->correlation))
			t->corr_without_call++;
		break;
	}
	case FVBPF_EV_GPU_CHUNK: {
		const struct fvbpf_gpu_chunk *gc = data;

		if (size < sizeof(*gc) || gc->len > FVBPF_GPU_CHUNK) {
			s->bad_records++;
			return 0;
		}
		if (gc->index == 0)
			gpu_join_batch_start(&t->gpu);
		if (gpu_join_chunk(&t->gpu, gc->data, gc->len, gc->last) == -EINVAL)
			log_warn("PID %d: GPU record stream out of step (a ring-buffer drop?); "
				 "the rest of that batch is skipped", t->proc.pid);
		break;
	}
	case FVBPF_EV_AGENT_STATUS:
		if (size < sizeof(struct fvbpf_agent_status_event)) {
			s->bad_records++;
			return 0;
		}
		handle_status(t, data);
		break;
	case FVBPF_EV_THREAD_SYNC:
		if (size < sizeof(struct fvbpf_sync_event)) {
			s->bad_records++;
			return 0;
		}
		err = handle_sync(s, t, data);
		break;
	default:
		s->bad_records++;
	}
	if (err)
		log_warn("pid %d: cannot record region event: %s", t->proc.pid, strerror(-err));
	return 0;
}

static int check_targets(struct session *s, const struct attach_opts *o)
{
	struct session_target *t;
	int i, j, err;

	s->targets = calloc((size_t)o->npids, sizeof(*s->targets));
	if (!s->targets)
		return -ENOMEM;
	for (i = 0; i < o->npids; i++) {
		for (j = 0; j < s->ntargets; j++)
			if (s->targets[j].proc.pid == o->pids[i])
				break;
		if (j < s->ntargets)
			continue; /* the same PID twice */
		t = &s->targets[s->ntargets];
		t->session = s;
		t->pidfd = -1;
		err = proc_target_init(&t->proc, o->pids[i]);
		if (err == -ESRCH || err == -ENOENT) {
			log_error("no process with PID %d: check the PID (ps -p %d)", o->pids[i], o->pids[i]);
			return -ESRCH;
		}
		if (err) {
			log_error("cannot read /proc/%d: %s", o->pids[i], strerror(-err));
			return err;
		}
		err = proc_find_marker_lib(t->proc.pid, &t->proc.marker);
		if (err) {
			log_error("PID %d (%s) has no fvbpf markers mapped: link it with -lfvbpf, start it "
				  "with LD_PRELOAD=libfvbpf.so, or import fvbpf in Python before attaching",
				  t->proc.pid, t->proc.comm);
			return -ENOENT;
		}
		s->ntargets++;
	}
	/* Two targets with one rank would overwrite each other's files. */
	for (i = 0; i < s->ntargets; i++)
		for (j = 0; j < s->ntargets; j++)
			if (i != j && s->targets[i].proc.rank == s->targets[j].proc.rank)
				s->targets[i].proc.name_by_pid = true;
	return 0;
}

static int open_load(struct session *s, const struct attach_opts *o, bool with_api)
{
	int err;

	s->skel = fvbpf_bpf__open();
	if (!s->skel) {
		err = -errno;
		log_error("cannot open the BPF object: %s", strerror(errno));
		return err;
	}
	bpf_map__set_max_entries(s->skel->maps.events, o->ringbuf_mb << 20);
	if (with_api)
		bpf_program__set_expected_attach_type(s->skel->progs.api_call,
						      FVBPF_ATTACH_UPROBE_SESSION);
	else
		bpf_program__set_autoload(s->skel->progs.api_call, false);
	err = fvbpf_bpf__load(s->skel);
	if (err) {
		fvbpf_bpf__destroy(s->skel);
		s->skel = NULL;
	}
	return err;
}

/* Into the first of its two table slots that is free. */
static int place_region(int fd, uint64_t hash, uint32_t region)
{
	struct fvbpf_region_slot slot = { .hash = hash, .region_id = region }, cur;
	uint32_t keys[2] = { fvbpf_region_slot1(hash), fvbpf_region_slot2(hash) };
	int i;

	for (i = 0; i < 2; i++) {
		if (bpf_map_lookup_elem(fd, &keys[i], &cur))
			return -errno;
		if (cur.hash && cur.hash != hash)
			continue;
		return bpf_map_update_elem(fd, &keys[i], &slot, BPF_ANY) ? -errno : 0;
	}
	return -EEXIST;
}

static int setup_bpf(struct session *s, const struct attach_opts *o)
{
	unsigned int i;
	int err, fd;

	/* CUDA call probes are session uprobes (kernel 6.13+); without them
	 * fvbpf still traces regions. */
	s->api_probes = true;
	err = open_load(s, o, true);
	if (err && s->skel == NULL) {
		log_debug("loading with CUDA call probes failed: %s", strerror(-err));
		err = open_load(s, o, false);
		if (!err) {
			s->api_probes = false;
			log_warn("this kernel lacks session uprobes (Linux 6.13+): CUDA and NCCL "
				 "calls are not traced, regions are");
		}
	}
	if (err) {
		log_error("cannot load the BPF programs: %s (run with -vv for the verifier log)",
			  strerror(-err));
		return err;
	}
	if (s->api_probes && cuda_api_fill_cfg(bpf_map__fd(s->skel->maps.api_cfg))) {
		log_error("cannot fill the CUDA call table: %s", strerror(errno));
		return -errno;
	}
	fd = bpf_map__fd(s->skel->maps.enabled_regions);
	for (i = 0; i < s->reg.count; i++) {
		if (!s->reg.defs[i].enabled)
			continue;
		err = place_region(fd, s->reg.defs[i].hash, i);
		if (err) {
			log_error("cannot enable region '%s': %s", s->reg.defs[i].name,
				  err == -EEXIST ? "its hash collides with other enabled regions; "
				  "enable fewer regions at once" : strerror(-err));
			return err;
		}
	}
	return 0;
}

/* Attach to CUDA/NCCL functions mapped since the last look. */
static void scan_cuda(struct session *s, struct session_target *t, bool first)
{
	int n;

	if (first)
		cuda_probes_init(&t->cuda, t->proc.pid, (unsigned int)(t - s->targets),
				 bpf_program__fd(s->skel->progs.api_call));
	n = cuda_probes_scan(&t->cuda);
	if (n > 0)
		symbolizer_forget_pid(s->sym, t->proc.pid); /* new mappings */
	if (first && !t->cuda.attached && !t->cuda.warned_none) {
		t->cuda.warned_none = true;
		log_warn("PID %d (%s) has no CUDA library mapped: regions are traced, and fvbpf "
			 "looks again every second", t->proc.pid, t->proc.comm);
	}
}

/* The marker library's probe functions, in attach order. */
static const enum marker_sym marker_probes[] = {
	MARKER_AGENT_STATUS, MARKER_GPU_BATCH, MARKER_CORRELATION,
	MARKER_SYNC, MARKER_END, MARKER_BEGIN,
};

static struct bpf_program *marker_prog(struct session *s, enum marker_sym sym)
{
	switch (sym) {
	case MARKER_BEGIN: return s->skel->progs.region_begin;
	case MARKER_END: return s->skel->progs.region_end;
	case MARKER_SYNC: return s->skel->progs.thread_sync;
	case MARKER_CORRELATION: return s->skel->progs.correlation;
	case MARKER_GPU_BATCH: return s->skel->progs.gpu_batch;
	case MARKER_AGENT_STATUS: return s->skel->progs.agent_status;
	default: return NULL;
	}
}

static int attach_target(struct session *s, struct session_target *t)
{
	const struct marker_lib *m = &t->proc.marker;
	uint32_t key = (uint32_t)(t - s->targets);
	struct fvbpf_proc_state st = { .tgid = (uint32_t)t->proc.pid };
	int fd = bpf_map__fd(s->skel->maps.procs), err;
	/* The cookie takes BPF straight to this process's slot. */
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .ref_ctr_offset = m->syms[MARKER_SEMAPHORE].file_off,
		    .bpf_cookie = key);

	uint32_t epoch = 0;
	enum marker_sym sym;
	size_t i;

	if (bpf_map_update_elem(fd, &key, &st, BPF_ANY))
		return -errno;
	/*
	 * An even epoch keeps the markers away from the probes while they go
	 * in; the odd one written once all are live makes every thread report
	 * its open regions (a sync) before its first region event.
	 */
	if (proc_read_u32(t->proc.pid, m->epoch_addr, &epoch) ||
	    proc_write_u32(t->proc.pid, m->epoch_addr, (epoch | 1) + 1))
		goto fail;
	t->epoch = (epoch | 1) + 2;
	/* The sync probe first and the begin probe last: once a begin can be
	 * seen, its end and the thread's sync can be too. */
	for (i = 0; i < sizeof(marker_probes) / sizeof(marker_probes[0]); i++) {
		sym = marker_probes[i];
		t->links[sym] = bpf_program__attach_uprobe_opts(marker_prog(s, sym), t->proc.pid,
								m->open_path, m->syms[sym].file_off, &uo);
		if (!t->links[sym])
			goto fail;
	}
	st.flags = FVBPF_PROC_ARMED;
	if (bpf_map_update_elem(fd, &key, &st, BPF_ANY))
		goto fail;
	if (s->api_probes)
		scan_cuda(s, t, true);
	t->attach_ns = now_ns(CLOCK_MONOTONIC);
	if (proc_write_u32(t->proc.pid, m->epoch_addr, t->epoch))
		goto fail;
	t->pidfd = (int)syscall(SYS_pidfd_open, t->proc.pid, 0);
	if (t->pidfd < 0 && errno == ESRCH)
		goto fail;
	log_info("attached to PID %d (%s, rank %d%s): markers in %s", t->proc.pid, t->proc.comm,
		 t->proc.rank, t->proc.rank_from_env ? "" : " by default", m->path);
	return 0;
fail:
	err = -errno;
	if (!proc_alive(t->proc.pid)) {
		log_error("PID %d exited while fvbpf was attaching: start it again and re-run", t->proc.pid);
		return -ESRCH;
	}
	if (err == -EINVAL)
		log_error("cannot attach to PID %d (%s): another tracer (bpftrace?) probes the fvbpf "
			  "markers without their semaphore; stop it and retry", t->proc.pid, m->path);
	else
		log_error("cannot attach to PID %d (%s): %s", t->proc.pid, m->path, strerror(-err));
	return err;
}

static void detach_target(struct session_target *t)
{
	size_t i;

	/* Even again first: markers stop calling the probes before they go. */
	if (t->epoch && !t->exited)
		proc_write_u32(t->proc.pid, t->proc.marker.epoch_addr, t->epoch + 1);
	t->epoch = 0;
	cuda_probes_detach(&t->cuda);
	for (i = 0; i < MARKER_NSYMS; i++) {
		bpf_link__destroy(t->links[i]);
		t->links[i] = NULL;
	}
}

/*
 * A process that has written its -n segments stops paying for probes while
 * others finish: markers stop calling them (even epoch) and the CUDA probes
 * go; the agent's probes stay for the GPU records still due.
 */
static void quiet_target(struct session_target *t)
{
	t->quiet = true;
	if (t->epoch && !t->exited)
		proc_write_u32(t->proc.pid, t->proc.marker.epoch_addr, t->epoch + 1);
	cuda_probes_detach(&t->cuda);
}

static void finish_target(struct session *s, struct session_target *t, const char *why)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC);
	struct api_call call;

	if (t->finished)
		return;
	if (t->tracker.cur && why)
		log_warn("PID %d %s inside segment %u (%s): written as incomplete", t->proc.pid, why,
			 t->tracker.cur->seq, s->reg.defs[t->tracker.cur->region].name);
	/* Calls still open when the target left: in the segment, cut off. */
	while (api_pairing_drain(&t->pairing, now, &call))
		record_call(s, t, &call);
	seg_tracker_finish(&t->tracker, now);
	t->finished = true;
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

static bool all_done(struct session *s)
{
	int i;

	for (i = 0; i < s->ntargets; i++)
		if ((!s->targets[i].finished && !seg_tracker_done(&s->targets[i].tracker)) ||
		    s->targets[i].npending)
			return false;
	return true;
}

/* The consumer loop: the ring is drained on a short timer, since BPF submits
 * records without waking us (see SUBMIT_FLAGS in the BPF code). */
static void run_loop(struct session *s, const struct attach_opts *o)
{
	uint64_t deadline = o->duration_s > 0 ?
		now_ns(CLOCK_MONOTONIC) + (uint64_t)(o->duration_s * 1e9) : 0;
	struct epoll_event evs[16];
	int n, i;

	while (!stop_requested) {
		n = epoll_wait(s->epfd, evs, 16, 20);
		ring_buffer__consume(s->rb);
		for (i = 0; i < n; i++) {
			struct session_target *t;

			if (evs[i].data.u32 == UINT32_MAX)
				continue;
			t = &s->targets[evs[i].data.u32];
			/* The target is gone: its last events are already in the ring. */
			ring_buffer__consume(s->rb);
			log_info("PID %d exited", t->proc.pid);
			t->exited = true;
			finish_target(s, t, "exited");
			release_pending(t, true); /* no more GPU records will come */
			epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
		}
		if (s->api_probes && now_ns(CLOCK_MONOTONIC) - s->last_scan_ns >= 1000000000ULL) {
			s->last_scan_ns = now_ns(CLOCK_MONOTONIC);
			for (i = 0; i < s->ntargets; i++)
				if (!s->targets[i].finished && !s->targets[i].quiet)
					scan_cuda(s, &s->targets[i], false);
		}
		for (i = 0; i < s->ntargets; i++) {
			s->targets[i].drops_now = proc_drops(s, (uint32_t)i);
			if (s->targets[i].npending)
				release_pending(&s->targets[i], false);
			if (!s->targets[i].quiet && seg_tracker_done(&s->targets[i].tracker))
				quiet_target(&s->targets[i]);
		}
		if (deadline && now_ns(CLOCK_MONOTONIC) >= deadline) {
			log_info("duration of %.1f s reached", o->duration_s);
			break;
		}
		if (all_done(s))
			break;
	}
}

static void wait_pending(struct session *s)
{
	uint64_t until = now_ns(CLOCK_MONOTONIC) + s->gpu_wait_ns;
	bool any;
	int i;

	do {
		ring_buffer__consume(s->rb);
		any = false;
		for (i = 0; i < s->ntargets; i++) {
			release_pending(&s->targets[i], false);
			any |= s->targets[i].npending > 0;
		}
		if (any)
			usleep(20000);
	} while (any && now_ns(CLOCK_MONOTONIC) < until);
}

static void init_meta(struct session *s)
{
	s->meta.mono_at_start_ns = now_ns(CLOCK_MONOTONIC);
	s->meta.real_at_start_ns = now_ns(CLOCK_REALTIME);
	if (gethostname(s->meta.hostname, sizeof(s->meta.hostname) - 1))
		snprintf(s->meta.hostname, sizeof(s->meta.hostname), "unknown");
}

static void warn_registry(const char *msg, void *ctx)
{
	(void)ctx;
	log_warn("%s", msg);
}

static int setup_regions(struct session *s, const struct attach_opts *o)
{
	const char *list = o->regions;
	char err[512], names[4096];
	unsigned int i;

	registry_init(&s->reg);
	if (o->region_file && registry_load_file(&s->reg, o->region_file, err, sizeof(err))) {
		log_error("%s", err);
		return -EINVAL;
	}
	if (!list)
		list = getenv("FASTVIDEO_TORCH_PROFILE_REGIONS");
	if (!list || !*list) {
		log_error("no regions given: use -r training_train_one_step,... or set "
			  "FASTVIDEO_TORCH_PROFILE_REGIONS (see 'fvbpf regions')");
		return -EINVAL;
	}
	if (registry_enable_list(&s->reg, list, warn_registry, NULL) == 0) {
		registry_names(&s->reg, names, sizeof(names));
		log_error("no valid region in '%s'; known regions: %s", list, names);
		return -EINVAL;
	}
	for (i = 0; i < s->reg.count; i++)
		if (s->reg.defs[i].enabled)
			s->requested[s->nrequested++] = i;
	return 0;
}

static void print_report(struct session *s, const struct attach_opts *o)
{
	struct seg_writer *w = &s->writer;
	unsigned int i;
	size_t k;
	int t;

	printf("fvbpf: wrote %zu segment%s into %s\n", w->ndone, w->ndone == 1 ? "" : "s", o->outdir);
	for (k = 0; k < w->ndone; k++)
		printf("  %s%s%s\n", w->done[k].trace,
		       w->done[k].started_before_attach ? "  (started before attach)" : "",
		       w->done[k].incomplete ? "  (incomplete)" : "");
	for (t = 0; t < s->ntargets; t++) {
		struct session_target *st = &s->targets[t];

		printf("  pid %d (rank %d): %u segment%s, %u incomplete, %llu unbalanced region ends%s\n",
		       st->proc.pid, st->proc.rank, st->segments, st->segments == 1 ? "" : "s",
		       st->incomplete, (unsigned long long)st->tracker.unbalanced,
		       st->exited ? ", exited" : "");
		if (s->api_probes)
			printf("    CUDA: %u functions probed, %llu calls in segments, %llu returns "
			       "without entry, %llu entries without return\n", st->cuda.attached,
			       (unsigned long long)st->calls,
			       (unsigned long long)st->pairing.unmatched_exits,
			       (unsigned long long)st->pairing.lost_returns);
		printf("    GPU: %s; %llu records, %llu joined, %llu missing, %llu late, %llu outside "
		       "segments, %llu dropped by CUPTI\n", st->gpu_status,
		       (unsigned long long)st->gpu.records, (unsigned long long)st->gpu.joined,
		       (unsigned long long)st->gpu_missing, (unsigned long long)st->gpu.late,
		       (unsigned long long)st->gpu.outside, (unsigned long long)st->cupti_dropped);
		over_limits_print(stdout, st);
	}
	printf("  loss: %llu ring-buffer drops, %llu bad records, %u write errors, %llu kernels "
	       "without symbol\n", (unsigned long long)s->skel->bss->ringbuf_drops,
	       (unsigned long long)s->bad_records, w->write_errors,
	       (unsigned long long)s->kernels_unknown);
	for (i = 0; i < s->nrequested; i++)
		if (!s->reg.defs[s->requested[i]].entered)
			log_warn("region '%s' was never entered while attached: check the name and that "
				 "the target runs that code", s->reg.defs[s->requested[i]].name);
	log_report_suppressed();
}

static void cleanup_session(struct session *s)
{
	int i;

	for (i = 0; i < s->ntargets; i++) {
		detach_target(&s->targets[i]);
		seg_tracker_free(&s->targets[i].tracker);
		api_pairing_free(&s->targets[i].pairing);
		cuda_probes_free(&s->targets[i].cuda);
		gpu_join_free(&s->targets[i].gpu);
		for (size_t k = 0; k < s->targets[i].npending; k++)
			segment_free(s->targets[i].pending[k].seg);
		free(s->targets[i].pending);
		addr_cache_free(&s->targets[i].kernels);
		proc_target_free(&s->targets[i].proc);
		if (s->targets[i].pidfd >= 0)
			close(s->targets[i].pidfd);
	}
	seg_writer_free(&s->writer);
	ring_buffer__free(s->rb);
	if (s->epfd > 0)
		close(s->epfd);
	fvbpf_bpf__destroy(s->skel);
	free(s->targets);
	if (s->sym)
		symbolizer_free(s->sym);
	name_table_free(&s->knames);
}

int attach_run(const struct attach_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct session s = { .epfd = -1 };
	char err[512];
	int i, ret = 1;

	libbpf_set_print(libbpf_print);
	name_table_init(&s.knames);
	s.sym = symbolizer_new();
	if (!s.sym) {
		log_error("out of memory");
		goto cleanup;
	}
	if (setup_regions(&s, o))
		goto cleanup;
	if (preflight_privileges() || preflight_btf())
		goto cleanup;
	if (check_targets(&s, o))
		goto cleanup;
	if (outdir_prepare(o->outdir, err, sizeof(err))) {
		log_error("%s", err);
		goto cleanup;
	}
	init_meta(&s);
	s.gpu_wait_ns = (uint64_t)(o->gpu_wait_s * 1e9);
	if (setup_bpf(&s, o))
		goto cleanup;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (seg_writer_start(&s.writer, o->outdir, &s.reg, &s.meta, &s.knames)) {
		log_error("cannot start the writer thread");
		goto cleanup;
	}
	s.rb = ring_buffer__new(bpf_map__fd(s.skel->maps.events), handle_event, &s, NULL);
	if (!s.rb) {
		log_error("cannot open the ring buffer: %s", strerror(errno));
		goto cleanup;
	}
	for (i = 0; i < s.ntargets; i++) {
		seg_tracker_init(&s.targets[i].tracker, (uint32_t)s.targets[i].proc.pid, &s.reg,
				 on_segment_closed, &s.targets[i]);
		s.targets[i].tracker.max_segments = o->max_segments;
		gpu_join_init(&s.targets[i].gpu, &s.knames, find_segment, &s.targets[i]);
		snprintf(s.targets[i].gpu_status, sizeof(s.targets[i].gpu_status),
			 "no word from the in-process agent");
		if (attach_target(&s, &s.targets[i]))
			goto cleanup;
	}
	if (setup_epoll(&s)) {
		log_error("cannot watch the targets: %s", strerror(errno));
		goto cleanup;
	}
	log_info("tracing %u region%s in %d process%s into %s; Ctrl-C to stop", s.nrequested,
		 s.nrequested == 1 ? "" : "s", s.ntargets, s.ntargets == 1 ? "" : "es", o->outdir);

	run_loop(&s, o);

	/* Cut what is still open; GPU records of closed segments may still be
	 * on their way, so the probes stay until they came or the wait ends. */
	ring_buffer__consume(s.rb);
	for (i = 0; i < s.ntargets; i++)
		finish_target(&s, &s.targets[i], "was still");
	wait_pending(&s);
	for (i = 0; i < s.ntargets; i++)
		detach_target(&s.targets[i]);
	ring_buffer__consume(s.rb);
	for (i = 0; i < s.ntargets; i++)
		release_pending(&s.targets[i], true);
	seg_writer_stop(&s.writer);
	print_report(&s, o);
	if (manifest_write(&s, o))
		log_warn("cannot write %s/manifest.json", o->outdir);
	ret = 0;
	if (s.writer.write_errors) {
		log_error("%u segment%s could not be written to %s: %s", s.writer.write_errors,
			  s.writer.write_errors == 1 ? "" : "s", o->outdir,
			  s.writer.first_error == -ENOSPC ? "disk full; free space or choose another -o"
							  : strerror(-s.writer.first_error));
		ret = 1;
	}
cleanup:
	cleanup_session(&s);
	return ret;
}
