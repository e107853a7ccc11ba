/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* A target's CUDA calls, entered, returned and recorded into its segment. */
#ifndef FVBPF_API_EVENTS_H
#define FVBPF_API_EVENTS_H

struct session;
struct session_target;
struct fvbpf_api_enter;
struct fvbpf_api_exit;
struct api_call;

/* A CUDA call's entry and return, from BPF's ring or the launch hook's
 * (callback_ops.c), the record already checked for size. */
int events_api_enter(struct session *s, struct session_target *t, const struct fvbpf_api_enter *e);
void events_api_exit(struct session *s, struct session_target *t, const struct fvbpf_api_exit *x);
/* A paired CUDA call: into the open segment, or counted as outside. */
void events_record_call(struct session *s, struct session_target *t, struct api_call *c);

#endif /* FVBPF_API_EVENTS_H */
