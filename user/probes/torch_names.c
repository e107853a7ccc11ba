// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * Names of PyTorch's probe points as torch.profiler writes them, from their
 * mangled symbols and the code of their schema handles.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "probes/torch_ops.h"
#include "probes/torch_ops_internal.h"

static const char OP_PREFIX[] = "_ZN2at4_ops";
static const char HANDLE_PREFIX[] = "_ZN2at4_opsL";
static const char APPLY_TAIL[] = "5applyEOSt6vectorIN2at6TensorE";
bool torch_op_unobserved(const char *opid)
{
	static const char *const list[] = { "size_int", "is_leaf", "output_nr", "_version", "is_complex" };
	size_t i;

	for (i = 0; i < sizeof(list) / sizeof(list[0]); i++)
		if (!strcmp(opid, list[i]))
			return true;
	return false;
}

bool torch_is_libtorch_cpu(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libtorch_cpu.so", 15);
}

/* An Itanium <length><identifier> at *@p: advances past it.  0 or -EINVAL. */
static int source_name(const char **p, const char **id, size_t *len)
{
	size_t n = 0;
	const char *s = *p;

	if (*s < '1' || *s > '9')
		return -EINVAL;
	while (*s >= '0' && *s <= '9') {
		n = n * 10 + (size_t)(*s++ - '0');
		if (n > 4096)
			return -EINVAL;
	}
	if (strnlen(s, n) < n)
		return -EINVAL; /* the name ends inside the identifier */
	*id = s;
	*len = n;
	*p = s + n;
	return 0;
}

/* `_ZN2at4_ops<N><opid>4callE...` -> opid.  Clones (`.cold`, `.isra`) are
 * never entry points and carry a dot. */
int torch_op_call_id(const char *name, char *opid)
{
	const char *p = name + sizeof(OP_PREFIX) - 1, *id;
	size_t len;

	if (strncmp(name, OP_PREFIX, sizeof(OP_PREFIX) - 1) || strchr(name, '.'))
		return -EINVAL;
	if (source_name(&p, &id, &len) || len >= OPID_MAX || strncmp(p, "4callE", 6))
		return -EINVAL;
	memcpy(opid, id, len);
	opid[len] = '\0';
	return 0;
}

/* `_ZN2at4_opsL<N>create_<opid>_typed_handleEv` -> opid. */
int torch_handle_id(const char *name, char *opid)
{
	static const char head[] = "create_", tail[] = "_typed_handle";
	const char *p = name + sizeof(HANDLE_PREFIX) - 1, *id;
	size_t len, n;

	if (strncmp(name, HANDLE_PREFIX, sizeof(HANDLE_PREFIX) - 1) || strchr(name, '.'))
		return -EINVAL;
	if (source_name(&p, &id, &len) || strcmp(p, "Ev"))
		return -EINVAL;
	if (len <= sizeof(head) - 1 + sizeof(tail) - 1 || strncmp(id, head, sizeof(head) - 1) ||
	    strncmp(id + len - (sizeof(tail) - 1), tail, sizeof(tail) - 1))
		return -EINVAL;
	n = len - (sizeof(head) - 1) - (sizeof(tail) - 1);
	if (n >= OPID_MAX)
		return -EINVAL;
	memcpy(opid, id + sizeof(head) - 1, n);
	opid[n] = '\0';
	return 0;
}

int torch_node_name(const char *mangled, char *out, size_t len)
{
	const char *p = mangled, *id;
	size_t n, used = 0, parts = 0;
	bool generated = false;
	char buf[TORCH_NAME_MAX];

	if (strncmp(p, "_ZN5torch", 9) || strchr(p, '.'))
		return -ENOENT;
	p += 3; /* at "5torch" */
	buf[0] = '\0';
	while (strncmp(p, APPLY_TAIL, sizeof(APPLY_TAIL) - 1)) {
		if (source_name(&p, &id, &n))
			return -ENOENT;
		if (parts == 2 && n == 9 && !strncmp(id, "generated", 9) && !strcmp(buf, "torch::autograd")) {
			generated = true;
			used = 0;
			buf[0] = '\0';
			parts++;
			continue;
		}
		if (used + n + 3 >= sizeof(buf))
			return -ENOENT;
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%.*s", used ? "::" : "",
					 (int)n, id);
		parts++;
	}
	/* Generated nodes override name() with the bare class; the rest are
	 * demangled type names.  An anonymous namespace is no node we name. */
	if (parts < (generated ? 4u : 3u) || strstr(buf, "_GLOBAL__N"))
		return -ENOENT;
	if (strlen(buf) >= len)
		return -ENOENT;
	memcpy(out, buf, strlen(buf) + 1);
	return 0;
}

int torch_eval_name(const char *mangled, char *out, size_t len)
{
	char apply[TORCH_NAME_MAX + sizeof(APPLY_TAIL) + 8], node[TORCH_NAME_MAX];
	size_t n = strlen(mangled);

	/* _ZTV N <names> E -> _Z N <names> 5apply...: the node's apply()
	 * symbol, which torch_node_name already names as the profiler does. */
	if (strncmp(mangled, VTABLE_PREFIX, sizeof(VTABLE_PREFIX) - 1) || mangled[n - 1] != 'E' ||
	    n - 5 + 3 + sizeof(APPLY_TAIL) > sizeof(apply))
		return -ENOENT;
	snprintf(apply, sizeof(apply), "_ZN%.*s%s", (int)(n - 6), mangled + 5, APPLY_TAIL);
	if (torch_node_name(apply, node, sizeof(node)))
		return -ENOENT;
	if (strlen(TORCH_EVAL_PREFIX) + strlen(node) >= len)
		return -ENOENT;
	snprintf(out, len, "%s%s", TORCH_EVAL_PREFIX, node);
	return 0;
}

int torch_lea_decode(const uint8_t *code, size_t len, uint64_t vaddr, uint64_t *name_va,
		     uint64_t *overload_va)
{
	bool rdx = false, rcx = false;
	int32_t disp;
	size_t i;

	for (i = 0; i + 7 <= len && !(rdx && rcx); i++) {
		if (code[i] != 0x48 || code[i + 1] != 0x8d || (code[i + 2] != 0x15 && code[i + 2] != 0x0d))
			continue;
		memcpy(&disp, code + i + 3, sizeof(disp));
		/* rip-relative: from the end of the 7-byte instruction */
		if (code[i + 2] == 0x15 && !rdx) {
			*name_va = vaddr + i + 7 + (uint64_t)(int64_t)disp;
			rdx = true;
		} else if (code[i + 2] == 0x0d && !rcx) {
			*overload_va = vaddr + i + 7 + (uint64_t)(int64_t)disp;
			rcx = true;
		}
	}
	return rdx && rcx ? 0 : -ENOENT;
}
