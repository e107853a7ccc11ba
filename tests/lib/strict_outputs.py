#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Strict checks of what fvbpf wrote and printed, whatever the target sent.

    strict_outputs.py OUTDIR [CAPTURED_OUTPUT...]

- every *.json in OUTDIR is UTF-8 (strict: no surrogates, no overlong forms)
  and one JSON value by RFC 8259: no raw control characters in strings, no
  NaN or Infinity (Python's json with strict=True and a parse_constant that
  refuses);
- every *.txt and *.folded in OUTDIR, and every captured terminal output,
  is UTF-8 with no control character but newlines (no C0, DEL or C1:
  nothing a terminal obeys) and no invisible character that reorders or
  hides text (bidi overrides and isolates, line separators, tags: "Trojan
  Source"), and no line starts with a forged "fvbpf: forged";
- every *.svg is well-formed XML with neither;
- no *.json file holds an invisible character raw (its writer escapes
  them), and the strings of summaries and the manifest hold neither even
  once decoded (people read them with `jq -r`).
Prints "ok FILE" per file, "error: ..." and exit 1 on the first problem.
"""
import glob
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
# util/text_sanitize.c's text_is_invisible(), written independently
INVISIBLE = re.compile("[\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2069\ufeff"
                       "\ufff9-\ufffb\U000e0000-\U000e007f]")


def refuse_hidden(text, what):
    for rx, kind in ((CONTROL, "control"), (INVISIBLE, "invisible")):
        m = rx.search(text)
        if m:
            raise ValueError("%s character %r at offset %d%s" % (kind, m.group(), m.start(), what))


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
    text = text_of(path)
    m = INVISIBLE.search(text)
    if m:
        raise ValueError("invisible character %r raw at offset %d" % (m.group(), m.start()))
    value = json.loads(text, strict=True, parse_constant=refuse_constant)
    name = os.path.basename(path)
    if name.startswith("summary_") or name == "manifest.json":
        for s in strings_in(value):
            refuse_hidden(s, " in decoded string %r" % s[:80])


def check_text(path):
    text = text_of(path)
    refuse_hidden(text, "")
    for line in text.split("\n"):
        if line.startswith("fvbpf: forged"):
            raise ValueError("forged line: %r" % line[:80])


def check_svg(path):
    check_text(path)
    ET.fromstring(text_of(path).encode("utf-8"))


def main():
    outdir, captured = sys.argv[1], sys.argv[2:]
    checks = [(p, check_json) for p in sorted(glob.glob(os.path.join(outdir, "*.json")))]
    for ext in ("*.txt", "*.folded"):
        checks += [(p, check_text) for p in sorted(glob.glob(os.path.join(outdir, ext)))]
    checks += [(p, check_svg) for p in sorted(glob.glob(os.path.join(outdir, "*.svg")))]
    checks += [(p, check_text) for p in captured]
    if not checks:
        print("error: nothing to check in " + outdir)
        return 1
    for path, fn in checks:
        try:
            fn(path)
        except (ValueError, UnicodeDecodeError, ET.ParseError) as exc:
            print("error: %s: %s" % (os.path.basename(path), exc))
            return 1
        print("ok " + os.path.basename(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
