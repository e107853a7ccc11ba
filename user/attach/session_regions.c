// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * What opens a segment, from the command line: -r's marker regions, its
 * torch: scope patterns and Python regions, --step-by, --window, a region
 * file, or the default of one segment per training step.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/py_request.h"
#include "attach/session_regions.h"
#include "util/log.h"
#include "pipeline/registry.h"

static void warn_registry(const char *msg, void *ctx)
{
	(void)ctx;
	log_warn("%s", msg);
}

/*
 * Split -r's list: `torch:GLOB` items are torch scope patterns (kept in
 * s->torch_globs), the rest marker region names (left in s->region_list).
 */
static int split_torch_items(struct session *s, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL, *out;
	size_t used = 0;

	s->region_list = calloc(1, strlen(list) + 1);
	if (!copy || !s->region_list) {
		free(copy);
		return -ENOMEM;
	}
	out = s->region_list;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		if (py_request_item(tok)) {
			if (py_request_add(s, tok)) {
				free(copy);
				return -EINVAL;
			}
			continue;
		}
		if (strncmp(tok, "torch:", 6)) {
			used += (size_t)sprintf(out + used, "%s%s", used ? "," : "", tok);
			continue;
		}
		if (!tok[6] || s->ntorch_globs == TORCH_GLOBS_MAX) {
			log_error("'%s': give a scope name pattern after torch: (at most %u)", tok,
				  TORCH_GLOBS_MAX);
			free(copy);
			return -EINVAL;
		}
		/* the copy lives as long as the session: kept in the globs */
		s->torch_globs[s->ntorch_globs++] = tok + 6;
	}
	if (!s->ntorch_globs && !s->npy_specs)
		free(copy);
	else
		s->torch_copy = copy;
	s->py_fastvideo = used > 0;
	return 0;
}

/*
 * Nothing says where segments begin: a PyTorch job as a new user attaches
 * to one.  One segment per training step, as --step-by 'Optimizer.step*'
 * (targets_check() refuses a process that maps no libtorch_cpu).
 */
static int default_step_by(struct session *s)
{
	int idx = registry_add(s->reg, "step", "torch step (--step-by)");

	if (idx < 0)
		return idx;
	s->reg->defs[idx].enabled = true;
	s->step_region = idx;
	s->step_by = STEP_BY_DEFAULT;
	s->step_by_default = true;
	s->requested[s->nrequested++] = (unsigned int)idx;
	log_info("no -r, --step-by or --window given: one segment per training step, from the end "
		 "of one '%s' scope to the end of the next (give -r REGIONS for markers, --window "
		 "SECONDS for time windows)", STEP_BY_DEFAULT);
	return 0;
}

int session_regions_setup(struct session *s, const struct attach_opts *o)
{
	const char *list = o->regions;
	char err[512], names[4096];
	unsigned int i;
	int idx;

	registry_init(s->reg);
	if (o->region_file && registry_load_file(s->reg, o->region_file, err, sizeof(err))) {
		log_error("%s", err);
		return -EINVAL;
	}
	if (!list)
		list = getenv("FASTVIDEO_TORCH_PROFILE_REGIONS");
	s->step_region = -1;
	s->window_region = -1;
	if (o->window_s > 0) {
		idx = registry_add(s->reg, "window", "time window (--window)");
		if (idx < 0)
			return idx;
		s->reg->defs[idx].enabled = true;
		s->window_region = idx;
		s->window_ns = (uint64_t)(o->window_s * 1e9);
	}
	if (list && split_torch_items(s, list))
		return -EINVAL;
	if (list)
		list = s->region_list;
	if (o->step_by) {
		idx = registry_add(s->reg, "step", "torch step (--step-by)");
		if (idx < 0)
			return idx;
		s->reg->defs[idx].enabled = true;
		s->step_region = idx;
	}
	if ((!list || !*list) && (s->ntorch_globs || s->npy_specs || o->step_by || o->window_s > 0))
		goto done;
	if ((!list || !*list) && s->torch_ops)
		return default_step_by(s);
	if (!list || !*list) {
		log_error("no regions given: use -r training_train_one_step,... or set "
			  "FASTVIDEO_TORCH_PROFILE_REGIONS (see 'fvbpf regions'), --step-by GLOB or "
			  "--window SECONDS");
		return -EINVAL;
	}
	if (registry_enable_list(s->reg, list, warn_registry, NULL) == 0) {
		registry_names(s->reg, names, sizeof(names));
		log_error("no valid region in '%s'; known regions: %s", list, names);
		return -EINVAL;
	}
done:
	for (i = 0; i < s->reg->count; i++)
		if (s->reg->defs[i].enabled)
			s->requested[s->nrequested++] = i;
	return 0;
}
