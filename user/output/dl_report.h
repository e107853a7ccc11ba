/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* A process's DataLoader totals and losses (issue 38) in the exit report
 * and the manifest: nothing cut or unmatched goes unsaid. */
#ifndef FVBPF_DL_REPORT_H
#define FVBPF_DL_REPORT_H

#include <json-c/json.h>

#include "model/session.h"

/* Its exit-report line, when the process had DataLoader records. */
void dl_report_line(const struct session_target *t);
/* Its manifest object; NULL without DataLoader records (no key). */
json_object *dl_report_json(const struct session_target *t);

#endif /* FVBPF_DL_REPORT_H */
