// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The exit report: files written, per-process counters, losses. */
#include <stdio.h>

#include "probes/bpf_setup.h"
#include "probes/torch_plans.h"
#include "proc/inject/inject.h"
#include "util/log.h"
#include "pipeline/over_limits.h"
#include "output/seg_writer.h"
#include "output/exit_report.h"
#include "output/seg_output.h"
#include "pipeline/torch/torch_events.h"
#include "fvbpf_fast.h"
#include "pipeline/py_status.h"
#include "pipeline/comm/collectives.h"
#include "pipeline/api_pairing.h"
#include "pipeline/drops.h"
#include "pipeline/memory/mem_events.h"
#include "pipeline/torch/callback_ops.h"
#include "pipeline/torch/torch_pairing.h"
#include "probes/cuda_probes.h"
#include "probes/mem_probes.h"
#include "output/dl_report.h"

/* --inject: what became of it for this process. */
/* Where the operators came from, and what the fast path lost. */
static void report_op_source(const struct session_target *st)
{
	const struct callback_ops *f = st->fast;

	if (st->ops != OPS_CALLBACKS) {
		printf("    operators: uprobes%s%s%s\n", f->why[0] ? " (PyTorch's callbacks not used: " : "",
		       f->why, f->why[0] ? ")" : "");
		return;
	}
	printf("    operators: PyTorch %s's callbacks through libfvbpf.so, %llu records; lost: %llu "
	       "to full rings, %llu of threads without a ring, %llu bad records; %llu segments "
	       "registered late; %llu callback calls outside segments\n", f->version,
	       (unsigned long long)f->records, (unsigned long long)f->ring_drops,
	       (unsigned long long)f->no_ring, (unsigned long long)f->bad,
	       (unsigned long long)f->late, (unsigned long long)f->outside);
}

/* cudaLaunchKernel through libfvbpf.so's hook (docs/cuda.md), where asked. */
/* Gloo's collectives and what of them was lost (collectives.h). */
static void report_collectives(const struct session_target *st)
{
	const struct coll_counts *n = coll_counts(st->coll);

	printf("    collectives: %u gloo functions probed, %llu collectives joined (%llu with their "
	       "sizes, %llu outside segments); lost: %llu past a segment's limit, %llu runs without their work, %llu "
	       "works never whole (table full), %llu process groups unread, %llu names cleaned or "
	       "cut\n", st->cuda->gloo,
	       (unsigned long long)n->joined, (unsigned long long)n->sized,
	       (unsigned long long)st->colls_outside,
	       (unsigned long long)st->colls_dropped,
	       (unsigned long long)n->no_work, (unsigned long long)n->evicted,
	       (unsigned long long)n->pg_unread, (unsigned long long)n->name_cut);
}

static void report_launch_hook(const struct session_target *st)
{
	const struct callback_ops *f = st->fast;

	if (!st->cuda->attached)
		return;
	if (!f->hook_used) {
		printf("    launches: uprobes%s%s%s\n", f->hook_why[0] ? " (libfvbpf.so's hook not used: " : "",
		       f->hook_why, f->hook_why[0] ? ")" : "");
		return;
	}
	printf("    launches: cudaLaunchKernel through libfvbpf.so's hook on %u call site%s, %llu "
	       "records (entry or return); the rings lost %llu (shared with the operator "
	       "callbacks)\n", f->hook_slots, f->hook_slots == 1 ? "" : "s",
	       (unsigned long long)f->api_records, (unsigned long long)callback_ops_lost(f));
}

/* --record-shapes: plans and the layout's check on the job's tensors, or why none. */
static void report_shapes(const struct session *s, const struct session_target *st)
{
	const struct torch_probes *tp = st->torchp;

	if (!(s->record_shapes || s->with_flops) || !tp->found)
		return;
	if (tp->shapes_why[0])
		printf("    shapes: none: %s\n", tp->shapes_why);
	else
		printf("    shapes: %u operator and %u node plans; TensorImpl layout %s on the "
		       "process's tensors (%u fit it, %u did not)\n", tp->plans_ops, tp->plans_nodes,
		       torch_plans_layout_word(tp), tp->lay_fit, tp->lay_misfit);
}

static void report_agent_library(const struct session_target *st)
{
	const struct inject_info *in = &st->proc->inject;
	char when[48];

	switch (in->state) {
	case INJECT_INJECTED:
		inject_wallclock(in, when, sizeof(when));
		printf("    agent: libfvbpf.so injected at %s, the target stopped %llu us%s\n", when,
		       (unsigned long long)(in->stopped_ns / 1000), in->signals ?
		       " (signals that came meanwhile delivered after)" : "");
		break;
	case INJECT_REUSED:
		printf("    agent: libfvbpf.so already loaded (reused), nothing injected\n");
		break;
	case INJECT_REFUSED:
	case INJECT_FAILED:
		printf("    agent: --inject %s: %s\n", inject_state_name(in->state), in->why);
		break;
	default:
		break;
	}
}

static bool rec_flag(json_object *rec, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(rec, key, &v) && json_object_get_boolean(v);
}

static const char *rec_text(json_object *rec, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(rec, key, &v) ? json_object_get_string(v) : "";
}

/* Files the exit report names: the first ones, and those marked (the
 * rest are in the manifest: a 64-rank job of 1000 steps is 64000 files). */
#define LISTED_PLAIN 16
#define LISTED_MARKED 16

struct listing {
	size_t plain, marked, left_out;
};

/* One written segment, from the writer's index (seg_index.h). */
static void report_file(json_object *rec, void *ctx)
{
	const char *why = rec_text(rec, "not_counted_why");
	bool incomplete = rec_flag(rec, "incomplete");
	bool truncated = rec_flag(rec, "truncated_by_memory");
	bool marked = why[0] || incomplete || truncated;
	struct listing *l = ctx;
	json_object *v;

	if (!json_object_object_get_ex(rec, "trace", &v))
		return;
	if (marked ? l->marked++ >= LISTED_MARKED : l->plain++ >= LISTED_PLAIN) {
		l->left_out++;
		return;
	}
	printf("  %s%s%s%s%s%s\n", json_object_get_string(v), why[0] ? "  (not counted: " : "",
	       why, why[0] ? ")" : "", incomplete ? "  (incomplete)" : "",
	       truncated ? "  (truncated by --max-memory)" : "");
}

/* Of the segments written, those that count toward -n. */
static void count_file(json_object *rec, void *ctx)
{
	json_object *v;

	if (json_object_object_get_ex(rec, "counted", &v) && !json_object_get_boolean(v))
		(*(size_t *)ctx)++;
}

static double mib(uint64_t b)
{
	return (double)b / (1024.0 * 1024.0);
}

/* --max-memory: the bound, what was held, what the overload policy did. */
static void report_memory(struct session *s)
{
	struct budget *m = &s->mem;

	printf("  memory: max %.1f MiB, budget for segments %.1f MiB and for names and stacks "
	       "%.1f MiB (RSS after setup %.1f MiB, slack %.1f MiB), peak RSS %.1f MiB, peak in "
	       "segments %.1f MiB, in names and stacks %.1f MiB; %llu segments "
	       "spilled (%.1f MiB), %llu dropped, %llu truncated, %llu events over the limit\n",
	       mib(m->max_memory), mib(m->budget), mib(m->tables), mib(m->rss_setup), mib(m->slack),
	       mib(budget_rss_peak()), mib(atomic_load(&m->peak)),
	       mib(atomic_load(&m->tables_peak)),
	       (unsigned long long)atomic_load(&m->segments_spilled),
	       mib(atomic_load(&m->bytes_spilled)),
	       (unsigned long long)atomic_load(&m->segments_dropped),
	       (unsigned long long)atomic_load(&m->segments_truncated),
	       (unsigned long long)atomic_load(&m->events_over_limit));
}

/* A py: item a target's shim refused: its refusal was said already. */
static bool refused_by_shim(const struct session *s, uint64_t hash)
{
	int t;

	for (t = 0; t < s->ntargets; t++)
		if (py_status_refused(s->targets[t].py, hash))
			return true;
	return false;
}

void report_print(struct session *s, const struct attach_opts *o)
{
	struct seg_index *idx = seg_writer_index(s->writer);
	size_t n = idx->count, uncounted = 0;
	struct listing listed = { 0 };
	struct fvbpf_counters bc;
	unsigned int i;
	int t;

	seg_index_each(idx, count_file, &uncounted);
	if (uncounted)
		printf("fvbpf: wrote %zu segment%s into %s (%zu counted, %zu not: see below)\n", n,
		       n == 1 ? "" : "s", o->outdir, n - uncounted, uncounted);
	else
		printf("fvbpf: wrote %zu segment%s into %s\n", n, n == 1 ? "" : "s", o->outdir);
	seg_index_each(idx, report_file, &listed);
	if (listed.left_out)
		printf("  ... and %zu more (%s/manifest.json lists every file)\n", listed.left_out,
		       o->outdir);
	for (t = 0; t < s->ntargets; t++) {
		struct session_target *st = &s->targets[t];

		char restart[32] = "", rank[48];

		if (st->proc->restart)
			snprintf(restart, sizeof(restart), " restart %u", st->proc->restart);
		seg_output_rank_text(st->proc, rank, sizeof(rank));
		printf("  pid %d (%s%s): %u segment%s, %u incomplete, %llu unbalanced region ends%s%s\n",
		       st->proc->pid, rank, restart, st->segments, st->segments == 1 ? "" : "s",
		       st->incomplete, (unsigned long long)st->tracker->unbalanced,
		       st->exited ? ", exited" : "", st->superseded ? ", exec'd another program" : "");
		if (st->marker_ts_fixed)
			printf("    markers: %llu region times from the library out of range "
			       "(before the attach or after the clock), pulled in\n",
			       (unsigned long long)st->marker_ts_fixed);
		if (s->schedule.set)
			printf("    --schedule: %llu segments not written (skip_first, wait and warmup "
			       "steps)\n", (unsigned long long)st->schedule_skipped);
		if (st->loss->drops_seen)
			printf("    drops: %llu ring-buffer drops, %llu of them between segments; %llu "
			       "segment%s lost %s end, %llu lost %s start\n",
			       (unsigned long long)st->loss->drops_seen, (unsigned long long)st->loss->drops_outside,
			       (unsigned long long)st->loss->lost_ends, st->loss->lost_ends == 1 ? "" : "s",
			       st->loss->lost_ends == 1 ? "its" : "their", (unsigned long long)st->loss->lost_begins,
			       st->loss->lost_begins == 1 ? "its" : "their");
		if (s->api_probes)
			printf("    CUDA: %u functions probed, %llu calls in segments, %llu returns "
			       "without entry, %llu entries without return\n", st->cuda->attached,
			       (unsigned long long)st->calls,
			       (unsigned long long)st->pairing->unmatched_exits,
			       (unsigned long long)st->pairing->lost_returns);
		if (s->api_probes)
			report_launch_hook(st);
		if (st->cuda->gloo)
			report_collectives(st);
		dl_report_line(st);
		if (st->torchp->found)
			report_op_source(st);
		if (st->torchp->found && st->ops != OPS_CALLBACKS)
			printf("    torch: %u operators, %u nodes probed%s (read %.0f ms, attach %.0f ms); "
			       "%llu returns lost (exceptions), %llu unmatched, %llu too deep, %llu scopes "
			       "untracked, %llu scope names cut\n", st->torchp->nops, st->torchp->nnodes,
			       st->torchp->scopes ? ", scopes" : ", NO scopes",
			       (double)st->torchp->discover_ns / 1e6, (double)st->torchp->attach_ns / 1e6,
			       (unsigned long long)st->tpair->lost_returns,
			       (unsigned long long)st->tpair->unmatched,
			       (unsigned long long)st->tpair->too_deep,
			       (unsigned long long)st->torch->scopes_untracked,
			       (unsigned long long)st->torch->scopes_cut);
		if (st->torchp->found && st->ops == OPS_CALLBACKS)
			printf("    torch: scopes%s probed (read %.0f ms, attach %.0f ms); %llu returns "
			       "lost (exceptions), %llu unmatched, %llu too deep, %llu scopes untracked, "
			       "%llu scope names cut\n", st->torchp->scopes ? "" : " NOT",
			       (double)st->torchp->discover_ns / 1e6, (double)st->torchp->attach_ns / 1e6,
			       (unsigned long long)st->tpair->lost_returns,
			       (unsigned long long)st->tpair->unmatched,
			       (unsigned long long)st->tpair->too_deep,
			       (unsigned long long)st->torch->scopes_untracked,
			       (unsigned long long)st->torch->scopes_cut);
		report_shapes(s, st);
		report_agent_library(st);
		if (st->memp->tried)
			printf("    profile memory: %u allocator functions probed in %s; %llu records in "
			       "segments, %llu with none open\n", st->memp->nprobed, st->memp->path,
			       (unsigned long long)st->mem->records, (unsigned long long)st->mem->outside);
		if (st->py->asked)
			printf("    python shim: %s; %u py: functions wrapped, %u waiting for their "
			       "module, %u unresolved, %u refused\n",
			       st->py->status[0] ? st->py->status : "no answer (no Python code ran)",
			       st->py->funcs, st->py->waiting, st->py->unresolved, st->py->refused);
		printf("    GPU: %s; %llu records, %llu joined, %llu missing, %llu late, %llu outside "
		       "segments, %llu dropped by CUPTI\n", st->agent->status,
		       (unsigned long long)st->gpu->records, (unsigned long long)st->gpu->joined,
		       (unsigned long long)st->agent->gpu_missing, (unsigned long long)st->gpu->late,
		       (unsigned long long)st->gpu->outside, (unsigned long long)st->agent->cupti_dropped);
		over_limits_print(stdout, st);
	}
	bpf_counters_read(s->skel, &bc);
	if (bc.eval_unknown)
		printf("  autograd::engine::evaluate_function on %llu nodes of classes outside "
		       "libtorch_cpu (PyNode, C++ extensions): not recorded\n",
		       (unsigned long long)bc.eval_unknown);
	printf("  loss: %llu ring-buffer drops, %llu bad records, %u write errors, %llu kernels "
	       "without symbol\n", (unsigned long long)bc.ringbuf_drops,
	       (unsigned long long)s->bad_records, seg_writer_write_errors(s->writer),
	       (unsigned long long)s->kernels_unknown);
	if (s->ring_unread)
		printf("  loss: records still in the ring when fvbpf stopped were not read (it fell "
		       "behind the targets)\n");
	over_limits_session_print(stdout, s);
	report_memory(s);
	for (i = 0; i < s->nrequested; i++) {
		if (s->reg->defs[s->requested[i]].entered ||
		    refused_by_shim(s, s->reg->defs[s->requested[i]].hash))
			continue;
		if ((int)s->requested[i] == s->step_region && s->step_by) {
			torch_step_glob_report(s);
			continue;
		}
		log_warn("region '%s' was never entered while attached: check the name and that "
			 "the target runs that code", s->reg->defs[s->requested[i]].name);
	}
	torch_globs_report(s);
	log_report_suppressed();
}

