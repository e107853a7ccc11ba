// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/drops.h"
#include "model/session.h"
#include "probes/bpf_setup.h"
#include "util/log.h"
#include "pipeline/pystack.h"
#include "pipeline/torch/torch_events.h"
#include "pipeline/torch/torch_shapes.h"
#include "probes/torch_ops.h"
#include "probes/torch_plans.h"
#include "proc/control/callback_channel.h"
#include "pipeline/torch/callback_rings.h"
#include "pipeline/torch/torch_pairing.h"

/* A scope that delimits segments, for the fast path's callbacks too: they
 * must be registered at a region scope's begin, and stepping starts at a
 * step scope's end (torch_fast.c follows BPF's rules). */
static void fast_gate_add(struct session *s, uint64_t hash, uint32_t kind)
{
	struct callback_tables tb = { 0 };
	int i;

	if (kind == FVBPF_GATE_REGION && s->nfast_gates < FVBPF_FAST_GATES)
		s->fast_gates[s->nfast_gates++] = hash;
	else if (kind == FVBPF_GATE_STEP && s->nfast_steps < FVBPF_FAST_STEPS)
		s->fast_steps[s->nfast_steps++] = hash;
	else
		s->fast_gates_full++; /* that scope opens no segment for the callbacks */
	tb.gates = s->fast_gates;
	tb.ngates = s->nfast_gates;
	tb.steps = s->fast_steps;
	tb.nsteps = s->nfast_steps;
	for (i = 0; i < s->ntargets; i++)
		if (s->targets[i].fast->map)
			callback_channel_scopes(s->targets[i].ctl, &tb);
}

static void gate_put(struct session *s, const char *name, uint32_t len, uint32_t kind)
{
	uint64_t hash = fvbpf_scope_hash(name, len);
	int fd;
	uint32_t have;

	if (!s->skel)
		return;
	fd = bpf_setup_map_fd(s->skel, FVBPF_MAP_TORCH_GATES);
	if (!bpf_map_lookup_elem(fd, &hash, &have))
		return; /* learned already */
	/* The library's tables first: a segment BPF opens at this scope must
	 * find the callbacks following it (the consumer alone writes both). */
	fast_gate_add(s, hash, kind);
	if (bpf_map_update_elem(fd, &hash, &kind, BPF_NOEXIST)) {
		s->gates_failed++;
		log_warn("cannot watch torch scope '%.*s': %s", (int)len, name, strerror(errno));
		return;
	}
	s->gates_installed++;
	log_info("torch scope '%.*s' now delimits segments (%s)", (int)len, name,
		 kind == FVBPF_GATE_STEP ? "--step-by" : "-r torch:");
}

static bool has_glob(const char *p)
{
	return strpbrk(p, "*?[\\") != NULL;
}

int torch_gates_preload(struct session *s)
{
	unsigned int i;

	/* Exact names need no first occurrence to be learned from. */
	for (i = 0; i < s->ntorch_globs; i++)
		if (!has_glob(s->torch_globs[i]))
			gate_put(s, s->torch_globs[i], (uint32_t)strlen(s->torch_globs[i]), FVBPF_GATE_REGION);
	if (s->step_by && !has_glob(s->step_by))
		gate_put(s, s->step_by, (uint32_t)strlen(s->step_by), FVBPF_GATE_STEP);
	return 0;
}

/* The gate kind a scope name asks for: 0 none.  A -r torch: glob's
 * matches are counted: one that matches nothing is said at exit. */
static uint32_t gate_kind(struct session *s, const char *name)
{
	unsigned int i;

	if (s->step_by && !fnmatch(s->step_by, name, 0))
		return FVBPF_GATE_STEP;
	for (i = 0; i < s->ntorch_globs; i++)
		if (!fnmatch(s->torch_globs[i], name, 0)) {
			s->torch_glob_hits[i]++;
			return FVBPF_GATE_REGION;
		}
	return 0;
}

/* A scope name as a region: file-safe characters, enabled. */
static int scope_region(struct session *s, const char *name)
{
	char safe[FVBPF_REGION_NAME_MAX + 1];
	size_t i;
	int idx;

	for (i = 0; name[i] && i < FVBPF_REGION_NAME_MAX; i++) {
		char c = name[i];

		safe[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '.' || c == '-' ? c : '_';
	}
	safe[i] = '\0';
	idx = registry_add(s->reg, safe, "torch scope");
	if (idx >= 0)
		s->reg->defs[idx].enabled = true;
	else if (!s->torch_regions_warned++)
		log_warn("torch scope '%s' cannot become a region (%s): its segments are not written",
			 safe, strerror(-idx));
	return idx;
}

/* A refused layout: what the open segment kept under it goes unknown too. */
static void forget_shapes(struct segment *seg)
{
	size_t i;

	for (i = 0; seg && i < seg->nops; i++)
		if (seg->ops[i].shapes) {
			seg->ops[i].shapes = 0;
			seg->ops[i].flags |= TORCH_CALL_SHAPES_UNKNOWN;
		}
}

/* --record-shapes: the first records decide whether the measured layout
 * fits this process's own tensors (torch_plans_check). */
static void layout_evidence(struct session_target *t, const void *data, size_t size)
{
	unsigned int fit, misfit;

	if (t->torchp->lay_state != LAYOUT_CHECKING)
		return;
	torch_shapes_tally(data, size, &fit, &misfit);
	if (torch_plans_check(t->torchp, fit, misfit))
		forget_shapes(t->tracker->cur);
}

/* --record-shapes: the entry's shapes as a record string in the name
 * table, or the call marked unknown (an op without a plan, a failed check,
 * a layout refused). */
static void op_shapes(struct session *s, struct session_target *t, const struct torch_id *id,
		      const void *data, size_t size, struct torch_call *op)
{
	char name[TORCH_NAME_MAX], sig[FVBPF_SHAPE_ARGS + 16], *rec;
	const struct fvbpf_torch_event *ev = data;

	if (!(s->record_shapes || s->with_flops) || (id->kind != TORCH_OP && id->kind != TORCH_NODE) ||
	    (id->kind == TORCH_NODE && !id->sig))
		return; /* scopes, evaluate_function (by vtable): no inputs torch shows */
	op->flags |= TORCH_CALL_SHAPES_UNKNOWN;
	if (ev->hdr.type != FVBPF_EV_TORCH_ENTER_SHAPES || !id->sig)
		return;
	layout_evidence(t, data, size);
	if (t->torchp->lay_state == LAYOUT_REFUSED)
		return; /* sent before BPF lost its plans */
	rec = malloc(TORCH_SHAPES_MAX);
	if (!rec)
		return;
	name_table_get(&s->knames, id->name, name, sizeof(name));
	name_table_get(&s->knames, id->sig, sig, sizeof(sig));
	if (sig[0] == '-')
		memmove(sig, sig + 1, strlen(sig)); /* no arguments */
	if (!torch_shapes_format(data, size, name, sig, rec, TORCH_SHAPES_MAX)) {
		op->shapes = name_table_intern(&s->knames, rec);
		if (op->shapes)
			op->flags &= (uint8_t)~TORCH_CALL_SHAPES_UNKNOWN;
	}
	free(rec);
}

/* The sequence number and, with --with-stack, a node's forward stack. */
static void op_seq(struct session_target *t, struct torch_call *op, const struct torch_seq *sq)
{
	uint64_t tid;

	if (!sq || sq->seq_nr < 0)
		return;
	op->seq1 = (uint64_t)sq->seq_nr + 1;
	/* a node: its forward's thread; a forward op: its own (the pair's key) */
	tid = sq->node ? sq->fwd_tid : sq->rf_tid;
	op->fwd_tid = tid > UINT32_MAX ? UINT32_MAX : (uint32_t)tid;
	if (t->pystk)
		op->fwd_stack = fwd_link_op(&t->pystk->fwd, sq->seq_nr, sq->rf_tid, sq->fwd_tid,
					    op->stack);
}

/* A node's evaluate_function (the call open around it) gets the node's
 * sequence number, forward thread and forward stack, as torch gives them
 * to it (set_autograd_evaluate in its profiler's collection): it records
 * none itself. */
static void evaluate_seq(struct session *s, struct session_target *t, const struct torch_call *node)
{
	char name[sizeof(TORCH_EVAL_PREFIX)];
	struct segment *seg = t->tracker->cur;
	struct torch_call *parent;
	long i = torch_pairing_innermost(t->tpair, seg, node->tid);

	if (i < 0)
		return;
	parent = &seg->ops[i];
	if (parent->seq1 || parent->kind != TORCH_NODE)
		return;
	name_table_get(&s->knames, parent->name, name, sizeof(name));
	if (strcmp(name, TORCH_EVAL_PREFIX))
		return; /* the name cut to the prefix's length: not the prefix */
	parent->seq1 = node->seq1;
	parent->fwd_tid = node->fwd_tid;
	parent->fwd_stack = node->fwd_stack;
}

static int on_op(struct session *s, struct session_target *t, const struct fvbpf_torch_event *ev,
		 size_t size, const struct torch_seq *sq)
{
	bool same = (ev->hdr.type == FVBPF_EV_TORCH_ENTER ||
		     ev->hdr.type == FVBPF_EV_TORCH_ENTER_SHAPES) && (ev->id & FVBPF_TORCH_SAME_STACK);
	uint32_t op_id = same ? ev->id & ~FVBPF_TORCH_SAME_STACK : ev->id;
	const struct torch_id *id = torch_table_get(s->torch, op_id);
	struct torch_call op = { 0 };

	if (!id) {
		s->bad_records++;
		return 0;
	}
	drops_charge_low32(t->loss, t->tracker, ev->drops);
	if (ev->hdr.type == FVBPF_EV_TORCH_EXIT) {
		torch_pairing_exit(t->tpair, t->tracker->cur, ev->hdr.tid, op_id, ev->hdr.ts_ns);
		return 0;
	}
	op.start_ns = ev->hdr.ts_ns;
	op.tid = ev->hdr.tid;
	op.name = id->name;
	op.overload = id->overload;
	op.kind = id->kind;
	op_shapes(s, t, id, ev, size, &op);
	if (t->pystk)
		op.stack = pystack_take_op(t->pystk, op.tid, op.start_ns, same);
	op_seq(t, &op, sq);
	if (sq && sq->node)
		evaluate_seq(s, t, &op);
	return torch_pairing_enter(t->tpair, t->tracker->cur, op_id, &op, 0, -1);
}

/* A gated scope's record as the region record it stands for, so that
 * drops.c treats its losses as a region's. */
static struct fvbpf_region_event as_region(const struct fvbpf_scope_event *ev, uint16_t type,
					   int region)
{
	struct fvbpf_region_event re = {
		.hdr = ev->hdr, .region_id = (uint32_t)region, .depth = ev->depth,
		.drops = ev->drops, .outer = ev->outer,
	};

	re.hdr.type = type;
	return re;
}

/* A region scope's begin or end into the segment tracker, through the
 * same loss logic as region records (on @tid: a scope's end may be
 * reported on another thread than its begin's). */
static int gated(struct session_target *t, const struct fvbpf_scope_event *ev, uint16_t type,
		 int region, uint32_t tid)
{
	struct fvbpf_region_event re = as_region(ev, type, region);

	re.hdr.tid = tid;
	return drops_region(t->loss, t->tracker, &re);
}

/* --step-by has matched no scope yet: keep the names seen, and say so
 * once after STEP_GLOB_PATIENCE scopes. */
static bool torch_glob_unmatched(const struct session *s)
{
	unsigned int i;

	for (i = 0; i < s->ntorch_globs; i++)
		if (!s->torch_glob_hits[i])
			return true;
	return false;
}

static void step_glob_watch(struct session *s, uint32_t name)
{
	unsigned int i;

	if (!(s->step_by && s->step_region >= 0 && !s->reg->defs[s->step_region].entered) &&
	    !torch_glob_unmatched(s))
		return;
	for (i = 0; i < s->nscopes_seen && s->scopes_seen[i] != name; i++)
		;
	if (i == s->nscopes_seen && i < STEP_SCOPES_SHOWN)
		s->scopes_seen[s->nscopes_seen++] = name;
	if (!s->step_by || s->step_region < 0 || s->reg->defs[s->step_region].entered)
		return;
	if (++s->scopes_unmatched == STEP_GLOB_PATIENCE && !s->step_glob_warned) {
		s->step_glob_warned = true;
		torch_step_glob_report(s);
	}
}

/* "'a', 'b', ..." of the scope names kept (a cleaned copy). */
static void seen_names(struct session *s, char *names, size_t len)
{
	char one[160];
	size_t used = 0;
	unsigned int i;
	int n;

	names[0] = '\0';
	for (i = 0; i < s->nscopes_seen && used < len; i++) {
		name_table_get(&s->knames, s->scopes_seen[i], one, sizeof(one));
		n = snprintf(names + used, len - used, "%s'%s'", i ? ", " : "", one);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

void torch_globs_report(struct session *s)
{
	char names[1024];
	unsigned int i;

	for (i = 0; i < s->ntorch_globs; i++) {
		if (s->torch_glob_hits[i])
			continue;
		seen_names(s, names, sizeof(names));
		if (!s->nscopes_seen)
			log_warn("-r torch:%s matched no torch scope: none was seen at all (is the job "
				 "running? torch scopes come from record_function and the optimizer)",
				 s->torch_globs[i]);
		else
			log_warn("-r torch:%s matched no torch scope (matching is case-sensitive, "
				 "fnmatch globs); names seen: %s%s", s->torch_globs[i], names,
				 s->nscopes_seen == STEP_SCOPES_SHOWN ? ", ..." : "");
	}
}

void torch_step_glob_report(struct session *s)
{
	char names[1024];

	seen_names(s, names, sizeof(names));
	if (!s->nscopes_seen)
		log_warn("--step-by '%s' matched no torch scope: none was seen at all (is the job "
			 "running steps? torch scopes come from record_function and the optimizer)",
			 s->step_by);
	else
		log_warn("--step-by '%s' matched none of %llu torch scopes (matching is "
			 "case-sensitive, fnmatch globs); names seen: %s%s", s->step_by,
			 (unsigned long long)s->scopes_unmatched, names,
			 s->nscopes_seen == STEP_SCOPES_SHOWN ? ", ..." : "");
}

static int on_scope_begin(struct session *s, struct session_target *t,
			  const struct fvbpf_scope_event *ev)
{
	char name[FVBPF_SCOPE_NAME + 1];
	struct torch_call op = { 0 };
	uint32_t len = ev->name_len <= FVBPF_SCOPE_NAME ? ev->name_len : FVBPF_SCOPE_NAME, kind;
	int region = -1, err;

	memcpy(name, ev->name, len);
	name[len] = '\0'; /* a NUL inside ends it */
	if (ev->flags & FVBPF_SCOPE_UNTRACKED)
		t->torch->scopes_untracked++;
	if (ev->flags & FVBPF_SCOPE_CUT) {
		t->torch->scopes_cut++;
		op.flags |= TORCH_CALL_NAME_CUT;
	}
	kind = gate_kind(s, name);
	if (kind && !(ev->flags & (FVBPF_SCOPE_GATED | FVBPF_SCOPE_STEP)))
		gate_put(s, ev->name, len, kind); /* from the next occurrence on */
	if (ev->flags & FVBPF_SCOPE_GATED) {
		region = scope_region(s, name);
		if (region >= 0) {
			s->reg->defs[region].entered++;
			err = gated(t, ev, FVBPF_EV_REGION_BEGIN, region, ev->hdr.tid);
			if (err)
				return err;
		}
	} else {
		drops_charge(t->loss, t->tracker, ev->drops);
	}
	op.start_ns = ev->hdr.ts_ns;
	op.tid = ev->hdr.tid;
	op.name = name_table_intern(&s->knames, name[0] ? name : "(unnamed scope)");
	op.kind = TORCH_SCOPE;
	if (!(ev->flags & (FVBPF_SCOPE_GATED | FVBPF_SCOPE_STEP)))
		step_glob_watch(s, op.name);
	torch_pairing_forget_scope(t->tpair, t->tracker->cur, ev->handle, ev->hdr.ts_ns);
	return torch_pairing_enter(t->tpair, t->tracker->cur, TORCH_SCOPE_ID, &op, ev->handle, region);
}

static int on_scope_end(struct session *s, struct session_target *t,
			const struct fvbpf_scope_event *ev)
{
	int region = -1, err = 0;
	uint32_t tid = ev->hdr.tid;

	torch_pairing_scope_end(t->tpair, t->tracker->cur, ev->handle, ev->hdr.ts_ns, &region, &tid);
	if (region >= 0 && (ev->flags & FVBPF_SCOPE_GATED))
		err = gated(t, ev, FVBPF_EV_REGION_END, region, tid);
	else
		drops_charge(t->loss, t->tracker, ev->drops);
	if (!err && (ev->flags & FVBPF_SCOPE_STEP) && s->step_region >= 0) {
		/* A step runs from one step scope's end to the next's; after a
		 * lost step end the open one is cut incomplete instead. */
		if (drops_step_end(t->loss, t->tracker, ev->outer))
			t->torch->stepping = false;
		if (t->torch->stepping)
			err = seg_on_end(t->tracker, tid, (uint32_t)s->step_region, ev->hdr.ts_ns);
		t->torch->stepping = true;
		s->reg->defs[s->step_region].entered++;
		if (!err)
			err = seg_on_begin(t->tracker, tid, (uint32_t)s->step_region, ev->hdr.ts_ns);
	}
	return err;
}

int torch_events_fast(struct session *s, struct session_target *t,
		      const struct fvbpf_torch_event *ev, const struct torch_seq *sq)
{
	return on_op(s, t, ev, sizeof(*ev), sq);
}

int torch_events_handle(struct session *s, struct session_target *t, const void *data, size_t size)
{
	const struct fvbpf_event_hdr *h = data;

	switch (h->type) {
	case FVBPF_EV_TORCH_ENTER:
	case FVBPF_EV_TORCH_ENTER_SHAPES:
	case FVBPF_EV_TORCH_EXIT:
		if (size < sizeof(struct fvbpf_torch_event))
			break;
		return on_op(s, t, data, size, NULL);
	case FVBPF_EV_SCOPE_BEGIN:
	case FVBPF_EV_SCOPE_END:
		if (size < sizeof(struct fvbpf_scope_event))
			break;
		return h->type == FVBPF_EV_SCOPE_BEGIN ? on_scope_begin(s, t, data) :
							 on_scope_end(s, t, data);
	default:
		break;
	}
	s->bad_records++;
	return 0;
}
