// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * fvbpf's BPF programs, one file per probe family, built as one object so
 * that the loader has one skeleton (fvbpf.skel.h) and the families share
 * their maps.  The families, in the order their programs are defined:
 *
 *   pystack.bpf.c  --with-stack: the calling thread's CPython frames (used by
 *                  the operator, launch and region-begin probes)
 *   markers.bpf.c  region begin/end and thread sync (the marker library)
 *   cuda.bpf.c     CUDA and NCCL calls (session uprobes)
 *   agent.bpf.c    the agent channel: CUPTI correlation, GPU batches, status
 *   torch.bpf.c    PyTorch operators, autograd nodes, RecordFunction scopes
 *   memory.bpf.c   allocator events (--profile-memory)
 *   tree.bpf.c     process trees (--children, --match)
 *   dataloader.bpf.c  DataLoader queue messages (trainers and their workers)
 *
 * fvbpf_common.bpf.h holds what they share: the ring buffer, the process
 * tables, the lookups and the record helpers.
 */
#include "fvbpf_common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "pystack.bpf.c"
#include "markers.bpf.c"
#include "cuda.bpf.c"
#include "agent.bpf.c"
#include "torch.bpf.c"
#include "memory.bpf.c"
#include "tree.bpf.c"
#include "dataloader.bpf.c"
