# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Install fvbpf's import hook into this Python environment.

    python3 -m fvbpf.hook install     write fvbpf-hook.pth into site-packages
    python3 -m fvbpf.hook uninstall   remove it
    python3 -m fvbpf.hook status      say whether it is installed, and where

With the hook, every later process of this interpreter watches for
``fastvideo.profiler``; a FastVideo job then gets fvbpf regions without
``fvbpf attach --inject``.  ``FVBPF_HOOK=0`` turns it off for one process.
"""
import os
import sys
import sysconfig

PTH = "fvbpf-hook.pth"


def _pth_path():
    return os.path.join(sysconfig.get_paths()["purelib"], PTH)


def _python_dir():
    # The directory that holds fvbpf/ and fvbpf_hook.py (source tree or
    # site-packages).
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def install():
    src = _python_dir()
    if not os.path.exists(os.path.join(src, "fvbpf_hook.py")):
        sys.exit("fvbpf.hook: %s has no fvbpf_hook.py: install fvbpf's python/ "
                 "directory whole" % src)
    path = _pth_path()
    # A .pth line that starts with "import" is run at start-up; a path line
    # puts fvbpf's directory on sys.path first.
    text = "%s\nimport fvbpf_hook\n" % src
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    print("fvbpf.hook: installed %s (fvbpf from %s)" % (path, src))


def uninstall():
    path = _pth_path()
    try:
        os.unlink(path)
        print("fvbpf.hook: removed %s" % path)
    except FileNotFoundError:
        print("fvbpf.hook: not installed (%s does not exist)" % path)


def status():
    path = _pth_path()
    if os.path.exists(path):
        print("fvbpf.hook: installed: %s" % path)
        return 0
    print("fvbpf.hook: not installed (would be %s)" % path)
    return 1


def main(argv):
    cmds = {"install": install, "uninstall": uninstall, "status": status}
    if len(argv) != 2 or argv[1] not in cmds:
        sys.exit("usage: python3 -m fvbpf.hook install|uninstall|status")
    return cmds[argv[1]]() or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
