// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * A stand-in libpython3.11.so for --with-stack's hostile tests
 * (tests/workloads/c/py_hostile.c fills it): the symbols fvbpf looks for,
 * with room for the structs it reads.  Nothing here is a real interpreter.
 */
#define PUB __attribute__((visibility("default")))

PUB unsigned char _PyRuntime[1024] __attribute__((aligned(64)));
PUB unsigned long Py_Version = 0x030b07f0; /* 3.11.7 final; writable: tests change it */
PUB unsigned char PyCode_Type[416] __attribute__((aligned(64)));
PUB unsigned char PyUnicode_Type[416] __attribute__((aligned(64)));
PUB unsigned char PyBytes_Type[416] __attribute__((aligned(64)));
