/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Open, size and load the BPF object; fill its tables.  The loader is the
 * only file that includes the generated skeleton: the other stages reach
 * the object's maps, programs and loss counters through the functions
 * below, with the object as an opaque handle (session's skel).
 */
#ifndef FVBPF_BPF_SETUP_H
#define FVBPF_BPF_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fvbpf_counters.h"

struct bpf_link;
struct bpf_program;
struct fvbpf_bpf;

/* An enabled region, for BPF's table of them. */
struct bpf_setup_region {
	uint64_t hash;          /* fvbpf_region_hash() of its name */
	uint32_t id;            /* what region records carry: its registry index */
	const char *name;       /* for the message when it cannot go in */
};

/* What the object is loaded for (attach/ fills it from the options). */
struct bpf_setup_opts {
	unsigned int ringbuf_mb;
	bool tree;              /* --children, --match: the fork/exec/exit tracepoints */
	bool report_all_execs;  /* --match: every exec on the machine, not the tree's only */
	bool record_shapes;     /* --record-shapes or --with-flops */
	bool py_wanted;         /* --with-stack, the session's stack table made */
	const struct bpf_setup_region *regions;
	size_t nregions;
};

/* What bpf_setup() made.  skel stays set when a later step failed
 * (bpf_setup_destroy() ends it), as do the tree links made. */
struct bpf_setup_result {
	struct fvbpf_bpf *skel;
	bool api_probes;        /* CUDA/NCCL call probes loaded (session uprobes) */
	bool marker_multi;      /* marker probes are uprobe_multi links */
	struct bpf_link *tree_links[3]; /* fork, exec, exit (with o->tree) */
};

/* libbpf's messages through fvbpf's verbosity. */
void bpf_setup_log(void);
/* Open, size, load, fill the tables; @r zeroed first.  0 or -errno
 * (already reported). */
int bpf_setup(const struct bpf_setup_opts *o, struct bpf_setup_result *r);
/* The object's end (NULL is fine): programs detached, maps closed. */
void bpf_setup_destroy(struct fvbpf_bpf *skel);

/* The maps other stages read or fill. */
enum fvbpf_map_id {
	FVBPF_MAP_EVENTS,        /* the ring buffer */
	FVBPF_MAP_PROCS,         /* slot -> struct fvbpf_proc_state */
	FVBPF_MAP_TGID_SLOTS,    /* tgid's low bits -> slot */
	FVBPF_MAP_TORCH_GATES,   /* scope name hash -> FVBPF_GATE_* */
	FVBPF_MAP_TORCH_VTABLES, /* autograd node vtable -> id */
	FVBPF_MAP_TREE,          /* the processes followed */
	FVBPF_MAP_TORCH_PLANS,   /* torch id -> struct fvbpf_shape_plan (--record-shapes) */
	FVBPF_MAP_PY_CFG,        /* slot -> struct fvbpf_py_cfg (--with-stack) */
	FVBPF_MAP_PY_APIS,       /* api id -> 1: the CUDA calls that get stacks */
	FVBPF_MAP_COLL_LAYOUT,   /* slot -> struct fvbpf_coll_layout (a collective's tensors) */
};
/* The map's fd; -EBADF without an object. */
int bpf_setup_map_fd(const struct fvbpf_bpf *skel, enum fvbpf_map_id id);

/* The programs other stages attach. */
enum fvbpf_prog_id {
	FVBPF_PROG_REGION_BEGIN, /* the marker library's probe functions */
	FVBPF_PROG_REGION_END,
	FVBPF_PROG_THREAD_SYNC,
	FVBPF_PROG_CORRELATION,  /* the agent channel */
	FVBPF_PROG_GPU_BATCH,
	FVBPF_PROG_AGENT_STATUS,
	FVBPF_PROG_API_CALL,     /* CUDA and NCCL calls */
	FVBPF_PROG_TORCH_CALL,   /* PyTorch operators and nodes */
	FVBPF_PROG_TORCH_EVAL,
	FVBPF_PROG_SCOPE_ENTER,
	FVBPF_PROG_SCOPE_END,
	FVBPF_PROG_PY_STACK,     /* the fast path's --with-stack (the library's probe) */
	FVBPF_PROG_MEM_CALL,     /* allocator events (--profile-memory) */
	FVBPF_PROG_REGION_BEGIN_TS, /* the region probes with the library's timestamp */
	FVBPF_PROG_REGION_END_TS,
	FVBPF_PROG_DL_PICKLE,    /* DataLoader queue messages (_pickle) */
};
/* The program; NULL without an object. */
struct bpf_program *bpf_setup_prog(const struct fvbpf_bpf *skel, enum fvbpf_prog_id id);
/* Its fd; -EBADF without an object. */
int bpf_setup_prog_fd(const struct fvbpf_bpf *skel, enum fvbpf_prog_id id);

/* BPF's loss counters as they stand; all 0 without an object. */
void bpf_counters_read(const struct fvbpf_bpf *skel, struct fvbpf_counters *out);
/* --with-stack: a process has stacks now; the probes look for them. */
void bpf_setup_py_active(struct fvbpf_bpf *skel);

#endif /* FVBPF_BPF_SETUP_H */
