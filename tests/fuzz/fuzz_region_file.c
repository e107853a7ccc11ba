// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The region-file parser (user/pipeline/registry.c's registry_load_file), called as
 * fvbpf calls it for --region-file, on any bytes; then the same bytes as a
 * -r list.  The registry must stay consistent: every region findable by
 * its full name ("profiler_region_" + its canonical name; the short form
 * is not always enough: "profiler_region_profiler_region_x" registers as
 * "profiler_region_x", which a lookup reads as "x", as the library does).
 */
#include "fuzz.h" /* first: it asks for _GNU_SOURCE */

#include <string.h>

#include "pipeline/registry.h"

static void check_registry(const struct region_registry *reg)
{
	char names[8192], full[FVBPF_REGION_PREFIX_LEN + FVBPF_REGION_NAME_MAX + 1];
	unsigned int i;

	if (reg->count > FVBPF_MAX_REGIONS)
		abort();
	for (i = 0; i < reg->count; i++) {
		snprintf(full, sizeof(full), "%s%s", FVBPF_REGION_PREFIX, reg->defs[i].name);
		if (registry_find(reg, full) != (int)i)
			abort();
	}
	registry_names(reg, names, sizeof(names));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct region_registry reg;
	int fd = fuzz_memfd(data, size);
	char err[512], *list;

	registry_init(&reg);
	registry_load_file(&reg, fuzz_fd_path(fd), err, sizeof(err));
	check_registry(&reg);
	list = malloc(size + 1);
	if (!list)
		return 0;
	memcpy(list, data, size);
	list[size] = '\0';
	registry_enable_list(&reg, list, NULL, NULL);
	registry_enabled_count(&reg);
	free(list);
	return 0;
}
