#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Check that docs/errors.md's tables say what fvbpf prints.

Every row of a table in docs/errors.md whose first column is a message in
backquotes is checked against the C sources of user/ (user/lib/ aside: it
prints nothing): the message's text, cut at its placeholders (<...>, and
"..." where a row shows part of a line), must be one string of the source:
the pieces in order, the first at its start and the last at its end unless
a placeholder stands there.  A C string is what the compiler makes of it:
adjacent literals joined, escapes read.  A row whose message was changed or
removed in the source fails here, so the table cannot drift silently.
Usage: errors_check.py [--tap] [REPO_ROOT] (--tap: one TAP line, for
tests/run.sh).
"""
import os
import re
import sys

LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
BETWEEN = re.compile(r'(?:\s|/\*.*?\*/|//[^\n]*\n)*\Z', re.S)
ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0", "r": "\r"}
PLACEHOLDER = re.compile(r"<[^<>]+>|\.\.\.|…")


def unescape(s):
    return re.sub(r"\\(x[0-9a-fA-F]+|.)", lambda m: ESCAPES.get(m.group(1), m.group(1)) if
                  not m.group(1).startswith("x") else chr(int(m.group(1)[1:], 16)), s)


def strip_comments(text):
    """Comments blanked (newlines kept), string and char literals left as they are."""
    out, i, n = [], 0, len(text)
    pat = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|/\*.*?\*/|//[^\n]*', re.S)
    for m in pat.finditer(text):
        out.append(text[i:m.start()])
        tok = m.group(0)
        out.append(tok if tok[0] in "\"'" else re.sub(r"[^\n]", " ", tok))
        i = m.end()
    out.append(text[i:])
    return "".join(out)


def c_strings(text):
    """Each C string of @text (adjacent literals joined), with its line."""
    text = strip_comments(text)
    out, cur, start, end = [], None, 0, -1
    for m in LITERAL.finditer(text):
        if cur is not None and BETWEEN.match(text[end:m.start()]):
            cur += unescape(m.group(1))
        else:
            if cur is not None:
                out.append((text.count("\n", 0, start) + 1, cur))
            cur, start = unescape(m.group(1)), m.start()
        end = m.end()
    if cur is not None:
        out.append((text.count("\n", 0, start) + 1, cur))
    return out


def source_strings(root):
    strings = []
    user = os.path.join(root, "user")
    for dirpath, dirnames, filenames in os.walk(user):
        dirnames[:] = sorted(d for d in dirnames if os.path.join(dirpath, d) !=
                             os.path.join(user, "lib"))
        for name in sorted(filenames):
            if name.endswith(".c"):
                with open(os.path.join(dirpath, name), encoding="utf-8") as f:
                    strings.extend(s for _, s in c_strings(f.read()))
    return strings


def table_messages(path):
    """(line number, message) of each table row whose first cell is in backquotes."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            # `message`, or `` message `` where it holds a backquote
            m = re.match(r"\|\s*(`+) ?(.+?) ?\1\s*\|", line)
            if m:
                rows.append((no, m.group(2).replace("\\|", "|")))
    return rows


def printf_form(piece):
    """The piece as the source spells it: a literal % is %% in a format."""
    return piece.replace("%", "%%")


def pattern(message, form):
    """A regular expression of @message: its pieces in order, anchored at
    either end unless a placeholder stands there."""
    parts = PLACEHOLDER.split(message)
    if not any(p.strip() for p in parts):
        return None
    body = ".*?".join(re.escape(form(p)) for p in parts)
    return re.compile(body + r"\Z", re.S)


def found(message, strings):
    for form in (lambda p: p, printf_form):
        pat = pattern(message, form)
        if pat and any(pat.match(s) for s in strings):
            return True
    return False


def self_check():
    """The checker's own rules, on a small source: a row it must find and ones it must not."""
    src = ('log_error("cannot open %s: %s (run as " /* why */ "root)", p, e);\n'
           'x = "100%% done";\n')
    strings = [s for _, s in c_strings(src)]
    bad = []
    for msg, want in (("cannot open <file>: <error> (run as root)", True),
                      ("cannot open <file>...", True), ("100% done", True),
                      ("cannot open <file>: <error> (run as", False), ("open <file>: <error> (run as root)", False),
                      ("...open <file>: <error> (run as root)", True),
                      ("(run as root) cannot open", False), ("cannot read <file>...", False),
                      ("<x>", False)):
        if found(msg, strings) != want:
            bad.append("self-check: %r %s" % (msg, "not found" if want else "found"))
    return bad


def main(args):
    tap = "--tap" in args
    args = [a for a in args if a != "--tap"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    doc = os.path.join(root, "docs", "errors.md")
    strings = source_strings(root)
    rows = table_messages(doc)
    bad = self_check()
    if not rows:
        bad.append("docs/errors.md: no table rows with a message in backquotes")
    for no, msg in rows:
        if not found(msg, strings):
            bad.append("docs/errors.md:%d: not in the source of user/: %s" % (no, msg))
    what = "docs/errors.md: each of its %d messages is in the source" % len(rows)
    if tap:
        print("1..1")
        for line in bad:
            print("# " + line)
        print("%s 1 - %s" % ("not ok" if bad else "ok", what))
    else:
        for line in bad:
            print(line)
        if not bad:
            print("errors_check: " + what)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
