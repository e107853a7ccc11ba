#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""The colours of a PNG screenshot, with nothing but the standard library.

    png_colours.py FILE [#rrggbb ...]

prints one JSON object: width, height, "distinct" (how many different
colours), and per colour given the pixels within 24 of it on each channel
("near").  Reads 8-bit greyscale, RGB, grey+alpha and RGBA, not interlaced
(what Chromium writes); anything else exits 2 naming what it found.
"""
import json
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def unfilter(raw, width, height, bpp):
    stride = width * bpp
    out, prev, pos = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[pos], bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                line[i] = (line[i] + paeth(a, b, c)) & 0xFF
            elif ftype != 0:
                sys.exit("bad PNG filter type %d" % ftype)
        out.append(line)
        prev = line
    return out


def read(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit("%s: not a PNG" % path)
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in CHANNELS or interlace:
        print("unsupported PNG: depth %d, colour type %d, interlace %d" % (depth, ctype, interlace),
              file=sys.stderr)
        sys.exit(2)
    bpp = CHANNELS[ctype]
    return width, height, bpp, unfilter(zlib.decompress(b"".join(idat)), width, height, bpp)


def main():
    width, height, bpp, rows = read(sys.argv[1])
    want = [tuple(int(c[i:i + 2], 16) for i in (1, 3, 5)) for c in sys.argv[2:]]
    seen, near = set(), [0] * len(want)
    for line in rows:
        for x in range(0, len(line), bpp):
            px = tuple(line[x:x + 3]) if bpp >= 3 else (line[x],) * 3
            seen.add(px)
            for i, w in enumerate(want):
                if all(abs(p - q) <= 24 for p, q in zip(px, w)):
                    near[i] += 1
    print(json.dumps({"width": width, "height": height, "distinct": len(seen),
                      "near": dict(zip(sys.argv[2:], near))}))


if __name__ == "__main__":
    main()
