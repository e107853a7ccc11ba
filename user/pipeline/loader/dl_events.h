/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/* DataLoader records (FVBPF_EV_DL) into the trainer's join (dl_join.h). */
#ifndef FVBPF_DL_EVENTS_H
#define FVBPF_DL_EVENTS_H

#include <stdbool.h>

#include "fvbpf_events.h"
#include "model/session.h"

/* An FVBPF_EV_DL record of trainer @t: false for one no message makes
 * (events.c counts it bad). */
bool dl_events_handle(struct session_target *t, const struct fvbpf_dl_event *ev);

#endif /* FVBPF_DL_EVENTS_H */
