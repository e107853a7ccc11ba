// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dump/frames_say.h"
#include "dump/py_obj.h"

/* torch/distributed/distributed_c10d.py's calls that wait for the other
 * ranks of their group */
static const char *const collectives[] = {
	"all_reduce", "all_reduce_coalesced", "all_gather", "all_gather_into_tensor",
	"all_gather_coalesced", "all_gather_object", "_all_gather_base", "reduce_scatter",
	"reduce_scatter_tensor", "_reduce_scatter_base", "broadcast", "broadcast_object_list",
	"reduce", "barrier", "monitored_barrier", "all_to_all", "all_to_all_single", "gather",
	"gather_object", "scatter", "scatter_object_list", "send", "recv", "send_object_list",
	"recv_object_list", "batch_isend_irecv", "init_process_group", "new_group",
	"new_subgroups", "destroy_process_group",
};

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

bool frames_is_collective(const char *file, const char *function)
{
	size_t i;

	if (!file || !function || !ends_with(file, "torch/distributed/distributed_c10d.py"))
		return false;
	for (i = 0; i < sizeof(collectives) / sizeof(collectives[0]); i++)
		if (!strcmp(function, collectives[i]))
			return true;
	return false;
}

/*
 * The group c10d's logging wrapper (c10d_logger.py, `wrapper(*args,
 * **kwargs)` around each collective) was given: "default" when none, or
 * None; "non-default" for a group object; "" when it cannot tell.
 */
static void group_of(const struct py_runtime *r, const struct pyw_stack *st,
		     const struct dump_thread *t, int coll, char *out, size_t len)
{
	const struct pyw_frame *wf, *cf = &st->frames[coll];
	uint64_t args, kwargs, val = 0;
	int idx, err;

	out[0] = '\0';
	if ((unsigned int)coll + 1 >= t->nframes || !t->frames[coll + 1].file ||
	    !ends_with(t->frames[coll + 1].file, "torch/distributed/c10d_logger.py") ||
	    !ends_with(t->frames[coll + 1].function, "wrapper"))
		return;
	wf = &st->frames[coll + 1];
	if (pyo_local(r, wf, "args", &args) || pyo_local(r, wf, "kwargs", &kwargs))
		return;
	err = pyo_dict_get(r, kwargs, "group", &val);
	if (err == -ENOENT) {
		idx = pyo_param_index(r, cf->code, "group");
		if (idx == -ENOENT) {
			snprintf(out, len, "default"); /* no such parameter: its own */
			return;
		}
		if (idx < 0)
			return;
		err = pyo_tuple_item(r, args, (unsigned int)idx, &val);
		if (err == -ENOENT) { /* not given: the default, None or WORLD */
			snprintf(out, len, "default");
			return;
		}
	}
	if (err)
		return;
	snprintf(out, len, "%s", pyo_is(r, val, "NoneType") ? "default" : "non-default");
}

/* A region decorator's wrapper frame and the local that holds its name. */
static const struct {
	const char *file, *function, *local;
} region_wrappers[] = {
	{ "fvbpf/__init__.py", "profile_region.<locals>.decorate.<locals>.wrapper", "encoded" },
	{ "fastvideo/profiler.py", "profile_region.<locals>.decorator.<locals>.wrapper", "region" },
};

static void region_of(const struct py_runtime *r, const struct pyw_frame *f,
		      const struct dump_frame *df, struct dump_thread *t)
{
	uint64_t cell, name;
	size_t i;

	if (!df->file || !df->function || t->nregions == DUMP_REGIONS_MAX)
		return;
	for (i = 0; i < sizeof(region_wrappers) / sizeof(region_wrappers[0]); i++) {
		if (!ends_with(df->file, region_wrappers[i].file) ||
		    strcmp(df->function, region_wrappers[i].function))
			continue;
		/* a free variable: its cell is in the frame's locals */
		if (pyo_local(r, f, region_wrappers[i].local, &cell) || pyo_cell(r, cell, &name) ||
		    pyo_text(r, name, t->regions[t->nregions], DUMP_NAME_LEN))
			return;
		t->nregions++;
		return;
	}
}

void frames_say(const struct py_runtime *r, const struct pyw_stack *st, struct dump_thread *t)
{
	int i;

	t->coll_frame = -1;
	t->collective[0] = t->group[0] = '\0';
	t->nregions = 0;
	for (i = (int)t->nframes - 1; i >= 0; i--) {
		const struct dump_frame *f = &t->frames[i];

		if (t->coll_frame < 0 && frames_is_collective(f->file, f->function)) {
			t->coll_frame = i;
			snprintf(t->collective, sizeof(t->collective), "%s", f->function);
			group_of(r, st, t, i, t->group, sizeof(t->group));
		}
		region_of(r, &st->frames[i], f, t);
	}
}
