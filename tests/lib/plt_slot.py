#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Where a process's PLT slot for a symbol points: plt_slot.py PID ELF SYMBOL.

Reads ELF's .rela.plt, .dynsym and .dynstr (64-bit little-endian only),
finds the R_X86_64_JUMP_SLOT of SYMBOL, reads the slot from /proc/PID/mem
at ELF's load base and prints the path of the mapping the value lies in
(or "unmapped 0x...")."""
import os
import struct
import sys

R_X86_64_JUMP_SLOT = 7


def sections(data):
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = []
    for i in range(shnum):
        name, typ, _flags, addr, off, size, link, _info, _align, entsize = struct.unpack_from(
            "<IIQQQQIIQQ", data, shoff + i * shentsize)
        secs.append(dict(name=name, type=typ, addr=addr, off=off, size=size, link=link,
                         entsize=entsize))
    strtab = secs[shstrndx]
    for s in secs:
        end = data.index(b"\0", strtab["off"] + s["name"])
        s["name"] = data[strtab["off"] + s["name"]:end].decode()
    return {s["name"]: s for s in secs}


def slot_offset(path, symbol):
    with open(path, "rb") as fh:
        data = fh.read()
    secs = sections(data)
    rela, dynsym, dynstr = secs[".rela.plt"], secs[".dynsym"], secs[".dynstr"]
    for off in range(rela["off"], rela["off"] + rela["size"], 24):
        r_offset, r_info, _addend = struct.unpack_from("<QQq", data, off)
        if r_info & 0xffffffff != R_X86_64_JUMP_SLOT:
            continue
        st_name, = struct.unpack_from("<I", data, dynsym["off"] + (r_info >> 32) * 24)
        start = dynstr["off"] + st_name
        if data[start:data.index(b"\0", start)].decode() == symbol:
            return r_offset
    raise SystemExit("%s: no PLT slot for %s" % (path, symbol))


def mappings(pid):
    with open("/proc/%d/maps" % pid) as fh:
        for line in fh:
            parts = line.split(None, 5)
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            yield lo, hi, int(parts[2], 16), parts[5].strip() if len(parts) > 5 else ""


def main():
    pid, path, symbol = int(sys.argv[1]), os.path.realpath(sys.argv[2]), sys.argv[3]
    off = slot_offset(path, symbol)
    maps = list(mappings(pid))
    base = min(lo - foff for lo, _hi, foff, p in maps if p == path)
    with open("/proc/%d/mem" % pid, "rb") as mem:
        mem.seek(base + off)
        value, = struct.unpack("<Q", mem.read(8))
    for lo, hi, _foff, p in maps:
        if lo <= value < hi:
            print(p or "anonymous")
            return
    print("unmapped 0x%x" % value)


if __name__ == "__main__":
    main()
