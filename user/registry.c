// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The region registry: FastVideo's names, extensible from a file. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "registry.h"

static const struct {
	const char *name;
	const char *desc;
} builtin_regions[] = {
	{ "model_loading", "pipeline and module loading" },
	{ "inference_denoising", "the denoising loop of an inference run" },
	{ "training_train", "a whole training run" },
	{ "training_train_one_step", "one optimisation step" },
	{ "training_dataloader", "fetching the next batch" },
	{ "training_forward", "forward pass" },
	{ "training_backward", "backward pass" },
	{ "training_optimizer", "optimizer step" },
	{ "training_callbacks", "callbacks run after a step" },
	{ "training_validation", "validation run" },
	{ "training_save_checkpoint", "checkpoint saving" },
	{ "distillation_teacher_forward", "teacher forward pass (distillation)" },
	{ "distillation_student_forward", "student forward pass (distillation)" },
	{ "distillation_loss", "distillation loss" },
	{ "distillation_update", "distillation update step" },
	{ "dmd2_student_rollout", "DMD2 student rollout" },
	{ "dmd2_generator_loss", "DMD2 generator loss" },
	{ "dmd2_critic_loss", "DMD2 critic loss" },
};

void registry_init(struct region_registry *reg)
{
	size_t i;

	memset(reg, 0, sizeof(*reg));
	for (i = 0; i < sizeof(builtin_regions) / sizeof(builtin_regions[0]); i++) {
		registry_add(reg, builtin_regions[i].name, builtin_regions[i].desc);
		reg->defs[reg->count - 1].builtin = true;
	}
}

int registry_find_hash(const struct region_registry *reg, uint64_t hash)
{
	unsigned int i;

	for (i = 0; i < reg->count; i++)
		if (reg->defs[i].hash == hash)
			return (int)i;
	return -ENOENT;
}

int registry_find(const struct region_registry *reg, const char *name)
{
	char canon[FVBPF_REGION_NAME_MAX + 1];
	int idx;

	if (fvbpf_region_canon(name, canon, sizeof(canon)) < 0)
		return -EINVAL;
	/* Hash the name as given: hashing the canonical form would strip a
	 * doubled prefix twice, unlike the library. */
	idx = registry_find_hash(reg, fvbpf_region_hash(name));
	/* Guard against a hash collision between two different names. */
	if (idx >= 0 && strcmp(reg->defs[idx].name, canon))
		return -ENOENT;
	return idx;
}

/* Returns the index of the (possibly existing) region, or -errno. */
int registry_add(struct region_registry *reg, const char *name, const char *desc)
{
	char canon[FVBPF_REGION_NAME_MAX + 1];
	struct region_def *d;
	uint64_t hash;
	int idx;

	if (fvbpf_region_canon(name, canon, sizeof(canon)) < 0)
		return -EINVAL;
	hash = fvbpf_region_hash(name);
	idx = registry_find_hash(reg, hash);
	if (idx >= 0) {
		if (strcmp(reg->defs[idx].name, canon))
			return -EEXIST; /* two names, one hash */
		if (desc && *desc && !reg->defs[idx].builtin)
			snprintf(reg->defs[idx].desc, sizeof(reg->defs[idx].desc), "%s", desc);
		return idx;
	}
	if (reg->count >= FVBPF_MAX_REGIONS)
		return -ENOSPC;
	d = &reg->defs[reg->count];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", canon);
	snprintf(d->desc, sizeof(d->desc), "%s", desc ? desc : "");
	d->hash = hash;
	return (int)reg->count++;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * One region per line: "name [description]"; '#' starts a comment line.
 * The name ends at the first white space.
 */
int registry_load_file(struct region_registry *reg, const char *path,
		       char *err, size_t errlen)
{
	char line[512], *p, *desc;
	unsigned int lineno = 0;
	FILE *f;
	int ret = 0;

	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		snprintf(err, errlen, "cannot read region file %s: %s", path, strerror(errno));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		p = trim(line);
		if (!*p || *p == '#')
			continue;
		desc = p;
		while (*desc && !isspace((unsigned char)*desc))
			desc++;
		if (*desc)
			*desc++ = '\0';
		ret = registry_add(reg, p, trim(desc));
		if (ret < 0) {
			snprintf(err, errlen, "%s:%u: bad region name '%s' (%s): names are 1 to %d characters",
				 path, lineno, p,
				 ret == -ENOSPC ? "registry full" :
				 ret == -EEXIST ? "hash collides with another name" : "invalid",
				 FVBPF_REGION_NAME_MAX);
			goto out;
		}
		ret = 0;
	}
out:
	fclose(f);
	return ret;
}

/*
 * Enable the regions named in @list (FastVideo's FASTVIDEO_TORCH_PROFILE_REGIONS
 * syntax: comma separated; white space is accepted too).  Unknown names are
 * warned about and ignored.  Returns how many distinct regions are enabled.
 */
int registry_enable_list(struct region_registry *reg, const char *list,
			 registry_warn_fn warn, void *ctx)
{
	char buf[4096], *tok, *save = NULL, msg[256];
	int idx;

	snprintf(buf, sizeof(buf), "%s", list ? list : "");
	for (tok = strtok_r(buf, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
		idx = registry_find(reg, tok);
		if (idx < 0) {
			if (warn) {
				snprintf(msg, sizeof(msg),
					 "unknown region '%s' ignored (see 'fvbpf regions', or add it with --region-file)",
					 tok);
				warn(msg, ctx);
			}
			continue;
		}
		reg->defs[idx].enabled = true;
	}
	return (int)registry_enabled_count(reg);
}

unsigned int registry_enabled_count(const struct region_registry *reg)
{
	unsigned int i, n = 0;

	for (i = 0; i < reg->count; i++)
		n += reg->defs[i].enabled;
	return n;
}

void registry_names(const struct region_registry *reg, char *buf, size_t len)
{
	size_t off = 0;
	unsigned int i;
	int n;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < reg->count && off < len; i++) {
		n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", reg->defs[i].name);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}
