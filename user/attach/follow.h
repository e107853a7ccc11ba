/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Whole jobs: --children and --match.  The processes of the followed tree
 * become session targets as they map fvbpf markers or libtorch_cpu; forked
 * copies of traced processes (DataLoader workers) are listed, not traced.
 */
#ifndef FVBPF_FOLLOW_H
#define FVBPF_FOLLOW_H

#include <json-c/json.h>
#include <stdbool.h>

#include "attach/attach.h"
#include "model/session.h"

struct fvbpf_proc_event;

/* Before BPF is loaded: check the options and find the processes (waiting
 * up to --wait for a --match).  0 or -errno, already reported. */
int follow_prepare(struct session *s, const struct attach_opts *o);
/* After BPF is loaded: seed the tree map, trace what can be traced. */
int follow_start(struct session *s);
/* Each loop: new records are handled; rescans and candidates' mappings. */
void follow_tick(struct session *s);
void follow_record(struct session *s, const struct fvbpf_proc_event *ev);
/* A traced process exited (its pidfd). */
void follow_target_exited(struct session *s, struct session_target *t);
/* Every process of the tree is gone. */
bool follow_tree_gone(const struct session *s);
/* A live process of the tree with a rank in its environment (RANK,
 * SLURM_PROCID, ...) is not traced yet, nor known not to be traceable:
 * a rank still starting, which -n waits for. */
bool follow_ranks_pending(struct session *s);
/* The manifest's "followed" object: every process and what became of it. */
json_object *follow_json(const struct session *s);
/* For the exit report. */
void follow_report(const struct session *s);
void follow_free(struct session *s);

#endif /* FVBPF_FOLLOW_H */
