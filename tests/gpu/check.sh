#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
#
# GPU check of fvbpf, for a lent machine with an NVIDIA GPU and PyTorch.
#
#   OUT=/some/dir bash tests/gpu/check.sh
#
# Uses only what is there: bash, coreutils' timeout, python3 with torch, and
# the prebuilt build/static/fvbpf and build/static/libfvbpf.so (`make static`
# on the build machine; they are carried over).  No make, compiler or network.
# Steps, each under `timeout`, all within FVBPF_GPU_DEADLINE seconds (450):
#   a. environment report; no GPU or no torch with CUDA: status "no_gpu"
#   b. BPF/uprobe sanity: fvbpf attached to a tiny Python marker loop;
#      failure: status "no_bpf" with fvbpf's own message
#   c. baseline: tests/gpu/torch_train.py, not attached -> step time
#   d. torch.profiler run (its own process) -> kernels per step
#   e. attached run: fvbpf attach -n 20 on the same workload with markers
#   f. checks of the traces (tests/gpu/gpu_report.py)
#   g. the same job started without fvbpf, `fvbpf attach --inject
#      --step-by`: injected, step segments with joined GPU records; then
#      `fvbpf dump` of it, CUDA up: every thread, the main one's frames
#   c'. a second baseline run, to bound drift between runs
# Results: $OUT/gpu_check.json (written on every exit path), $OUT/check.log,
# one trace with its summaries, and manifest.json.  Exit status 0 unless the
# script itself is broken; the verdict is "status" in the JSON.
# shellcheck disable=SC2317  # finish() and friends run from traps
set -u

START_EPOCH=$(date +%s)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$REPO/gpu-check-out}
mkdir -p "$OUT" || { echo "check.sh: cannot create OUT=$OUT" >&2; exit 1; }
OUT=$(cd "$OUT" && pwd)
LOG=$OUT/check.log
: > "$LOG"
exec 3>&1                  # the caller's stdout: progress lines only
exec >>"$LOG" 2>&1         # everything else goes to the log

PY=${PYTHON:-python3}
FVBPF=$REPO/build/static/fvbpf
LIB=$REPO/build/static/libfvbpf.so
TRAIN=$REPO/tests/gpu/torch_train.py
REPORT=$REPO/tests/gpu/gpu_report.py
DEADLINE=${FVBPF_GPU_DEADLINE:-450}  # s; the hard limit is 480
RESERVE=30                           # s kept for the report
STEPS=${FVBPF_GPU_STEPS:-20}
WARMUP=${FVBPF_GPU_WARMUP:-5}
REGIONS=training_train_one_step,training_forward
WORK=$(mktemp -d /tmp/fvbpf-gpu-check.XXXXXX)
BG_PIDS=()

say() {  # to the log and to the caller
    printf '[%4ds] %s\n' "$SECONDS" "$*"
    printf '[%4ds] %s\n' "$SECONDS" "$*" >&3
}

mkdir -p "$WORK/kv"
kv() { printf '%s' "$2" > "$WORK/kv/$1"; }            # a string
kvj() { printf '%s' "$2" > "$WORK/kv/$1.json"; }      # a JSON value
check() {  # NAME 0|1 DETAIL
    local d=${3//$'\t'/ }
    d=${d//$'\n'/ | }
    printf '%s\t%s\t%s\n' "$1" "$2" "$d" >> "$WORK/checks.tsv"
    say "$([ "$2" = 1 ] && echo PASS || echo FAIL) $1: $d"
}

# Seconds a step may take: at most $1, and never past the deadline (at
# least 1: timeout needs a positive number).
budget() {
    local left=$((DEADLINE - SECONDS - RESERVE))
    [ "$left" -ge 1 ] || left=1
    if [ "$left" -lt "$1" ]; then echo "$left"; else echo "$1"; fi
}

json_escape() {  # a JSON string literal without python
    local s=${1//\\/\\\\}
    s=${s//\"/\\\"}
    s=${s//$'\n'/ }
    s=${s//$'\t'/ }
    s=${s//$'\r'/ }
    printf '"%s"' "$s"
}

finish() {
    local rc=$?
    trap - EXIT INT TERM
    local p
    for p in "${BG_PIDS[@]}"; do
        kill "$p" 2>/dev/null && say "stopped leftover process $p"
    done
    say "writing $OUT/gpu_check.json"
    local ok=0
    if command -v "$PY" >/dev/null 2>&1; then
        timeout -k 5 20 "$PY" "$REPORT" finalize "$WORK" "$OUT" && ok=1
        # The summary lines went to the log; show them to the caller too.
    fi
    if [ "$ok" = 1 ] && [ -s "$OUT/gpu_check.json" ]; then
        "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))
print("status=%s%s" % (r["status"], " (%s)" % r["reason"] if r.get("reason") else ""))
for k in ("step_ms_detached","step_ms_attached","overhead_ratio","torch_kernels_per_step","fvbpf_kernels_per_step","segments"):
    print("%s=%s" % (k, r.get(k)))' "$OUT/gpu_check.json" | tee -a "$LOG" >&3
    else
        # No usable python: the least JSON that still says what happened.
        local st reason
        st=$(cat "$WORK/kv/status" 2>/dev/null || echo error)
        reason=$(cat "$WORK/kv/reason" 2>/dev/null || echo "report could not be built (python3 missing or failed)")
        printf '{"status": %s, "reason": %s, "checks": {}, "stage": %s}\n' \
            "$(json_escape "$st")" "$(json_escape "$reason")" \
            "$(json_escape "$(cat "$WORK/kv/stage" 2>/dev/null)")" > "$OUT/gpu_check.json"
        say "status=$st ($reason)"
    fi
    if [ -n "${FVBPF_GPU_KEEP:-}" ]; then
        say "done in ${SECONDS}s (work files kept in $WORK)"
    else
        rm -rf "$WORK"
        say "done in ${SECONDS}s"
    fi
    exit "$rc"
}
trap finish EXIT
trap 'say "interrupted"; exit 130' INT TERM

stage() { kv stage "$1"; say "== $1"; }
stop_with() {  # STATUS REASON
    kv status "$1"
    kv reason "$2"
    kv stage "done"
    exit 0
}

kv started_epoch "$START_EPOCH"
kv max_overhead "${FVBPF_GPU_MAX_OVERHEAD:-1.15}"
kv segments_wanted "$STEPS"

# ---------------------------------------------------------------- binaries
stage binaries
if [ ! -x "$FVBPF" ] || [ ! -f "$LIB" ]; then
    check binaries 0 "build/static/fvbpf or build/static/libfvbpf.so missing"
    stop_with no_binaries "build/static/fvbpf and build/static/libfvbpf.so are needed: run 'make static' on the build machine and carry build/static"
fi
check binaries 1 "$("$FVBPF" version 2>&1 | head -1)"
kv fvbpf_version "$("$FVBPF" version 2>&1 | head -1)"
GPU_WAIT=()
if "$FVBPF" attach --help 2>&1 | grep -q -- '--gpu-wait'; then
    GPU_WAIT=(--gpu-wait 5)
    kvj gpu_wait_supported true
else
    kvj gpu_wait_supported false
fi
export FVBPF_LIB=$LIB
export PYTHONPATH=$REPO/python${PYTHONPATH:+:$PYTHONPATH}
export PYTHONUNBUFFERED=1

# ---------------------------------------------------------------- a. env
stage environment
kv kernel "$(uname -r)"
kv uid "$(id -u)"
kv nproc "$(nproc 2>/dev/null)"
# shellcheck disable=SC1091
kv os "$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-}")"
kv btf "$([ -r /sys/kernel/btf/vmlinux ] && echo present || echo missing)"
kv uprobe_pmu "$([ -e /sys/bus/event_source/devices/uprobe/type ] && echo present || echo missing)"
kv lockdown "$(cat /sys/kernel/security/lockdown 2>/dev/null || echo unknown)"
kv perf_event_paranoid "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)"
say "kernel $(uname -r), uid $(id -u), $(nproc) cpus, BTF $(cat "$WORK/kv/btf")"
GPU_OK=1
if command -v nvidia-smi >/dev/null 2>&1; then
    smi=$(timeout -k 5 "$(budget 30)" nvidia-smi -L 2>&1)
    kv nvidia_smi "$smi"
    kv gpu "$(timeout -k 5 "$(budget 30)" nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -4)"
    say "nvidia-smi: $smi"
    grep -q '^GPU ' <<<"$smi" || GPU_OK=0
else
    kv nvidia_smi "nvidia-smi not found"
    say "nvidia-smi not found"
    GPU_OK=0
fi
TORCH_OK=0
if command -v "$PY" >/dev/null 2>&1; then
    kv python "$("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])' 2>&1)"
    # torch, CUDA, and where libcupti is (the agent has to find it).
    tinfo=$(timeout -k 5 "$(budget 120)" "$PY" - <<'EOF' 2>&1
import glob, json, os, site, sys
r = {}
try:
    import torch
    r["torch"] = torch.__version__
    r["cuda"] = torch.version.cuda
    r["cuda_available"] = torch.cuda.is_available()
    r["device_count"] = torch.cuda.device_count()
    if r["cuda_available"]:
        r["device"] = torch.cuda.get_device_name(0)
    r["torch_lib"] = os.path.join(os.path.dirname(torch.__file__), "lib")
except Exception as e:  # ImportError, or a broken CUDA set-up
    r["error"] = "%s: %s" % (type(e).__name__, e)
dirs = set(site.getsitepackages() + [site.getusersitepackages()])
if "torch_lib" in r:
    dirs.add(os.path.dirname(os.path.dirname(r["torch_lib"])))
found = set()
for d in dirs:
    found.update(glob.glob(os.path.join(d, "nvidia", "**", "libcupti.so*"), recursive=True))
    found.update(glob.glob(os.path.join(d, "torch", "lib", "libcupti.so*")))
for d in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
    if d:
        found.update(glob.glob(os.path.join(d, "extras", "CUPTI", "lib64", "libcupti.so*")))
        found.update(glob.glob(os.path.join(d, "lib64", "libcupti.so*")))
r["libcupti"] = sorted(found)
print(json.dumps(r))
EOF
)
    say "torch: $tinfo"
    if grep -q '^{' <<<"$tinfo"; then
        kvj torch_info "$(grep '^{' <<<"$tinfo" | tail -1)"
        grep -q '"cuda_available": true' <<<"$tinfo" && TORCH_OK=1
    else
        kv torch_info "$tinfo"
    fi
else
    kv python "$PY not found"
fi
check gpu_present "$GPU_OK" "$(head -c 300 "$WORK/kv/nvidia_smi")"
check torch_cuda "$TORCH_OK" "$(head -c 300 "$WORK/kv/torch_info"* 2>/dev/null)"

# ---------------------------------------------------------------- b. BPF
# Runs even without a GPU: it needs only python3, and says whether BPF works.
stage bpf_sanity
BPF_OK=0
BPF_WHY=""
if [ "$(cat "$WORK/kv/btf")" != present ]; then
    BPF_WHY="/sys/kernel/btf/vmlinux is missing (fvbpf needs kernel BTF)"
elif ! command -v "$PY" >/dev/null 2>&1; then
    BPF_WHY="no $PY to run the marker loop"
else
    timeout -k 5 "$(budget 60)" "$PY" -u -c '
import os, sys, time
import fvbpf
print("pid=%d" % os.getpid(), flush=True)
print("lib=%s" % fvbpf.library_path(), flush=True)
end = time.time() + 40
while time.time() < end:
    with fvbpf.profiler_region("training_train_one_step"):
        with fvbpf.profiler_region("training_forward"):
            time.sleep(0.005)
    time.sleep(0.005)
' > "$WORK/bpf_loop.out" 2>&1 &
    loop=$!
    BG_PIDS+=("$loop")
    lpid=""
    for _ in $(seq 100); do
        lpid=$(sed -n 's/^pid=//p' "$WORK/bpf_loop.out" | head -1)
        grep -q '^lib=' "$WORK/bpf_loop.out" && break
        kill -0 "$loop" 2>/dev/null || break
        sleep 0.1
    done
    say "marker loop: $(tr '\n' ' ' < "$WORK/bpf_loop.out")"
    if ! grep -q '^lib=/' "$WORK/bpf_loop.out"; then
        BPF_WHY="the marker loop could not load $LIB: $(tail -3 "$WORK/bpf_loop.out" | tr '\n' ' ')"
    else
        timeout -k 5 "$(budget 40)" "$FVBPF" attach -p "$lpid" -r "$REGIONS" \
            -o "$WORK/bpf" -n 2 -d 20 > "$WORK/bpf_attach.out" 2>&1
        rc=$?
        cat "$WORK/bpf_attach.out"
        nseg=$(find "$WORK/bpf" -name 'trace_*.json' 2>/dev/null | wc -l)
        if [ "$rc" = 0 ] && [ "$nseg" -ge 2 ]; then
            BPF_OK=1
        elif [ "$rc" = 124 ]; then
            BPF_WHY="fvbpf attach timed out with $nseg segments written"
        else
            BPF_WHY="fvbpf attach exited $rc with $nseg segments: $(grep -v '^  ' "$WORK/bpf_attach.out" | grep -i -m2 -e error -e fvbpf: | tr '\n' ' ')"
        fi
    fi
    kill "$loop" 2>/dev/null
    wait "$loop" 2>/dev/null
    BG_PIDS=()
fi
if [ "$BPF_OK" = 1 ]; then
    check bpf_uprobes 1 "fvbpf attached to a Python marker loop and wrote 2 segments"
else
    check bpf_uprobes 0 "BPF/uprobes do not work here: $BPF_WHY"
fi

if [ "$GPU_OK" != 1 ] || [ "$TORCH_OK" != 1 ]; then
    stop_with no_gpu "no usable GPU: $(head -c 200 "$WORK/kv/nvidia_smi"); torch: $(head -c 300 "$WORK/kv/torch_info"* 2>/dev/null)"
fi
if [ "$BPF_OK" != 1 ]; then
    stop_with no_bpf "BPF/uprobes do not work here: $BPF_WHY"
fi

# ---------------------------------------------------------------- runs
train() {  # NAME TIMEOUT ARGS...: a torch_train.py run, not attached
    local name=$1 t
    t=$(budget "$2")
    shift 2
    if [ "$t" -lt 15 ]; then
        check "${name}_run" 0 "skipped: out of time"
        return 1
    fi
    say "torch_train.py $* (timeout ${t}s)"
    timeout -k 5 "$t" "$PY" -u "$TRAIN" --result "$WORK/$name.json" "$@" > "$WORK/$name.out" 2>&1
    local rc=$?
    cat "$WORK/$name.out"
    if [ "$rc" = 0 ] && [ -s "$WORK/$name.json" ]; then
        check "${name}_run" 1 "$(grep -e '^step_ms=' -e '^torch_kernels_per_step' "$WORK/$name.out" | tr '\n' ' ')"
        return 0
    fi
    check "${name}_run" 0 "exit $rc: $(tail -2 "$WORK/$name.out" | tr '\n' ' ')"
    return 1
}

stage baseline
train baseline1 120 --markers --steps "$STEPS" --warmup "$WARMUP"

stage profile
train profile 150 --profile --profile-steps 3 --steps 0 --warmup "$WARMUP"

# ---------------------------------------------------------------- e. attached
stage attached
attached_run() {
    local t
    t=$(budget 200)
    if [ "$t" -lt 40 ]; then
        check attached_run 0 "skipped: out of time"
        return 1
    fi
    timeout -k 5 "$t" "$PY" -u "$TRAIN" --result "$WORK/attached.json" --markers \
        --wait-signal --signal-timeout 120 --linger-s 90 --prime-sleep-s 0.5 \
        --steps "$STEPS" --warmup "$WARMUP" > "$WORK/attached.out" 2>&1 &
    local job=$! wpid=""
    BG_PIDS+=("$job")
    # Ready: torch imported, CUDA initialised, warm-up done, CUDA libraries
    # mapped (fvbpf finds them at attach).
    for _ in $(seq $((t * 5))); do
        grep -q '^ready' "$WORK/attached.out" && break
        kill -0 "$job" 2>/dev/null || break
        sleep 0.2
    done
    wpid=$(sed -n 's/^pid=//p' "$WORK/attached.out" | head -1)
    if ! grep -q '^ready' "$WORK/attached.out" || [ -z "$wpid" ]; then
        cat "$WORK/attached.out"
        check attached_run 0 "workload never got ready: $(tail -2 "$WORK/attached.out" | tr '\n' ' ')"
        return 1
    fi
    say "workload pid $wpid ready; attaching"
    local ft
    ft=$(budget 150)
    if [ "$ft" -lt 40 ]; then
        check fvbpf_attach 0 "skipped: out of time"
        kill -TERM "$wpid" 2>/dev/null
        wait "$job"
        return 1
    fi
    timeout -k 5 "$ft" "$FVBPF" attach -p "$wpid" -r "$REGIONS" -o "$WORK/trace" \
        -n "$STEPS" -d $((ft - 10)) "${GPU_WAIT[@]}" > "$WORK/fvbpf.out" 2>&1 &
    local fv=$!
    BG_PIDS+=("$fv")
    # Attaching reads the symbol tables of every CUDA library mapped (big
    # ones in a torch process): allow it a minute.
    for _ in $(seq 600); do
        grep -q 'fvbpf: tracing' "$WORK/fvbpf.out" && break
        kill -0 "$fv" 2>/dev/null || break
        sleep 0.1
    done
    if ! grep -q 'fvbpf: tracing' "$WORK/fvbpf.out"; then
        wait "$fv"
        local frc=$?
        cat "$WORK/fvbpf.out"
        check fvbpf_attach 0 "fvbpf attach did not start tracing (exit $frc): $(grep -m2 -i -e error -e 'fvbpf:' "$WORK/fvbpf.out" | tr '\n' ' ')"
        kill -TERM "$wpid" 2>/dev/null
        wait "$job"
        cat "$WORK/attached.out"
        return 1
    fi
    say "fvbpf tracing; starting the measured steps"
    kill -USR1 "$wpid"
    wait "$fv"
    local frc=$?
    cat "$WORK/fvbpf.out"
    local nseg
    nseg=$(find "$WORK/trace" -name 'trace_*.json' 2>/dev/null | wc -l)
    if [ "$frc" = 0 ]; then
        check fvbpf_attach 1 "exit 0, $nseg trace files"
    else
        check fvbpf_attach 0 "exit $frc ($([ "$frc" = 124 ] && echo timed out)), $nseg trace files: $(grep -m2 -i -e error -e warning "$WORK/fvbpf.out" | tr '\n' ' ')"
    fi
    kv fvbpf_report "$(cat "$WORK/fvbpf.out")"
    # The workload lingers after its steps (GPU records of the last segment);
    # let it go now.
    kill -USR1 "$wpid" 2>/dev/null
    wait "$job"
    local wrc=$?
    BG_PIDS=()
    cat "$WORK/attached.out"
    if [ "$wrc" = 0 ] && [ -s "$WORK/attached.json" ]; then
        check attached_run 1 "$(grep -e '^step_ms=' -e '^attached=' "$WORK/attached.out" | tr '\n' ' ')"
    else
        check attached_run 0 "exit $wrc: $(tail -2 "$WORK/attached.out" | tr '\n' ' ')"
    fi
}
attached_run

# ---------------------------------------------------------------- g. injected
# The same job started without fvbpf (no --markers: nothing of fvbpf in it);
# `fvbpf attach --inject --step-by` loads the agent into it and cuts steps
# from torch's Optimizer.step scopes: GPU time without a restart.
stage injected
# fvbpf dump of PID with CUDA up (the driver's threads beside Python's):
# read without stopping it, the main thread's Python frames there.
dump_check() {  # PID
    local drc verdict
    timeout -k 5 "$(budget 30)" "$FVBPF" dump -p "$1" --json > "$WORK/dump.json" 2> "$WORK/dump.err"
    drc=$?
    timeout -k 5 "$(budget 30)" "$FVBPF" dump -p "$1" > "$WORK/dump.txt" 2>> "$WORK/dump.err"
    head -c 4000 "$WORK/dump.txt"; cat "$WORK/dump.err"
    verdict=$("$PY" - "$WORK/dump.json" "$1" <<'PYEOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as exc:
    print("0 no dump: %s" % exc)
    sys.exit()
[p] = [p for p in d.get("processes", []) if str(p.get("pid")) == sys.argv[2]] or [{}]
ts = p.get("threads", [])
main = [t for t in ts if str(t.get("tid")) == sys.argv[2]]
frames = main[0].get("python") or [] if main else []
ok = d.get("stopped") is False and len(ts) > 1 and len(frames) > 0
print("%d threads=%d main_frames=%d innermost=%s" % (
    ok, len(ts), len(frames), frames[0].get("function") if frames else None))
PYEOF
)
    check dump "${verdict%% *}" "fvbpf dump exit $drc, ${verdict#* }"
}

injected_run() {
    local t ft wpid job fv frc
    t=$(budget 150)
    if [ "$t" -lt 60 ]; then
        check injected_run 0 "skipped: out of time"
        return 1
    fi
    timeout -k 5 "$t" "$PY" -u "$TRAIN" --result "$WORK/injected.json" \
        --wait-signal --signal-timeout 100 --linger-s 60 --prime-sleep-s 0.5 \
        --steps "$STEPS" --warmup "$WARMUP" > "$WORK/injected.out" 2>&1 &
    job=$!
    BG_PIDS+=("$job")
    for _ in $(seq $((t * 5))); do
        grep -q '^ready' "$WORK/injected.out" && break
        kill -0 "$job" 2>/dev/null || break
        sleep 0.2
    done
    wpid=$(sed -n 's/^pid=//p' "$WORK/injected.out" | head -1)
    if ! grep -q '^ready' "$WORK/injected.out" || [ -z "$wpid" ]; then
        check injected_run 0 "workload never got ready: $(tail -2 "$WORK/injected.out" | tr '\n' ' ')"
        return 1
    fi
    ft=$(budget 100)
    timeout -k 5 "$ft" "$FVBPF" attach --inject -p "$wpid" --step-by 'Optimizer.step*' \
        -o "$WORK/injected" -n 5 -d $((ft - 10)) "${GPU_WAIT[@]}" > "$WORK/fvbpf_injected.out" 2>&1 &
    fv=$!
    BG_PIDS+=("$fv")
    for _ in $(seq 600); do
        grep -q 'fvbpf: tracing' "$WORK/fvbpf_injected.out" && break
        kill -0 "$fv" 2>/dev/null || break
        sleep 0.1
    done
    kill -USR1 "$wpid" 2>/dev/null
    wait "$fv"
    frc=$?
    cat "$WORK/fvbpf_injected.out"
    # the job lingers with CUDA up (--linger-s): dumped as it is
    dump_check "$wpid"
    kill -USR1 "$wpid" 2>/dev/null
    wait "$job"
    BG_PIDS=()
    # Injected, and the step segments hold kernels joined to their launches.
    local verdict
    verdict=$("$PY" - "$WORK/injected/manifest.json" <<'PYEOF'
import json, sys
try:
    m = json.load(open(sys.argv[1]))
except (OSError, ValueError) as exc:
    print("0 no manifest: %s" % exc)
    sys.exit()
p = m["processes"][0]
a, g = p.get("agent_library", {}), p.get("gpu", {})
ok = a.get("how") == "injected" and g.get("joined", 0) > 0 and p.get("segments", 0) > 0
print("%d how=%s stopped_us=%s segments=%s gpu_records=%s joined=%s activity=%s" % (
    ok, a.get("how"), a.get("stopped_us"), p.get("segments"), g.get("records"),
    g.get("joined"), g.get("activity")))
PYEOF
)
    check injected_run "${verdict%% *}" "fvbpf exit $frc, ${verdict#* }"
}
injected_run

stage baseline_again
if [ "$(budget 120)" -ge 60 ]; then
    train baseline2 120 --markers --steps "$STEPS" --warmup "$WARMUP"
else
    say "skipping the second baseline: out of time"
fi

# ---------------------------------------------------------------- f. checks
stage traces
if [ -d "$WORK/trace" ]; then
    ls -l "$WORK/trace"
    timeout -k 5 "$(budget 60)" "$PY" "$REPORT" traces "$WORK/trace" \
        --torch "$WORK/profile.json" --segments "$STEPS" > "$WORK/traces.json" 2>&1
    head -c 20000 "$WORK/traces.json"; echo
fi
# The checks themselves go into the report at exit (gpu_report.py finalize).
kv stage "done"
exit 0
