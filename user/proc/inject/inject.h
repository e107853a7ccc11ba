/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * `fvbpf attach --inject`: load libfvbpf.so (markers and the dormant CUPTI
 * agent) into a running process that was started without it, by making
 * its main thread call its own libc's dlopen() (on a stack of ours, from
 * code of ours that returns by itself: inject_tramp.h), and restoring the
 * thread exactly as it was.
 */
#ifndef FVBPF_INJECT_H
#define FVBPF_INJECT_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct elf_file;

enum inject_state {
	INJECT_NONE,      /* not asked for (no --inject) */
	INJECT_INJECTED,  /* loaded by this attach */
	INJECT_REUSED,    /* the library was already mapped */
	INJECT_REFUSED,   /* not tried: already ptraced, not x86-64, no dlopen, ... */
	INJECT_FAILED,    /* tried; the target was restored, no agent */
};

struct inject_info {
	enum inject_state state;
	uint64_t wallclock_ns;    /* CLOCK_REALTIME when the target was stopped */
	uint64_t stopped_ns;      /* time in our ptrace stops, all tries */
	unsigned int tries;       /* stops until the thread was at a safe place */
	unsigned int signals;     /* signals that arrived meanwhile, passed on at its place */
	bool restarted;           /* a wait that our stop failed with EINTR, run again */
	char why[256];            /* refused or failed: the cause, one line */
};

/* Default and bounds of --inject-timeout (seconds). */
#define INJECT_TIMEOUT_DEFAULT 5.0
#define INJECT_TIMEOUT_MIN 0.1
#define INJECT_TIMEOUT_MAX 600.0

/* Which function of a libc or libdl file loads a library. */
enum inject_fn_kind { INJECT_FN_NONE, INJECT_FN_DLOPEN, INJECT_FN_LIBC_DLOPEN_MODE };

/*
 * Pure over an ELF file: the file offset of `dlopen` (glibc 2.34+ libc,
 * or libdl), else of `__libc_dlopen_mode` (older libc).  Returns the kind
 * (INJECT_FN_NONE when neither is defined).
 */
enum inject_fn_kind inject_find_dlopen(struct elf_file *ef, uint64_t *file_off);

/* Whether @path names a libc or libdl that may hold dlopen (by basename). */
bool inject_is_libc_path(const char *path);

/*
 * Load @lib (a copy of libfvbpf.so, see inject_find_library()) into @pid
 * within @timeout_s seconds.  Fills @info; 0 when loaded, else -errno with
 * the cause in info->why (the target is left as it was, running).
 * The caller logs.
 */
int inject_library(pid_t pid, const char *lib, double timeout_s, struct inject_info *info);

/* The libfvbpf.so to inject: @explicit_path, else beside this fvbpf
 * (its directory, its parent, ../lib).  0 or -ENOENT. */
int inject_find_library(const char *explicit_path, char *out, size_t len);

/* "injected", "reused", "refused", "failed", "none". */
const char *inject_state_name(enum inject_state s);
/* How the process got its library: the state's name, or without --inject
 * "loaded by the job" (markers mapped) or "none". */
const char *inject_origin(const struct inject_info *info, bool has_library);
/* ISO 8601 UTC with microseconds, "" when never injected. */
void inject_wallclock(const struct inject_info *info, char *buf, size_t len);

/* Which CUDA libraries @pid maps (CUDA_MAPS_*): the runtime, the driver
 * (loaded once the process initialised CUDA), PyTorch's CUDA library. */
#define CUDA_MAPS_RUNTIME 0x1u
#define CUDA_MAPS_DRIVER  0x2u
#define CUDA_MAPS_TORCH   0x4u
unsigned int inject_cuda_maps(pid_t pid);

#endif /* FVBPF_INJECT_H */
