// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* What the followed tree became: the manifest's "followed" object and the
 * exit report's lines (moved out of follow.c). */
#include <stdio.h>

#include "attach/follow.h"
#include "attach/follow_internal.h"
#include "probes/bpf_setup.h"
#include "proc/proc_read.h"
#include "util/json_writer.h"
#include "util/log.h"

json_object *follow_json(const struct session *s)
{
	const struct follow *f = s->follow;
	json_object *o = json_object_new_object(), *arr = json_object_new_array(), *e;
	const struct tree_proc *p;
	struct fvbpf_counters bc;
	char cmd[1024];
	size_t i;

	json_object_object_add(o, "children", json_object_new_boolean(f->children));
	json_object_object_add(o, "match", f->pattern ? json_string_obj(f->pattern) : NULL);
	json_object_object_add(o, "max_processes_traced", json_object_new_int(s->cap_targets));
	for (i = 0; i < f->tree.n; i++) {
		p = &f->tree.procs[i];
		e = json_object_new_object();
		json_object_object_add(e, "pid", json_object_new_int(p->pid));
		json_object_object_add(e, "ppid", json_object_new_int(p->ppid));
		json_object_object_add(e, "comm", json_string_obj(p->comm));
		if (!p->exited && !proc_read_cmdline(p->pid, cmd, sizeof(cmd)))
			json_object_object_add(e, "command", json_string_obj(cmd));
		json_object_object_add(e, "origin", json_string_obj(proc_tree_origin_name(p->origin)));
		json_object_object_add(e, "traced", json_object_new_boolean(p->state == TREE_TRACED));
		json_object_object_add(e, "status", json_string_obj(proc_tree_state_name(p->state)));
		json_object_object_add(e, "exec_replaced", json_object_new_boolean(p->replaced));
		json_object_object_add(e, "exited", json_object_new_boolean(p->exited));
		json_object_array_add(arr, e);
	}
	json_object_object_add(o, "processes", arr);
	json_object_object_add(o, "processes_not_kept", json_object_new_uint64(f->tree.not_kept));
	json_object_object_add(o, "forks_seen", json_object_new_uint64(f->tree.forks));
	json_object_object_add(o, "execs_seen", json_object_new_uint64(f->tree.execs));
	json_object_object_add(o, "exits_seen", json_object_new_uint64(f->tree.exits));
	bpf_counters_read(s->skel, &bc); /* all 0 without BPF */
	json_object_object_add(o, "tree_map_full", json_object_new_uint64(f->map_full + bc.tree_full));
	json_object_object_add(o, "process_records_lost", json_object_new_uint64(bc.tree_drops));
	json_object_object_add(o, "traced_after_fork_or_exec", json_object_new_int((int)f->attach_latency_n));
	json_object_object_add(o, "fork_to_traced_mean_ms", json_object_new_double(
		f->attach_latency_n ? (double)f->attach_latency_sum_ns / f->attach_latency_n / 1e6 : 0));
	json_object_object_add(o, "fork_to_traced_max_ms",
			       json_object_new_double((double)f->attach_latency_max_ns / 1e6));
	return o;
}

void follow_report(const struct session *s)
{
	const struct follow *f = s->follow;
	struct fvbpf_counters bc;
	size_t i, listed = 0;

	if (!f)
		return;
	for (i = 0; i < f->tree.n; i++)
		if (f->tree.procs[i].state != TREE_TRACED && !f->tree.procs[i].replaced)
			listed++;
	log_info("process tree: %u traced, %zu listed but not traced (%u forked copies of traced "
		 "processes), %llu forks and %llu execs seen%s", f->traced, listed, f->copies,
		 (unsigned long long)f->tree.forks, (unsigned long long)f->tree.execs,
		 f->attach_latency_n ? "" : "");
	if (f->attach_latency_n)
		log_info("new processes traced %.1f ms after their fork or exec was seen (mean; max %.1f ms)",
			 (double)f->attach_latency_sum_ns / f->attach_latency_n / 1e6,
			 (double)f->attach_latency_max_ns / 1e6);
	bpf_counters_read(s->skel, &bc);
	if (bc.tree_drops)
		log_warn("%llu process records lost to a full ring buffer: the once-a-second /proc walk "
			 "found those processes", (unsigned long long)bc.tree_drops);
}
