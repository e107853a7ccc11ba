# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Run a command as the child subreaper of all it starts, daemons included.

  subreaper.py STATUS_FILE CMD...

Runs CMD, writes its exit status (a decimal) to STATUS_FILE once it ends,
then reaps every process that CMD's daemons leave orphaned (they are
re-parented here, not to PID 1) until none is left, and exits.  The Slurm
test cluster (tests/lib/slurm_cluster.sh) starts its daemons through it:
daemons that fork away, and the slurmstepd each job step gets, are reaped
when they end instead of waiting on a PID 1 that may never reap them, so
"nothing of the cluster left" can be checked to the last zombie.
"""
import ctypes
import os
import sys

PR_SET_CHILD_SUBREAPER = 36


def main():
    if len(sys.argv) < 3:
        sys.stderr.write("usage: subreaper.py STATUS_FILE CMD...\n")
        return 2
    status_file, cmd = sys.argv[1], sys.argv[2:]
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.stderr.write("prctl(PR_SET_CHILD_SUBREAPER): %s\n" % os.strerror(ctypes.get_errno()))
        return 1
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(cmd[0], cmd)
        finally:
            os._exit(127)
    while True:
        try:
            done, status = os.wait()
        except ChildProcessError:
            return 0
        if done == pid:
            tmp = status_file + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % os.waitstatus_to_exitcode(status))
            os.rename(tmp, status_file)


if __name__ == "__main__":
    sys.exit(main())
