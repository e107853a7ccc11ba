/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * An output directory that holds an earlier attach's files: a second run
 * into it would mix two runs (report and export pair whatever they find),
 * so it is refused unless --overwrite, which removes those files first.
 * Only fvbpf's own names count: manifest.json and
 * KIND_{rankR[_restartK]|pidP}_segmentNNNN_REGION.EXT files; nothing else
 * in the directory is touched.
 */
#ifndef FVBPF_EARLIER_RUN_H
#define FVBPF_EARLIER_RUN_H

#include <stdbool.h>

/* Whether @name is one of the files an attach writes. */
bool earlier_run_name(const char *name);
/* Counts (@remove false) or removes (@remove true) such files in @dir:
 * their number, or -errno (a file that could not be removed). */
int earlier_run_files(const char *dir, bool remove);

#endif /* FVBPF_EARLIER_RUN_H */
