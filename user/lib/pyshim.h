/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The Python shim's launcher inside libfvbpf.so (internal interface).
 * Builds on control.h only; the markers and the agent's watch thread call it. */
#ifndef FVBPF_LIB_PYSHIM_H
#define FVBPF_LIB_PYSHIM_H

/* Whether this process has a CPython the shim could run in: sets the
 * control page's `python` word (the constructor calls it). */
void pyshim_probe(void);
/* Under an odd epoch, a request fvbpf wrote that the shim has not served:
 * schedule the shim in the interpreter's main thread; once the semaphore
 * fell after the shim ran, its restore() (cheap, may repeat). */
void pyshim_poll(void);

#endif /* FVBPF_LIB_PYSHIM_H */
