#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Copy a 64-bit little-endian ELF file, moving every definition of one
symbol (.dynsym and .symtab) into its .rodata: the symbol keeps its type
(a function stays a function) but its address now lies in a segment
without PF_X.  A test of issue 17: fvbpf must never put a probe there.

usage: elf_move_symbol.py SRC DST NAME
Prints "moved NAME to 0xVADDR (N entries)"; exits 1 when NAME is not
defined, .rodata is missing, or .rodata lies in an executable segment.
"""
import shutil
import struct
import sys

PT_LOAD, PF_X = 1, 1
SHT_SYMTAB, SHT_DYNSYM = 2, 11


def sections(b):
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3A)
    out = []
    for i in range(shnum):
        out.append(struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize))
    names = out[shstrndx]
    named = []
    for sh in out:
        start = names[4] + sh[0]
        named.append((b[start:b.index(b"\0", start)].decode(), sh))
    return named


def in_exec_load(b, vaddr):
    phoff, = struct.unpack_from("<Q", b, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", b, 0x36)
    for i in range(phnum):
        p_type, p_flags, _, p_vaddr, _, _, p_memsz, _ = struct.unpack_from(
            "<IIQQQQQQ", b, phoff + i * phentsize)
        if p_type == PT_LOAD and p_vaddr <= vaddr < p_vaddr + p_memsz:
            return bool(p_flags & PF_X)
    return None


def main():
    src, dst, name = sys.argv[1:4]
    b = bytearray(open(src, "rb").read())
    secs = sections(b)
    rodata = [sh for n, sh in secs if n == ".rodata"]
    if not rodata:
        sys.exit("no .rodata")
    ro = rodata[0]
    # the first byte that is not already int3, so that one written is seen
    at = next(i for i in range(ro[5]) if b[ro[4] + i] != 0xCC)
    vaddr = ro[3] + at
    if in_exec_load(b, vaddr) is not False:
        sys.exit(".rodata is not in a read-only PT_LOAD")
    moved = 0
    for _, sh in secs:
        if sh[1] not in (SHT_SYMTAB, SHT_DYNSYM):
            continue
        strtab = secs[sh[6]][1]
        for off in range(sh[4] + 24, sh[4] + sh[5], 24):
            st_name, = struct.unpack_from("<I", b, off)
            start = strtab[4] + st_name
            if b[start:b.index(b"\0", start)].decode(errors="replace") != name:
                continue
            struct.pack_into("<Q", b, off + 8, vaddr)
            moved += 1
    if not moved:
        sys.exit("%s is not defined in %s" % (name, src))
    shutil.copy(src, dst)
    open(dst, "wb").write(b)
    print("moved %s to 0x%x (%d entries)" % (name, vaddr, moved))


main()
