/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A writer that cannot keep up, on demand, for the --max-memory tests:
 * FVBPF_TEST_WRITER_DELAY_MS makes the writer thread sleep that long per
 * segment; FVBPF_TEST_WRITER_HOLD=FILE holds it before each segment while
 * FILE exists (at most two minutes), so that a test can make it fall behind
 * however fast the machine runs the job.  Compiled in only with
 * FVBPF_TEST_HOOKS (build/fvbpf-test); build/fvbpf ignores both.
 */
#ifndef FVBPF_WRITER_DELAY_H
#define FVBPF_WRITER_DELAY_H

/* Milliseconds to sleep before each segment is written, 0 for none. */
unsigned int writer_delay_ms(void);
/* Wait while FVBPF_TEST_WRITER_HOLD's file exists. */
void writer_hold_wait(void);

#endif /* FVBPF_WRITER_DELAY_H */
