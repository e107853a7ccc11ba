/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
#ifndef FVBPF_CLI_REPORT_H
#define FVBPF_CLI_REPORT_H

/* `fvbpf report DIR... [--json] [--top N]`: the process exit status. */
int report_command(int argc, char **argv);
/* `fvbpf merge DIR... -o FILE [--region NAME] [--segment N]`. */
int merge_command(int argc, char **argv);

#endif /* FVBPF_CLI_REPORT_H */
