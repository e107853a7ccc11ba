// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proc/elf/demangle.h"
#include "util/text_copy.h"

/* libstdc++'s Itanium demangler (linked with -lstdc++); declared here so
 * this file stays C. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static uint64_t capped_total;

uint64_t demangle_capped_total(void)
{
	return __atomic_load_n(&capped_total, __ATOMIC_RELAXED);
}

int demangle(const char *name, char *buf, size_t len)
{
	size_t in = name ? strnlen(name, DEMANGLE_IN_MAX + 1) : 0, n;
	bool capped = in > DEMANGLE_IN_MAX;
	char *out = NULL;
	int status = -1;

	if (!name)
		name = "";
	/* Only "_Z..." goes to the demangler: it would also read a plain "f"
	 * or "i" as a type and turn it into "float" or "int". */
	if (!capped && !strncmp(name, "_Z", 2))
		out = __cxa_demangle(name, NULL, NULL, &status);
	if (out && status == 0)
		name = out;
	n = strnlen(name, DEMANGLE_OUT_MAX + 1);
	if (n > DEMANGLE_OUT_MAX) {
		n = DEMANGLE_OUT_MAX;
		capped = true;
	}
	text_copy_out(buf, len, name, n);
	free(out);
	if (capped)
		__atomic_add_fetch(&capped_total, 1, __ATOMIC_RELAXED);
	return capped;
}
