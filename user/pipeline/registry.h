/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_REGISTRY_H
#define FVBPF_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fvbpf_canon.h"
#include "fvbpf_events.h"

/* A region file is read whole: at most this many bytes, lines of at most
 * REGISTRY_LINE_MAX bytes (newline excluded). */
#define REGISTRY_FILE_MAX (1u << 20)
#define REGISTRY_LINE_MAX 512u

struct region_def {
	char name[FVBPF_REGION_NAME_MAX + 1]; /* canonical, without prefix */
	char desc[96];
	uint64_t hash;                        /* fvbpf_region_hash(name) */
	bool builtin;
	int parent;                           /* built-ins: the region FastVideo
					       * runs it in, -1 none */
	bool enabled;
	uint64_t entered;                     /* begins seen while attached */
};

struct region_registry {
	struct region_def defs[FVBPF_MAX_REGIONS];
	unsigned int count;
};

/* Called for each name in a list that is not registered. */
typedef void (*registry_warn_fn)(const char *msg, void *ctx);

void registry_init(struct region_registry *reg);
int registry_add(struct region_registry *reg, const char *name, const char *desc);
int registry_find(const struct region_registry *reg, const char *name);
int registry_find_hash(const struct region_registry *reg, uint64_t hash);
/* Add the regions of a file: 0, or -errno with a one-line reason in @err. */
int registry_load_file(struct region_registry *reg, const char *path,
		       char *err, size_t errlen);
int registry_enable_list(struct region_registry *reg, const char *list,
			 registry_warn_fn warn, void *ctx);
unsigned int registry_enabled_count(const struct region_registry *reg);
/* Whether @anc encloses @idx in FastVideo's loop (training_train_one_step
 * encloses training_forward), through any number of levels. */
bool registry_encloses(const struct region_registry *reg, unsigned int anc, unsigned int idx);
/* Whether an enabled region encloses @idx. */
bool registry_enabled_parent(const struct region_registry *reg, unsigned int idx);
/* "a, b, c" of every registered name, for error messages. */
void registry_names(const struct region_registry *reg, char *buf, size_t len);

/* The session's registry, empty until registry_init() (NULL: out of
 * memory); registry__free() frees it (NULL is fine). */
struct region_registry *registry__new(void);
void registry__free(struct region_registry *reg);

#endif /* FVBPF_REGISTRY_H */
