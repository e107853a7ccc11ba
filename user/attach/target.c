// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * One target process: check it, attach its marker probes under the epoch
 * protocol, find its CUDA libraries, quiet it after -n, finish and detach.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "attach/inject_attach.h"
#include "attach/launcher_hint.h"
#include "attach/py_request.h"
#include "attach/pystack_attach.h"
#include "pipeline/comm/collectives.h"
#include "pipeline/loader/dl_join.h"
#include "proc/proc_read.h"
#include "probes/dl_probes.h"
#include "pipeline/drops.h"
#include "pipeline/events.h"
#include "pipeline/api_events.h"
#include "pipeline/windows.h"
#include "probes/bpf_setup.h"
#include "pipeline/seg_close.h"
#include "output/seg_output.h"
#include "proc/inject/inject.h"
#include "proc/proc_rank.h"
#include "util/log.h"
#include "proc/elf/symbolizer.h"
#include "attach/target.h"
#include "attach/cuda_hook_attach.h"
#include "attach/callback_attach.h"
#include "attach/marker_attach.h"
#include "pipeline/api_pairing.h"
#include "pipeline/memory/mem_events.h"
#include "pipeline/py_status.h"
#include "pipeline/schedule.h"
#include "pipeline/torch/callback_ops.h"
#include "pipeline/torch/torch_pairing.h"
#include "probes/cuda_probes.h"
#include "probes/mem_probes.h"
#include "probes/torch_probes.h"
#include "proc/control/control_page.h"

/* BPF's state of the process: 0, or -1 without a live BPF session. */
static int bpf_state(const struct session_target *t, struct fvbpf_proc_state *st)
{
	struct session *s = t->session;
	uint32_t slot = (uint32_t)(t - s->targets);

	if (!s->skel || bpf_map_lookup_elem(bpf_setup_map_fd(s->skel, FVBPF_MAP_PROCS), &slot, st))
		return -1;
	return 0;
}

uint64_t target_drops(const struct session_target *t)
{
	struct fvbpf_proc_state st;

	/* Decoding without a live BPF session (unit tests, fuzzing) knows of
	 * no drops but the ones the records carry. */
	if (!t->session->skel)
		return t->loss->drops_seen;
	return bpf_state(t, &st) ? 0 : st.drops;
}

/* BPF finds a marker hit's slot by the tgid's low bits (map tgid_slots);
 * the newest process on an index takes it, the other one falls back to
 * its probes' cookie. */
static int target_index_slot(struct session *s, pid_t pid, uint32_t slot)
{
	struct fvbpf_tgid_slot ts = { .tgid = (uint32_t)pid, .slot = slot };
	uint32_t k = (uint32_t)pid & (FVBPF_TGID_SLOTS - 1);

	return bpf_map_update_elem(bpf_setup_map_fd(s->skel, FVBPF_MAP_TGID_SLOTS), &k, &ts, BPF_ANY)
		? -errno : 0;
}

static void target_no_links(struct session_target *t)
{
	size_t i;

	for (i = 0; i < MARKER_NSYMS; i++)
		t->marker_fds[i] = -1;
	t->memp->link = -1;
}

/* Whether @pid can be traced: fvbpf markers, or libtorch_cpu with torch
 * ops on, or --window.  -ENOENT otherwise. */
int target_traceable(struct session *s, pid_t pid, struct marker_lib *marker, bool *has_markers)
{
	char path[PATH_MAX];
	int err;

	err = proc_find_marker_lib(pid, marker);
	*has_markers = !err;
	if (!err)
		return 0;
	if (err != -ENOENT)
		return err;
	path[0] = '\0';
	if ((s->torch_ops && torch_probes_mapped(pid, path, sizeof(path))) || s->window_ns)
		return 0;
	return -ENOENT;
}

/* Each stage's state of @t, in the order target_free() has always freed
 * them (its probes first, its /proc facts and control page last); NULL
 * after. */
void target_states_free(struct session_target *t)
{
	torch_probes__free(t->torchp);
	t->torchp = NULL;
	cuda_probes__free(t->cuda);
	t->cuda = NULL;
	mem_probes__free(t->memp);
	t->memp = NULL;
	seg_tracker__free(t->tracker);
	t->tracker = NULL;
	api_pairing__free(t->pairing);
	t->pairing = NULL;
	torch_pairing__free(t->tpair);
	t->tpair = NULL;
	torch_state__free(t->torch);
	t->torch = NULL;
	py_state__free(t->py);
	t->py = NULL;
	mem_state__free(t->mem);
	t->mem = NULL;
	gpu_join__free(t->gpu);
	t->gpu = NULL;
	held_queue__free(t->held);
	t->held = NULL;
	agent_state__free(t->agent);
	t->agent = NULL;
	callback_ops__free(t->fast);
	t->fast = NULL;
	drop_state__free(t->loss);
	t->loss = NULL;
	coll_state__free(t->coll);
	t->coll = NULL;
	dl_probes__free(t->dlp);
	t->dlp = NULL;
	dl_join__free(t->dl);
	t->dl = NULL;
	proc_target__free(t->proc);
	t->proc = NULL;
	control_page__free(t->ctl);
	t->ctl = NULL;
}

int target_states_alloc(struct session_target *t)
{
	if (!(t->tracker = seg_tracker__new()) || !(t->loss = drop_state__new()) ||
	    !(t->pairing = api_pairing__new()) || !(t->gpu = gpu_join__new()) ||
	    !(t->held = held_queue__new()) || !(t->agent = agent_state__new()) ||
	    !(t->fast = callback_ops__new()) || !(t->tpair = torch_pairing__new()) ||
	    !(t->torch = torch_state__new()) || !(t->py = py_state__new()) ||
	    !(t->mem = mem_state__new()) || !(t->coll = coll_state__new()) ||
	    !(t->proc = proc_target__new()) || !(t->ctl = control_page__new()) ||
	    !(t->cuda = cuda_probes__new()) || !(t->torchp = torch_probes__new()) ||
	    !(t->memp = mem_probes__new()) || !(t->dlp = dl_probes__new()) ||
	    !(t->dl = dl_join__new())) {
		target_states_free(t);
		return -ENOMEM;
	}
	return 0;
}

static int open_target(struct session *s, struct session_target *t, pid_t pid)
{
	char hint[256];
	int err;

	t->session = s;
	t->pidfd = -1;
	t->ctl->lock_fd = -1;
	target_no_links(t);
	err = proc_target_init(t->proc, pid);
	if (err == -ESRCH || err == -ENOENT) {
		log_error("no process with PID %d: check the PID (ps -p %d)", pid, pid);
		return -ESRCH;
	}
	if (err) {
		log_error("cannot read /proc/%d: %s", pid, strerror(-err));
		return err;
	}
	torch_probes_init(t->torchp, pid, (unsigned int)(t - s->targets));
	mem_probes_init(t->memp, pid, (unsigned int)(t - s->targets));
	inject_for_target(s, t, pid); /* --inject: load the library first */
	err = target_traceable(s, pid, &t->proc->marker, &t->has_markers);
	if (err == -ENOENT && !s->follow && launcher_hint(pid, s->torch_ops, hint, sizeof(hint)) > 0) {
		log_error("PID %d (%s) has no fvbpf markers mapped and no libtorch_cpu%s", pid,
			  t->proc->comm, hint);
		return err;
	}
	if (err == -ENOENT) {
		log_error("PID %d (%s) has no fvbpf markers mapped and no libtorch_cpu: link it "
			  "with -lfvbpf, start it with LD_PRELOAD=libfvbpf.so, import fvbpf in "
			  "Python before attaching, or cut time windows with --window", t->proc->pid,
			  t->proc->comm);
		return err;
	}
	if (err) {
		log_error("cannot read the mappings of PID %d: %s", pid, strerror(-err));
		return err;
	}
	t->opened = true;
	inject_hint(s, t);
	err = control_page_open(t->ctl, t->proc, t->has_markers);
	if (err)
		return err;
	if (!t->has_markers)
		log_info("PID %d (%s): no fvbpf markers; segments come from %s", t->proc->pid,
			 t->proc->comm, s->window_ns ? "time windows (--window)" : "torch scopes");
	return 0;
}

int target_open(struct session *s, struct session_target *t, pid_t pid)
{
	int err = target_states_alloc(t);

	if (err) {
		log_error("out of memory");
		return err;
	}
	err = open_target(s, t, pid);
	if (!t->opened)
		target_states_free(t); /* the slot stays free, holding nothing */
	return err;
}

/* The default --step-by needs PyTorch in the process. */
static int target_default_ok(struct session *s, const struct session_target *t)
{
	char path[PATH_MAX];

	if (s->torch_ops && torch_probes_mapped(t->proc->pid, path, sizeof(path)))
		return 0;
	log_error("no regions given: use -r REGIONS (the markers PID %d (%s) enters: see 'fvbpf "
		  "regions') or --window SECONDS; it maps no libtorch_cpu, so the default for "
		  "PyTorch jobs, --step-by '%s', cannot cut its segments", t->proc->pid, t->proc->comm,
		  STEP_BY_DEFAULT);
	return -EINVAL;
}

int targets_check(struct session *s, const struct attach_opts *o)
{
	char hint[256];
	int i, j, err;

	s->targets = calloc(SESSION_MAX_TARGETS, sizeof(*s->targets));
	if (!s->targets)
		return -ENOMEM;
	s->cap_targets = SESSION_MAX_TARGETS;
	if (o->children || o->match)
		return 0; /* the followed tree fills them (follow.c) */
	for (i = 0; i < o->npids; i++) {
		for (j = 0; j < s->ntargets; j++)
			if (s->targets[j].proc->pid == o->pids[i])
				break;
		if (j < s->ntargets)
			continue; /* the same PID twice */
		err = target_open(s, &s->targets[s->ntargets], o->pids[i]);
		if (s->targets[s->ntargets].opened)
			s->ntargets++;
		if (!err && s->step_by_default)
			err = target_default_ok(s, &s->targets[s->ntargets - 1]);
		if (err)
			return err;
	}
	/* A launcher given alone (torchrun maps torch): its ranks are below. */
	if (s->ntargets == 1 && !s->targets[0].proc->rank_from_env &&
	    launcher_hint(s->targets[0].proc->pid, s->torch_ops, hint, sizeof(hint)) > 0)
		log_warn("PID %d (%s) has no rank in its environment and is traced alone as rank 0%s",
			 s->targets[0].proc->pid, s->targets[0].proc->comm, hint);
	/* Beside other targets, one without a rank (a launcher) takes none. */
	for (i = 0; s->ntargets > 1 && i < s->ntargets; i++)
		if (!s->targets[i].proc->rank_from_env) {
			s->targets[i].proc->rank = PROC_NO_RANK;
			s->targets[i].proc->name_by_pid = true;
		}
	/* Two targets with one rank would overwrite each other's files. */
	for (i = 0; i < s->ntargets; i++)
		for (j = 0; j < s->ntargets; j++)
			if (i != j && s->targets[i].proc->rank == s->targets[j].proc->rank)
				s->targets[i].proc->name_by_pid = true;
	return 0;
}

int target_window_start(struct session *s, struct session_target *t, uint64_t ts)
{
	t->window_pending = false;
	if (seg_on_begin(t->tracker, (uint32_t)t->proc->pid, (uint32_t)s->window_region, ts))
		return -ENOMEM;
	s->reg->defs[s->window_region].entered++;
	t->next_cut = ts + s->window_ns;
	return 0;
}

/*
 * The attach's moment, just before BPF is armed: what the operator rings
 * hold from before is not this attach's, and --window's windows follow
 * each other from the cut on (cut_gate.c), so the process is always inside
 * one: BPF's depth starts at 1.
 */
static int attach_moment(struct session *s, struct session_target *t,
			 struct fvbpf_proc_state *st)
{
	t->attach_ns = clock_ns(CLOCK_MONOTONIC);
	callback_ops_rebase(t->fast, t->attach_ns);
	st->flags = FVBPF_PROC_ARMED;
	st->depth = s->window_ns ? 1 : 0;
	if (!s->window_ns)
		return 0;
	if (s->cut_waiting) {
		t->window_pending = true; /* cut_gate.c starts it */
		return 0;
	}
	return target_window_start(s, t, t->attach_ns > s->cut_from_ns ? t->attach_ns :
				   s->cut_from_ns);
}

/* "rank 1 from SLURM_PROCID": where a rank came from, said as it is
 * attached (the manifest's rank_source). */
static void attach_rank_text(const struct proc_target *p, char *buf, size_t len)
{
	size_t n;

	seg_output_rank_text(p, buf, len);
	n = strlen(buf);
	if (p->rank_from_env && n + 1 < len)
		snprintf(buf + n, len - n, " from %s", rank_source_name(p->ri.source));
}

/* A process without markers: its torch (and CUDA) probes only. */
static int attach_unmarked(struct session *s, struct session_target *t, int fd, uint32_t key)
{
	struct fvbpf_proc_state st = { .tgid = (uint32_t)t->proc->pid };
	char rank[96];

	if (s->api_probes)
		target_scan_cuda(s, t, true);
	if (attach_moment(s, t, &st))
		return -ENOMEM;
	if (bpf_map_update_elem(fd, &key, &st, BPF_ANY))
		return -errno;
	t->pidfd = (int)syscall(SYS_pidfd_open, t->proc->pid, 0);
	if (t->pidfd < 0) {
		log_error("PID %d exited while fvbpf was attaching", t->proc->pid);
		return -ESRCH;
	}
	if (!s->window_ns && (!t->torchp->found || t->torchp->links[0] < 0)) {
		log_error("PID %d (%s): no torch operator probes could be attached", t->proc->pid,
			  t->proc->comm);
		return -ENOENT;
	}
	attach_rank_text(t->proc, rank, sizeof(rank));
	log_info("attached to PID %d (%s, %s): %s%s", t->proc->pid, t->proc->comm, rank,
		 t->torchp->found ? "torch in " : "no markers, no torch", t->torchp->path);
	return 0;
}

static int attach_fail(struct session_target *t)
{
	const struct marker_lib *m = &t->proc->marker;
	int err = -errno;

	if (!proc_alive(t->proc->pid)) {
		log_error("PID %d exited while fvbpf was attaching: start it again and re-run", t->proc->pid);
		return -ESRCH;
	}
	if (err == -EINVAL)
		log_error("cannot attach to PID %d (%s): another tracer (bpftrace?) probes the fvbpf "
			  "markers without their semaphore; stop it and retry", t->proc->pid, m->path);
	else
		log_error("cannot attach to PID %d (%s): %s", t->proc->pid, m->path, strerror(-err));
	return err;
}

int target_attach_begin(struct session *s, struct session_target *t)
{
	uint32_t key = (uint32_t)(t - s->targets);
	struct fvbpf_proc_state st = { .tgid = (uint32_t)t->proc->pid };
	int fd = bpf_setup_map_fd(s->skel, FVBPF_MAP_PROCS), err;

	if (bpf_map_update_elem(fd, &key, &st, BPF_ANY))
		return -errno;
	err = target_index_slot(s, t->proc->pid, key);
	if (err)
		return err;
	if (!t->has_markers && s->op_source == OP_SOURCE_CALLBACKS) {
		log_error("PID %d (%s): --op-source callbacks cannot be had: libfvbpf.so is not in "
			  "the process (--inject loads it); or use --op-source auto", t->proc->pid,
			  t->proc->comm);
		return -EINVAL;
	}
	if (!t->has_markers) {
		snprintf(t->fast->why, sizeof(t->fast->why),
			 "libfvbpf.so is not in the process (--inject loads it)");
		err = attach_unmarked(s, t, fd, key);
		t->armed = !err;
		return err;
	}
	/*
	 * An even epoch keeps the markers away from the probes while they go
	 * in; the odd one written once all are live makes every thread report
	 * its open regions (a sync) before its first region event, and is
	 * what fvbpf_attached() waits for.
	 */
	t->epoch = control_page_fresh_epoch(t->ctl);
	if (control_page_set_epoch(t->ctl, t->epoch - 1))
		return attach_fail(t);
	/* before the epoch turns odd: no marker can see a half-made choice */
	if (marker_ts_choose(t))
		return attach_fail(t);
	py_request_send(s, t);
	if (callback_attach_request(s, t))
		return -EINVAL; /* said why */
	if (marker_probes_attach(s, t, key))
		return attach_fail(t);
	return 0;
}

/*
 * The library answers the operator request once its semaphore is up (its
 * watch thread looks four times a second): the begin of every process
 * first, then the end of each, and a job's processes wait for their
 * answers together.
 */
int target_attach_end(struct session *s, struct session_target *t)
{
	const struct marker_lib *m = &t->proc->marker;
	uint32_t key = (uint32_t)(t - s->targets);
	struct fvbpf_proc_state st = { .tgid = (uint32_t)t->proc->pid };
	int fd = bpf_setup_map_fd(s->skel, FVBPF_MAP_PROCS);
	char rank[96];

	if (t->armed)
		return 0; /* without markers: armed by the begin */
	/* The semaphore is up: the library answers before any segment opens. */
	if (callback_attach_finish(s, t))
		return -EINVAL; /* said why */
	/* Its libraries' probes go in before BPF is armed: armed, BPF opens
	 * segments at torch scopes, and the scans take up to a second. */
	if (s->api_probes)
		target_scan_cuda(s, t, true);
	cuda_hook_request(s, t); /* answered from the odd epoch on (run loop) */
	if (attach_moment(s, t, &st)) {
		log_error("out of memory");
		return -ENOMEM;
	}
	if (bpf_map_update_elem(fd, &key, &st, BPF_ANY))
		return attach_fail(t);
	t->live_pending = true;
	if (!s->cut_waiting && target_go_live(s, t))
		return attach_fail(t);
	t->pidfd = (int)syscall(SYS_pidfd_open, t->proc->pid, 0);
	if (t->pidfd < 0 && errno == ESRCH)
		return attach_fail(t);
	attach_rank_text(t->proc, rank, sizeof(rank));
	log_info("attached to PID %d (%s, %s): markers in %s", t->proc->pid, t->proc->comm, rank,
		 m->path);
	t->armed = true;
	return 0;
}

int target_go_live(struct session *s, struct session_target *t)
{
	if (!t->live_pending)
		return 0;
	t->live_pending = false;
	if (!t->has_markers || t->exited)
		return 0;
	/* The odd epoch: the markers call the probes, every thread reports
	 * its open regions, fvbpf_attached() turns true; the library serves
	 * its requests from here, so the wait for the shim counts from here. */
	t->attach_ns = clock_ns(CLOCK_MONOTONIC);
	t->py->asked_ns = t->attach_ns;
	(void)s;
	return control_page_set_epoch(t->ctl, t->epoch) ? -errno : 0;
}

int target_attach(struct session *s, struct session_target *t)
{
	int err = target_attach_begin(s, t);

	return err ? err : target_attach_end(s, t);
}

void target_detach(struct session_target *t)
{
	size_t i;

	/* Even again first: markers stop calling the probes before they go. */
	if (t->epoch && !t->exited)
		control_page_set_epoch(t->ctl, t->epoch + 1);
	t->epoch = 0;
	cuda_hook_stop(t);
	callback_attach_stop(t->session, t);
	cuda_probes_detach(t->cuda);
	dl_probes_detach(t->dlp);
	torch_probes_detach(t->torchp);
	mem_probes_detach(t->memp);
	for (i = 0; i < MARKER_NSYMS; i++) {
		bpf_link__destroy(t->links[i]);
		t->links[i] = NULL;
		if (t->marker_fds[i] >= 0)
			close(t->marker_fds[i]);
		t->marker_fds[i] = -1;
	}
}

/*
 * Removing a uprobe waits for the kernel's RCU grace periods (about 0.1 s
 * each on the VMs measured, once per link): one target after another, a
 * job of 256 processes took minutes to detach.  Concurrent waits share
 * grace periods, so the targets detach on a pool of threads.
 */
#define DETACH_THREADS 64

struct detach_pool {
	struct session *s;
	int next;
	pthread_mutex_t lock;
};

static void *detach_worker(void *arg)
{
	struct detach_pool *p = arg;
	int i;

	for (;;) {
		pthread_mutex_lock(&p->lock);
		i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->s->ntargets)
			return NULL;
		target_detach(&p->s->targets[i]);
	}
}

void targets_detach_all(struct session *s)
{
	struct detach_pool pool = { .s = s, .lock = PTHREAD_MUTEX_INITIALIZER };
	pthread_t th[DETACH_THREADS];
	int n = s->ntargets < DETACH_THREADS ? s->ntargets : DETACH_THREADS, started = 0, i;

	for (i = 0; n > 1 && i < n; i++)
		if (!pthread_create(&th[started], NULL, detach_worker, &pool))
			started++;
	detach_worker(&pool); /* this thread too; alone when none started */
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

/*
 * A process that has written its -n segments stops paying for probes while
 * others finish: markers stop calling them (even epoch) and the CUDA probes
 * go; the agent's probes stay for the GPU records still due.
 */
void target_quiet(struct session_target *t)
{
	t->quiet = true;
	if (t->epoch && !t->exited)
		control_page_set_epoch(t->ctl, t->epoch + 1);
	cuda_probes_detach(t->cuda);
	dl_probes_detach(t->dlp);
	torch_probes_detach(t->torchp);
	mem_probes_detach(t->memp);
}

void target_finish(struct session *s, struct session_target *t, const char *why)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);
	struct fvbpf_proc_state st;
	const struct segment *seg;
	struct api_call call;
	bool have_st;

	if (t->finished)
		return;
	callback_ops_drain(s, t, UINT64_MAX); /* its operators before the cut */
	/* Every record is in: the windows that ended by now are whole. */
	if (t->next_cut)
		window_cut_until(s, t, now);
	/* after the cuts: a window they closed is the writer's now (freed) */
	seg = t->tracker->cur;
	/* Drops since its last record may have taken the open segment's end
	 * (BPF then knows it ended): cut where its records stop, lost_end. */
	have_st = !bpf_state(t, &st);
	if (have_st && seg && (int)seg->region != s->window_region)
		drops_finish(t->loss, t->tracker, &st, (int)seg->region == s->step_region);
	if (t->tracker->cur && why)
		log_warn("PID %d %s inside segment %u (%s): written as incomplete", t->proc->pid, why,
			 t->tracker->cur->seq, s->reg->defs[t->tracker->cur->region].name);
	/* Calls still open when the target left: in the segment, cut off. */
	while (api_pairing_drain(t->pairing, now, &call))
		events_record_call(s, t, &call);
	/* Drops since its last region record hit the segment still open. */
	drops_charge(t->loss, t->tracker, have_st ? st.drops : target_drops(t));
	/* DataLoader workers that died mid-batch after the last segment that
	 * closed (a trainer waits for a batch between its steps): counted now,
	 * for the segment still open and the exit report. */
	if (t->dl)
		dl_reap(t->dl, proc_alive);
	seg_tracker_finish(t->tracker, now);
	t->finished = true;
}


void target_init(struct session_target *t, unsigned int max_segments)
{
	struct session *s = t->session;

	if (!t->opened)
		target_no_links(t); /* built by hand (tests): no target_open() */
	seg_tracker_init(t->tracker, (uint32_t)t->proc->pid, s->reg, seg_close_segment, t);
	t->tracker->max_segments = max_segments;
	if (s->schedule.set)
		t->tracker->max_segments = (unsigned int)schedule_total(&s->schedule);
	t->tracker->mem = &s->mem;
	/* closed until the cut (cut_gate.c); a process that came later
	 * begins at its own next step boundary */
	t->tracker->cut_from_ns = s->cut_waiting ? UINT64_MAX : s->cut_from_ns;
	gpu_join_init(t->gpu, &s->knames, seg_close_find, t);
	if (!t->opened || t->has_markers)
		snprintf(t->agent->status, sizeof(t->agent->status), "no word from the in-process agent");
	else if ((inject_cuda_maps(t->proc->pid) & (CUDA_MAPS_TORCH | CUDA_MAPS_DRIVER)) ==
		 CUDA_MAPS_TORCH)
		snprintf(t->agent->status, sizeof(t->agent->status),
			 "none: the process has not initialised CUDA (no libcuda.so loaded)");
	else
		snprintf(t->agent->status, sizeof(t->agent->status),
			 "no agent: libfvbpf.so is not in the process (--inject loads it)");
}

void target_free(struct session_target *t)
{
	target_detach(t);
	/* --with-stack's counts are said before the states go */
	pystack_target_release(t->session, t);
	addr_cache_free(&t->kernels);
	if (t->pidfd >= 0)
		close(t->pidfd);
	target_states_free(t); /* the probes, its /proc facts and control page too */
}
