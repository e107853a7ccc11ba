# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""Steps whose scope names and Python frames carry hostile text, no fvbpf
code: a record_function scope named with an escape sequence, a newline that
forges an "fvbpf:" line, a carriage return, a C1 control, bidi overrides and
isolates, a line separator and a tag character (all within the 96 bytes
fvbpf reads of a scope name); and an operator called from a function whose
file name and qualified name hold the same (compile() and
code.replace() take any string).

  torch_hostile_names.py run DIR STEPS   write pid=, wait for DIR/go, run
                                         STEPS steps (record_function
                                         "step"), write DIR/done, wait for
                                         DIR/exit
"""
import sys
import time

import torch

HOSTILE = ("\x1b[31mred\nfvbpf: forged\r\u202etxt.exe\u202c\u2066iso\u2069"
           "\u2028sep\x85\U000e0041")

torch.set_num_threads(1)
x = torch.randn(8, 8)
ns = {"torch": torch}
exec(compile("def frame(x):\n    return torch.mm(x, x)\n",
             "/tmp/\x1b[2J\u202eevil\nfvbpf: forged.py", "exec"), ns)
hostile_frame = ns["frame"]
hostile_frame.__code__ = hostile_frame.__code__.replace(co_name="f\x1b[31m\u202eg",
                                                        co_qualname="Q\u2067\x1b]0;t\x07.f")


def step():
    with torch.profiler.record_function("step"):
        with torch.profiler.record_function(HOSTILE):
            torch.mm(x, x)
            time.sleep(0.002)  # the scope's own time: its row in pylines
        hostile_frame(x)


if len(sys.argv) != 4 or sys.argv[1] != "run":
    sys.exit("usage: torch_hostile_names.py run DIR STEPS")
from wl_steps import run_steps  # noqa: E402

run_steps(sys.argv[2], int(sys.argv[3]), step)
