// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* The region registry: FastVideo's names, extensible from a file. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/registry.h"
#include "util/text_sanitize.h"

/* FastVideo's names, and the region each runs in by FastVideo's training
 * loop (fastvideo/training/, its pipelines): the step's phases inside
 * training_train_one_step, steps, validation and checkpoints inside
 * training_train. */
static const struct {
	const char *name;
	const char *desc;
	const char *parent;
} builtin_regions[] = {
	{ "model_loading", "pipeline and module loading", NULL },
	{ "inference_denoising", "the denoising loop of an inference run", NULL },
	{ "training_train", "a whole training run", NULL },
	{ "training_train_one_step", "one optimisation step", "training_train" },
	{ "training_dataloader", "fetching the next batch", "training_train_one_step" },
	{ "training_forward", "forward pass", "training_train_one_step" },
	{ "training_backward", "backward pass", "training_train_one_step" },
	{ "training_optimizer", "optimizer step", "training_train_one_step" },
	{ "training_callbacks", "callbacks run after a step", "training_train" },
	{ "training_validation", "validation run", "training_train" },
	{ "training_save_checkpoint", "checkpoint saving", "training_train" },
	{ "distillation_teacher_forward", "teacher forward pass (distillation)",
	  "training_train_one_step" },
	{ "distillation_student_forward", "student forward pass (distillation)",
	  "training_train_one_step" },
	{ "distillation_loss", "distillation loss", "training_train_one_step" },
	{ "distillation_update", "distillation update step", "training_train_one_step" },
	{ "dmd2_student_rollout", "DMD2 student rollout", "training_train_one_step" },
	{ "dmd2_generator_loss", "DMD2 generator loss", "training_train_one_step" },
	{ "dmd2_critic_loss", "DMD2 critic loss", "training_train_one_step" },
};

#define NBUILTIN (sizeof(builtin_regions) / sizeof(builtin_regions[0]))

void registry_init(struct region_registry *reg)
{
	size_t i;
	int p;

	memset(reg, 0, sizeof(*reg));
	for (i = 0; i < NBUILTIN; i++) {
		registry_add(reg, builtin_regions[i].name, builtin_regions[i].desc);
		reg->defs[reg->count - 1].builtin = true;
		reg->defs[reg->count - 1].parent = -1;
	}
	for (i = 0; i < NBUILTIN; i++) {
		p = builtin_regions[i].parent ? registry_find(reg, builtin_regions[i].parent) : -1;
		reg->defs[i].parent = p >= 0 ? p : -1;
	}
}

bool registry_encloses(const struct region_registry *reg, unsigned int anc, unsigned int idx)
{
	int p, hops;

	if (idx >= reg->count || !reg->defs[idx].builtin)
		return false;
	/* the built-ins' chain is two long; the bound keeps a bad table finite */
	for (p = reg->defs[idx].parent, hops = 0; p >= 0 && (unsigned int)p < reg->count && hops < 8;
	     p = reg->defs[p].builtin ? reg->defs[p].parent : -1, hops++)
		if ((unsigned int)p == anc)
			return true;
	return false;
}

bool registry_enabled_parent(const struct region_registry *reg, unsigned int idx)
{
	int p, hops;

	if (idx >= reg->count || !reg->defs[idx].builtin)
		return false;
	for (p = reg->defs[idx].parent, hops = 0; p >= 0 && (unsigned int)p < reg->count && hops < 8;
	     p = reg->defs[p].builtin ? reg->defs[p].parent : -1, hops++)
		if (reg->defs[p].enabled)
			return true;
	return false;
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
	d->parent = -1;
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

static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/*
 * The whole file, NUL-terminated.  Opened without blocking (a FIFO) and
 * refused unless it is a regular file of at most REGISTRY_FILE_MAX bytes,
 * counted while reading too, so /dev/zero or a growing file cannot hold
 * fvbpf.
 */
static int read_file(const char *path, char **out, size_t *len, char *err, size_t errlen)
{
	size_t n = 0;
	struct stat st;
	ssize_t r;
	char *buf = NULL;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "cannot read region file %s: %s", path, strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, errlen, "cannot read region file %s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		snprintf(err, errlen, "region file %s is %s: give a text file", path,
			 file_kind(st.st_mode));
		goto out;
	}
	buf = malloc(REGISTRY_FILE_MAX + 1);
	if (!buf) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory reading region file %s", path);
		goto out;
	}
	/* One byte more than allowed tells a file that is too big. */
	while (n <= REGISTRY_FILE_MAX) {
		r = read(fd, buf + n, REGISTRY_FILE_MAX + 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			snprintf(err, errlen, "cannot read region file %s: %s", path, strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > REGISTRY_FILE_MAX) {
		ret = -EFBIG;
		snprintf(err, errlen, "region file %s is larger than %u bytes (1 MiB)", path,
			 REGISTRY_FILE_MAX);
		goto out;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return ret;
}

/* Whether line @no (@line, @n bytes, no newline) can be parsed at all. */
static int check_line(const char *path, unsigned int no, const char *line, size_t n,
		      char *err, size_t errlen)
{
	if (n > REGISTRY_LINE_MAX) {
		snprintf(err, errlen, "%s:%u: line longer than %u bytes", path, no, REGISTRY_LINE_MAX);
		return -EINVAL;
	}
	if (memchr(line, '\0', n)) {
		snprintf(err, errlen, "%s:%u: NUL byte: the region file must be text", path, no);
		return -EINVAL;
	}
	return 0;
}

static int parse_line(struct region_registry *reg, const char *path, unsigned int no, char *line,
		      char *err, size_t errlen)
{
	char *p = trim(line), *desc;
	int ret;

	if (!*p || *p == '#')
		return 0;
	/* Names reach the terminal and every output file: plain text only. */
	if (!text_is_plain(p)) {
		snprintf(err, errlen, "%s:%u: control characters or invalid UTF-8: names and "
			 "descriptions must be plain UTF-8 text", path, no);
		return -EINVAL;
	}
	desc = p;
	while (*desc && !isspace((unsigned char)*desc))
		desc++;
	if (*desc)
		*desc++ = '\0';
	ret = registry_add(reg, p, trim(desc));
	if (ret < 0) {
		snprintf(err, errlen, "%s:%u: bad region name '%.80s' (%s): names are 1 to %d "
			 "characters, at most %d regions", path, no, p,
			 ret == -ENOSPC ? "registry full" :
			 ret == -EEXIST ? "hash collides with another name" : "invalid",
			 FVBPF_REGION_NAME_MAX, FVBPF_MAX_REGIONS);
		return ret;
	}
	return 0;
}

/*
 * One region per line: "name [description]"; '#' starts a comment line.
 * The name ends at the first white space.
 */
int registry_load_file(struct region_registry *reg, const char *path,
		       char *err, size_t errlen)
{
	char *buf = NULL, *p, *nl, line[REGISTRY_LINE_MAX + 1];
	unsigned int lineno = 0;
	size_t len = 0, n;
	int ret;

	ret = read_file(path, &buf, &len, err, errlen);
	if (ret)
		return ret;
	for (p = buf; !ret && p < buf + len; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(buf + len - p));
		if (!nl)
			nl = buf + len;
		n = (size_t)(nl - p);
		lineno++;
		ret = check_line(path, lineno, p, n, err, errlen);
		if (ret)
			break;
		memcpy(line, p, n);
		line[n] = '\0';
		ret = parse_line(reg, path, lineno, line, err, errlen);
	}
	free(buf);
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
	char *buf, *tok, *save = NULL, msg[256];
	int idx;

	/* Any length: a fixed buffer would cut the last names silently. */
	buf = strdup(list ? list : "");
	if (!buf) {
		if (warn)
			warn("out of memory reading the region list", ctx);
		return 0;
	}
	for (tok = strtok_r(buf, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
		idx = registry_find(reg, tok);
		if (idx < 0) {
			if (warn) {
				snprintf(msg, sizeof(msg),
					 "unknown region '%.80s%s' ignored (see 'fvbpf regions', or add it "
					 "with --region-file)", tok, strlen(tok) > 80 ? "..." : "");
				warn(msg, ctx);
			}
			continue;
		}
		reg->defs[idx].enabled = true;
	}
	free(buf);
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

struct region_registry *registry__new(void)
{
	return calloc(1, sizeof(struct region_registry));
}

void registry__free(struct region_registry *reg)
{
	free(reg);
}
