/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A writer that cannot keep up, on demand, for the --max-memory tests:
 * FVBPF_TEST_WRITER_DELAY_MS makes the writer thread sleep that long per
 * segment.  Compiled in only with FVBPF_TEST_HOOKS (build/fvbpf-test);
 * build/fvbpf ignores the variable.
 */
#ifndef FVBPF_WRITER_DELAY_H
#define FVBPF_WRITER_DELAY_H

/* Milliseconds to sleep before each segment is written, 0 for none. */
unsigned int writer_delay_ms(void);

#endif /* FVBPF_WRITER_DELAY_H */
