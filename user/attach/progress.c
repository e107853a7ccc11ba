// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * While it traces, a person at a terminal sees what fvbpf is doing: one
 * line redrawn in place (util/log.h log_progress(); messages clear it).
 * Off when stderr is not a terminal, so logs and CI output stay as they were.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/cut_gate.h"
#include "attach/progress.h"
#include "model/session.h"
#include "probes/bpf_setup.h"
#include "util/clock.h"
#include "util/log.h"

#define PROGRESS_EVERY_NS 500000000ULL

static bool on;
static uint64_t last_ns, last_records;

void progress_start(void)
{
	const char *env = getenv("FVBPF_PROGRESS");

	on = isatty(STDERR_FILENO) && !(env && !strcmp(env, "0"));
	last_ns = clock_ns(CLOCK_MONOTONIC);
	last_records = 0;
}

void progress_tick(struct session *s)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), segs = 0, rate;
	struct fvbpf_counters bc;
	char line[200];
	int i;

	if (!on || now - last_ns < PROGRESS_EVERY_NS)
		return;
	for (i = 0; i < s->ntargets; i++)
		segs += s->targets[i].segments;
	rate = (s->records - last_records) * 1000000000ULL / (now - last_ns);
	last_ns = now;
	last_records = s->records;
	memset(&bc, 0, sizeof(bc));
	if (s->skel)
		bpf_counters_read(s->skel, &bc);
	if (cut_gate_waiting(s))
		snprintf(line, sizeof(line), "%d process%s armed; segments wait for %s (Ctrl-C to "
			 "stop)", s->ntargets, s->ntargets == 1 ? "" : "es",
			 s->meta.start_at && clock_ns(CLOCK_MONOTONIC) < s->cut_from_ns ?
			 "--start-at" : "the torch layout measurement");
	else
		snprintf(line, sizeof(line), "%llu segment%s written, %llu events/s, %llu dropped, "
			 "%d process%s (Ctrl-C to stop)", (unsigned long long)segs,
			 segs == 1 ? "" : "s", (unsigned long long)rate,
			 (unsigned long long)bc.ringbuf_drops, s->ntargets, s->ntargets == 1 ? "" : "es");
	log_progress(line);
}

void progress_stop(void)
{
	if (on)
		log_progress_end();
	on = false;
}
