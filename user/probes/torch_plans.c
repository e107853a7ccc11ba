// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "proc/proc_maps.h"
#include "proc/torch/torch_layout.h"
#include "probes/torch_abi.h"
#include "probes/torch_plans.h"

static int c10_cb(const struct proc_map *m, void *arg)
{
	const char *base = strrchr(m->path, '/');

	base = base ? base + 1 : m->path;
	if (!proc_map_is_file(m) || m->pgoff || strncmp(base, "libc10.so", 9))
		return 0;
	*(uint64_t *)arg = m->start;
	return 1;
}

/* Where the target maps libc10.so's first page (its vtables' base), 0 none. */
static uint64_t c10_base(pid_t pid)
{
	uint64_t base = 0;

	proc_maps_foreach(pid, c10_cb, &base);
	return base;
}

static int put_plans(struct torch_probes *tp, struct torch_table *tt, const struct torch_file *tf,
		     uint32_t base, const struct torch_schemas *ts, const struct fvbpf_tensor_layout *lay,
		     int undef)
{
	struct fvbpf_shape_plan plan;
	char sig[FVBPF_SHAPE_ARGS + 16];
	size_t n;
	uint32_t id;
	size_t i;

	int err;

	for (i = 0; i < tf->n; i++) {
		memset(&plan, 0, sizeof(plan));
		if (tf->syms[i].kind == TORCH_NODE) {
			/* Node::apply(variable_list &&inputs), returning a vector: sret in
			 * rdi, this in rsi, &inputs in rdx */
			plan.nargs = 1;
			plan.args[0].kind = FVBPF_ARG_VEC;
			plan.args[0].loc = 2;
			snprintf(sig, sizeof(sig), "%c", TORCH_SIG_VEC);
			err = 0;
		} else if (tf->syms[i].kind == TORCH_OP) {
			err = torch_schemas_plan(ts, tf->syms[i].name, tf->syms[i].overload,
						 tf->syms[i].mangled, &plan, sig);
		} else {
			continue;
		}
		if (err) {
			/* its shapes will be unknown: say which, with -v */
			tp->noplan_schema += err == -ENOENT;
			tp->noplan_types += err != -ENOENT;
			log_debug("pid %d: no shapes for %s%s%s: %s", tp->pid, tf->syms[i].name,
				  tf->syms[i].overload[0] ? "." : "", tf->syms[i].overload,
				  err == -ENOENT ? "no schema" :
				  "argument types not understood, or schema and symbol disagree");
			continue;
		}
		plan.lay = *lay;
		n = strlen(sig);
		if (undef >= 0)
			snprintf(sig + n, sizeof(sig) - n, "%c%d", TORCH_SIG_UNDEF, undef);
		id = base + (uint32_t)i;
		if (bpf_map_update_elem(tp->plans_fd, &id, &plan, BPF_ANY))
			return -errno;
		tt->ids[id].sig = name_table_intern(tt->names, sig[0] && sig[0] != TORCH_SIG_UNDEF ? sig :
						    "-");
		if (tf->syms[i].kind == TORCH_NODE)
			tp->plans_nodes++;
		else
			tp->plans_ops++;
	}
	return 0;
}

/* The report in hand: plans for @tf's ops into BPF.  0 or -errno (said). */
static int install(struct torch_probes *tp, struct torch_table *tt, const struct torch_file *tf,
		   const struct torch_layout_report *r)
{
	struct fvbpf_tensor_layout lay;
	struct torch_schemas *ts = NULL;
	int err;

	if (torch_abi_layout(r->text, c10_base(tp->pid), &lay)) {
		snprintf(tp->shapes_why, sizeof(tp->shapes_why),
			 "the TensorImpl layout of this torch (or its libc10.so) was not recognised");
		err = -ENOTSUP;
		goto out;
	}
	err = torch_schemas_parse(r->text, &ts);
	if (!err)
		err = put_plans(tp, tt, tf, tp->plan_base, ts, &lay, torch_abi_undef_dtype(r->text));
	if (!err) { /* believed once the target's own tensors fit it */
		tp->lay_state = LAYOUT_CHECKING;
		tp->lay = lay;
	}
	if (err)
		snprintf(tp->shapes_why, sizeof(tp->shapes_why), "cannot install plans: %s",
			 strerror(-err));
	else
		log_info("pid %d: shapes of %u of %zu torch operators (%u without a schema, %u with "
			 "types not understood) and %u of %zu autograd nodes (%zu schemas, TensorImpl "
			 "sizes at +%u, build %s, %s %.1f s)",
			 tp->pid, tp->plans_ops, tf->nops, tp->noplan_schema, tp->noplan_types,
			 tp->plans_nodes, tf->nnodes,
			 torch_schemas_count(ts), lay.sizes_at, r->build_id[0] ? r->build_id : "without id",
			 r->cached ? "cached" : "measured in", r->run_s);
out:
	if (err)
		log_warn("pid %d: no operator shapes: %s", tp->pid, tp->shapes_why);
	torch_schemas_free(ts);
	return err;
}

/* The measurement is over (@rc from start or poll): install or say why not. */
static void settle(struct torch_probes *tp, struct torch_table *tt, int rc, const char *why)
{
	if (rc > 0) {
		snprintf(tp->lay_cache, sizeof(tp->lay_cache), "%s", tp->plans_job->path);
		install(tp, tt, tp->plans_tf, &tp->plans_job->r);
	}
	else if (rc < 0) {
		snprintf(tp->shapes_why, sizeof(tp->shapes_why), "%s", why[0] ? why : strerror(-rc));
		log_warn("pid %d: no operator shapes: %s", tp->pid, tp->shapes_why);
	}
	if (rc)
		torch_plans_cancel(tp);
}

int torch_plans_start(struct torch_probes *tp, struct torch_table *tt, struct torch_file *tf,
		      uint32_t base, int fd, const struct stat *st, int plans_fd)
{
	char why[160];
	int rc;

	tp->plans_fd = plans_fd;
	tp->plan_base = base;
	tp->plan_n = (uint32_t)tf->n;
	tp->plans_job = calloc(1, sizeof(*tp->plans_job));
	tp->plans_tf = malloc(sizeof(*tp->plans_tf));
	if (!tp->plans_job || !tp->plans_tf) {
		free(tp->plans_tf);
		tp->plans_tf = NULL;
		settle(tp, tt, -ENOMEM, "");
		return -ENOMEM;
	}
	*tp->plans_tf = *tf; /* kept until the report comes: the caller's is emptied */
	memset(tf, 0, sizeof(*tf));
	rc = torch_layout_start(tp->pid, fd, st, tp->path, tp->plans_job, why, sizeof(why));
	if (!rc)
		log_info("pid %d: measuring this torch build's TensorImpl layout and schemas in its own "
			 "python (once per build); operator shapes follow", tp->pid);
	settle(tp, tt, rc, why);
	return rc < 0 ? rc : 0;
}

void torch_plans_poll(struct torch_probes *tp, struct torch_table *tt)
{
	char why[160];

	if (tp->plans_job)
		settle(tp, tt, torch_layout_poll(tp->plans_job, why, sizeof(why)), why);
}

void torch_plans_cancel(struct torch_probes *tp)
{
	if (tp->plans_job) {
		torch_layout_job_free(tp->plans_job);
		free(tp->plans_job);
		tp->plans_job = NULL;
	}
	if (tp->plans_tf) {
		torch_file_free(tp->plans_tf);
		free(tp->plans_tf);
		tp->plans_tf = NULL;
	}
}

void torch_plans_stop(struct torch_probes *tp, const char *why)
{
	if (!tp->plans_job)
		return;
	snprintf(tp->shapes_why, sizeof(tp->shapes_why), "%s", why);
	log_warn("pid %d: no operator shapes: %s", tp->pid, tp->shapes_why);
	torch_plans_cancel(tp);
}

static void delete_plans(struct torch_probes *tp)
{
	uint32_t i, id;

	if (tp->plans_fd < 0 || !(tp->plans_ops + tp->plans_nodes))
		return;
	for (i = 0; i < tp->plan_n; i++) {
		id = tp->plan_base + i;
		bpf_map_delete_elem(tp->plans_fd, &id);
	}
	tp->plans_fd = -1;
}

void torch_plans_remove(struct torch_probes *tp)
{
	torch_plans_stop(tp, "tracing of the process ended before its torch build was measured "
			 "(the measurement was killed)");
	delete_plans(tp); /* the counts stay: the manifest reports them */
}

bool torch_plans_check(struct torch_probes *tp, unsigned int fit, unsigned int misfit)
{
	if (tp->lay_state != LAYOUT_CHECKING)
		return false;
	tp->lay_fit += fit;
	tp->lay_misfit += misfit;
	if (tp->lay_misfit < LAYOUT_REFUSE_MISFIT) {
		if (tp->lay_fit >= LAYOUT_TRUST_FIT)
			tp->lay_state = LAYOUT_TRUSTED;
		return false;
	}
	/* a report the job's python made up, or a torch that changed under it */
	tp->lay_state = LAYOUT_REFUSED;
	snprintf(tp->shapes_why, sizeof(tp->shapes_why),
		 "the TensorImpl layout its python reported does not fit its tensors (%u of %u "
		 "read did not): refused, measured again next time", tp->lay_misfit,
		 tp->lay_fit + tp->lay_misfit);
	log_warn("pid %d: no operator shapes: %s", tp->pid, tp->shapes_why);
	torch_layout_cache_drop(tp->lay_cache);
	delete_plans(tp);
	tp->plans_ops = tp->plans_nodes = 0;
	return true;
}

const char *torch_plans_layout_word(const struct torch_probes *tp)
{
	static const char *const words[] = { "none", "checking", "trusted", "refused" };

	return tp->lay_state < sizeof(words) / sizeof(words[0]) ? words[tp->lay_state] : "none";
}
