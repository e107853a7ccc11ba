/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * PyTorch probes of one traced process: when it maps libtorch_cpu.so, one
 * session-uprobe link over every operator and node (the cookie naming it),
 * one on record_function_enter_new and one on RecordFunction::end().
 * Looked for again with the CUDA libraries, so a torch imported later is
 * picked up.
 */
#ifndef FVBPF_TORCH_PROBES_H
#define FVBPF_TORCH_PROBES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fvbpf_shapes.h"
#include "util/name_table.h"

struct torch_layout_job;
struct torch_file;

/* What a cookie id stands for: session-wide, shared by all processes. */
/* --record-shapes: the measured layout, checked on the target's own tensors. */
enum torch_layout_state {
	LAYOUT_NONE = 0,        /* no plans in BPF (yet) */
	LAYOUT_CHECKING,        /* plans in; the first tensors read decide */
	LAYOUT_TRUSTED,
	LAYOUT_REFUSED,         /* plans deleted: its tensors did not fit it */
};

struct torch_id {
	uint32_t name;          /* in torch_table.names */
	uint32_t overload;      /* 0: none */
	uint32_t sig;           /* --record-shapes: its arguments (TORCH_SIG_*), 0: no plan */
	uint8_t kind;           /* enum torch_kind */
};

struct torch_file_memo;

struct torch_table {
	struct torch_id *ids;
	size_t n, cap;
	struct name_table *names; /* the session's (read by the writer thread too) */
	/* libtorch files read this session: the ranks of a job map one, read
	 * once (about 0.1 s each), copied for every process */
	struct torch_file_memo *memo;
};

struct torch_probes {
	pid_t pid;
	unsigned int slot;
	bool found;             /* libtorch_cpu.so mapped and probed */
	bool ops_via_callbacks; /* operators and nodes come from the fast path:
				 * only the scopes are probed */
	char path[PATH_MAX];
	int links[3];           /* ops+nodes, scope enter, evaluate_function; -1 none */
	struct bpf_link *end_link; /* RecordFunction::end() */
	unsigned int nops, nnodes;
	bool scopes;
	/* evaluate_function: node vtables put in the BPF map (deleted at detach) */
	uint64_t *vptrs;
	size_t nvptrs;
	int vtables_fd;
	unsigned int eval_classes;  /* evaluate_function probed with these (kept after detach) */
	uint64_t discover_ns, attach_ns;
	bool warned;
	/* --record-shapes: plans in BPF for ids plan_base.. (deleted at detach) */
	uint32_t plan_base, plan_n;
	uint32_t plans_ops, plans_nodes;       /* operators, autograd nodes with a plan */
	uint32_t noplan_schema, noplan_types;  /* ops without: no schema, types not understood */
	int plans_fd;
	char shapes_why[160];   /* why this process has no shapes ("" it has) */
	struct torch_layout_job *plans_job;  /* the measurement in flight, NULL */
	struct torch_file *plans_tf;         /* its operators, kept until it ends */
	uint8_t lay_state;      /* enum torch_layout_state */
	struct fvbpf_tensor_layout lay; /* the layout installed (lay_state CHECKING or TRUSTED) */
	uint32_t lay_fit, lay_misfit;        /* tensors the layout explained, or not */
	char lay_cache[PATH_MAX];            /* the report's cache file, "" none */
	/* torch, CUDA, CUPTI and NCCL libraries the process maps (manifest) */
	char **libs;
	size_t nlibs;
};

#define TORCH_LIBS_MAX 64

struct bpf_link;
struct bpf_program;
struct torch_progs {
	int call_fd, enter_fd, eval_fd, vtables_fd;
	int plans_fd;           /* --record-shapes; -1 off */
	struct bpf_program *end_prog;
};

void torch_table_init(struct torch_table *tt, struct name_table *names);
void torch_table_free(struct torch_table *tt);
const struct torch_id *torch_table_get(const struct torch_table *tt, uint32_t id);
/* A new id for @name (the operator fast path's names): 0 or -ENOMEM. */
int torch_table_add(struct torch_table *tt, const char *name, uint8_t kind, uint32_t *idx);

void torch_probes_init(struct torch_probes *tp, pid_t pid, unsigned int slot);
/* Is libtorch_cpu mapped by @pid?  Its path in @path. */
bool torch_probes_mapped(pid_t pid, char *path, size_t len);
/* Attach if libtorch_cpu is newly mapped: 1 attached, 0 nothing new, -errno. */
int torch_probes_scan(struct torch_probes *tp, struct torch_table *tt, const struct torch_progs *pr);
void torch_probes_detach(struct torch_probes *tp);
/* Note the torch/CUDA/CUPTI/NCCL libraries mapped now (new ones only). */
void torch_probes_note_libs(struct torch_probes *tp);
void torch_probes_free(struct torch_probes *tp);

/* A target's torch probes, holding nothing until torch_probes_init() with
 * its process (NULL: out of memory); torch_probes__free() detaches and
 * frees them (NULL is fine). */
struct torch_probes *torch_probes__new(void);
void torch_probes__free(struct torch_probes *tp);

/* The session's operator table, empty until torch_table_init() (NULL: out
 * of memory); torch_table__free() frees what it holds too (NULL is fine). */
struct torch_table *torch_table__new(void);
void torch_table__free(struct torch_table *tt);

#endif /* FVBPF_TORCH_PROBES_H */
