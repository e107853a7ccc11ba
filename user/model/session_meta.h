/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What one `fvbpf attach` run says about itself in every file it writes:
 * the host, the clock pairs read at its start and end, the arming.  Filled
 * by attach/ (attach_run.c, cut_gate.c), read by output/.
 */
#ifndef FVBPF_SESSION_META_H
#define FVBPF_SESSION_META_H

#include <stdbool.h>
#include <stdint.h>

struct session_meta {
	char hostname[256];
	uint64_t mono_at_start_ns;   /* CLOCK_MONOTONIC ... */
	uint64_t real_at_start_ns;   /* ... and CLOCK_REALTIME, read together */
	uint64_t read_span_start_ns; /* ... within this many ns */
	uint64_t mono_at_end_ns, real_at_end_ns, read_span_end_ns; /* the same at the end */
	/* The processes there at the attach: how many were armed, in how
	 * long, and when segments began (CLOCK_MONOTONIC, cut_gate.c) */
	unsigned int armed_processes;
	uint64_t armed_in_ns, cut_from_ns;
	bool start_at;                       /* cut_from_ns is --start-at's */
};

#endif /* FVBPF_SESSION_META_H */
