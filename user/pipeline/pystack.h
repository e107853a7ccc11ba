/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * --with-stack, loader side: BPF's stack records (code object, instruction)
 * become interned, resolved stacks (file, function, line per frame) that
 * torch calls refer to by id.  The table belongs to the session; the
 * consumer adds to it, the writer thread reads it (entries never change
 * once added, the array of them is behind a lock).
 */
#ifndef FVBPF_PYSTACK_H_USER
#define FVBPF_PYSTACK_H_USER

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fvbpf_pystack.h"
#include "pipeline/torch/fwd_link.h"
#include "pipeline/segment.h"
#include "proc/python/py_code.h"
#include "proc/python/py_runtime.h"
#include "util/name_table.h"
#include "util/row_table.h"

#define PYSTACK_MAX_STACKS (1u << 20)
#define PYSTACK_MAX_CODES (1u << 18)
#define PYSTACK_PENDING 64  /* threads whose last stack waits for its op */

struct pystack_frame {
	uint32_t func, file;        /* ids in the session's name table; file 0: unreadable */
	int32_t line;               /* the line being run, 0 unknown */
	int32_t firstline;          /* the function's first line (torch.profiler's number) */
};

struct pystack_entry {
	uint32_t n;
	uint32_t flags;             /* FVBPF_PYSTACK_* */
	struct pystack_frame f[];   /* innermost first */
};

struct pystack_table {
	pthread_mutex_t lock;
	struct pystack_entry **e;   /* e[id - 1] */
	size_t n, cap;
	struct name_table *names;
	bool apis_set;              /* BPF knows which CUDA calls get stacks */
	unsigned int group_n;       /* --group-by-stack: frames a pylines_*.txt row groups by */
	unsigned int summary_n;     /* --group-by-stack given: frames a summary row groups by, 0 not */
	/* --max-memory's share for tables: each stack and code object kept is
	 * charged (consumer only); refused ones are counted as refused */
	const struct charge_hook *charge;
	uint64_t charged;
};

/* Counted per target, reported in the manifest and the exit report. */
struct pystack_counts {
	uint64_t records, matched, stacks, frames_unknown, bad_code, huge_tables, unreadable;
	uint64_t same;              /* operators inside the last walked one: its stack */
	uint64_t same_lost;         /* ... whose walked stack fvbpf did not have */
	uint64_t refused;           /* past PYSTACK_MAX_STACKS / _CODES or --max-memory */
};

struct pystack_code {
	struct py_code c;
	int err;                    /* enum py_code_err */
};

struct pystack_target {
	struct py_runtime rt;
	int status;                 /* py_runtime_find's result */
	struct addr_cache code_ix;  /* code address -> index + 1 into codes */
	struct pystack_code *codes;
	size_t ncodes, capcodes;
	struct addr_cache raw;      /* hash of the raw frames -> index + 1 into seen */
	struct pystack_seen {       /* each distinct raw stack: compared on a hash hit */
		uint32_t id, n, flags;
		struct fvbpf_py_frame *frames;
	} *seen;
	size_t nseen, capseen;
	/* per thread (by tid, one slot each): the stack record waiting for its
	 * entry, and the stack of the last operator that walked one */
	struct { uint32_t tid, id; uint64_t ts; uint32_t op_tid, op_id; } pend[PYSTACK_PENDING];
	struct pystack_counts n;
	struct fwd_link fwd;        /* backward nodes to their forward op's stack */
	/* its code objects and raw stacks, charged to the table's hook,
	 * given back when the target is freed */
	const struct charge_hook *charge;
	uint64_t charged;
};

void pystack_table_init(struct pystack_table *t, struct name_table *names);
void pystack_table_free(struct pystack_table *t);
/* Entry @id (from 1), NULL if none; valid while the table lives. */
const struct pystack_entry *pystack_get(struct pystack_table *t, uint32_t id);

/* Look at @pid's interpreter: the result of py_runtime_find. */
int pystack_target_init(struct pystack_target *pt, pid_t pid);
void pystack_target_free(struct pystack_target *pt);
/* A stack record: interned, resolved if new, waiting for its op. */
void pystack_record(struct pystack_table *tab, struct pystack_target *pt,
		    const struct fvbpf_pystack_event *ev, size_t size);
/* The region slice @tid began at @ts in @seg (may be NULL) gets @stack. */
void seg_slice_set_stack(struct segment *seg, uint32_t tid, uint64_t ts, uint32_t stack);
/* The stack id of the launch or region begin that entered on @tid at @ts, 0 none. */
uint32_t pystack_take(struct pystack_target *pt, uint32_t tid, uint64_t ts);
/* The same for an operator's entry; @same: its record said "the stack of
 * the thread's last walked operator" (FVBPF_TORCH_SAME_STACK). */
uint32_t pystack_take_op(struct pystack_target *pt, uint32_t tid, uint64_t ts, bool same);

#endif /* FVBPF_PYSTACK_H_USER */
