// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <json-c/json.h>
#include <string.h>
#include <time.h>

#include "fvbpf_fast.h"
#include "pipeline/torch/callback_ops.h"
#include "proc/inject/inject.h"
#include "probes/bpf_setup.h"
#include "probes/torch_plans.h"
#include "util/json_writer.h"
#include "util/log.h"
#include "output/dl_report.h"
#include "output/seg_writer.h"
#include "output/manifest.h"
#include "util/file/output_files.h"
#include "pipeline/over_limits.h"
#include "pipeline/api_pairing.h"
#include "pipeline/drops.h"
#include "pipeline/memory/mem_events.h"
#include "pipeline/py_status.h"
#include "pipeline/torch/torch_pairing.h"
#include "probes/cuda_probes.h"
#include "probes/mem_probes.h"

/* cudaLaunchKernel through the library's hook (attach/cuda_hook_attach.c). */
static json_object *launch_hook_json(const struct session_target *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "used", json_object_new_boolean(t->fast->hook_used));
	json_object_object_add(o, "call_sites", json_object_new_int((int)t->fast->hook_slots));
	json_object_object_add(o, "records", json_object_new_uint64(t->fast->api_records));
	/* the rings' losses, shared with the operator callbacks where both are on */
	json_object_object_add(o, "ring_records_lost",
			       json_object_new_uint64(callback_ops_lost(t->fast)));
	json_object_object_add(o, "why_not", json_string_obj(t->fast->hook_why));
	return o;
}

static json_object *cuda_json(const struct session_target *t)
{
	json_object *o = json_object_new_object(), *files = json_object_new_array(), *f;
	size_t i;

	for (i = 0; i < t->cuda->nfiles; i++) {
		if (!t->cuda->files[i].nsyms)
			continue;
		f = json_object_new_object();
		json_object_object_add(f, "path", json_string_obj(t->cuda->files[i].path));
		json_object_object_add(f, "functions", json_object_new_int((int)t->cuda->files[i].nsyms));
		json_object_object_add(f, "failed", json_object_new_int((int)t->cuda->files[i].failed));
		json_object_array_add(files, f);
	}
	json_object_object_add(o, "libraries", files);
	json_object_object_add(o, "functions_probed", json_object_new_int((int)t->cuda->attached));
	json_object_object_add(o, "functions_failed", json_object_new_int((int)t->cuda->failed));
	json_object_object_add(o, "calls_in_segments", json_object_new_uint64(t->calls));
	json_object_object_add(o, "calls_after_segment_closed", json_object_new_uint64(t->calls_outside));
	json_object_object_add(o, "returns_without_entry", json_object_new_uint64(t->pairing->unmatched_exits));
	json_object_object_add(o, "entries_without_return", json_object_new_uint64(t->pairing->lost_returns));
	json_object_object_add(o, "calls_nested_too_deep", json_object_new_uint64(t->pairing->too_deep));
	json_object_object_add(o, "kernel_handles_mapped", json_object_new_uint64(t->kernel_handles));
	json_object_object_add(o, "launch_hook", launch_hook_json(t));
	return o;
}

static json_object *gpu_json(const struct session_target *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "activity", json_string_obj(t->agent->status));
	json_object_object_add(o, "clock", json_string_obj(fvbpf_gpu_clock_name(t->agent->clock)));
	json_object_object_add(o, "records", json_object_new_uint64(t->gpu->records));
	json_object_object_add(o, "joined", json_object_new_uint64(t->gpu->joined));
	json_object_object_add(o, "outside_segments", json_object_new_uint64(t->gpu->outside));
	json_object_object_add(o, "late", json_object_new_uint64(t->gpu->late));
	json_object_object_add(o, "bad", json_object_new_uint64(t->gpu->bad));
	json_object_object_add(o, "missing", json_object_new_uint64(t->agent->gpu_missing));
	json_object_object_add(o, "cupti_dropped", json_object_new_uint64(t->agent->cupti_dropped));
	json_object_object_add(o, "correlations_without_call",
			       json_object_new_uint64(t->agent->corr_without_call));
	return o;
}

/* How libfvbpf.so (markers, agent) came into the process: --inject. */
static json_object *agent_library_json(const struct session_target *t)
{
	const struct inject_info *in = &t->proc->inject;
	json_object *o = json_object_new_object();
	char when[48];

	inject_wallclock(in, when, sizeof(when));
	json_object_object_add(o, "how", json_string_obj(inject_origin(in, t->proc->marker.path[0])));
	json_object_object_add(o, "injected_at", json_string_obj(when));
	json_object_object_add(o, "stopped_us", json_object_new_uint64(in->stopped_ns / 1000));
	json_object_object_add(o, "stops", json_object_new_int((int)in->tries));
	json_object_object_add(o, "signals_redelivered", json_object_new_int((int)in->signals));
	json_object_object_add(o, "epoll_wait_restarted", json_object_new_boolean(in->restarted));
	json_object_object_add(o, "why", json_string_obj(in->why));
	return o;
}

/* The Python shim (FastVideo's regions, -r py:): asked, and its answers. */
static json_object *python_shim_json(const struct session_target *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "asked", json_object_new_boolean(t->py->asked));
	json_object_object_add(o, "answered", json_object_new_boolean(t->py->heard));
	json_object_object_add(o, "status", json_string_obj(t->py->status));
	json_object_object_add(o, "fastvideo_entry_points", json_object_new_int(t->py->fastvideo));
	json_object_object_add(o, "py_functions_wrapped", json_object_new_uint64(t->py->funcs));
	json_object_object_add(o, "py_functions_waiting", json_object_new_uint64(t->py->waiting));
	json_object_object_add(o, "py_functions_unresolved", json_object_new_uint64(t->py->unresolved));
	json_object_object_add(o, "py_functions_refused", json_object_new_uint64(t->py->refused));
	return o;
}

/* --record-shapes: the measured layout against the job's own tensors. */
static json_object *layout_check_json(const struct torch_probes *tp)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "result", json_string_obj(torch_plans_layout_word(tp)));
	json_object_object_add(o, "tensors_fit", json_object_new_uint64(tp->lay_fit));
	json_object_object_add(o, "tensors_misfit", json_object_new_uint64(tp->lay_misfit));
	return o;
}

/* PyTorch: what was found and probed, and the libraries mapped. */
static json_object *torch_json(const struct session_target *t)
{
	json_object *o = json_object_new_object(), *libs = json_object_new_array();
	size_t i;

	json_object_object_add(o, "libtorch_cpu", json_string_obj(t->torchp->found ? t->torchp->path : ""));
	json_object_object_add(o, "op_source",
			       json_string_obj(t->ops == OPS_CALLBACKS ? "callbacks" : "uprobes"));
	json_object_object_add(o, "op_source_why", json_string_obj(t->fast->why));
	json_object_object_add(o, "torch_version", json_string_obj(t->fast->version));
	if (t->ops == OPS_CALLBACKS) {
		json_object_object_add(o, "callback_records", json_object_new_uint64(t->fast->records));
		json_object_object_add(o, "callback_ring_drops",
				       json_object_new_uint64(t->fast->ring_drops));
		json_object_object_add(o, "callback_no_ring", json_object_new_uint64(t->fast->no_ring));
		json_object_object_add(o, "callback_bad_records", json_object_new_uint64(t->fast->bad));
		json_object_object_add(o, "callback_late_segments", json_object_new_uint64(t->fast->late));
		json_object_object_add(o, "callback_calls_outside_segments",
				       json_object_new_uint64(t->fast->outside));
	}
	json_object_object_add(o, "operators_probed",
			       json_object_new_uint64(t->ops == OPS_CALLBACKS ? 0 : t->torchp->nops));
	json_object_object_add(o, "nodes_probed",
			       json_object_new_uint64(t->ops == OPS_CALLBACKS ? 0 : t->torchp->nnodes));
	json_object_object_add(o, "scopes_probed", json_object_new_boolean(t->torchp->scopes));
	json_object_object_add(o, "evaluate_function_classes",
			       json_object_new_uint64(t->torchp->eval_classes));
	json_object_object_add(o, "discover_ms", json_object_new_double((double)t->torchp->discover_ns / 1e6));
	json_object_object_add(o, "attach_ms", json_object_new_double((double)t->torchp->attach_ns / 1e6));
	json_object_object_add(o, "returns_lost", json_object_new_uint64(t->tpair->lost_returns));
	json_object_object_add(o, "returns_unmatched", json_object_new_uint64(t->tpair->unmatched));
	json_object_object_add(o, "too_deep", json_object_new_uint64(t->tpair->too_deep));
	json_object_object_add(o, "scopes_untracked", json_object_new_uint64(t->torch->scopes_untracked));
	json_object_object_add(o, "scope_ends_lost", json_object_new_uint64(t->tpair->scope_ends_lost));
	json_object_object_add(o, "scope_names_cut", json_object_new_uint64(t->torch->scopes_cut));
	/* --record-shapes: operators and autograd nodes with a plan, or why none */
	json_object_object_add(o, "operators_with_shapes", json_object_new_uint64(t->torchp->plans_ops));
	json_object_object_add(o, "nodes_with_shapes", json_object_new_uint64(t->torchp->plans_nodes));
	if (t->torchp->shapes_why[0])
		json_object_object_add(o, "shapes_unavailable", json_string_obj(t->torchp->shapes_why));
	json_object_object_add(o, "shapes_layout_check", layout_check_json(t->torchp));
	for (i = 0; i < t->torchp->nlibs; i++)
		json_object_array_add(libs, json_string_obj(t->torchp->libs[i]));
	json_object_object_add(o, "libraries", libs);
	json_object_object_add(o, "libraries_list_full",
			       json_object_new_boolean(t->torchp->nlibs == TORCH_LIBS_MAX));
	return o;
}

/* --profile-memory: the allocator library probed and what came of it. */
static json_object *profile_memory_json(const struct session_target *t)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "libc10", json_string_obj(t->memp->tried ? t->memp->path : ""));
	json_object_object_add(o, "functions_probed", json_object_new_uint64(t->memp->nprobed));
	json_object_object_add(o, "records", json_object_new_uint64(t->mem->records));
	json_object_object_add(o, "records_outside_segments", json_object_new_uint64(t->mem->outside));
	return o;
}

static json_object *processes_json(struct session *s)
{
	json_object *arr = json_object_new_array(), *o, *dl;
	struct session_target *t;
	int i;

	for (i = 0; i < s->ntargets; i++) {
		t = &s->targets[i];
		o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int(t->proc->pid));
		json_object_object_add(o, "rank", json_object_new_int(t->proc->rank));
		json_object_object_add(o, "rank_from_env", json_object_new_boolean(t->proc->rank_from_env));
		json_object_object_add(o, "rank_source", json_string_obj(rank_source_name(t->proc->ri.source)));
		json_object_object_add(o, "local_rank", json_object_new_int(t->proc->ri.local_rank));
		json_object_object_add(o, "node_rank", json_object_new_int(t->proc->ri.node_rank));
		json_object_object_add(o, "world_size", json_object_new_int(t->proc->ri.world_size));
		json_object_object_add(o, "restart", json_object_new_int((int)t->proc->restart));
		json_object_object_add(o, "ppid", json_object_new_int(t->proc->ppid));
		json_object_object_add(o, "pid_in_namespace", json_object_new_int(t->proc->ns_pid));
		json_object_object_add(o, "exec_replaced", json_object_new_boolean(t->superseded));
		json_object_object_add(o, "files_named_by_pid", json_object_new_boolean(t->proc->name_by_pid));
		json_object_object_add(o, "comm", json_string_obj(t->proc->comm));
		json_object_object_add(o, "command", json_string_obj(t->proc->cmdline));
		json_object_object_add(o, "marker_library", json_string_obj(t->proc->marker.path));
		json_object_object_add(o, "agent_library", agent_library_json(t));
		json_object_object_add(o, "python_shim", python_shim_json(t));
		dl = dl_report_json(t); /* only where there were DataLoader records */
		if (dl)
			json_object_object_add(o, "dataloader", dl);
		json_object_object_add(o, "segments", json_object_new_uint64(t->segments));
		json_object_object_add(o, "segments_skipped_by_schedule",
				       json_object_new_uint64(t->schedule_skipped));
		json_object_object_add(o, "incomplete_segments", json_object_new_uint64(t->incomplete));
		json_object_object_add(o, "exited", json_object_new_boolean(t->exited));
		json_object_object_add(o, "ringbuf_drops", json_object_new_uint64(t->loss->drops_seen));
		json_object_object_add(o, "drops_between_segments", json_object_new_uint64(t->loss->drops_outside));
		json_object_object_add(o, "segments_lost_end", json_object_new_uint64(t->loss->lost_ends));
		json_object_object_add(o, "segments_lost_begin", json_object_new_uint64(t->loss->lost_begins));
		json_object_object_add(o, "unbalanced_region_ends",
				       json_object_new_uint64(t->tracker->unbalanced));
		json_object_object_add(o, "marker_times_out_of_range",
				       json_object_new_uint64(t->marker_ts_fixed));
		json_object_object_add(o, "begins_after_segment_limit",
				       json_object_new_uint64(t->tracker->ignored_after_limit));
		json_object_object_add(o, "over_limits", over_limits_json(t));
		json_object_object_add(o, "cuda", cuda_json(t));
		json_object_object_add(o, "gpu", gpu_json(t));
		json_object_object_add(o, "torch", torch_json(t));
		if (s->profile_memory)
			json_object_object_add(o, "profile_memory", profile_memory_json(t));
		json_object_array_add(arr, o);
	}
	return arr;
}

/* --max-memory: the bound, the budget it left, what was held and what the
 * overload policy did (README, "Memory"). */
static json_object *memory_json(struct session *s)
{
	json_object *o = json_object_new_object();
	struct budget *m = &s->mem;

	json_object_object_add(o, "max_memory", json_object_new_uint64(m->max_memory));
	json_object_object_add(o, "budget", json_object_new_uint64(m->budget));
	json_object_object_add(o, "tables_budget", json_object_new_uint64(m->tables));
	json_object_object_add(o, "peak_tables_bytes",
			       json_object_new_uint64(atomic_load(&m->tables_peak)));
	json_object_object_add(o, "rss_after_setup", json_object_new_uint64(m->rss_setup));
	json_object_object_add(o, "slack", json_object_new_uint64(m->slack));
	json_object_object_add(o, "peak_rss", json_object_new_uint64(budget_rss_peak()));
	json_object_object_add(o, "peak_segment_bytes", json_object_new_uint64(atomic_load(&m->peak)));
	json_object_object_add(o, "segments_spilled",
			       json_object_new_uint64(atomic_load(&m->segments_spilled)));
	json_object_object_add(o, "bytes_spilled", json_object_new_uint64(atomic_load(&m->bytes_spilled)));
	json_object_object_add(o, "segments_dropped_memory",
			       json_object_new_uint64(atomic_load(&m->segments_dropped)));
	json_object_object_add(o, "segments_truncated_by_memory",
			       json_object_new_uint64(atomic_load(&m->segments_truncated)));
	json_object_object_add(o, "events_over_limit_memory",
			       json_object_new_uint64(atomic_load(&m->events_over_limit)));
	return o;
}

/* One record of the written-segment index into "files". */
struct files_out {
	FILE *f;
	size_t n;
};

static void file_record(json_object *rec, void *ctx)
{
	struct files_out *fo = ctx;

	fprintf(fo->f, "%s    %s", fo->n++ ? ",\n" : "\n",
		json_object_to_json_string_ext(rec, JSON_C_TO_STRING_PLAIN |
						     JSON_C_TO_STRING_NOSLASHESCAPE));
}

/*
 * @root, then "files" streamed from the writer's index: the list grows with
 * the run, so it is never held whole.  json-c's pretty form ends in "}":
 * the list goes in before it.
 */
static int write_root_and_files(FILE *f, json_object *root, struct seg_index *ix)
{
	const char *txt = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
							       JSON_C_TO_STRING_NOSLASHESCAPE);
	struct files_out fo = { .f = f };
	const char *end = strrchr(txt, '}');
	int ret;

	if (!end)
		return -EINVAL;
	while (end > txt && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	fwrite(txt, 1, (size_t)(end - txt), f);
	fputs(",\n  \"files\": [", f);
	ret = seg_index_each(ix, file_record, &fo);
	fputs(fo.n ? "\n  ]\n}\n" : " ]\n}\n", f);
	return ret;
}

static json_object *clock_point(uint64_t mono, uint64_t real, uint64_t span)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "monotonic_ns", json_object_new_uint64(mono));
	json_object_object_add(o, "realtime_ns", json_object_new_uint64(real));
	json_object_object_add(o, "read_span_ns", json_object_new_uint64(span));
	return o;
}

/* The processes there at the attach: armed together, and the instant from
 * which their segments began (cut_gate.c), on both clocks. */
static json_object *arming_json(const struct session_meta *m)
{
	json_object *o = json_object_new_object();
	uint64_t real = 0;

	if (m->cut_from_ns)
		real = m->cut_from_ns >= m->mono_at_start_ns ?
		       m->real_at_start_ns + (m->cut_from_ns - m->mono_at_start_ns) :
		       m->real_at_start_ns - (m->mono_at_start_ns - m->cut_from_ns);
	json_object_object_add(o, "processes", json_object_new_uint64(m->armed_processes));
	json_object_object_add(o, "armed_in_ns", json_object_new_uint64(m->armed_in_ns));
	json_object_object_add(o, "segments_from_monotonic_ns", json_object_new_uint64(m->cut_from_ns));
	json_object_object_add(o, "segments_from_realtime_ns", json_object_new_uint64(real));
	json_object_object_add(o, "start_at", json_object_new_boolean(m->start_at));
	return o;
}

/* What `fvbpf merge` aligns nodes by: CLOCK_REALTIME - CLOCK_MONOTONIC at
 * both ends of the attach. */
static json_object *clock_json(const struct session_meta *m)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "trace_clock", json_string_obj("CLOCK_MONOTONIC"));
	json_object_object_add(o, "start", clock_point(m->mono_at_start_ns, m->real_at_start_ns,
						       m->read_span_start_ns));
	json_object_object_add(o, "end", clock_point(m->mono_at_end_ns, m->real_at_end_ns,
						     m->read_span_end_ns));
	return o;
}

static json_object *regions_json(struct session *s, json_object **never)
{
	json_object *arr = json_object_new_array();
	const struct region_def *d;
	unsigned int i;

	*never = json_object_new_array();
	for (i = 0; i < s->nrequested; i++) {
		d = &s->reg->defs[s->requested[i]];
		json_object_array_add(arr, json_string_obj(d->name));
		if (!d->entered)
			json_object_array_add(*never, json_string_obj(d->name));
	}
	return arr;
}

int manifest_write(struct session *s, const struct attach_opts *o)
{
	json_object *root = json_object_new_object(), *loss, *warn, *never, *limits;
	char **warnings, when[48];
	struct fvbpf_counters bc;
	struct out_file of;
	size_t nw, i;
	int ret;

	seg_output_wallclock(&s->meta, s->meta.mono_at_start_ns, when, sizeof(when));
	json_object_object_add(root, "tool", json_string_obj("fvbpf"));
	json_object_object_add(root, "hostname", json_string_obj(s->meta.hostname));
	json_object_object_add(root, "started", json_string_obj(when));
	json_object_object_add(root, "output_dir", json_string_obj(o->outdir));
	json_object_object_add(root, "regions", regions_json(s, &never));
	json_object_object_add(root, "regions_never_entered", never);
	json_object_object_add(root, "clock", clock_json(&s->meta));
	json_object_object_add(root, "arming", arming_json(&s->meta));
	json_object_object_add(root, "processes", processes_json(s));
	if (s->follow && s->hooks.followed_json)
		json_object_object_add(root, "followed", s->hooks.followed_json(s));
	json_object_object_add(root, "memory", memory_json(s));

	loss = json_object_new_object();
	bpf_counters_read(s->skel, &bc);
	json_object_object_add(loss, "ringbuf_drops", json_object_new_uint64(bc.ringbuf_drops));
	json_object_object_add(loss, "unbalanced_region_ends", json_object_new_uint64(bc.unbalanced_ends));
	json_object_object_add(loss, "bad_records", json_object_new_uint64(s->bad_records));
	json_object_object_add(loss, "ring_unread_at_end", json_object_new_boolean(s->ring_unread));
	json_object_object_add(loss, "write_errors", json_object_new_int((int)seg_writer_write_errors(s->writer)));
	json_object_object_add(loss, "kernels_without_symbol", json_object_new_uint64(s->kernels_unknown));
	json_object_object_add(loss, "cuda_call_probes", json_object_new_boolean(s->api_probes));
	json_object_object_add(loss, "over_limits", over_limits_session_json(s));
	json_object_object_add(root, "loss", loss);

	warn = json_object_new_array();
	nw = log_warnings(&warnings);
	for (i = 0; i < nw; i++)
		json_object_array_add(warn, json_string_obj(warnings[i]));
	log_free_warnings(warnings, nw);
	json_object_object_add(root, "warnings", warn);
	json_object_object_add(root, "warnings_suppressed", json_object_new_uint64(log_warnings_suppressed()));
	limits = over_limits_bounds_json();
	json_object_object_add(root, "limits", limits);

	ret = out_open(&of, o->outdir, "manifest.json");
	if (!ret) {
		ret = write_root_and_files(of.f, root, seg_writer_index(s->writer));
		if (ret)
			out_abort(&of);
		else
			ret = out_commit(&of);
	}
	json_object_put(root);
	return ret;
}
