/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* The one-line progress display of `fvbpf attach` on a terminal. */
#ifndef FVBPF_PROGRESS_H
#define FVBPF_PROGRESS_H

struct session;

/* On when stderr is a terminal (FVBPF_PROGRESS=0 turns it off). */
void progress_start(void);
/* Redraw, at most twice a second: segments written, records a second,
 * ring-buffer drops. */
void progress_tick(struct session *s);
void progress_stop(void);

#endif /* FVBPF_PROGRESS_H */
