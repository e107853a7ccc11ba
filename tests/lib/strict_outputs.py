#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Strict checks of what fvbpf wrote and printed, whatever the target sent.

    strict_outputs.py OUTDIR [CAPTURED_OUTPUT...]

- every *.json in OUTDIR is UTF-8 (strict: no surrogates, no overlong forms)
  and one JSON value by RFC 8259: no raw control characters in strings, no
  NaN or Infinity (Python's json with strict=True and a parse_constant that
  refuses);
- every *.txt in OUTDIR, and every captured terminal output, is UTF-8 with
  no control character but newlines (no C0, DEL or C1: nothing a terminal
  obeys), and no line of a captured output starts with a forged
  "fvbpf: forged";
- the strings of summaries and the manifest hold no control character even
  once decoded (people read them with `jq -r`).
Prints "ok FILE" per file, "error: ..." and exit 1 on the first problem.
"""
import glob
import json
import os
import re
import sys

CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def refuse_constant(name):
    raise ValueError("non-standard number " + name)


def text_of(path):
    with open(path, "rb") as f:
        data = f.read()
    return data.decode("utf-8", errors="strict")  # raises on any invalid byte


def strings_in(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings_in(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings_in(v)


def check_json(path):
    value = json.loads(text_of(path), strict=True, parse_constant=refuse_constant)
    name = os.path.basename(path)
    if name.startswith("summary_") or name == "manifest.json":
        for s in strings_in(value):
            if CONTROL.search(s):
                raise ValueError("control character in decoded string %r" % s[:80])


def check_text(path, forged_lines):
    text = text_of(path)
    m = CONTROL.search(text)
    if m:
        raise ValueError("control character %r at offset %d" % (m.group(), m.start()))
    if forged_lines:
        for line in text.split("\n"):
            if line.startswith("fvbpf: forged"):
                raise ValueError("forged line: %r" % line[:80])


def main():
    outdir, captured = sys.argv[1], sys.argv[2:]
    checks = [(p, check_json) for p in sorted(glob.glob(os.path.join(outdir, "*.json")))]
    checks += [(p, lambda p: check_text(p, False)) for p in sorted(glob.glob(os.path.join(outdir, "*.txt")))]
    checks += [(p, lambda p: check_text(p, True)) for p in captured]
    if not checks:
        print("error: nothing to check in " + outdir)
        return 1
    for path, fn in checks:
        try:
            fn(path)
        except (ValueError, UnicodeDecodeError) as exc:
            print("error: %s: %s" % (os.path.basename(path), exc))
            return 1
        print("ok " + os.path.basename(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
