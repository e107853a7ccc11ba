#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A job whose libfvbpf.so shows a control page of another layout: the
library of this build, its page's magic overwritten with an older layout's
("fvbc", the page before struct fvbpf_channel), as a libfvbpf.so of an
earlier fvbpf still mapped in a running job would show it.  fvbpf must
refuse it, not read its fields at this layout's offsets.

usage: stale_page.py LIB MAGIC   (MAGIC as 0x...; stays until killed)
"""
import ctypes
import os
import sys
import time

lib = ctypes.CDLL(sys.argv[1])
page = ctypes.c_void_p.in_dll(lib, "fvbpf_control").value
if not page:
    sys.exit("the library has no control page")
ctypes.c_uint32.from_address(page).value = int(sys.argv[2], 16)
print("pid=%d" % os.getpid(), flush=True)
while True:
    time.sleep(1)
