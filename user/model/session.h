/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The data model of one `fvbpf attach` run: the session and its targets,
 * which every live stage reads.  Data only (structs, tiny inlines): what
 * runs it is attach/attach_run.c, which wires the stages together.  Each
 * stage's own state is a handle: a pointer to a type declared here and
 * defined by its stage, which makes and frees it (xxx__new(), xxx__free());
 * this header includes no stage's header.
 */
#ifndef FVBPF_SESSION_H
#define FVBPF_SESSION_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "fvbpf_events.h"
#include "fvbpf_fast.h"
#include "fvbpf_pyshim.h"

#include "util/budget.h"
#include "util/clock.h"
#include "util/name_table.h"
#include "model/marker_syms.h"
#include "model/options.h"
#include "model/session_meta.h"

struct fvbpf_bpf;
struct ring_buffer;
struct bpf_link;
struct session;
struct symbolizer;
struct seg_tracker;
struct drop_state;
struct api_pairing;
struct gpu_join;
struct held_queue;
struct agent_state;
struct callback_ops;
struct torch_pairing;
struct torch_state;
struct py_state;
struct mem_state;

/* Where a target's operators come from. */
enum op_source { OPS_UPROBES = 0, OPS_CALLBACKS = 1 };
struct seg_writer;
struct segment;
struct proc_target;
struct control_page;
struct region_registry;
struct torch_table;
struct cuda_probes;
struct torch_probes;
struct mem_probes;

struct coll_state;
struct dl_probes;
struct dl_join;

struct session_target {
	struct session *session;
	struct proc_target *proc;         /* proc/proc_info.c */
	struct seg_tracker *tracker;      /* pipeline/segment.c */
	struct bpf_link *links[MARKER_NSYMS];  /* uprobes on the marker library, or */
	int marker_fds[MARKER_NSYMS];          /* ... their uprobe_multi links (-1 none) */
	int pidfd;
	bool opened;            /* target_open() got as far as to hold something */
	bool superseded;        /* the process exec'd: a newer target may hold its PID */
	bool finished;          /* no more segments will come */
	bool quiet;             /* done with -n: probes of markers and CUDA calls off */
	bool exited;
	unsigned int segments, incomplete;
	uint64_t closed;            /* segments closed, written or not (--schedule's k) */
	uint64_t schedule_skipped;  /* closed in a wait or warmup step: not written */
	struct drop_state *loss;    /* ring-buffer drops (pipeline/drops.c) */
	struct control_page *ctl;   /* lock, control page, probe text (proc/control/) */
	uint32_t epoch;         /* odd value written to the target's control page */
	uint64_t attach_ns;     /* when the probes went live (CLOCK_MONOTONIC) */
	bool armed;             /* probes live and answered (target_attach_end) */
	bool window_pending;    /* --window: its first window waits for the cut */
	bool live_pending;      /* armed; its markers' odd epoch waits for the cut */
	/* A rank armed with other ranks: its first segment waits for theirs
	 * (cut_gate.c), held in t->held as align_seg */
	bool align_first;
	struct segment *align_seg;
	uint64_t marker_ts_fixed; /* region times from the library out of range (events.c) */
	bool marker_ts;         /* the markers call the _ts region probes (target.c) */
	bool deep_stack_warned;
	struct cuda_probes *cuda;   /* probes/cuda_probes.c */
	struct api_pairing *pairing; /* CUDA calls (pipeline/api_pairing.c) */
	struct addr_cache kernels;  /* launch function address -> kernel name id */
	uint64_t calls;             /* recorded inside segments */
	uint64_t calls_outside;     /* returned when no segment was open */
	uint64_t kernel_handles;    /* __cudaGetKernel handles mapped to kernels */
	/* GPU activity from the in-process agent */
	struct gpu_join *gpu;       /* pipeline/gpu_join.c */
	struct coll_state *coll;    /* gloo collectives (pipeline/comm/collectives.c) */
	uint64_t colls_outside;     /* collectives that ended outside every segment */
	uint64_t colls_dropped;     /* ... inside one that could hold no more */
	bool coll_layout_set;       /* its TensorImpl layout is in BPF's coll_layout */
	struct dl_probes *dlp;      /* DataLoader queues' probes (probes/dl_probes.c) */
	struct dl_join *dl;         /* its workers' batches (pipeline/loader/dl_join.c) */
	bool dl_warned;             /* said that its workers cannot be traced */
	bool coll_layout_init;      /* ... its slot's entry written once */
	struct held_queue *held;    /* closed, waiting for their GPU records (seg_close.c) */
	struct agent_state *agent;  /* what the agent said (events.c) */
	/* PyTorch */
	bool has_markers;           /* the fvbpf marker library is mapped */
	struct torch_probes *torchp; /* probes/torch_probes.c */
	enum op_source ops;         /* where its operators come from */
	struct callback_ops *fast;  /* ... the callbacks' rings (pipeline/torch/callback_ops.c) */
	uint64_t callback_lost_charged; /* ... their losses charged to closed segments */
	struct torch_pairing *tpair; /* pipeline/torch/torch_pairing.c */
	struct torch_state *torch;  /* --step-by, scope counters (torch_events.c) */
	struct py_state *py;        /* the Python shim (py_status.c) */
	struct pystack_target *pystk; /* --with-stack: its interpreter (pipeline/pystack.c) */
	uint64_t pystk_refused;       /* ... its stacks and code objects not kept, once it is freed */
	struct mem_probes *memp;    /* --profile-memory: libc10's allocator (probes/) */
	struct mem_state *mem;      /* ... its live CPU allocations (mem_events.c) */
	uint64_t next_cut;          /* --window: end of the open window, 0: no windows */
};

#define TORCH_GLOBS_MAX 16
/* The segments of a PyTorch job attached without -r, --step-by or --window. */
#define STEP_BY_DEFAULT "Optimizer.step*"
/* Distinct scope names kept to show when --step-by matches none. */
#define STEP_SCOPES_SHOWN 12
/* Scope begins without a step after which fvbpf says the glob matches none. */
#define STEP_GLOB_PATIENCE 2000
/* Processes traced in one attach, late and restarted ones included: each
 * is a BPF slot, a set of probes and segment state. */
#define SESSION_MAX_TARGETS 256
struct follow;
struct fvbpf_proc_event;
struct json_object;

/* The calls up into higher stages that lower stages make, installed by
 * attach/ (follow_prepare() with s->follow, session_writer_start() with
 * s->writer): a stage never includes a higher stage's headers.  NULL when
 * there is nothing to call. */
struct session_hooks {
	/* A fork, exec or exit record of the followed tree (events.c). */
	void (*proc_record)(struct session *s, const struct fvbpf_proc_event *ev);
	/* The manifest's "followed" object (manifest.c). */
	struct json_object *(*followed_json)(const struct session *s);
	/* A closed segment that waits for nothing more, handed to the writer
	 * (seg_close.c), which takes it; installed with s->writer
	 * (attach/session_wiring.c).  NULL without a writer: it is freed. */
	int (*write_segment)(struct session *s, struct segment *seg, struct proc_target *proc);
};

struct session {
	struct fvbpf_bpf *skel;
	struct ring_buffer *rb;
	unsigned int ring_left;           /* records the ring pass may still hand (ring_consume.c); 0: no pass */
	bool ring_unread;                 /* the session ended with records in the ring not read */
	int epfd;
	struct region_registry *reg;      /* pipeline/registry.c */
	unsigned int requested[FVBPF_MAX_REGIONS];
	unsigned int nrequested;
	struct session_target *targets;   /* SESSION_MAX_TARGETS slots */
	int ntargets, cap_targets;
	struct follow *follow;            /* --children, --match (follow.c) */
	struct stall_watch *stall;        /* --dump-on-stall (attach/stall_watch.c) */
	struct session_hooks hooks;       /* follow.c's, with follow */
	struct bpf_link *tree_links[3];   /* fork, exec, exit tracepoints */
	struct seg_writer *writer;        /* output/seg_writer.c */
	struct budget mem;          /* --max-memory */
	struct session_meta meta;
	uint64_t bad_records;   /* records of unknown type, version or process */
	uint64_t records;       /* ring records handled (the progress line's rate) */
	uint64_t ts_ceiling;    /* a second past the clock when last read (events.c) */
	bool api_probes;        /* CUDA/NCCL call probes loaded */
	bool marker_multi;      /* marker probes are uprobe_multi links */
	struct symbolizer *sym;
	struct name_table knames;   /* kernel names, read by the writer too */
	uint64_t kernels_unknown;   /* launches whose function had no symbol */
	uint64_t last_scan_ns;
	uint64_t gpu_wait_ns;
	/* PyTorch */
	bool torch_ops;             /* probe libtorch_cpu where mapped */
	bool record_shapes;         /* --record-shapes */
	bool with_flops;            /* --with-flops */
	bool profile_memory;        /* --profile-memory: probe libc10's allocator too */
	struct torch_table *torch;  /* cookie id -> names (in knames) (probes/torch_probes.c) */
	struct addr_cache fast_ids; /* fast path: name id << 8 | kind -> torch id + 1 */
	int op_source;              /* --op-source: OP_SOURCE_* */
	int launch_source;          /* --launch-source: LAUNCH_SOURCE_* */
	/* torch scopes that delimit segments, for the fast path's callbacks */
	uint64_t fast_gates[FVBPF_FAST_GATES];  /* region scopes' hashes */
	uint32_t nfast_gates;
	uint64_t fast_steps[FVBPF_FAST_STEPS];  /* --step-by scopes' hashes */
	uint32_t nfast_steps;
	uint64_t fast_gates_full;   /* scopes past those tables (the callbacks miss them) */
	const char *torch_globs[TORCH_GLOBS_MAX]; /* -r torch:GLOB */
	unsigned int ntorch_globs;
	uint64_t torch_glob_hits[TORCH_GLOBS_MAX]; /* scopes each matched */
	const char *step_by;        /* --step-by GLOB */
	bool step_by_default;       /* nothing given: STEP_BY_DEFAULT (attach_run.c) */
	struct step_schedule schedule; /* --schedule (seg_close.c drops the rest) */
	/* --step-by that matches nothing yet: the scope names seen instead */
	uint32_t scopes_seen[STEP_SCOPES_SHOWN];   /* name ids in knames */
	unsigned int nscopes_seen;
	uint64_t scopes_unmatched;  /* scope begins before the first step */
	bool step_glob_warned;
	int step_region;            /* registry index of "step", -1 */
	uint64_t window_ns;         /* --window */
	/* No segment opens before this time (CLOCK_MONOTONIC): the processes
	 * there at the attach armed, and --start-at's instant; 0 while they
	 * are being armed (cut_gate.c) */
	uint64_t cut_from_ns;
	bool cut_waiting;           /* attach_run() arms processes, the cut has not
				     * come: they wait to go live (cut_gate.c) */
	bool cut_shapes_said;       /* "segments wait for ... layout" was said */
	uint64_t align_until_ns;    /* ranks' first segments compared by then, 0: done */
	int window_region;          /* registry index of "window", -1 */
	char *torch_copy;           /* holds the torch_globs strings */
	char *region_list;          /* -r's marker names; torch_globs point into it */
	/* The Python shim (attach/py_request.c): FastVideo's regions, -r py: */
	bool py_fastvideo;          /* marker regions asked: wrap fastvideo.profiler */
	const char *py_specs[FVBPF_PY_SPECS_MAX]; /* "MODULE:QUALNAME", in torch_copy */
	unsigned int npy_specs;
	uint64_t gates_installed, gates_failed;
	/* --inject */
	bool inject;
	double inject_timeout_s;
	char inject_lib[PATH_MAX];
	unsigned int torch_regions_warned;
	struct pystack_table *pystacks; /* --with-stack, else NULL (pipeline/pystack.c) */
};

#endif /* FVBPF_SESSION_H */
