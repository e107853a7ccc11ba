# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A Python program (standard library only) with a forked child, like a
trainer and its DataLoader worker, for an interpreter without symbols
(Debian's): prints "pid=N" once the child is forked, then both sleep
until DIR/stop exists (at most 60 s).

  dl_fork_plain.py DIR
"""
import os
import pickle
import sys
import time

stop = os.path.join(sys.argv[1], "stop")
pickle.loads(pickle.dumps((0, [1, 2])))
child = os.fork()
if child == 0:
    for _ in range(600):
        if os.path.exists(stop):
            break
        time.sleep(0.1)
    os._exit(0)
print("pid=%d" % os.getpid(), flush=True)
for _ in range(600):
    if os.path.exists(stop):
        break
    time.sleep(0.1)
os.waitpid(child, 0)
