/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Finds the CUDA runtime, driver and NCCL functions of one traced process
 * (any mapped ELF that defines them: libcudart.so, libcuda.so, libnccl.so,
 * or a cudart linked into the executable or another library) and attaches
 * one session uprobe link per file.  Re-scanned while attached, since jobs
 * often load CUDA after they start.
 */
#ifndef FVBPF_CUDA_PROBES_H
#define FVBPF_CUDA_PROBES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cuda_file {
	unsigned long long dev, ino;  /* identity, so a file is examined once */
	char path[PATH_MAX];          /* as the target maps it */
	unsigned int nsyms;           /* probed functions it defines */
	unsigned int failed;          /* of those, not attached */
};

struct cuda_probes {
	pid_t pid;
	unsigned int slot;              /* the process's slot in BPF's procs map */
	int prog_fd;
	struct cuda_file *files;
	size_t nfiles;
	int *links;                     /* link fds: closing them detaches */
	size_t nlinks;
	unsigned int attached, failed;  /* probed CUDA/NCCL functions, all files */
	unsigned int gloo;              /* probed gloo backend functions (libtorch_cpu) */
	bool warned_none;
};

void cuda_probes_init(struct cuda_probes *cp, pid_t pid, unsigned int slot, int prog_fd);
/* Examine newly mapped files and attach to what they define.  Returns the
 * number of functions newly attached, or -errno when /proc cannot be read. */
int cuda_probes_scan(struct cuda_probes *cp);
/* Close the links (detach); what was found stays for the report. */
void cuda_probes_detach(struct cuda_probes *cp);
void cuda_probes_free(struct cuda_probes *cp);

/* A target's CUDA probes, zeroed until cuda_probes_init() (NULL: out of
 * memory); cuda_probes__free() detaches and frees them (NULL is fine). */
struct cuda_probes *cuda_probes__new(void);
void cuda_probes__free(struct cuda_probes *cp);

#endif /* FVBPF_CUDA_PROBES_H */
