/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* Checks made before anything is loaded, each failing with a clear message. */
#ifndef FVBPF_PREFLIGHT_H
#define FVBPF_PREFLIGHT_H

int preflight_privileges(void);
int preflight_btf(void);

#endif /* FVBPF_PREFLIGHT_H */
