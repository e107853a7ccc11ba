#!/usr/bin/env python3
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
"""DataLoader workers in an attach's output (issue 38), read independently
of fvbpf's code: every summary's "dataloader" object and every trace's
dataloader slices and flows.

  dl_check.py DIR TRAINER_PID WORKER_PIDS SLOW_WORKER SLOW_MS
      (WORKER_PIDS: comma-separated, in fork order = worker_id order)
      batch k of the workload is loaded by worker k % N; the slow worker's
      batches spent at least SLOW_MS in __getitem__, the others under
      half of it; prints "slow=S fast=F waited=W flows=L" and exits 1 on
      the first thing wrong.
  dl_check.py --none DIR   no dataloader object, slice or flow anywhere

  WORKER_PIDS "-": workers forked every epoch: each batch's worker is a
  child of the trainer's seen under one worker_id only, and more than N
  of them took part (re-forked).  --pin before DIR: the trainer receives
  on its pin-memory thread, not its main thread: each flow ends there,
  within the __next__ that waited for the batch.
"""
import glob
import json
import os
import re
import sys



def sentence_wait_ms(sentence):
    """The wait a bottleneck sentence says ("waited 59.5 ms for ..."), ms."""
    m = re.match(r"waited ([0-9.]+) ms ", sentence)
    if not m:
        fail("bottleneck sentence %r: no wait" % sentence)
    return float(m.group(1))

def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def load(path):
    with open(path) as f:
        return json.load(f)


def none(d):
    for f in glob.glob(os.path.join(d, "summary_*.json")):
        if "dataloader" in load(f):
            fail("%s has a dataloader object" % f)
    for f in glob.glob(os.path.join(d, "trace_*.json")):
        for e in load(f)["traceEvents"]:
            if e.get("cat") == "dataloader":
                fail("%s has %s" % (f, e))
    with open(os.path.join(d, "summary_rank0_segment0000_step.txt")) as f:
        if "DataLoader:" in f.read():
            fail("a DataLoader line in the text summary")
    print("none ok")


def check(d, trainer, workers, slow_worker, slow_ms, pin, nworkers):
    n = nworkers
    ids = {}
    slow = fast = waited = flows = 0
    sentences = []
    seen = False
    for f in sorted(glob.glob(os.path.join(d, "summary_*.json"))):
        s = load(f)
        dl = s.get("dataloader")
        # the first segments may close before a batch of the attach began
        if dl is None and not seen:
            continue
        if dl is None:
            fail("%s: no dataloader object" % f)
        seen = True
        per = dl["per_batch"]
        if sum(b["wait_us"] for b in per) > dl["wait_us"] + 0.001:
            fail("%s: batch waits past the total" % f)
        for w in dl["workers"]:
            if w["worker_id"] is None or (workers and workers[w["worker_id"]] != w["pid"]):
                fail("%s: worker %s is not pid %s" % (f, w["worker_id"], w["pid"]))
            if ids.setdefault(w["pid"], w["worker_id"]) != w["worker_id"]:
                fail("%s: pid %s was worker %s before" % (f, w["pid"], ids[w["pid"]]))
            if w["name"] != "rank 0 worker %d" % w["worker_id"]:
                fail("%s: worker named %r" % (f, w["name"]))
        for b in per:
            want = b["batch"] % n
            if b["worker_id"] != want or (workers and b["worker_pid"] != workers[want]):
                fail("%s: batch %d on worker %s (pid %s), not %d" %
                     (f, b["batch"], b["worker_id"], b["worker_pid"], want))
            if b["samples"] != 4:
                fail("%s: batch %d has %s samples" % (f, b["batch"], b["samples"]))
            if want == slow_worker:
                slow += 1
                if b["fetch_us"] < slow_ms * 1000:
                    fail("%s: slow batch %d fetched in %s us" % (f, b["batch"], b["fetch_us"]))
                if b["wait_us"] >= slow_ms * 500:
                    waited += 1
            else:
                fast += 1
                if b["fetch_us"] >= slow_ms * 500:
                    fail("%s: fast batch %d fetched in %s us" % (f, b["batch"], b["fetch_us"]))
            if b["collate_us"] is None:
                fail("%s: batch %d: no collate time" % (f, b["batch"]))
        if dl["bottleneck"]:
            sentences.append(dl["bottleneck"])
        with open(f[:-5] + ".txt") as t:
            text = t.read()
        if "DataLoader: the trainer waited" not in text:
            fail("%s: no DataLoader lines in the text summary" % f)
        if dl["bottleneck"] and "bottleneck: " + dl["bottleneck"] not in text:
            fail("%s: the sentence is not in the text summary" % f)
        flows += check_trace(f.replace("summary_", "trace_"), trainer, per, pin)
    # A wait on the slow worker's scale names it; a step whose only wait
    # was short (an epoch's first batch, from a worker just forked) may
    # name another worker, rightly.
    long_waits = [x for x in sentences if sentence_wait_ms(x) >= slow_ms / 2]
    if not long_waits or not all(
            ("from worker %d, which spent" % slow_worker) in x for x in long_waits):
        fail("bottleneck sentences: %s" % sentences)
    if slow < 2 or fast < 2 or waited < 1:
        fail("slow=%d fast=%d waited=%d: too few" % (slow, fast, waited))
    if not workers and len(ids) <= n:
        fail("workers %s: never forked again" % ids)
    print("slow=%d fast=%d waited=%d flows=%d workers=%d" % (slow, fast, waited, flows, len(ids)))


def check_trace(path, trainer, per, pin):
    ev = load(path)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in ev
             if e.get("ph") == "M" and e.get("name") == "process_name"}
    sl = [e for e in ev if e.get("cat") == "dataloader" and e.get("ph") == "X"]
    if sorted(e["args"]["batch"] for e in sl) != sorted(b["batch"] for b in per):
        fail("%s: slices %s, summary %s" % (path, [e["args"]["batch"] for e in sl],
                                            [b["batch"] for b in per]))
    starts = {e["id"]: e for e in ev if e.get("cat") == "dataloader" and e.get("ph") == "s"}
    ends = {e["id"]: e for e in ev if e.get("cat") == "dataloader" and e.get("ph") == "f"}
    waits = [e for e in ev if e.get("ph") == "X" and e["pid"] == trainer and
             e["name"].startswith("enumerate(DataLoader)#")]
    n = 0
    for e in sl:
        wid = e["args"]["worker_id"]
        if e["pid"] != e["args"]["worker_pid"] or names.get(e["pid"]) != "rank 0 worker %d" % wid:
            fail("%s: slice %s on track %s" % (path, e, names.get(e["pid"])))
        # its flow: out of the slice's end, into the trainer
        st = [s for s in starts.values() if s["pid"] == e["pid"] and
              abs(s["ts"] - (e["ts"] + e["dur"])) < 0.002]
        if len(st) != 1 or st[0]["id"] not in ends:
            fail("%s: batch %s has no flow" % (path, e["args"]["batch"]))
        f = ends[st[0]["id"]]
        if f["pid"] != trainer or f["ts"] < e["ts"] + e["dur"] - 0.002:
            fail("%s: flow of batch %s ends at %s" % (path, e["args"]["batch"], f))
        if pin and f["tid"] == trainer:
            fail("%s: batch %s received on the main thread, not the pin-memory thread" %
                 (path, e["args"]["batch"]))
        if e["args"]["wait_us"] > 0 and not any(
                (pin or w["tid"] == f["tid"]) and w["ts"] <= f["ts"] <= w["ts"] + w["dur"]
                for w in waits):
            fail("%s: batch %s received outside the trainer's __next__" %
                 (path, e["args"]["batch"]))
        n += 1
    return n


if __name__ == "__main__":
    if sys.argv[1] == "--none":
        none(sys.argv[2])
        sys.exit(0)
    pin = sys.argv[1] == "--pin"
    a = sys.argv[2:] if pin else sys.argv[1:]
    pids = [] if a[2] == "-" else [int(x) for x in a[2].split(",")]
    check(a[0], int(a[1]), pids, int(a[3]), float(a[4]), pin, len(pids) or 2)
