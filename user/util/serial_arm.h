/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * For `make bench` only: the test build (build/fvbpf-test) arms processes
 * as fvbpf did before issue 35 when FVBPF_TEST_SERIAL_ARM is set (one
 * after another, each file read again for each process), so that the
 * bench can set today's arming beside it.  The production binary never
 * does.
 */
#ifndef FVBPF_SERIAL_ARM_H
#define FVBPF_SERIAL_ARM_H

#include <stdbool.h>

bool serial_arm(void);

#endif /* FVBPF_SERIAL_ARM_H */
