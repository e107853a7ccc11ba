// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The pftrace's packets out, its interned entries and its track descriptors. */
#include "output/pftrace/pftrace_dl.h"
#include "output/pftrace/pftrace_fields.h"
#include "output/pftrace/pftrace_priv.h"
#include "output/pftrace/pftrace_pystack.h"
#include "util/text_sanitize.h"

void pf_intern_once(struct pf *p, uint32_t field, uint32_t iid, const struct strtab *t,
		    uint8_t *seen)
{
	size_t m;

	if (seen[iid])
		return;
	m = pb_begin(&p->b, field);
	pb_uint(&p->b, IID, iid);
	pb_string(&p->b, IID_NAME, t->s[iid - 1]);
	pb_end(&p->b, m);
	seen[iid] = 1;
}

void pf_put_packet(struct pf *p)
{
	uint8_t hdr[11];
	size_t n = 0;
	uint64_t len = p->b.len;

	if (p->b.err && !p->err)
		p->err = p->b.err;
	if (p->err)
		return;
	hdr[n++] = TRACE_PACKET << 3 | PB_LEN;
	while (len >= 0x80) {
		hdr[n++] = (uint8_t)(len | 0x80);
		len >>= 7;
	}
	hdr[n++] = (uint8_t)len;
	ob_write(p->out, (const char *)hdr, n);
	ob_write(p->out, (const char *)p->b.p, p->b.len);
	if (p->out->err)
		p->err = p->out->err;
	pb_reset(&p->b);
}

static void descriptor(struct pf *p, uint64_t uuid, uint64_t parent, const char *name)
{
	size_t m;
	char clean[256];

	pb_uint(&p->b, TP_SEQ_ID, 1);
	m = pb_begin(&p->b, TP_TRACK_DESCRIPTOR);
	pb_uint(&p->b, TD_UUID, uuid);
	if (parent)
		pb_uint(&p->b, TD_PARENT, parent);
	if (name) {
		text_clean_utf8(clean, sizeof(clean), name);
		pb_string(&p->b, TD_NAME, clean);
	}
	pb_end(&p->b, m);
	pf_put_packet(p);
}

void pf_process_descriptor(struct pf *p, uint64_t uuid, int32_t pid, const char *name, bool first)
{
	char clean[256];
	size_t m, mm;

	text_clean_utf8(clean, sizeof(clean), name);
	pb_uint(&p->b, TP_SEQ_ID, 1);
	if (first)
		pb_uint(&p->b, TP_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	m = pb_begin(&p->b, TP_TRACK_DESCRIPTOR);
	pb_uint(&p->b, TD_UUID, uuid);
	mm = pb_begin(&p->b, TD_PROCESS);
	pb_int(&p->b, PD_PID, pid);
	pb_string(&p->b, PD_NAME, clean);
	pb_end(&p->b, mm);
	pb_end(&p->b, m);
	pf_put_packet(p);
}

void pf_thread_descriptor(struct pf *p, uint64_t uuid, uint64_t parent, int32_t pid, int32_t tid,
			  const char *name)
{
	char clean[256];
	size_t m, mm;

	text_clean_utf8(clean, sizeof(clean), name);
	pb_uint(&p->b, TP_SEQ_ID, 1);
	m = pb_begin(&p->b, TP_TRACK_DESCRIPTOR);
	pb_uint(&p->b, TD_UUID, uuid);
	pb_uint(&p->b, TD_PARENT, parent);
	mm = pb_begin(&p->b, TD_THREAD);
	pb_int(&p->b, THD_PID, pid);
	pb_int(&p->b, THD_TID, tid);
	pb_string(&p->b, THD_NAME, clean);
	pb_end(&p->b, mm);
	pb_end(&p->b, m);
	pf_put_packet(p);
}

void pf_descriptors(struct pf *p, const struct seg_output_ctx *c)
{
	const struct segment *s = c->seg;
	uint64_t proc_uuid = track_uuid(1 + p->ncpu + p->ngpu + p->npy), dev_uuid = 0;
	uint32_t dev, prev_dev = 0;
	char label[256];
	size_t i;

	seg_output_proc_label(c->proc, s->pid, label, sizeof(label));
	pf_process_descriptor(p, proc_uuid, s->pid, label, true);

	snprintf(label, sizeof(label), "fvbpf segment %04u: %s%s%s", s->seq,
		 c->reg->defs[s->region].name, s->started_before_attach ? " (started before attach)" : "",
		 s->incomplete ? " (incomplete)" : "");
	descriptor(p, track_uuid(0), proc_uuid, label);

	for (i = 0; i < p->ncpu; i++)
		pf_thread_descriptor(p, track_uuid(1 + i), proc_uuid, s->pid, (int32_t)p->cpu[i],
				     proc_thread_name(c->proc, p->cpu[i]));
	pf_py_descriptors(p, proc_uuid);
	for (i = 0; i < p->ngpu; i++) {
		uint32_t tid = (uint32_t)p->gpu[i];

		dev = (uint32_t)(p->gpu[i] >> 32);
		if (!i || dev != prev_dev) {
			dev_uuid = track_uuid(2 + p->ncpu + p->ngpu + p->npy + i);
			snprintf(label, sizeof(label), "GPU %u", dev);
			descriptor(p, dev_uuid, 0, label);
		}
		prev_dev = dev;
		snprintf(label, sizeof(label), tid & 0x40000000u ? "sync (stream %u)" : "stream %u",
			 tid & ~0x40000000u);
		descriptor(p, track_uuid(1 + p->ncpu + i), dev_uuid, label);
	}
	pf_dl_descriptors(p, c);
}

