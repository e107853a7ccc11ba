// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdio.h>

#include "output/dl_report.h"
#include "pipeline/loader/dl_join.h"
#include "probes/dl_probes.h"

static bool had_records(const struct session_target *t, const struct dl_counts **n)
{
	if (!t->dl)
		return false;
	*n = dl_counts(t->dl);
	return dl_nworkers(t->dl) || (*n)->recv_unmatched || (*n)->bad || (*n)->workers_over;
}

void dl_report_line(const struct session_target *t)
{
	const struct dl_counts *n;

	if (!had_records(t, &n))
		return;
	printf("    dataloader: %u workers, %llu batches, %llu received by the trainer; lost: %llu "
	       "unfinished (worker gone mid-batch), %llu receipts and %llu ends unmatched, %llu "
	       "forgotten unreceived (table full), %llu records of workers past %d, %llu bad\n",
	       dl_nworkers(t->dl), (unsigned long long)n->batches,
	       (unsigned long long)n->received, (unsigned long long)n->unfinished,
	       (unsigned long long)n->recv_unmatched, (unsigned long long)n->end_unmatched,
	       (unsigned long long)n->evicted, (unsigned long long)n->workers_over, DL_WORKERS,
	       (unsigned long long)n->bad);
}

json_object *dl_report_json(const struct session_target *t)
{
	const struct dl_counts *n;
	json_object *o;

	if (!had_records(t, &n))
		return NULL;
	o = json_object_new_object();
	if (!o)
		return NULL;
	json_object_object_add(o, "probed_in", json_object_new_string(dl_probes_file(t->dlp)));
	json_object_object_add(o, "workers", json_object_new_uint64(dl_nworkers(t->dl)));
	json_object_object_add(o, "batches", json_object_new_uint64(n->batches));
	json_object_object_add(o, "received", json_object_new_uint64(n->received));
	json_object_object_add(o, "unfinished", json_object_new_uint64(n->unfinished));
	json_object_object_add(o, "receipts_unmatched", json_object_new_uint64(n->recv_unmatched));
	json_object_object_add(o, "ends_unmatched", json_object_new_uint64(n->end_unmatched));
	json_object_object_add(o, "evicted", json_object_new_uint64(n->evicted));
	json_object_object_add(o, "workers_over", json_object_new_uint64(n->workers_over));
	json_object_object_add(o, "bad", json_object_new_uint64(n->bad));
	return o;
}
