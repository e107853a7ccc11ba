/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Where a target's PyTorch operators come from (--op-source): PyTorch's
 * own callbacks through libfvbpf.so in the process (the fast path), or
 * uprobes.  Asked for while the markers are attached with an even epoch,
 * answered before any segment can open.
 */
#ifndef FVBPF_CALLBACK_ATTACH_H
#define FVBPF_CALLBACK_ATTACH_H

struct session;
struct session_target;

/* Before the marker probes: decide, and write the request where the
 * fast path may be had.  -errno only where --op-source callbacks cannot
 * be had (said in one line). */
int callback_attach_request(struct session *s, struct session_target *t);
/* After them (the semaphore is up, the library answers): wait for the
 * answer, map the rings, let BPF tell the callbacks about segments.  On
 * any failure the target's operators come from uprobes, said once; -errno
 * only under --op-source callbacks. */
int callback_attach_finish(struct session *s, struct session_target *t);
/* Detach: BPF stops writing into the target; the rings' counters read. */
void callback_attach_stop(struct session *s, struct session_target *t);

#endif /* FVBPF_CALLBACK_ATTACH_H */
