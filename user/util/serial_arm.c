// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdlib.h>

#include "util/serial_arm.h"

bool serial_arm(void)
{
#ifdef FVBPF_TEST_HOOKS
	const char *e = getenv("FVBPF_TEST_SERIAL_ARM");

	return e && *e && *e != '0';
#else
	return false;
#endif
}
