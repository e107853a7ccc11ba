// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Ring records: check each one (everything in it comes from the target or
 * from BPF acting for it), then hand it to the state it changes: regions to
 * the segment tracker, CUDA calls to the pairing, GPU records to the join,
 * the agent's word to the target.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "util/checked_math.h"
#include "pipeline/drops.h"
#include "pipeline/events.h"
#include "pipeline/ring_consume.h"
#include "pipeline/py_status.h"
#include "pipeline/pystack.h"
#include "util/log.h"
#include "util/text_sanitize.h"
#include "pipeline/torch/torch_events.h"
#include "pipeline/memory/mem_handle.h"
#include "fvbpf_mem.h"
#include "pipeline/api_pairing.h"
#include "pipeline/torch/callback_ops.h"
#include "pipeline/windows.h"
#include "pipeline/loader/dl_events.h"
#include "pipeline/api_events.h"
#include "proc/proc_info.h"

#define SEC_NS 1000000000ull

static struct session_target *find_target(struct session *s, uint32_t tgid)
{
	int i;

	/* The newest first: a PID that exec'd may be a target again. */
	for (i = s->ntargets; i-- > 0;)
		if ((uint32_t)s->targets[i].proc->pid == tgid && !s->targets[i].superseded)
			return &s->targets[i];
	return NULL;
}

/* The agent's text is the target's: kept clean for the report and every file. */
static void set_unavailable(struct session_target *t, const char *msg)
{
	char status[sizeof(t->agent->status)];

	snprintf(status, sizeof(status), "unavailable: %s", msg);
	text_clean_terminal(t->agent->status, sizeof(t->agent->status), status);
}

/* What the in-process agent could or could not do. */
static void handle_status(struct session_target *t, const struct fvbpf_agent_status_event *ev)
{
	char msg[FVBPF_STATUS_MSG + 1];

	if (ev->code >= FVBPF_PY_FIRST && ev->code <= FVBPF_PY_LAST) {
		py_status_event(t, ev); /* the Python shim's, not the agent's */
		return;
	}
	memcpy(msg, ev->msg, FVBPF_STATUS_MSG);
	msg[FVBPF_STATUS_MSG] = '\0';
	t->agent->heard = true;
	switch (ev->code) {
	case FVBPF_AGENT_ACTIVE:
		t->agent->active = true;
		t->agent->clock = ev->detail;
		snprintf(t->agent->status, sizeof(t->agent->status), "cupti");
		log_info("PID %d: GPU activity on: %s, clock %s", t->proc->pid, msg,
			 ev->detail == FVBPF_CLOCK_CALLBACK ? "CLOCK_MONOTONIC callback" :
			 ev->detail == FVBPF_CLOCK_SIMULATED ? "simulated (a test double)" :
			 "calibrated against cuptiGetTimestamp");
		return;
	case FVBPF_AGENT_DROPPED:
		/* The target's number: a negative count is no count. */
		if (ev->value > 0)
			t->agent->cupti_dropped = sat_add_u64(t->agent->cupti_dropped, (uint64_t)ev->value);
		break;
	case FVBPF_AGENT_NO_CUDA:
		/* fvbpf's own scan already warned; the metadata says it. */
		t->agent->active = false;
		set_unavailable(t, msg);
		return;
	default:
		t->agent->active = false;
		set_unavailable(t, msg);
		break;
	}
	/* One warning per kind of trouble and process. */
	if (ev->code < 32 && !(t->agent->status_warned & (1u << ev->code))) {
		t->agent->status_warned |= 1u << ev->code;
		log_warn("PID %d: %s%s", t->proc->pid, msg, ev->code == FVBPF_AGENT_DROPPED ? "" :
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
			 "are known", t->proc->pid, ev->hdr.tid, ev->depth, ev->nnames);
	}
	for (i = 0; i < ev->nnames && i < FVBPF_SYNC_NAMES; i++) {
		memcpy(name, ev->names[i], FVBPF_NAME_LEN);
		name[FVBPF_NAME_LEN] = '\0';
		idx = registry_find(s->reg, name);
		if (idx < 0 || !s->reg->defs[idx].enabled)
			continue;
		log_debug("pid %d: thread %u was inside %s when fvbpf attached", t->proc->pid,
			  ev->hdr.tid, s->reg->defs[idx].name);
		err = seg_on_open_before_attach(t->tracker, ev->hdr.tid, (uint32_t)idx, t->attach_ns);
		if (err)
			return err;
	}
	return 0;
}

static int handle_region(struct session *s, struct session_target *t,
			 const struct fvbpf_region_event *re)
{
	uint32_t stack = 0;
	int err;

	if (re->hdr.type == FVBPF_EV_REGION_BEGIN) {
		s->reg->defs[re->region_id].entered++;
		if (t->pystk)
			stack = pystack_take(t->pystk, re->hdr.tid, re->hdr.ts_ns);
	}
	err = drops_region(t->loss, t->tracker, re);
	if (!err && stack)
		seg_slice_set_stack(t->tracker->cur, re->hdr.tid, re->hdr.ts_ns, stack);
	return err;
}

/*
 * A region record's time comes from the target's library (the _ts probes):
 * one outside [attach - 1 s, now + 1 s] is a lie or a bug, and would cut
 * time windows up to it or give slices a negative length.  It is pulled
 * in and counted.  The clock is read only when a time passes the last
 * reading's second, about once a second.
 */
static const void *region_ts_checked(struct session *s, struct session_target *t,
				     const struct fvbpf_region_event *re,
				     struct fvbpf_region_event *fixed)
{
	uint64_t ts = re->hdr.ts_ns, lo = t->attach_ns > SEC_NS ? t->attach_ns - SEC_NS : 0;

	if (ts > s->ts_ceiling)
		s->ts_ceiling = clock_ns(CLOCK_MONOTONIC) + SEC_NS;
	if (ts >= lo && ts <= s->ts_ceiling)
		return re;
	*fixed = *re;
	fixed->hdr.ts_ns = ts < lo ? t->attach_ns : s->ts_ceiling - SEC_NS;
	t->marker_ts_fixed++;
	return fixed;
}

/* A handler's word for a record that fails its own check (beyond its
 * size): counted bad.  Handlers otherwise return 0 or -errno. */
#define EV_BAD INT_MAX

static int on_proc(struct session *s, struct session_target *t, const void *data, size_t size)
{
	(void)t;
	(void)size;
	/* --children, --match: the attach stage's (follow.c) */
	if (s->hooks.proc_record)
		s->hooks.proc_record(s, data);
	return 0;
}

static int on_region(struct session *s, struct session_target *t, const void *data, size_t size)
{
	const struct fvbpf_region_event *re = data;

	(void)size;
	return re->region_id < s->reg->count ? handle_region(s, t, re) : EV_BAD;
}

static int on_api_enter(struct session *s, struct session_target *t, const void *data,
			size_t size)
{
	(void)size;
	return events_api_enter(s, t, data);
}

static int on_api_exit(struct session *s, struct session_target *t, const void *data, size_t size)
{
	(void)size;
	events_api_exit(s, t, data);
	return 0;
}

static int on_correlation(struct session *s, struct session_target *t, const void *data,
			  size_t size)
{
	const struct fvbpf_corr_event *ce = data;

	(void)s;
	(void)size;
	if (api_pairing_set_correlation(t->pairing, ce->hdr.tid, ce->correlation))
		t->agent->corr_without_call++;
	return 0;
}

static int on_gpu_chunk(struct session *s, struct session_target *t, const void *data,
			size_t size)
{
	const struct fvbpf_gpu_chunk *gc = data;

	(void)s;
	(void)size;
	if (gc->len > FVBPF_GPU_CHUNK)
		return EV_BAD;
	if (gc->index == 0)
		gpu_join_batch_start(t->gpu);
	if (gpu_join_chunk(t->gpu, gc->data, gc->len, gc->last) == -EINVAL)
		log_warn("PID %d: GPU record stream out of step (a ring-buffer drop?); "
			 "the rest of that batch is skipped", t->proc->pid);
	return 0;
}

static int on_status(struct session *s, struct session_target *t, const void *data, size_t size)
{
	(void)s;
	(void)size;
	handle_status(t, data);
	return 0;
}

static int on_pystack(struct session *s, struct session_target *t, const void *data,
		      size_t size)
{
	/* one shorter than its frames is left out, as pystack_record() does */
	if (t->pystk && s->pystacks && size >= 32)
		pystack_record(s->pystacks, t->pystk, data, size);
	return 0;
}

static int on_dl(struct session *s, struct session_target *t, const void *data, size_t size)
{
	(void)s;
	(void)size;
	return dl_events_handle(t, data) ? 0 : EV_BAD;
}

static int on_sync(struct session *s, struct session_target *t, const void *data, size_t size)
{
	(void)size;
	return handle_sync(s, t, data);
}

/* What a row asks of a record before its handler runs. */
enum ev_guard {
	EV_TARGET = 1 << 0,   /* from a process fvbpf traces (else counted bad) */
	EV_TS_CHECK = 1 << 1, /* its time is the library's: checked, pulled in, counted */
	/* On the target's timeline: dropped once the target finished, the fast
	 * path's operators older than it go first, time windows are cut up to
	 * it, and it marks where a segment that lost its end is cut.  GPU
	 * batches and the agent's word come late, after their segment. */
	EV_TIMELINE = 1 << 2,
};

struct ev_kind {
	size_t min_size;      /* shorter: counted bad */
	int (*handle)(struct session *s, struct session_target *t, const void *data, size_t size);
	unsigned int guards;  /* enum ev_guard */
};

#define EV_LIVE (EV_TARGET | EV_TIMELINE)

/* One row a record kind; a type with no handler is unknown (counted bad). */
static const struct ev_kind ev_kinds[] = {
	[FVBPF_EV_PROC] = { sizeof(struct fvbpf_proc_event), on_proc, 0 },
	[FVBPF_EV_REGION_BEGIN] = { sizeof(struct fvbpf_region_event), on_region,
				    EV_LIVE | EV_TS_CHECK },
	[FVBPF_EV_REGION_END] = { sizeof(struct fvbpf_region_event), on_region,
				  EV_LIVE | EV_TS_CHECK },
	[FVBPF_EV_THREAD_SYNC] = { sizeof(struct fvbpf_sync_event), on_sync, EV_LIVE },
	[FVBPF_EV_API_ENTER] = { sizeof(struct fvbpf_api_enter), on_api_enter, EV_LIVE },
	[FVBPF_EV_API_EXIT] = { sizeof(struct fvbpf_api_exit), on_api_exit, EV_LIVE },
	[FVBPF_EV_CORRELATION] = { sizeof(struct fvbpf_corr_event), on_correlation, EV_LIVE },
	[FVBPF_EV_GPU_CHUNK] = { sizeof(struct fvbpf_gpu_chunk), on_gpu_chunk, EV_TARGET },
	[FVBPF_EV_AGENT_STATUS] = { sizeof(struct fvbpf_agent_status_event), on_status,
				    EV_TARGET },
	[FVBPF_EV_TORCH_ENTER] = { sizeof(struct fvbpf_torch_event), torch_events_handle, EV_LIVE },
	[FVBPF_EV_TORCH_ENTER_SHAPES] = { sizeof(struct fvbpf_torch_event), torch_events_handle,
					  EV_LIVE },
	[FVBPF_EV_TORCH_EXIT] = { sizeof(struct fvbpf_torch_event), torch_events_handle, EV_LIVE },
	[FVBPF_EV_SCOPE_BEGIN] = { sizeof(struct fvbpf_scope_event), torch_events_handle, EV_LIVE },
	[FVBPF_EV_SCOPE_END] = { sizeof(struct fvbpf_scope_event), torch_events_handle, EV_LIVE },
	[FVBPF_EV_PYSTACK] = { 0, on_pystack, EV_LIVE },
	[FVBPF_EV_MEM] = { sizeof(struct fvbpf_mem_event), mem_events_handle, EV_LIVE },
	[FVBPF_EV_DL] = { sizeof(struct fvbpf_dl_event), on_dl, EV_LIVE },
};
#define EV_NKINDS (sizeof(ev_kinds) / sizeof(ev_kinds[0]))

/* An unknown type from a traced process still passes the timeline's guards
 * (as every record did before it was found unknown), then counts bad. */
static const struct ev_kind ev_unknown = { 0, NULL, EV_LIVE };

static const struct ev_kind *ev_kind_of(uint16_t type)
{
	return type < EV_NKINDS && ev_kinds[type].handle ? &ev_kinds[type] : &ev_unknown;
}

bool events_kind(uint16_t type, size_t *min_size)
{
	const struct ev_kind *k = ev_kind_of(type);

	*min_size = k->min_size;
	return k->handle != NULL;
}

int events_handle(struct session *s, const void *data, size_t size)
{
	struct fvbpf_region_event fixed;
	const struct fvbpf_event_hdr *h = data;
	const struct ev_kind *k;
	struct session_target *t = NULL;
	int err;

	s->records++;
	if (size < sizeof(*h) || h->version != FVBPF_EVENT_VERSION || h->size > size) {
		s->bad_records++;
		return 0;
	}
	k = ev_kind_of(h->type);
	if (k->guards & EV_TARGET) {
		t = find_target(s, h->tgid);
		if (!t) {
			s->bad_records++;
			return 0;
		}
	}
	if ((k->guards & EV_TS_CHECK) && size >= k->min_size) {
		data = region_ts_checked(s, t, data, &fixed);
		h = data;
	}
	if (k->guards & EV_TIMELINE) {
		/* A finished process still gets its GPU records. */
		if (t->finished)
			return 0;
		/* The fast path's operators older than this record go first. */
		if (t->fast->map)
			callback_ops_drain(s, t, h->ts_ns);
		if (t->next_cut)
			window_cut_until(s, t, h->ts_ns);
	}
	if (size < k->min_size || !k->handle) {
		s->bad_records++;
		return 0;
	}
	err = k->handle(s, t, data, size);
	if (err == EV_BAD) {
		s->bad_records++;
		return 0;
	}
	if (err)
		log_warn("pid %d: cannot record region event: %s", t->proc->pid, strerror(-err));
	/* Where a segment that lost its end is cut: after this record, which
	 * may have been the first after the gap.  GPU batches are flushed
	 * after their segment, so they do not count. */
	if (k->guards & EV_TIMELINE)
		drops_saw(t->loss, h->ts_ns);
	return 0;
}

int events_ring_cb(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;

	events_handle(s, data, size);
	ring_record_delay();
	/* the end of a bounded pass (ring_consume.c): libbpf stops at a
	 * negative return, this record consumed */
	if (s->ring_left && !--s->ring_left)
		return -EAGAIN;
	return 0;
}
