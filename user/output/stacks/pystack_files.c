// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/* --with-stack: a segment's stack files, each written atomically. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "output/stacks/flame_svg.h"
#include "util/file/output_files.h"
#include "output/stacks/pystack_files.h"
#include "output/stacks/pystack_fold.h"
#include "output/stacks/pystack_lines.h"

static int write_file(const char *outdir, const char *name, const struct fold_set *fs,
		      const char *title, const char *what, bool svg)
{
	struct out_file of;
	int ret = out_open(&of, outdir, name);

	if (ret)
		return ret;
	ret = svg ? flame_svg_write(of.f, fs, title, what) : pystack_fold_write(of.f, fs);
	if (ret) {
		out_abort(&of);
		return ret;
	}
	return out_commit(&of);
}

/* KIND_rank..._REGION.folded and FLAME_rank..._REGION.svg of @fs (sorted here). */
static int write_pair(const char *outdir, const struct seg_output_ctx *c, struct fold_set *fs,
		      const char *kind, const char *flame, const char *region, const char *title,
		      const char *what)
{
	char name[PATH_MAX];
	int ret;

	pystack_fold_sort(fs);
	ret = seg_output_file_name(name, sizeof(name), kind, c->proc, c->seg->seq, region, "folded");
	if (!ret)
		ret = write_file(outdir, name, fs, title, what, false);
	if (!ret)
		ret = seg_output_file_name(name, sizeof(name), flame, c->proc, c->seg->seq, region, "svg");
	if (!ret)
		ret = write_file(outdir, name, fs, title, what, true);
	return ret;
}

static int write_lines(const char *outdir, const char *name, const struct seg_output_ctx *c,
		       const char *title)
{
	unsigned int n = c->pystacks->group_n ? c->pystacks->group_n : 1;
	struct pyline_set ls;
	struct out_file of;
	int ret = pylines_build(c, n, &ls);

	if (ret)
		return ret;
	ret = out_open(&of, outdir, name);
	if (!ret) {
		ret = pylines_write(of.f, &ls, title, n);
		if (ret)
			out_abort(&of);
		else
			ret = out_commit(&of);
	}
	pylines_free(&ls);
	return ret;
}

int pystack_write_files(const char *outdir, const struct seg_output_ctx *c)
{
	char region[FVBPF_REGION_NAME_MAX + 1], name[PATH_MAX], title[512], who[32];
	struct fold_set fs;
	int ret;

	if (!c->pystacks)
		return 0;
	out_sanitize_name(region, sizeof(region), c->reg->defs[c->seg->region].name);
	seg_output_who(c->proc, who, sizeof(who));
	ret = pystack_fold_build(c, &fs);
	if (ret)
		return ret;
	snprintf(title, sizeof(title), "%s segment %04u %s: self CPU time of torch calls by Python "
		 "stack", who, c->seg->seq, region);
	ret = write_pair(outdir, c, &fs, "stacks", "flame", region, title, "self CPU time");
	pystack_fold_free(&fs);
	/* GPU time by the stacks of the launches behind it, when there is any */
	if (!ret && !(ret = pystack_fold_device(c, &fs))) {
		if (fs.total_ns) {
			snprintf(title, sizeof(title), "%s segment %04u %s: GPU time by the Python "
				 "stack that launched it", who, c->seg->seq, region);
			ret = write_pair(outdir, c, &fs, "device_stacks", "device_flame", region,
					 title, "device time");
		}
		pystack_fold_free(&fs);
	}
	if (!ret)
		ret = seg_output_file_name(name, sizeof(name), "pylines", c->proc, c->seg->seq, region,
					   "txt");
	if (!ret) {
		snprintf(title, sizeof(title), "%s segment %04u %s: Python lines by time", who,
			 c->seg->seq, region);
		ret = write_lines(outdir, name, c, title);
	}
	return ret;
}
