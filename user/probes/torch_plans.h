/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --record-shapes for one process's libtorch_cpu.so: the report of the
 * target's own torch (proc/torch/torch_layout.h) turned into a plan per
 * operator (probes/torch_abi.h), put in BPF's "torch_plans" map under the
 * operators' ids.  Operators without a plan are recorded without shapes
 * (counted as unknown by the pipeline).
 */
#ifndef FVBPF_TORCH_PLANS_H
#define FVBPF_TORCH_PLANS_H

#include <stdbool.h>
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

/*
 * The installed layout against the target's own tensors: @fit and
 * @misfit more of them read under it (pipeline/torch/torch_shapes.h).  Trusted
 * once LAYOUT_TRUST_FIT fitted; refused at LAYOUT_REFUSE_MISFIT misfits
 * before that: its plans deleted, its cache file dropped, one line said.
 * True when refused by this call.
 */
#define LAYOUT_TRUST_FIT 32
#define LAYOUT_REFUSE_MISFIT 4
bool torch_plans_check(struct torch_probes *tp, unsigned int fit, unsigned int misfit);
/* "none", "checking", "trusted", "refused": the manifest's and exit report's word. */
const char *torch_plans_layout_word(const struct torch_probes *tp);

#endif /* FVBPF_TORCH_PLANS_H */
