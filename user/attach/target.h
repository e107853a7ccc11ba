/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* One target process: check, attach, quiet, finish, detach. */
#ifndef FVBPF_TARGET_H
#define FVBPF_TARGET_H

#include "attach/attach.h"
#include "attach/attach_run.h"
#include "model/session.h"

/* Fill s->targets from o->pids (deduplicated, each with its marker library);
 * 0 or -errno (already reported). */
int targets_check(struct session *s, const struct attach_opts *o);
/* Fill @t (a free slot of s->targets) for @pid: read /proc, find its
 * markers or torch, take its lock; t->opened once it holds anything.
 * 0 or -errno, already reported; -ENOENT: nothing to trace in it. */
int target_open(struct session *s, struct session_target *t, pid_t pid);
/* Markers or torch (or --window) in @pid: 0, -ENOENT, -errno. */
struct marker_lib;
int target_traceable(struct session *s, pid_t pid, struct marker_lib *marker, bool *has_markers);
/* Every stage's state of @t (a zeroed slot of s->targets), each empty as
 * its stage makes it: target_open() calls it; a session built by hand
 * (tests, fuzzing) calls it first.  0 or -ENOMEM. */
int target_states_alloc(struct session_target *t);
/* Those states freed (target_free() does it; a test that built @t by hand
 * and frees no session does it itself). */
void target_states_free(struct session_target *t);
/* The per-process state the ring records feed.  t->session and t->proc->pid
 * must be set and t->pidfd be -1 or open; needs no BPF, so a session built
 * by hand (tests, fuzzing) can decode records too. */
void target_init(struct session_target *t, unsigned int max_segments);
/* Probes in, under the epoch protocol: target_attach_begin() puts them in
 * and asks the library its questions, target_attach_end() takes its
 * answers and arms the process (t->armed).  Each 0 or -errno, said. */
int target_attach_begin(struct session *s, struct session_target *t);
int target_attach_end(struct session *s, struct session_target *t);
/* The armed process goes live (its markers' odd epoch) once the session's
 * cut is open (cut_gate.c): 0 or -errno. */
int target_go_live(struct session *s, struct session_target *t);
/* Both, one after the other. */
int target_attach(struct session *s, struct session_target *t);
/* --window: @t's first window from @ts.  0 or -ENOMEM. */
int target_window_start(struct session *s, struct session_target *t, uint64_t ts);
/* Attach to CUDA/NCCL functions mapped since the last look. */
void target_scan_cuda(struct session *s, struct session_target *t, bool first);
/* Every tick: --record-shapes' measurement in flight read and polled, or
 * stopped once the process has ended.  Never blocks. */
void target_shapes_tick(struct session *s, struct session_target *t);
/* After -n: markers stop calling the probes, CUDA probes go. */
void target_quiet(struct session_target *t);
/* No more segments: close what is open (@why: say so, NULL: silently). */
void target_finish(struct session *s, struct session_target *t, const char *why);
void target_detach(struct session_target *t);
/* All of them, concurrently (each uprobe removal waits for RCU). */
void targets_detach_all(struct session *s);
void target_free(struct session_target *t);
/* BPF's ring-buffer drop count for this process. */
uint64_t target_drops(const struct session_target *t);

#endif /* FVBPF_TARGET_H */
