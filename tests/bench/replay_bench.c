// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The consumer and the writer without uprobes: ring records of the shape
 * BPF sends for tests/workloads/event_flood (a step region holding THREADS
 * x PAIRS training_forward begin/end pairs) pushed through events_handle()
 * -- decode, drops bookkeeping, the segment state machine -- and the writer
 * thread, which writes real trace and summary files into DIR.
 *
 *   replay_bench --events N [--pairs K] [--threads T] [--format F] DIR
 *
 * Prints one line:
 *   replay events=N segments=S wall_s=W consumer_ns=C cpu_ns=P events_per_s=R
 *          per_core_events_per_s=Q
 * consumer_ns: the consumer's CPU per event (its thread, in events_handle);
 * cpu_ns: the whole process's CPU per event (consumer, writer thread, kernel
 * time of the writes), less the making of the records; per_core = 1e9 /
 * cpu_ns: what one core sustains.  events_per_s: events / wall time with
 * both threads running (2 cores).  The records are built per step in a
 * buffer (timestamps 250 ns apart, the target is this process so thread
 * names resolve as they do live).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "pipeline/events.h"
#include "fvbpf_events.h"
#include "util/log.h"
#include "output/seg_output.h"
#include "model/session.h"
#include "proc/elf/symbolizer.h"
#include "attach/target.h"
#include "attach/session_wiring.h"
#include "pipeline/registry.h"
#include "probes/torch_probes.h"
#include "util/clock.h"

static uint64_t rusage_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * 1000000000ull +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ull;
}

static int setup(struct session *s, const char *dir, enum trace_format fmt)
{
	struct session_target *t;

	memset(s, 0, sizeof(*s));
	s->epfd = -1;
	s->reg = registry__new();
	s->torch = torch_table__new();
	if (!s->reg || !s->torch)
		return -ENOMEM;
	registry_init(s->reg);
	if (registry_enable_list(s->reg, "training_train_one_step,training_forward", NULL, NULL) < 0)
		return -EINVAL;
	name_table_init(&s->knames);
	s->sym = symbolizer_new();
	s->targets = calloc(1, sizeof(*s->targets));
	if (!s->sym || !s->targets)
		return -ENOMEM;
	s->ntargets = 1;
	t = &s->targets[0];
	if (target_states_alloc(t))
		return -ENOMEM;
	t->session = s;
	t->pidfd = -1;
	if (proc_target_init(t->proc, getpid()))
		return -ESRCH;
	target_init(t, 0);
	/* As live for a process without CUDA: no GPU records to wait for. */
	t->agent->heard = true;
	snprintf(t->agent->status, sizeof(t->agent->status), "unavailable: replayed records, no CUDA");
	if (session_writer_start(s, dir, &(struct seg_writer_opts){ .format = fmt }))
		return -EIO;
	return 0;
}

static uint32_t tid0; /* this process: the target */

static void region(struct fvbpf_region_event *r, uint16_t type, uint32_t tid, uint32_t id,
		   uint64_t ts, int32_t depth, uint32_t outer)
{
	memset(r, 0, sizeof(*r));
	r->hdr.type = type;
	r->hdr.version = FVBPF_EVENT_VERSION;
	r->hdr.size = sizeof(*r);
	r->hdr.tgid = tid0;
	r->hdr.tid = tid;
	r->hdr.ts_ns = ts;
	r->region_id = id;
	r->depth = depth;
	r->outer = outer;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "events", required_argument, NULL, 'n' },
		{ "pairs", required_argument, NULL, 'k' },
		{ "threads", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{},
	};
	unsigned long long want = 1000000, pairs = 2000, threads = 2, done = 0, i, j, n;
	enum trace_format fmt = TRACE_JSON;
	uint64_t ts = 1000000000ull, cons = 0, wall0, cpu0, gen0, t0, wall, cpu, gen;
	struct fvbpf_region_event *recs;
	struct session s;
	uint32_t step, fwd, outer = 0;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'n': want = strtoull(optarg, NULL, 0); break;
		case 'k': pairs = strtoull(optarg, NULL, 0); break;
		case 't': threads = strtoull(optarg, NULL, 0); break;
		case 'f':
			if (trace_format_parse(optarg, &fmt))
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (optind != argc - 1 || !pairs || !threads || threads > 64 || pairs > 1000000) {
		fprintf(stderr, "usage: %s --events N [--pairs K] [--threads T] [--format F] DIR\n",
			argv[0]);
		return 2;
	}
	tid0 = (uint32_t)getpid();
	if (setup(&s, argv[optind], fmt)) {
		fprintf(stderr, "replay_bench: setup failed\n");
		return 1;
	}
	step = (uint32_t)registry_find(s.reg, "training_train_one_step");
	fwd = (uint32_t)registry_find(s.reg, "training_forward");
	n = 2 * pairs * threads + 2;
	recs = calloc(n, sizeof(*recs));
	if (!recs)
		return 1;
	wall0 = clock_ns(CLOCK_MONOTONIC);
	cpu0 = rusage_ns();
	gen0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	while (done < want) {
		/* One step as BPF sends it: the threads' pairs interleave. */
		size_t k = 0;

		outer++;
		region(&recs[k++], FVBPF_EV_REGION_BEGIN, tid0, step, ts += 250, 1, outer);
		for (i = 0; i < pairs; i++)
			for (j = 0; j < threads; j++) {
				region(&recs[k++], FVBPF_EV_REGION_BEGIN, tid0 + (uint32_t)j, fwd,
				       ts += 250, 2, outer);
				region(&recs[k++], FVBPF_EV_REGION_END, tid0 + (uint32_t)j, fwd,
				       ts += 250, 1, outer);
			}
		region(&recs[k++], FVBPF_EV_REGION_END, tid0, step, ts += 250, 0, outer);
		t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		for (i = 0; i < k; i++)
			events_handle(&s, &recs[i], sizeof(recs[i]));
		cons += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		done += k;
	}
	target_finish(&s, &s.targets[0], "was still");
	seg_writer_stop(s.writer);
	wall = clock_ns(CLOCK_MONOTONIC) - wall0;
	cpu = rusage_ns() - cpu0;
	gen = clock_ns(CLOCK_THREAD_CPUTIME_ID) - gen0 - cons;
	cpu = cpu > gen ? cpu - gen : 0;
	printf("replay events=%llu segments=%u wall_s=%.3f consumer_ns=%.1f cpu_ns=%.1f "
	       "events_per_s=%.0f per_core_events_per_s=%.0f write_errors=%u\n",
	       done, s.targets[0].tracker->next_seq, (double)wall / 1e9, (double)cons / (double)done,
	       (double)cpu / (double)done, (double)done * 1e9 / (double)wall,
	       cpu ? (double)done * 1e9 / (double)cpu : 0.0, seg_writer_write_errors(s.writer));
	c = seg_writer_write_errors(s.writer) ? 1 : 0;
	free(recs);
	session_free(&s);
	return c;
}
