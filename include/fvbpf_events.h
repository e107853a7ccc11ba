/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Records that BPF writes into the ring buffer, shared verbatim by the BPF
 * programs and the loader.  Fixed-width types, explicit padding, a size
 * assertion per struct, and a version in every header so that a loader never
 * misreads a stream written by other BPF code.
 */
#ifndef FVBPF_EVENTS_H
#define FVBPF_EVENTS_H

#ifdef __BPF__
/* vmlinux.h provides __u8 ... __u64 */
#else
#include <linux/types.h>
#endif

/* 3: torch records carry the process's drop count (and scope records its
 * depth and invocation number), so the loader charges their losses. */
/* 4: torch entries may carry their arguments' shapes (fvbpf_shapes.h). */
#define FVBPF_EVENT_VERSION 4

/* Upper bounds that size BPF maps; the loader may lower them. */
#define FVBPF_TREE_MAX 16384    /* processes followed by --children/--match */
#define FVBPF_MAX_REGIONS 256
#define FVBPF_MAX_PROCS 1024
#define FVBPF_MAX_APIS 256      /* rows of the CUDA/NCCL call table, variants included */

enum fvbpf_event_type {
	FVBPF_EV_REGION_BEGIN = 1,
	FVBPF_EV_REGION_END = 2,
	FVBPF_EV_THREAD_SYNC = 3,
	FVBPF_EV_API_ENTER = 4,
	FVBPF_EV_API_EXIT = 5,
	FVBPF_EV_CORRELATION = 6,
	FVBPF_EV_GPU_CHUNK = 7,
	FVBPF_EV_AGENT_STATUS = 8,
	FVBPF_EV_TORCH_ENTER = 9,
	FVBPF_EV_TORCH_EXIT = 10,
	FVBPF_EV_SCOPE_BEGIN = 11,
	FVBPF_EV_SCOPE_END = 12,
	FVBPF_EV_PROC = 13,
	FVBPF_EV_TORCH_ENTER_SHAPES = 14, /* a torch entry and its shapes (fvbpf_shapes.h) */
	FVBPF_EV_DL = 15,                 /* a DataLoader queue message (struct fvbpf_dl_event) */
};

/*
 * Each thread of the target keeps the names of its open regions (pointers
 * only, about 1 ns a marker).  On its first marker after an attach it hands
 * that stack to BPF once, so fvbpf learns which regions were already open
 * when it attached instead of mistaking their children for outermost ones.
 */
#define FVBPF_STACK_MAX 8       /* names kept per thread (static TLS is scarce) */
#define FVBPF_SYNC_NAMES 8      /* names BPF copies out, outermost first */
#define FVBPF_NAME_LEN 64

struct fvbpf_thread_stack {
	__u32 depth;            /* open regions; may exceed FVBPF_STACK_MAX */
	__u32 epoch;            /* control epoch when this thread last synced */
	__u64 names[FVBPF_STACK_MAX];
};

/*
 * The library's control page (markers.c): anonymous, MADV_WIPEONFORK, so a
 * forked child reads it as zero.  The library sets the magic; the loader
 * writes the epoch (even: hands off, odd: probes live) and, when it takes
 * over a forked child whose probe text it has repaired, the magic too.
 * The magic names the page's layout: a library whose page is laid out
 * otherwise (an older libfvbpf.so still mapped in a running job) shows
 * another magic, and fvbpf refuses it rather than misread it.
 */
/* "fvbd": the three channels as struct fvbpf_channel ("fvbc" before). */
#define FVBPF_CONTROL_MAGIC 0x64627666u

/* `fvbpf attach --inject` names its copy of the library
 * "<dir>/.fvbpf-inject-<pid>-<random>.so": the library's constructor
 * knows by this prefix that no marker will ever wake its agent, and
 * starts a thread that watches for an attach instead (agent.c). */
#define FVBPF_INJECT_PREFIX ".fvbpf-inject-"

/* The operator fast path's tables in the control page (fvbpf_fast.h). */
#define FVBPF_FAST_REGIONS 64
#define FVBPF_FAST_GATES 16
#define FVBPF_FAST_STEPS 8

/* Bytes of Python shim request the control page holds (fvbpf_pyshim.h). */
#define FVBPF_PY_REQ_MAX 2048

/*
 * One request and its answer between fvbpf and the library: the Python
 * shim's, the operator callbacks' and the CUDA hook's.  fvbpf writes what
 * the request needs (the channel's own tables in the page, then `req`),
 * then a new `asked`, never 0 nor the last `answered`.  The library reads
 * `asked` (acquire), then the request; once it has acted it writes the
 * answer's fields and then `answered` = `asked` (release).  fvbpf copies
 * the whole channel in one read and takes the answer only where
 * `answered` is the generation it asked (`answered` lies before the
 * fields, so a copy that sees it sees them).  Everything here is the
 * target's memory: fvbpf checks each field it uses.
 */
struct fvbpf_channel {
	__u32 asked;            /* fvbpf: the request's generation (0: none) */
	__u32 req;              /* fvbpf: the request word (py: bytes of py_req; fast: its
				 * FVBPF_FAST_LAYOUT_*; cuda: the attach epoch from which the
				 * wrapper records, 0 until fvbpf has mapped the rings) */
	__u32 answered;         /* library: the generation answered, written last */
	__u16 state;            /* enum fvbpf_fast_state / fvbpf_cuda_hook_state (py: 0) */
	__u16 err;              /* errno of a failed step */
	__s32 fd;               /* the rings' memfd, in the target (-1: none) */
	__u32 slots;            /* cuda: PLT slots pointed at the wrapper */
	__u32 bytes;            /* the memfd's size (FVBPF_FAST_BYTES) */
};

struct fvbpf_control {
	__u32 magic;            /* FVBPF_CONTROL_MAGIC */
	__u32 epoch;
	/* The Python shim (user/lib/pyshim.c): the library sets `python` when
	 * the process has a CPython it can schedule calls in.  Its channel's
	 * request is py_req (req bytes); the library copies it at the next
	 * attach epoch and answers once the shim ran in the interpreter's
	 * main thread (its findings come as status records). */
	__u32 python;
	/* Markers: the odd epoch under which the library hands its own clock
	 * reading to the _ts region probes (fvbpf_probe_region_begin_ts), as
	 * this attach's loader asked; under any other epoch (a loader from
	 * before them never writes this) it calls the plain pair. */
	__u32 marker_ts_epoch;
	struct fvbpf_channel py;
	/* The operator fast path (user/lib/torch_fast.c, fvbpf_fast.h): the
	 * request is the layout (0: off) and the tables below, what opens a
	 * segment; the answer the rings' memfd.  The library follows "inside
	 * a segment" itself, by BPF's rules, from the same tables: enabled
	 * regions (markers), torch scopes whose begin opens a segment (gates)
	 * and whose end starts stepping (steps), or always (time windows). */
	struct fvbpf_channel fast;
	/* CUDA launches through the library's hook (user/lib/cuda_hook.c,
	 * fvbpf_fast.h): the request is the fast path's tables (regions,
	 * window); the answer the PLT slots pointed at its wrapper and the
	 * rings' memfd.  The wrapper records into the rings only once the
	 * loader, having mapped them, writes the live attach epoch into the
	 * channel's req; until then, and whenever it cannot record, it calls
	 * cudaLaunchKernel at its uprobe. */
	struct fvbpf_channel cuda;
	__u32 fast_watch;       /* library: a thread of ours polls this page */
	__u32 fast_window;
	__u32 fast_nregions;
	__u32 fast_ngates;
	__u32 fast_nsteps;
	__u32 fast_stacks;      /* loader: --with-stack: call fvbpf_probe_py_stack */
	/* --with-stack through the fast path: where the interpreter keeps a
	 * thread's frames (struct fvbpf_py_cfg of fvbpf_pystack.h, what BPF's
	 * walk is given), written by the loader before fast_py_set = 1.  With
	 * it the library walks its own thread's frames and writes them into
	 * its ring (FVBPF_FAST_STACK) instead of calling fvbpf_probe_py_stack. */
	__u32 fast_py_set;
	__u64 fast_py[5];
	__u64 fast_regions[FVBPF_FAST_REGIONS]; /* fvbpf_region_hash of each enabled region */
	__u64 fast_gates[FVBPF_FAST_GATES];     /* fvbpf_scope_hash of region scopes */
	__u64 fast_steps[FVBPF_FAST_STEPS];     /* ... of --step-by scopes */
	char py_req[FVBPF_PY_REQ_MAX];
};

struct fvbpf_event_hdr {
	__u16 type;     /* enum fvbpf_event_type */
	__u16 version;  /* FVBPF_EVENT_VERSION */
	__u32 size;     /* bytes of the whole record */
	__u32 tgid;
	__u32 tid;
	__u64 ts_ns;    /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
};

struct fvbpf_region_event {
	struct fvbpf_event_hdr hdr;
	__u32 region_id;  /* index into the loader's registry */
	__s32 depth;      /* BPF's per-process depth after this event */
	__u64 drops;      /* the process's ring-buffer drops before this record:
			   * where a gap lies, so the loader charges each drop
			   * to the segment (or the time between segments) it hit */
	__u32 outer;      /* which outermost invocation (depth 0 -> 1) of the
			   * process this record belongs to: after a gap, tells
			   * whether the open segment lost its end */
	__u32 pad;
};

struct fvbpf_sync_event {
	struct fvbpf_event_hdr hdr;
	__u32 depth;      /* regions open on the thread before this marker */
	__u32 nnames;     /* names copied below */
	char names[FVBPF_SYNC_NAMES][FVBPF_NAME_LEN];
};

/*
 * A CUDA runtime/driver or NCCL call, in two records: its entry with the raw
 * arguments (System V: six registers, then the stack), its return with the
 * result.  Only calls made while the process is inside a segment are
 * recorded; the loader pairs them per thread and decodes the arguments.
 */
#define FVBPF_API_ARGS 10       /* 6 registers + 4 stack slots */
#define FVBPF_API_DEREF 48      /* bytes read behind one pointer argument */

struct fvbpf_api_enter {
	struct fvbpf_event_hdr hdr;
	__u32 api_id;           /* row of the loader's table (the uprobe cookie) */
	__u32 deref_len;        /* valid bytes in deref */
	__u64 args[FVBPF_API_ARGS];
	__u8 deref[FVBPF_API_DEREF];
};

struct fvbpf_api_exit {
	struct fvbpf_event_hdr hdr;
	__u32 api_id;
	__s32 ret;              /* cudaError_t / CUresult / ncclResult_t */
	__u64 out;              /* value behind the out-pointer argument, if any */
};

/* What BPF must capture for one table row (map "api_cfg"). */
struct fvbpf_api_cfg {
	__u8 deref_arg;         /* argument index to read FVBPF_API_DEREF bytes behind, */
	__u8 deref_len;         /* ... this many (0: none) */
	__u8 out_arg;           /* argument index of an out-pointer, FVBPF_NO_ARG if none */
	__u8 stack_args;        /* arguments past the 6th it takes (0..4) */
	__u8 tensors_arg;       /* gloo's work: the const std::optional<std::vector<at::Tensor>> &
				 * whose tensors' sizes go in deref (struct fvbpf_coll_tensors);
				 * FVBPF_NO_ARG if none */
	__u8 pad[3];
};
#define FVBPF_NO_ARG 0xff

/* What a process's TensorImpl layout lets BPF read of a collective's
 * tensors (map "coll_layout", by slot; ok 0: not known, nothing read). */
struct fvbpf_coll_layout {
	__u8 ok;
	__u8 numel_at;          /* numel_ */
	__u8 dtype_at;          /* data_type_ (TypeMeta index) */
	__u8 pad[5];
	__u64 vptr_dense;       /* a plain TensorImpl's vtable pointer */
};
#define FVBPF_COLL_TENSORS 4

/* deref of a gloo work's entry when tensors_arg is set: how many tensors,
 * and the first FVBPF_COLL_TENSORS's element counts and dtypes. */
struct fvbpf_coll_tensors {
	__u16 count;            /* tensors in the vector (0: none or not read) */
	__u16 read;             /* of them read (numel and dtype below) */
	__u8 dtype[FVBPF_COLL_TENSORS]; /* TypeMeta index: ScalarType for the standard types */
	__u64 numel[FVBPF_COLL_TENSORS];
	__u64 pad;
};

/* CUPTI's API-entry callback, inside the call it names (agent). */
struct fvbpf_corr_event {
	struct fvbpf_event_hdr hdr;
	__u32 correlation;
	__u32 cbid;
	__u32 domain;
	__u32 pad;
};

/*
 * A piece of the agent's GPU record stream (include/fvbpf_gpu.h): BPF copies
 * each batch in bounded chunks; the loader reassembles them per process.
 */
#define FVBPF_GPU_CHUNK 1024
#define FVBPF_GPU_BATCH (16 * FVBPF_GPU_CHUNK)  /* most bytes per probe call */
struct fvbpf_gpu_chunk {
	struct fvbpf_event_hdr hdr;
	__u32 len;          /* valid bytes in data */
	__u16 index;        /* of this chunk in its batch, from 0 */
	__u16 last;         /* the last chunk of its batch */
	__u8 data[FVBPF_GPU_CHUNK];
};

#define FVBPF_STATUS_MSG 160
struct fvbpf_agent_status_event {
	struct fvbpf_event_hdr hdr;
	__u32 code;         /* enum fvbpf_agent_status */
	__s32 detail;
	__s64 value;        /* e.g. the calibrated clock offset */
	char msg[FVBPF_STATUS_MSG];
};

/*
 * A PyTorch operator or autograd node (at::_ops::X::call, Node::apply),
 * entry and return: only the id the cookie carries, so a hit costs one
 * small record.  The loader pairs them per thread, as CUDA calls.
 */
struct fvbpf_torch_event {
	struct fvbpf_event_hdr hdr;
	__u32 id;               /* index into the loader's torch symbol table */
	__u32 drops;            /* the process's drops before this record, low 32
				 * bits (the loader extends them: fewer than 2^31
				 * drops between two records); keeps a hit at 32 bytes */
};

/*
 * A record_function scope: its begin (at the return of
 * record_function_enter_new, with the name and the handle) and its end (the
 * first at::RecordFunction::end() on that handle).  Recorded in and out of
 * segments: they are few, and the loader learns from them which scope names
 * delimit segments (-r torch:GLOB, --step-by GLOB).
 */
#define FVBPF_SCOPE_NAME 96
#define FVBPF_SCOPE_GATED 0x1u     /* this scope opened BPF's segment gate */
#define FVBPF_SCOPE_UNTRACKED 0x2u /* no room to watch for its end */
#define FVBPF_SCOPE_STEP 0x4u      /* a --step-by scope */
#define FVBPF_SCOPE_CUT 0x8u       /* name longer than FVBPF_SCOPE_NAME */

struct fvbpf_scope_event {
	struct fvbpf_event_hdr hdr;
	__u64 handle;           /* the at::RecordFunction's address */
	__u32 name_len;         /* valid bytes in name (begin only) */
	__u32 flags;            /* FVBPF_SCOPE_* */
	__s32 depth;            /* GATED: BPF's process depth after this record */
	__u32 outer;            /* GATED: outermost invocation, as region records;
				 * STEP end: step scope ends seen, this one included */
	__u64 drops;            /* the process's drops before this record */
	char name[FVBPF_SCOPE_NAME];
};

/*
 * Engine::evaluate_function(graph_task, Node *func, ...): the node in rdx,
 * named by its class's vtable (map "torch_vtables", filled by the loader
 * with each node class's vtable address in the process -> the torch id of
 * "autograd::engine::evaluate_function: <name()>"), so BPF records it as
 * an ordinary torch call, entry and return.
 */
struct fvbpf_vtable_key {
	__u32 tgid;
	__u32 pad;
	__u64 vptr;             /* what the node's first word holds: _ZTV + 16 */
};
#define FVBPF_VTABLES_MAX 65536

/* Gate kinds of a scope name hash (map "torch_gates"). */
#define FVBPF_GATE_REGION 1u  /* open while the scope is */
#define FVBPF_GATE_STEP 2u    /* open from the end of its first occurrence on */

/* FNV-1a over a scope name's first FVBPF_SCOPE_NAME bytes: BPF and the
 * loader hash the same bytes. */
static inline __u64 fvbpf_scope_hash(const char *name, __u32 len)
{
	__u64 h = 0xcbf29ce484222325ULL;
	__u32 i;

	for (i = 0; i < FVBPF_SCOPE_NAME; i++) {
		if (i >= len)
			break;
		h ^= (unsigned char)name[i];
		h *= 0x100000001b3ULL;
	}
	return h ? h : 1;
}

/*
 * Per traced process state kept by BPF: an array map indexed by the
 * process's slot, which every probe of that process carries in its uprobe
 * cookie (an array lookup is inlined; a hash lookup per hit was measurable).
 */
/*
 * A DataLoader message seen where CPython's _pickle module turns it into
 * an object or back (bpf/dataloader.bpf.c): hdr.tgid is the trainer's,
 * whichever of its workers (forked children) sent it; hdr.tid the thread
 * that did.  The loader joins them (pipeline/loader/dl_join.h).
 */
enum fvbpf_dl_kind {
	FVBPF_DL_START = 1,   /* a worker's main thread unpickled (idx, indices) */
	FVBPF_DL_END = 2,     /* a worker pickles (idx, data) to send it */
	FVBPF_DL_RECV = 3,    /* the trainer unpickled (idx, data) */
	FVBPF_DL_COLLATE = 4, /* a worker's main thread made shared storage (collate) */
};

struct fvbpf_dl_event {
	struct fvbpf_event_hdr hdr;
	__u32 worker;       /* the worker's tgid; 0: the trainer itself */
	__u8 kind;          /* enum fvbpf_dl_kind */
	__u8 pad[3];
	__s64 idx;          /* the batch index, as the tuple's int held it */
	__u64 samples;      /* START: the indices list's length (1: not a list) */
};

/* The _pickle functions probed (the uprobe cookie's bits 32..39). */
#define FVBPF_DL_FN_LOADS 1   /* _pickle_loads: session uprobe, its return read */
#define FVBPF_DL_FN_DUMP 2    /* _pickle_Pickler_dump(self, obj): the entry */
#define FVBPF_DL_FN_SHARED 3  /* torch's new shared CPU storage (fd or file name) */

struct fvbpf_proc_state {
	__s32 depth;        /* open enabled regions in this process */
	__u32 flags;        /* FVBPF_PROC_* */
	__u64 drops;        /* ring-buffer reserve failures for this process */
	__u64 unbalanced;   /* region ends seen at depth 0 */
	__u32 tgid;         /* owner of the slot, checked on every hit */
	__u32 outer;        /* outermost region invocations begun (depth 0 -> 1) */
	__u32 steps;        /* --step-by scope ends */
	__u32 pad;
};

/*
 * Map "tgid_slots": a process's slot by the low bits of its tgid, so that a
 * marker hit finds its state without bpf_get_attach_cookie() (a helper call
 * that measured about 7 ns of a ~60 ns program).  The loader writes the
 * entry with the slot; a process whose entry another took (same low bits)
 * falls back to the cookie.  The slot's own tgid check still decides.
 */
#define FVBPF_TGID_SLOTS 4096
struct fvbpf_tgid_slot {
	__u32 tgid;         /* 0: empty */
	__u32 slot;         /* key of "procs" */
};

/*
 * Enabled regions: a direct-indexed table, the name hash's low bits first,
 * the next bits as second choice; the loader refuses a third collision.
 */
#define FVBPF_REGION_SLOTS 1024
struct fvbpf_region_slot {
	__u64 hash;         /* 0: empty */
	__u32 region_id;
	__u32 pad;
};

static inline __u32 fvbpf_region_slot1(__u64 hash) { return (__u32)(hash & (FVBPF_REGION_SLOTS - 1)); }
static inline __u32 fvbpf_region_slot2(__u64 hash) { return (__u32)((hash >> 10) & (FVBPF_REGION_SLOTS - 1)); }

/* Uprobe cookies: region probes carry the slot; CUDA probes carry
 * api id (bits 0-31), FVBPF_COOKIE_ALWAYS and the slot (bits 40-55). */
#define FVBPF_COOKIE_ALWAYS (1ull << 32)
#define FVBPF_COOKIE_SLOT_SHIFT 40

#define FVBPF_PROC_ARMED 1u  /* set once every probe of the process is attached */
#define FVBPF_PROC_STEPPING 2u /* a --step-by gate is open (for good) */

/*
 * A process of a followed tree (--children, --match) forked, exec'd or
 * exited.  The header's tgid is the task the tracepoint ran in (the parent
 * for a fork); @pid is the process the record is about.
 */
enum fvbpf_proc_kind {
	FVBPF_PROC_FORK = 1,
	FVBPF_PROC_EXEC = 2,
	FVBPF_PROC_EXIT = 3,
};

struct fvbpf_proc_event {
	struct fvbpf_event_hdr hdr;
	__u32 kind;         /* enum fvbpf_proc_kind */
	__u32 pid;          /* the process (its tgid) */
	__u32 ppid;         /* the forking process (FVBPF_PROC_FORK), else 0 */
	__u32 pad;
	__u64 start_boot_ns; /* FVBPF_PROC_FORK: the child's start, CLOCK_BOOTTIME */
};

#ifndef __BPF__
_Static_assert(sizeof(struct fvbpf_proc_event) == 48, "proc event layout");
_Static_assert(sizeof(struct fvbpf_event_hdr) == 24, "event header layout");
_Static_assert(sizeof(struct fvbpf_region_event) == 48, "region event layout");
_Static_assert(sizeof(struct fvbpf_proc_state) == 40, "proc state layout");
_Static_assert(sizeof(struct fvbpf_region_slot) == 16, "region slot layout");
_Static_assert(sizeof(struct fvbpf_tgid_slot) == 8, "tgid slot layout");
_Static_assert(sizeof(struct fvbpf_sync_event) == 544, "sync event layout");
_Static_assert(sizeof(struct fvbpf_api_enter) == 24 + 8 + 80 + 48, "api enter layout");
_Static_assert(sizeof(struct fvbpf_api_exit) == 40, "api exit layout");
_Static_assert(sizeof(struct fvbpf_api_cfg) == 8, "api cfg layout");
_Static_assert(sizeof(struct fvbpf_dl_event) == 48, "dataloader event layout");
_Static_assert(sizeof(struct fvbpf_coll_tensors) == FVBPF_API_DEREF, "coll tensors fill deref");
_Static_assert(sizeof(struct fvbpf_coll_layout) == 16, "coll layout");
_Static_assert(sizeof(struct fvbpf_torch_event) == 32, "torch event layout");
_Static_assert(sizeof(struct fvbpf_vtable_key) == 16, "vtable key layout");
_Static_assert(sizeof(struct fvbpf_scope_event) == 56 + FVBPF_SCOPE_NAME, "scope event layout");
_Static_assert(sizeof(struct fvbpf_corr_event) == 40, "corr event layout");
_Static_assert(sizeof(struct fvbpf_gpu_chunk) == 32 + FVBPF_GPU_CHUNK, "gpu chunk layout");
_Static_assert(sizeof(struct fvbpf_agent_status_event) == 40 + FVBPF_STATUS_MSG, "status layout");
_Static_assert(sizeof(struct fvbpf_thread_stack) == 8 + 8 * FVBPF_STACK_MAX, "thread stack layout");
_Static_assert(sizeof(struct fvbpf_channel) == 28, "channel layout");
_Static_assert(__builtin_offsetof(struct fvbpf_channel, answered) <
		       __builtin_offsetof(struct fvbpf_channel, state),
	       "a channel's answered generation lies before its answer");
/* The layout of "fvbc" was 2920 bytes; the page is one page. */
_Static_assert(sizeof(struct fvbpf_control) <= 2920, "the control page's size");
#endif

#endif /* FVBPF_EVENTS_H */
