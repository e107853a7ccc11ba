// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The agent channel: the in-process agent (libfvbpf's CUPTI side) calls
 * empty probe functions to hand BPF correlation ids, batches of GPU
 * records and its status.
 */
#include "fvbpf_common.bpf.h"

/*
 * The CUPTI agent's API-entry callback: which call a correlation id belongs
 * to.  Only inside segments, like the calls themselves.
 */
SEC("uprobe")
int BPF_KPROBE(correlation, __u32 corr, __u32 cbid, __u32 domain)
{
	__u64 pid_tgid = current_pid_tgid();
	struct fvbpf_proc_state *ps;
	struct fvbpf_corr_event *ev;

	ps = marker_proc(ctx, pid_tgid >> 32);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED) || ps->depth <= 0)
		return 0;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 0;
	fill_hdr(&ev->hdr, FVBPF_EV_CORRELATION, sizeof(*ev), pid_tgid);
	ev->correlation = corr;
	ev->cbid = cbid;
	ev->domain = domain;
	ev->pad = 0;
	bpf_ringbuf_submit(ev, SUBMIT_FLAGS);
	return 0;
}

/*
 * A batch of the agent's GPU records, copied in whole chunks: the agent
 * passes its own FVBPF_GPU_BATCH-byte buffer, so reading a full chunk past
 * `len` stays inside it, and the verifier sees constant sizes.  GPU work
 * finishes after its segment closed, so this is not gated on segments.
 */
SEC("uprobe")
int BPF_KPROBE(gpu_batch, const __u8 *buf, __u32 len)
{
	__u64 pid_tgid = current_pid_tgid();
	struct fvbpf_proc_state *ps;
	struct fvbpf_gpu_chunk *ev;
	__u32 i, off;

	ps = marker_proc(ctx, pid_tgid >> 32);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED))
		return 0;
	if (len > FVBPF_GPU_BATCH)
		len = FVBPF_GPU_BATCH;
	for (i = 0; i < FVBPF_GPU_BATCH / FVBPF_GPU_CHUNK; i++) {
		off = i * FVBPF_GPU_CHUNK;
		if (off >= len)
			break;
		ev = reserve(ps, sizeof(*ev));
		if (!ev)
			return 0;
		fill_hdr(&ev->hdr, FVBPF_EV_GPU_CHUNK, sizeof(*ev), pid_tgid);
		ev->len = len - off > FVBPF_GPU_CHUNK ? FVBPF_GPU_CHUNK : len - off;
		ev->index = (__u16)i;
		ev->last = off + FVBPF_GPU_CHUNK >= len;
		if (bpf_probe_read_user(ev->data, FVBPF_GPU_CHUNK, buf + off))
			ev->len = 0;
		bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	}
	return 0;
}

/* The agent says what it could or could not do. */
SEC("uprobe")
int BPF_KPROBE(agent_status, __u32 code, __s32 detail, __s64 value, const char *msg)
{
	__u64 pid_tgid = current_pid_tgid();
	struct fvbpf_agent_status_event *ev;
	struct fvbpf_proc_state *ps;

	ps = marker_proc(ctx, pid_tgid >> 32);
	if (!ps || !(ps->flags & FVBPF_PROC_ARMED))
		return 0;
	ev = reserve(ps, sizeof(*ev));
	if (!ev)
		return 0;
	fill_hdr(&ev->hdr, FVBPF_EV_AGENT_STATUS, sizeof(*ev), pid_tgid);
	ev->code = code;
	ev->detail = detail;
	ev->value = value;
	ev->msg[0] = '\0';
	if (msg)
		bpf_probe_read_user_str(ev->msg, sizeof(ev->msg), msg);
	bpf_ringbuf_submit(ev, BPF_RB_FORCE_WAKEUP);
	return 0;
}
