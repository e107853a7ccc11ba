/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --record-shapes for one process's libtorch_cpu.so: the report of the
 * target's own torch (target/torch_layout.h) turned into a plan per
 * operator (probes/torch_abi.h), put in BPF's "torch_plans" map under the
 * operators' ids.  Operators without a plan are recorded without shapes
 * (counted as unknown by the pipeline).
 */
#ifndef FVBPF_TORCH_PLANS_H
#define FVBPF_TORCH_PLANS_H

#include <stdint.h>
#include <sys/stat.h>

#include "probes/torch_ops.h"
#include "probes/torch_probes.h"

/*
 * Plans for @tf's ops, ids @base.. (@fd/@st: the mapped file): installed
 * now when the report is cached, else once the target's python has
 * measured it (torch_plans_poll); @tf is taken over (emptied).  0, or
 * -errno (said, in tp->shapes_why).
 */
int torch_plans_start(struct torch_probes *tp, struct torch_table *tt, struct torch_file *tf,
		      uint32_t base, int fd, const struct stat *st, int plans_fd);
/* A measurement in flight: installs its plans once it has ended.  Never
 * blocks (the run loop calls it on every tick). */
void torch_plans_poll(struct torch_probes *tp, struct torch_table *tt);
/* Stop a measurement in flight (kills the sibling), silently. */
void torch_plans_cancel(struct torch_probes *tp);
/* The same, saying in one line why the process has no shapes: @why. */
void torch_plans_stop(struct torch_probes *tp, const char *why);
/* Delete this process's plans from the map (a measurement in flight is
 * stopped, and said). */
void torch_plans_remove(struct torch_probes *tp);

#endif /* FVBPF_TORCH_PLANS_H */
