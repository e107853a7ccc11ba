/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * What torch_ops.c (walking libtorch_cpu's symbols) and torch_names.c
 * (naming them) share and nobody else needs.
 */
#ifndef FVBPF_TORCH_OPS_INTERNAL_H
#define FVBPF_TORCH_OPS_INTERNAL_H

#define OPID_MAX 128            /* longest opid in torch 2.14 is 58 bytes */

static const char VTABLE_PREFIX[] = "_ZTVN5torch8autograd";

/* The opid of a dispatcher entry `at::_ops::<opid>::call`: 0, or -ENOENT. */
int torch_op_call_id(const char *name, char *opid);
/* The opid of a `create_<opid>_typed_handle`: 0, or -ENOENT. */
int torch_handle_id(const char *name, char *opid);

#endif /* FVBPF_TORCH_OPS_INTERNAL_H */
