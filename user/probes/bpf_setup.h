/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Open, size and load the BPF object; fill its tables. */
#ifndef FVBPF_BPF_SETUP_H
#define FVBPF_BPF_SETUP_H

#include "attach/attach.h"
#include "model/session.h"

/* libbpf's messages through fvbpf's verbosity. */
void bpf_setup_log(void);
/* Sets s->skel and s->api_probes; 0 or -errno (already reported). */
int bpf_setup(struct session *s, const struct attach_opts *o);

#endif /* FVBPF_BPF_SETUP_H */
