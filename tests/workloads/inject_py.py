# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""A Python program started WITHOUT fvbpf (no import, no LD_PRELOAD), for
`fvbpf attach --inject`: prints "tick N" every 10 ms for COUNT ticks,
checking as it goes that its sleeps neither fail nor return early, then
"done ticks=N sigusr1=S errors=E".  With --sleep MS it first sleeps MS
once and prints "sleep ok" when that took at least MS (and not 1.5 s more)."""
import os
import signal
import sys
import time

usr1 = 0


def on_usr1(sig, frame):
    global usr1
    usr1 += 1


signal.signal(signal.SIGUSR1, on_usr1)
args = sys.argv[1:]
count = int(args[args.index("--count") + 1]) if "--count" in args else 300
print("pid=%d" % os.getpid(), flush=True)
errors = 0
if "--sleep" in args:
    ms = int(args[args.index("--sleep") + 1])
    time.sleep(0.2)
    print("waiting sleep", flush=True)
    t0 = time.monotonic()
    time.sleep(ms / 1000)
    el = (time.monotonic() - t0) * 1000
    if ms - 1 <= el <= ms + 1500:
        print("sleep ok", flush=True)
    else:
        print("sleep ERROR %.0f ms" % el, flush=True)
        errors += 1
nxt = time.monotonic()
for i in range(count):
    print("tick %d" % i, flush=True)
    nxt += 0.01
    try:
        delay = nxt - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    except Exception as e:  # noqa: BLE001 - any failure is what we look for
        print("tick ERROR %r" % e, flush=True)
        errors += 1
print("done ticks=%d sigusr1=%d errors=%d" % (count, usr1, errors), flush=True)
