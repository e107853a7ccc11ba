/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * The per-process segment state machine.  Pure: fed with region begin/end
 * events in ring-buffer order, it hands out closed segments.  The outermost
 * enabled region of a process opens a segment; enabled regions inside it
 * (on any thread of the process) become slices; depth 0 closes it.
 */
#ifndef FVBPF_SEGMENT_H
#define FVBPF_SEGMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "probes/cuda_api.h"
#include "pipeline/comm/collectives.h"
#include "pipeline/loader/dl_join.h"
#include "pipeline/gpu_join.h"
#include "util/budget.h"
#include "pipeline/registry.h"
#include "util/thread_table.h"

/*
 * What the target can make fvbpf hold, per segment and per process.  Past a
 * bound events are counted (trace metadata, manifest, exit report), never
 * stored; the README lists the values.  A zero field means the default.
 */
#define SEG_MAX_SLICES  1000000u  /* region slices per segment (32 bytes each) */
#define SEG_MAX_COLLS   100000u   /* collectives per segment (about 80 bytes each) */
#define SEG_MAX_CALLS   1000000u  /* CUDA/NCCL calls per segment (about 200 bytes each) */
#define SEG_MAX_GPU     2000000u  /* GPU records per segment (96 bytes each) */
#define SEG_MAX_THREADS THREAD_TABLE_MAX /* threads with open regions per process */
#define SEG_MAX_OPS     2000000u  /* torch operators, nodes and scopes per segment (40 bytes each) */

/* A torch operator, autograd node or record_function scope in a segment. */
#define TORCH_CALL_NO_RETURN 0x1u /* its return was never seen (it threw, or the segment ended) */
#define TORCH_CALL_NAME_CUT 0x2u  /* a scope whose name was cut at FVBPF_SCOPE_NAME bytes */
#define TORCH_CALL_SHAPES_UNKNOWN 0x4u /* --record-shapes: its shapes could not be read */
struct torch_call {
	uint64_t start_ns, end_ns;  /* end 0 while open */
	uint32_t tid;
	uint32_t name;              /* in the session's torch name table */
	uint32_t overload;          /* 0: none */
	uint16_t depth;             /* open torch calls below it on its thread */
	uint8_t kind;               /* enum torch_kind */
	uint8_t flags;              /* TORCH_CALL_* */
	uint32_t shapes;            /* --record-shapes: its shapes record (torch_shapes.h)
				     * in the name table, 0 none */
	uint32_t stack;             /* --with-stack: id in the session's pystack table, 0 none */
	uint32_t fwd_stack;         /* --with-stack, a backward node: its forward op's stack */
	uint32_t fwd_tid;           /* a node's forwardThreadId(), an operator's own threadId()
				     * (RecordFunction's numbering; callbacks only), 0 none */
	uint64_t seq1;              /* the autograd sequence number + 1, 0 none (callbacks) */
};

struct seg_limits {
	size_t slices, calls, gpu, threads;
};

#define SLICE_OPEN_AT_END   0x1u /* still open when the segment was cut off */
#define SLICE_FORCED_CLOSE  0x2u /* closed because an enclosing region ended */
#define SLICE_BEFORE_ATTACH 0x4u /* already open when fvbpf attached: start cut */

struct seg_slice {
	uint32_t tid;
	uint32_t region;      /* registry index */
	uint64_t start_ns;
	uint64_t end_ns;      /* 0 while open */
	uint32_t depth;       /* nesting level on its thread, 0 = outermost */
	uint32_t flags;       /* SLICE_* */
	uint32_t stack;       /* --with-stack: its begin's Python stack, 0 none */
};

struct segment {
	uint32_t pid;
	uint32_t seq;         /* 0, 1, ... per process within one attach */
	uint32_t region;      /* registry index of the outermost region */
	uint64_t start_ns;
	uint64_t end_ns;
	bool incomplete;      /* cut off by exit or stop, not by its end marker */
	bool lost_end;        /* incomplete: its end was lost to ring-buffer drops */
	bool started_before_attach; /* its outermost region was open at attach */
	/* Why it does not count toward -n and is left out of report/export
	 * by default (enum seg_not_counted), 0: a whole step that counts. */
	uint8_t not_counted;
	/* The first segment of a rank armed with others: held until every
	 * one of them has its first, so that a rank whose first is a step
	 * before the others' is told apart (attach/cut_gate.c). */
	bool align_pending;
	struct seg_slice *slices;
	size_t nslices, cap;
	size_t room;          /* slices allocated, >= cap (a kept array, slice_spare.h); 0: cap */
	uint64_t unbalanced;  /* ends that matched no open begin */
	uint64_t forced;      /* slices closed by an enclosing region's end */
	uint64_t drops;       /* ring-buffer drops of this process while it was open; set by the caller */
	struct api_call *calls;   /* CUDA/NCCL calls made inside the segment */
	size_t ncalls, capcalls;
	struct collective *colls; /* gloo collectives that ended inside it (comm/collectives.h) */
	size_t ncolls, capcolls;
	uint64_t colls_dropped;   /* past SEG_MAX_COLLS or memory */
	struct dl_seg *dl;        /* DataLoader batches received in it (loader/dl_join.h), NULL none */
	struct gpu_activity *gpu; /* GPU work those calls caused (the agent) */
	size_t ngpu, capgpu;
	uint64_t gpu_missing;     /* calls whose GPU record never came */
	char gpu_status[FVBPF_STATUS_MSG + 32]; /* "cupti", or why there is no GPU activity */
	int gpu_clock;            /* enum fvbpf_gpu_clock, 0 unknown */
	uint64_t cupti_dropped;
	bool ops_by_callbacks;        /* operators from PyTorch's callbacks (else uprobes) */
	uint64_t callback_lost;       /* ... records the fast path lost while it was open */
	struct seg_limits limits;     /* the bounds it was recorded under */
	uint64_t slices_dropped;      /* region begins past limits.slices */
	uint64_t calls_dropped;       /* calls past limits.calls */
	uint64_t gpu_dropped;         /* GPU records past limits.gpu */
	struct torch_call *ops;       /* torch calls, in entry order */
	size_t nops, capops;
	uint64_t ops_dropped;         /* past SEG_MAX_OPS */
	struct seg_memory *memory;    /* --profile-memory (pipeline/memory/mem_events.h), NULL: none */
	/* --max-memory: what its arrays hold, charged to @mem (NULL: not
	 * counted); past its share of the budget the arrays stop growing and
	 * what does not fit is counted in the *_dropped fields above. */
	struct budget *mem;
	uint64_t bytes;               /* the struct and its arrays' capacity */
	bool truncated_by_memory;
};

struct seg_thread {
	uint32_t tid;
	size_t *stack;        /* indexes into cur->slices */
	size_t depth, cap;
	uint64_t lost;        /* its open begins not recorded (slice limit): their
			       * ends, which come first, are absorbed */
};

typedef void (*seg_close_fn)(struct segment *seg, void *ctx);

struct seg_tracker {
	uint32_t pid;
	uint32_t next_seq;
	uint32_t max_segments;    /* 0: unlimited; later outermost begins are ignored */
	uint32_t counted;         /* segments whose start was seen (what -n counts) */
	/* No outermost region opens a segment before this time (all the
	 * job's processes armed, --start-at): begins before it are ignored
	 * with what they hold.  0: none. */
	uint64_t cut_from_ns;
	uint64_t ignored_before_cut;   /* outermost begins before cut_from_ns */
	/* A segment opened by a region whose FastVideo parent is traced too
	 * (training_optimizer inside training_train_one_step) is held here
	 * once closed: the step in flight when the Python shim landed gives
	 * such fragments.  The next outermost event decides: an end of the
	 * parent makes it a fragment, a begin confirms it.  Only before the
	 * first segment of an outer region: then the step level is known. */
	struct segment *held_child;
	bool child_level_confirmed;    /* a region's own segments are real */
	bool outer_seen;               /* a segment of a region no traced one encloses */
	int depth;                /* open slices of the current segment */
	struct segment *cur;
	struct seg_thread *threads;   /* at most limits.threads; idle ones are reused */
	size_t nthreads, capthreads;
	struct seg_limits limits;     /* seg_tracker_init() sets the defaults */
	uint64_t unbalanced;      /* over the whole attach, inside or outside segments */
	uint64_t ignored_after_limit;  /* outermost begins past max_segments */
	uint64_t ignored_depth;        /* nesting inside such an ignored region */
	uint64_t slices_dropped;       /* over the attach, of closed segments */
	uint64_t calls_dropped;
	uint64_t thread_events_dropped; /* events of threads past limits.threads */
	const struct region_registry *reg;
	struct budget *mem;       /* charged for its segments; NULL: not counted */
	seg_close_fn on_close;    /* takes ownership of the segment */
	void *ctx;
};

void seg_tracker_init(struct seg_tracker *t, uint32_t pid, const struct region_registry *reg,
		      seg_close_fn on_close, void *ctx);
int seg_on_begin(struct seg_tracker *t, uint32_t tid, uint32_t region, uint64_t ts);
int seg_on_end(struct seg_tracker *t, uint32_t tid, uint32_t region, uint64_t ts);
/*
 * @region was already open on @tid when fvbpf attached at @attach_ts (the
 * thread said so in its first sync).  Call outermost first, before any other
 * event of that thread.
 */
int seg_on_open_before_attach(struct seg_tracker *t, uint32_t tid, uint32_t region,
			      uint64_t attach_ts);
/* Close an open segment as incomplete at @ts (target exit, fvbpf stop). */
void seg_tracker_finish(struct seg_tracker *t, uint64_t ts);
/* For drop recovery (drops.c): @n records lost inside the open segment;
 * false when none is open. */
bool seg_tracker_charge_drops(struct seg_tracker *t, uint64_t n);
/* For drop recovery: close the open segment, if any, at @ts (not before its
 * start) as incomplete, marked lost_end when its end was lost (@ts is then
 * its last record); either way BPF is outside every region again, so no
 * region past -n is ignored any longer. */
void seg_tracker_cut(struct seg_tracker *t, uint64_t ts, bool lost_end);
void seg_tracker_free(struct seg_tracker *t);
/* Add a probed call to the open segment: 0, -ENOENT when none is open,
 * -ENOSPC when it holds limits.calls (counted in calls_dropped), -ENOMEM. */
int seg_add_call(struct seg_tracker *t, const struct api_call *c);
/* The same for a collective (past SEG_MAX_COLLS: colls_dropped). */
int seg_add_collective(struct seg_tracker *t, const struct collective *c);
/* Room for element @n of an array of @seg (another stage's, such as its
 * memory records), charged to --max-memory as the segment's own arrays
 * are: 0, -ENOSPC past its share (the segment marked), -ENOMEM. */
int seg_grow_array(struct segment *seg, void *v, size_t n, size_t *cap, size_t size, size_t first);
/* Append a torch call: its index, -ENOSPC past SEG_MAX_OPS (counted), -ENOMEM. */
long seg_add_op(struct segment *seg, const struct torch_call *op);
/* 0, -ENOSPC past limits.gpu (counted in gpu_dropped), -ENOMEM. */
int seg_add_gpu(struct segment *seg, const struct gpu_activity *a);
/* @v, or the default @def when @v is 0 (a zeroed segment or tracker). */
static inline size_t seg_limit(size_t v, size_t def)
{
	return v ? v : def;
}
/* Operators of @seg whose shapes could not be read (TORCH_CALL_SHAPES_UNKNOWN). */
size_t seg_shapes_unknown(const struct segment *seg);
/* Scopes of @seg whose name was cut (TORCH_CALL_NAME_CUT). */
size_t seg_scopes_cut(const struct segment *seg);
bool seg_tracker_done(const struct seg_tracker *t);
/* Why a segment does not count toward -n (segment.not_counted). */
enum seg_not_counted {
	SEG_COUNTED = 0,
	SEG_WHY_BEFORE_ATTACH,  /* its outermost region was open at attach */
	SEG_WHY_FRAGMENT,       /* a piece of the step in flight at attach */
	SEG_WHY_EARLY,          /* a rank's first step, one before the others' first */
	SEG_WHY_COUNT,
};
/* The reason in words ("" for a segment that counts). */
const char *seg_not_counted_why(unsigned int why);
/* Free @seg and release what it was charged. */
void segment_free(struct segment *seg);
/* Bytes of @seg's arrays at their capacity, and of the struct. */
uint64_t segment_bytes(const struct segment *seg);

/* A target's segment tracker, zeroed (NULL: out of memory); seg_tracker__free()
 * ends it (NULL is fine). */
struct seg_tracker *seg_tracker__new(void);
void seg_tracker__free(struct seg_tracker *p);

#endif /* FVBPF_SEGMENT_H */
