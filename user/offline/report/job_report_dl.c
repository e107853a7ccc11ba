// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The trainer's wait for its DataLoader, per rank (job_report_dl.h). */
#include <stdlib.h>

#include "offline/report/job_report_dl.h"
#include "util/checked_math.h"

void jr_dl_add(struct jr_rank *k, const struct mf_file *f)
{
	if (!f->have_dl)
		return;
	k->dl_segments++;
	k->dl_seg_ns = sat_add_i64(k->dl_seg_ns, f->duration_ns);
	k->dl_wait_ns = sat_add_i64(k->dl_wait_ns, f->dl_wait_ns);
	k->dl_batches = sat_add_u64(k->dl_batches, f->dl_batches);
}

bool jr_dl_any(const struct jr_region *g)
{
	size_t j;

	for (j = 0; j < g->nranks; j++)
		if (g->ranks[j].dl_segments)
			return true;
	return false;
}

double jr_dl_share_pct(const struct jr_rank *k)
{
	return k->dl_seg_ns > 0 ? 100.0 * (double)k->dl_wait_ns / (double)k->dl_seg_ns : 0.0;
}

void jr_dl_print(FILE *f, const struct jr_region *g)
{
	const struct jr_rank *k;
	char label[512], *clean;
	size_t j;

	if (!jr_dl_any(g))
		return;
	fprintf(f, "  DataLoader: the trainer's wait for batches from its workers, per rank "
		   "(share of those segments' time)\n");
	fprintf(f, "  %8s %12s %8s %8s  %s\n", "segments", "wait ms", "share", "batches", "rank");
	for (j = 0; j < g->nranks; j++) {
		k = &g->ranks[j];
		if (!k->dl_segments)
			continue;
		jr_rank_label(k, label, sizeof(label));
		clean = jr_tty(label);
		fprintf(f, "  %8zu %12.3f %7.1f%% %8llu  %s\n", k->dl_segments,
			(double)k->dl_wait_ns / 1e6, jr_dl_share_pct(k), (unsigned long long)k->dl_batches,
			clean ? clean : "?");
		free(clean);
	}
}

json_object *jr_dl_json(const struct jr_rank *k)
{
	json_object *o;

	if (!k->dl_segments || !(o = json_object_new_object()))
		return NULL;
	json_object_object_add(o, "segments", json_object_new_uint64(k->dl_segments));
	json_object_object_add(o, "wait_ms", json_object_new_double((double)k->dl_wait_ns / 1e6));
	json_object_object_add(o, "share_pct", json_object_new_double(jr_dl_share_pct(k)));
	json_object_object_add(o, "batches", json_object_new_uint64(k->dl_batches));
	return o;
}
