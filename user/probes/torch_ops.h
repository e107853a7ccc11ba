/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Finds PyTorch's probe points in one libtorch_cpu.so and names them as
 * torch.profiler does: every dispatcher entry `at::_ops::<opid>::call`
 * (`aten::addmm`, overload in args), every autograd node
 * `*::apply(std::vector<at::Tensor>&&)` (`AddmmBackward0`,
 * `torch::autograd::AccumulateGrad`), and the record_function scope
 * functions.  The file is the target's: every name and byte read from it is
 * bounded and checked.  The symbol tables are walked once per file.
 */
#ifndef FVBPF_TORCH_OPS_H
#define FVBPF_TORCH_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum torch_kind { TORCH_OP = 1, TORCH_NODE = 2, TORCH_SCOPE = 3 };

/* How an operator got its name (worst first). */
enum torch_naming { TORCH_NAMED_PREFIX = 1, TORCH_NAMED_EXACT = 2 };

#define TORCH_NAME_MAX 160      /* longer names (none in torch) are cut */

struct torch_sym {
	uint64_t off;                   /* file offset: what the uprobe wants */
	char name[TORCH_NAME_MAX];      /* as torch.profiler writes it */
	char overload[64];              /* ops: schema overload name, may be "" */
	uint8_t kind;                   /* enum torch_kind */
	uint8_t naming;                 /* ops: enum torch_naming */
	char *mangled;                  /* ops: the symbol, whose parameter types
					 * --record-shapes checks; may be NULL */
};

/* A node class's vtable and the evaluate_function name it gives. */
struct torch_eval {
	uint64_t va;                    /* of the vtable's address point (_ZTV + 16) */
	char name[TORCH_NAME_MAX];      /* "autograd::engine::evaluate_function: X" */
};

#define TORCH_EVAL_PREFIX "autograd::engine::evaluate_function: "

struct torch_file {
	struct torch_sym *syms;         /* ops, then nodes */
	size_t n, cap;
	size_t nops, nnodes;
	size_t named_exact, named_prefix, unnamed;  /* ops by how they were named */
	bool has_symtab;
	/* record_function scopes: entry of record_function_enter_new, and
	 * at::RecordFunction::end() (0: absent) */
	uint64_t scope_enter_off, scope_end_off;
	/* Engine::evaluate_function (0: absent) and the node vtables */
	uint64_t eval_off;
	struct torch_eval *evals;       /* sorted by va, unique */
	size_t nevals, capevals;
	bool vaddr_is_off;              /* first PT_LOAD at vaddr 0, offset 0 */
	uint64_t discover_ns;           /* time to read the file */
};

/* Ops torch's ObservedOperators never records: no probe. */
bool torch_op_unobserved(const char *opid);

/*
 * The (name, overload) string addresses a create_<opid>_typed_handle()
 * passes to Dispatcher::findSchemaOrThrow: the first `lea disp32(%rip),%rdx`
 * and `lea disp32(%rip),%rcx` in @code (bytes of the function, which starts
 * at @vaddr).  0, or -ENOENT when either is missing.
 */
int torch_lea_decode(const uint8_t *code, size_t len, uint64_t vaddr, uint64_t *name_va,
		     uint64_t *overload_va);

/*
 * The longest P such that "aten::P" is in @names (sorted, strcmp order) and
 * @opid is P or P_<overload>: fills @name/@overload.  0 or -ENOENT.
 */
int torch_prefix_name(const char *opid, char *const *names, size_t n, char *name, size_t nlen,
		      char *overload, size_t olen);

/*
 * The node class of an apply() symbol as the profiler names it, or -ENOENT
 * when @mangled is not `...::apply(std::vector<at::Tensor>&&)` under torch::.
 */
int torch_node_name(const char *mangled, char *out, size_t len);

struct stat;
/* Read the libtorch_cpu.so open at @fd (@st its status; @fd stays open and
 * its offset moves): 0, or -errno. */
int torch_file_discover_fd(int fd, const struct stat *st, struct torch_file *tf);
/* The same by path (tests, files of our own): 0, or -errno. */
int torch_file_discover(const char *path, struct torch_file *tf);
/* A deep copy of @src into @dst: 0 or -ENOMEM (@dst then empty). */
int torch_file_copy(const struct torch_file *src, struct torch_file *dst);
void torch_file_free(struct torch_file *tf);

/* The evaluate_function name of the node class whose vtable symbol is
 * @mangled (`_ZTVN5torch...E`), as name() gives it: 0 or -ENOENT. */
int torch_eval_name(const char *mangled, char *out, size_t len);

/* Does @path (as a process maps it) name libtorch_cpu? */
bool torch_is_libtorch_cpu(const char *path);

#endif /* FVBPF_TORCH_OPS_H */
