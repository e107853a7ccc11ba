// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The ring-record decoder (user/pipeline/events.c's events_handle), on a session
 * built by hand without BPF, as the consumer runs it: every record is
 * whatever BPF copied from the target (arguments, names, agent bytes).
 *
 * Input: records, each a u16 length (LE) then that many bytes, copied to a
 * buffer of exactly that size.  A length of 0 is no record: BPF's drop
 * count moved on by one, as the consumer loop learns it between records
 * (region records carry their own count too).  The end is the session's:
 * open calls drained, the open segment cut, drops settled, held segments
 * written.  The target's pid is TARGET_PID (records name it in hdr.tgid);
 * no process has it, so nothing real is read or written.  Closed segments
 * go to the writer thread, which cannot write into a missing directory.
 */
#include "fuzz.h" /* first: it asks for _GNU_SOURCE */

#include <string.h>

#include "pipeline/drops.h"
#include "pipeline/events.h"
#include "pipeline/seg_close.h"
#include "util/log.h"
#include "proc/elf/symbolizer.h"
#include "attach/target.h"
#include "attach/session_wiring.h"
#include "pipeline/registry.h"
#include "probes/torch_probes.h"
#include "proc/proc_info.h"

#define TARGET_PID 0x3ffffff0 /* above any pid_max */

static void setup(struct session *s)
{
	struct session_target *t;

	memset(s, 0, sizeof(*s));
	s->epfd = -1;
	s->reg = registry__new();
	s->torch = torch_table__new();
	if (!s->reg || !s->torch)
		abort();
	registry_init(s->reg);
	registry_enable_list(s->reg, "training_train_one_step,training_forward,training_backward",
			     NULL, NULL);
	name_table_init(&s->knames);
	s->sym = symbolizer_new();
	s->targets = calloc(1, sizeof(*s->targets));
	if (!s->sym || !s->targets)
		abort();
	s->ntargets = 1;
	t = &s->targets[0];
	if (target_states_alloc(t))
		abort();
	t->session = s;
	t->pidfd = -1;
	t->proc->pid = TARGET_PID;
	target_init(t, 3);
	if (session_writer_start(s, "/nonexistent/fvbpf-fuzz", &(struct seg_writer_opts){ 0 }))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	struct session s;
	uint16_t len;
	void *rec;

	setup(&s);
	while (end - p >= 2) {
		memcpy(&len, p, 2);
		p += 2;
		if (!len) {
			drops_charge(s.targets[0].loss, s.targets[0].tracker, s.targets[0].loss->drops_seen + 1);
			continue;
		}
		if (len > end - p)
			len = (uint16_t)(end - p);
		rec = malloc(len);
		if (!rec)
			abort();
		memcpy(rec, p, len);
		p += len;
		events_handle(&s, rec, len);
		free(rec);
	}
	target_finish(&s, &s.targets[0], "was still");
	drops_settle(s.targets[0].loss, s.targets[0].tracker, target_drops(&s.targets[0]));
	seg_close_release(&s.targets[0], true);
	seg_writer_stop(s.writer);
	session_free(&s);
	return 0;
}
