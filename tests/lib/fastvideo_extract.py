#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Extract FastVideo's region profiler from its wheel, without the package.

    fastvideo_extract.py WHEEL DEST

DEST/fastvideo/ gets profiler.py, envs.py, logger.py and logging_utils/ as
released, and an empty __init__.py in place of the real one (which imports
diffusers, transformers and more): `import fastvideo.profiler` then works
with only torch installed.
"""
import os
import sys
import zipfile

KEEP = ("fastvideo/profiler.py", "fastvideo/envs.py", "fastvideo/logger.py",
        "fastvideo/logging_utils/")


def main():
    wheel, dest = sys.argv[1:3]
    with zipfile.ZipFile(wheel) as z:
        names = [n for n in z.namelist() if n.startswith(KEEP) and n.endswith(".py")]
        if "fastvideo/profiler.py" not in names:
            sys.exit("%s has no fastvideo/profiler.py" % wheel)
        for n in names:
            z.extract(n, dest)
    open(os.path.join(dest, "fastvideo", "__init__.py"), "w").close()
    print("fastvideo_extract: %d files into %s" % (len(names), dest))


if __name__ == "__main__":
    main()
