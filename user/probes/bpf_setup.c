// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * BPF setup: open the object, size the ring buffer, load (with the CUDA call
 * probes, else without them on kernels that lack session uprobes), fill the
 * CUDA call table and the enabled-region table.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "probes/bpf_setup.h"
#include "probes/cuda_api.h"
#include "fvbpf.skel.h"
#include "util/log.h"
#include "probes/uprobe_multi.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && log_verbosity < 2)
		return 0;
	if (level == LIBBPF_INFO && log_verbosity < 1)
		return 0;
	return log_libbpf(fmt, ap); /* cleaned: libbpf names the target's files */
}

static int open_load(struct bpf_setup_result *r, const struct bpf_setup_opts *o, bool with_api)
{
	int err;

	r->skel = fvbpf_bpf__open();
	if (!r->skel) {
		err = -errno;
		log_error("cannot open the BPF object: %s", strerror(errno));
		return err;
	}
	bpf_map__set_max_entries(r->skel->maps.events, o->ringbuf_mb << 20);
	/* The session programs: CUDA calls, torch operators, scopes, evaluate_function. */
	struct bpf_program *session_progs[] = {
		r->skel->progs.api_call, r->skel->progs.torch_call, r->skel->progs.scope_enter,
		r->skel->progs.torch_eval, r->skel->progs.mem_call, r->skel->progs.dl_pickle,
	};
	size_t i;

	/* The marker probes: uprobe_multi links where the kernel has session
	 * uprobes (it has multi then), perf-event uprobes before. */
	struct bpf_program *marker_progs[] = {
		r->skel->progs.region_begin, r->skel->progs.region_end, r->skel->progs.thread_sync,
		r->skel->progs.correlation, r->skel->progs.gpu_batch, r->skel->progs.agent_status,
		r->skel->progs.region_begin_ts, r->skel->progs.region_end_ts,
	};

	r->marker_multi = with_api;
	for (i = 0; with_api && i < sizeof(marker_progs) / sizeof(marker_progs[0]); i++)
		bpf_program__set_expected_attach_type(marker_progs[i], FVBPF_ATTACH_UPROBE_MULTI);
	for (i = 0; i < sizeof(session_progs) / sizeof(session_progs[0]); i++) {
		if (with_api)
			bpf_program__set_expected_attach_type(session_progs[i],
							      FVBPF_ATTACH_UPROBE_SESSION);
		else
			bpf_program__set_autoload(session_progs[i], false);
	}
	/* Process trees: the fork/exec/exit tracepoints run for every process
	 * on the machine, so they are loaded only when asked for. */
	if (!o->tree) {
		bpf_program__set_autoload(r->skel->progs.tree_fork, false);
		bpf_program__set_autoload(r->skel->progs.tree_exec, false);
		bpf_program__set_autoload(r->skel->progs.tree_exit, false);
	}
	r->skel->rodata->report_all_execs = o->report_all_execs;
	r->skel->rodata->record_shapes = o->record_shapes;
	/* Python stacks: the session decided already (pystack_session_start()). */
	r->skel->rodata->py_wanted = o->py_wanted;
	err = fvbpf_bpf__load(r->skel);
	if (err) {
		fvbpf_bpf__destroy(r->skel);
		r->skel = NULL;
	}
	return err;
}

/* Into the first of its two table slots that is free. */
static int place_region(int fd, uint64_t hash, uint32_t region)
{
	struct fvbpf_region_slot slot = { .hash = hash, .region_id = region }, cur;
	uint32_t keys[2] = { fvbpf_region_slot1(hash), fvbpf_region_slot2(hash) };
	int i;

	for (i = 0; i < 2; i++) {
		if (bpf_map_lookup_elem(fd, &keys[i], &cur))
			return -errno;
		if (cur.hash && cur.hash != hash)
			continue;
		return bpf_map_update_elem(fd, &keys[i], &slot, BPF_ANY) ? -errno : 0;
	}
	return -EEXIST;
}

static int attach_tree_progs(struct bpf_setup_result *r)
{
	struct bpf_program *progs[] = {
		r->skel->progs.tree_fork, r->skel->progs.tree_exec, r->skel->progs.tree_exit,
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		r->tree_links[i] = bpf_program__attach(progs[i]);
		if (!r->tree_links[i]) {
			err = -errno;
			log_error("cannot attach to the %s tracepoint: %s (--children and --match need "
				  "BTF tracepoints, Linux 5.5+)", bpf_program__section_name(progs[i]),
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

int bpf_setup(const struct bpf_setup_opts *o, struct bpf_setup_result *r)
{
	size_t i;
	int err, fd;

	memset(r, 0, sizeof(*r));
	/* CUDA call probes are session uprobes (kernel 6.13+); without them
	 * fvbpf still traces regions. */
	r->api_probes = true;
	err = open_load(r, o, true);
	if (err && r->skel == NULL) {
		log_debug("loading with CUDA call probes failed: %s", strerror(-err));
		err = open_load(r, o, false);
		if (!err) {
			r->api_probes = false;
			log_warn("this kernel lacks session uprobes (Linux 6.13+): CUDA and NCCL "
				 "calls are not traced, regions are");
		}
	}
	if (err) {
		log_error("cannot load the BPF programs: %s (run with -vv for the verifier log)",
			  strerror(-err));
		return err;
	}
	if (r->api_probes && cuda_api_fill_cfg(bpf_map__fd(r->skel->maps.api_cfg))) {
		log_error("cannot fill the CUDA call table: %s", strerror(errno));
		return -errno;
	}
	if (o->tree) {
		err = attach_tree_progs(r);
		if (err)
			return err;
	}
	fd = bpf_map__fd(r->skel->maps.enabled_regions);
	for (i = 0; i < o->nregions; i++) {
		err = place_region(fd, o->regions[i].hash, o->regions[i].id);
		if (err) {
			log_error("cannot enable region '%s': %s", o->regions[i].name,
				  err == -EEXIST ? "its hash collides with other enabled regions; "
				  "enable fewer regions at once" : strerror(-err));
			return err;
		}
	}
	return 0;
}

void bpf_setup_log(void)
{
	libbpf_set_print(libbpf_print);
}

/*
 * The other stages reach the loaded object through these, never through
 * the skeleton: this is the only file that includes fvbpf.skel.h, so the
 * BPF side's names and layout are known here alone.
 */
int bpf_setup_map_fd(const struct fvbpf_bpf *skel, enum fvbpf_map_id id)
{
	struct bpf_map *m;

	if (!skel)
		return -EBADF;
	switch (id) {
	case FVBPF_MAP_EVENTS: m = skel->maps.events; break;
	case FVBPF_MAP_PROCS: m = skel->maps.procs; break;
	case FVBPF_MAP_TGID_SLOTS: m = skel->maps.tgid_slots; break;
	case FVBPF_MAP_TORCH_GATES: m = skel->maps.torch_gates; break;
	case FVBPF_MAP_TORCH_VTABLES: m = skel->maps.torch_vtables; break;
	case FVBPF_MAP_TREE: m = skel->maps.tree; break;
	case FVBPF_MAP_TORCH_PLANS: m = skel->maps.torch_plans; break;
	case FVBPF_MAP_PY_CFG: m = skel->maps.py_cfg; break;
	case FVBPF_MAP_PY_APIS: m = skel->maps.py_apis; break;
	case FVBPF_MAP_COLL_LAYOUT: m = skel->maps.coll_layout; break;
	default: return -EINVAL;
	}
	return bpf_map__fd(m);
}

struct bpf_program *bpf_setup_prog(const struct fvbpf_bpf *skel, enum fvbpf_prog_id id)
{
	if (!skel)
		return NULL;
	switch (id) {
	case FVBPF_PROG_REGION_BEGIN: return skel->progs.region_begin;
	case FVBPF_PROG_REGION_END: return skel->progs.region_end;
	case FVBPF_PROG_THREAD_SYNC: return skel->progs.thread_sync;
	case FVBPF_PROG_CORRELATION: return skel->progs.correlation;
	case FVBPF_PROG_GPU_BATCH: return skel->progs.gpu_batch;
	case FVBPF_PROG_AGENT_STATUS: return skel->progs.agent_status;
	case FVBPF_PROG_API_CALL: return skel->progs.api_call;
	case FVBPF_PROG_TORCH_CALL: return skel->progs.torch_call;
	case FVBPF_PROG_TORCH_EVAL: return skel->progs.torch_eval;
	case FVBPF_PROG_SCOPE_ENTER: return skel->progs.scope_enter;
	case FVBPF_PROG_SCOPE_END: return skel->progs.scope_end;
	case FVBPF_PROG_PY_STACK: return skel->progs.py_stack_probe;
	case FVBPF_PROG_MEM_CALL: return skel->progs.mem_call;
	case FVBPF_PROG_REGION_BEGIN_TS: return skel->progs.region_begin_ts;
	case FVBPF_PROG_REGION_END_TS: return skel->progs.region_end_ts;
	case FVBPF_PROG_DL_PICKLE: return skel->progs.dl_pickle;
	default: return NULL;
	}
}

int bpf_setup_prog_fd(const struct fvbpf_bpf *skel, enum fvbpf_prog_id id)
{
	struct bpf_program *p = bpf_setup_prog(skel, id);

	return p ? bpf_program__fd(p) : -EBADF;
}

void bpf_counters_read(const struct fvbpf_bpf *skel, struct fvbpf_counters *out)
{
	if (!skel || !skel->bss) {
		memset(out, 0, sizeof(*out));
		return;
	}
	*out = skel->bss->counters;
}

void bpf_setup_destroy(struct fvbpf_bpf *skel)
{
	fvbpf_bpf__destroy(skel);
}

void bpf_setup_py_active(struct fvbpf_bpf *skel)
{
	if (skel && skel->bss)
		__atomic_store_n(&skel->bss->py_active, 1, __ATOMIC_RELEASE);
}
