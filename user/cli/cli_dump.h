/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_CLI_DUMP_H
#define FVBPF_CLI_DUMP_H

/* `fvbpf dump`: exit status 0, 1 (an error, said), 2 (usage). */
int dump_command(int argc, char **argv);

#endif /* FVBPF_CLI_DUMP_H */
