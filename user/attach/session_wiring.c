// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * The calls that cross stages: a closed segment from pipeline/ to output/'s
 * writer, through the hook seg_close.c calls.
 */
#include <errno.h>

#include "attach/session_wiring.h"

static int write_segment(struct session *s, struct segment *seg, struct proc_target *proc)
{
	return seg_writer_submit(s->writer, seg, proc);
}

int session_writer_start(struct session *s, const char *outdir, const struct seg_writer_opts *o)
{
	s->writer = seg_writer__new(outdir, s->reg, &s->meta, &s->knames, o);
	if (!s->writer)
		return -(errno ? errno : ENOMEM);
	s->hooks.write_segment = write_segment;
	return 0;
}
