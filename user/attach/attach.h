/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_ATTACH_H
#define FVBPF_ATTACH_H

#include "model/options.h"

/* `fvbpf attach ...`: returns the process exit status. */
int attach_command(int argc, char **argv);
int attach_run(const struct attach_opts *o);

#endif /* FVBPF_ATTACH_H */
