/* SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only) */
/*
 * A CPython in another PID namespace (a container's): proc/python/py_runtime.c's
 * check looks for the main thread by the host's PID, while the interpreter
 * names its threads as the container numbers them, so the check refuses a
 * layout that is right.  The same check here with the process's own PID.
 */
#ifndef FVBPF_PY_NSCHECK_H
#define FVBPF_PY_NSCHECK_H

#include <stdbool.h>
#include <sys/types.h>

#include "proc/python/py_runtime.h"

/* @r as py_runtime_find() filled it before refusing (-EPROTO): whether the
 * layout checks out with @ns_pid as the main thread's id. */
bool py_nscheck(const struct py_runtime *r, pid_t ns_pid);

#endif /* FVBPF_PY_NSCHECK_H */
