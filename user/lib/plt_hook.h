/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * Moving the process's own PLT slots for one imported function to a
 * replacement, and back (plt_hook.c).  x86-64 (R_X86_64_JUMP_SLOT) only.
 * Internal to libfvbpf.so.
 */
#ifndef FVBPF_LIB_PLT_HOOK_H
#define FVBPF_LIB_PLT_HOOK_H

#include <link.h>
#include <stdbool.h>

struct plt_slot {
	void **addr;
	void *old;              /* what it held: the definition, or its PLT stub */
	bool relro;             /* in PT_GNU_RELRO: made writable for each store */
};

struct plt_hook {
	const char *symbol;     /* the import whose slots move */
	void *real;             /* the definition a slot may be bound to */
	void *replacement;
	const char *definer;    /* objects whose file name starts with this
				 * (the definer's) are never patched */
	struct plt_slot *slots; /* @max of them; @n in use */
	unsigned int max, n;
};

/* Point every loaded object's PLT slot for @symbol that is bound to @real,
 * or not bound yet, at @replacement; an object patched is made
 * RTLD_NODELETE first, so no slot outlives its object.  The library that
 * holds @replacement is never patched.  Returns h->n. */
unsigned int plt_hook_apply(struct plt_hook *h);
/* Each slot that still holds the replacement gets its old value; n = 0.
 * Async-signal-safe enough for a pthread_atfork child handler. */
void plt_hook_restore(struct plt_hook *h);

#endif /* FVBPF_LIB_PLT_HOOK_H */
