// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdio.h>
#include <time.h>

#include "attach/cut_gate.h"
#include "attach/target.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/start_time.h"

/* "14:05:10.000" in local time, for the log line. */
static void local_hms(uint64_t real_ns, char *buf, size_t len)
{
	time_t t = (time_t)(real_ns / 1000000000ull);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
	else
		snprintf(buf + 8, len > 8 ? len - 8 : 0, ".%03u",
			 (unsigned int)(real_ns % 1000000000ull / 1000000ull));
}

/* --start-at's instant on CLOCK_MONOTONIC, or @mono when none or past. */
static uint64_t start_at_mono(const struct attach_opts *o, uint64_t mono, uint64_t real)
{
	uint64_t at;
	char hms[32];

	if (!o->start_at_real_ns && !o->start_every_ns)
		return mono;
	at = start_time_instant(o->start_at_real_ns, o->start_every_ns, real);
	local_hms(at, hms, sizeof(hms));
	if (at <= real) {
		log_warn("--start-at %s is past: segments are cut from now", hms);
		return mono;
	}
	log_info("segments wait for --start-at %s (in %.1f s)", hms, (double)(at - real) / 1e9);
	return mono + (at - real);
}

void cut_gate_open(struct session *s, const struct attach_opts *o, uint64_t arming_began_ns)
{
	uint64_t mono = clock_ns(CLOCK_MONOTONIC), real = clock_ns(CLOCK_REALTIME), cut;
	unsigned int armed = 0;
	int i;

	cut = start_at_mono(o, mono, real);
	s->cut_from_ns = cut;
	s->meta.cut_from_ns = cut;
	s->meta.start_at = cut != mono;
	s->meta.armed_in_ns = mono - arming_began_ns;
	for (i = 0; i < s->ntargets; i++) {
		struct session_target *t = &s->targets[i];

		t->tracker.cut_from_ns = cut;
		if (t->window_pending && target_window_start(s, t, cut))
			log_warn("pid %d: cannot start its time windows", t->proc.pid);
		armed += t->armed;
	}
	s->meta.armed_processes = armed;
	if (armed > 1)
		log_info("%u processes armed in %.2f s; their segments begin together", armed,
			 (double)s->meta.armed_in_ns / 1e9);
}
