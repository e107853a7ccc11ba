#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# --record-shapes' measurement of the target's torch build against a hostile
# job owner: the sibling runs the target's python with the target's
# PYTHONPATH and HOME, so a sitecustomize.py or a .pth there runs in it
# (tests/workloads/layout_hostile/sitecustomize.py, its "mode" file says
# what it does).  fvbpf must end on time, say why shapes are missing, leave
# no process of the measurement behind, and never let one user's
# measurement reach another user's job.

load helpers

SHAPES=$ROOT/tests/workloads/torch_shapes.py
SCHECK=$ROOT/tests/lib/torch_shapes_check.py
HOSTILE=$ROOT/tests/workloads/layout_hostile/sitecustomize.py
FVT=$(dirname "$FVBPF")/fvbpf-test
# A non-root job: Debian's python (the venv's lives under /root) with the
# venv's site-packages on PYTHONPATH, the same libtorch_cpu.so as $PY214.
SYSPY=/usr/bin/python3.11
NOBODY=65534

setup() {
	common_setup
	# outside BATS_TEST_TMPDIR (0700): nobody's job works in here
	TDIR=$(mktemp -d /tmp/fvbpf-layout.XXXXXX)
	chmod 755 "$TDIR"
	HDIR=$TDIR/hostile
	mkdir -p "$HDIR"
	cp "$HOSTILE" "$HDIR/"
	chmod 777 "$HDIR" # the sibling, as the job's user, writes "ran" here
}

teardown() {
	local p
	for p in $(marked); do
		kill -KILL "$p" 2>/dev/null
	done
	common_teardown
	rm -rf "$TDIR"
}

# The processes whose environment names the hostile folder (the sibling
# and anything it started), the target itself left out.
marked() {
	local f p
	for f in /proc/[0-9]*/environ; do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$p" = "${WL_PID:-}" ] && continue
		grep -qsF "$HDIR" "$f" && echo "$p"
	done
	return 0
}
none_marked() { [ -z "$(marked)" ]; }

# start_job MODE PY [USER]: the shapes workload with the hostile folder on
# its PYTHONPATH (and the venv's site-packages after it), waiting for
# $TDIR/go; as uid USER when given.
start_job() {
	local mode=$1 py=$2 user=${3:-}
	local site
	need_torch "$PY214"
	site=$("$PY214" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	echo "$mode" >"$HDIR/mode"
	if [ -n "$user" ]; then
		chown "$user" "$TDIR"
		start_workload "$WL_LOG" setpriv --reuid="$user" --regid="$user" --clear-groups \
			env -i PATH=/usr/bin:/bin HOME="$TDIR" PYTHONPATH="$HDIR:$site" \
			FVBPF_HOSTILE_TARGET=1 "$py" "$SHAPES" run "$TDIR" "${STEPS:-1}"
	else
		start_workload "$WL_LOG" env PYTHONPATH="$HDIR:$site" FVBPF_HOSTILE_TARGET=1 "$py" \
			"$SHAPES" run "$TDIR" "${STEPS:-1}"
	fi
}

# The system python runs torch as a user that cannot reach /root.
need_syspy() {
	if ! setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups env -i \
		PYTHONPATH="$("$PY214" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
		"$SYSPY" -c 'import torch' 2>/dev/null; then
		echo "$SYSPY cannot import the venv's torch as uid $NOBODY (Debian's python3.11?)" >&2
		return 1
	fi
}

# bounded_run SECONDS: fvbpf (started as $FV_PID) has begun tracing and
# ends within SECONDS more.
bounded_run() {
	wait_long grep -q 'fvbpf: tracing' "$FV_ERR"
	wait_fvbpf "$1"
}

# one_why TEXT: exactly one line says why there are no shapes, and it says TEXT.
one_why() {
	run grep -c 'no operator shapes' "$FV_ERR"
	assert_output 1
	run grep 'no operator shapes' "$FV_ERR"
	assert_output --partial "$1"
}

@test "torch layout: a sibling that closes its output and never exits is killed at the deadline, fvbpf ends on time, nothing is left" {
	start_job close "$PY214"
	FVBPF_TEST_LAYOUT_TIMEOUT_S=2 "$FVT" attach -p "$WL_PID" -o "$OUT" --record-shapes -d 6 \
		>"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	# -d 6 and the 2 s deadline, plus detaching from libtorch under load
	bounded_run 20
	[ "$FV_STATUS" -eq 0 ]
	one_why "the target's python closed its output but did not exit within 2 s (killed)"
	grep -qx 'close 0' "$HDIR/ran" # the hostile code ran in the sibling
	wait_for none_marked
}

@test "torch layout: a grandchild that setsid()s and keeps the pipe dies with the sibling" {
	start_job escape "$PY214"
	FVBPF_TEST_LAYOUT_TIMEOUT_S=2 "$FVT" attach -p "$WL_PID" -o "$OUT" --record-shapes -d 6 \
		>"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	bounded_run 20
	[ "$FV_STATUS" -eq 0 ]
	one_why "the target's python gave no layout report"
	grep -qx 'escape 0' "$HDIR/ran"
	grep -qx 'grandchild 0' "$HDIR/ran" # it had left the sibling's session
	wait_for none_marked
}

@test "torch layout: a bogus report that never ends: killed at the deadline; Ctrl-C before it ends the measurement too" {
	start_job bogus "$PY214"
	FVBPF_TEST_LAYOUT_TIMEOUT_S=2 "$FVT" attach -p "$WL_PID" -o "$OUT" --record-shapes -d 6 \
		>"$FV_OUT" 2>"$FV_ERR" &
	FV_PID=$!
	bounded_run 20
	[ "$FV_STATUS" -eq 0 ]
	one_why "the target's python did not finish its report within 2 s (killed)"
	wait_for none_marked
	# the released fvbpf and its 120 s deadline: one Ctrl-C ends it at once
	rm -f "$HDIR/ran"
	start_fvbpf -p "$WL_PID" -o "$OUT.2" --record-shapes
	wait_long grep -qx 'bogus 0' "$HDIR/ran"
	kill -INT "$FV_PID"
	wait_fvbpf 15
	[ "$FV_STATUS" -eq 0 ]
	one_why "tracing of the process ended before its torch build was measured (the measurement was killed)"
	wait_for none_marked
}

@test "torch layout: fvbpf killed during the measurement: the sibling does not outlive it" {
	start_job close "$PY214"
	start_fvbpf -p "$WL_PID" -o "$OUT" --record-shapes
	wait_long grep -qx 'close 0' "$HDIR/ran"
	[ -n "$(marked)" ] # it runs now
	kill -KILL "$FV_PID"
	wait "$FV_PID" 2>/dev/null || true
	FV_PID=
	wait_for none_marked
}

@test "torch layout: a measurement poisoned in a user's job never reaches root's job: its shapes equal torch.profiler's" {
	need_syspy
	# nobody's job prints a shifted TensorImpl layout and aten::mm as (int, int)
	start_job shift "$SYSPY" $NOBODY
	local nb=$WL_PID
	start_fvbpf -p "$nb" -o "$OUT.nobody" --record-shapes
	wait_long grep -q 'shapes of [0-9]* of [0-9]* torch operators.*measured in' "$FV_ERR"
	grep -qx "shift $NOBODY" "$HDIR/ran"
	kill -INT "$FV_PID"
	wait_fvbpf 15
	kill -KILL "$nb"
	# root's job of the same build: its shapes are torch.profiler's
	oracle "$BATS_TEST_TMPDIR/oracle.json" "$PY214" "$SHAPES" oracle
	rm -rf "$BATS_TEST_TMPDIR/go" "$BATS_TEST_TMPDIR/done"
	start_workload "$WL_LOG" "$PY214" "$SHAPES" run "$BATS_TEST_TMPDIR" 4
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:shapes_step -n 2 --record-shapes --with-flops
	wait_long grep -q 'shapes of [0-9]* of [0-9]* torch operators\|no operator shapes' "$FV_ERR"
	run_steps
	touch "$BATS_TEST_TMPDIR/exit"
	[ "$FV_STATUS" -eq 0 ]
	run python3 "$SCHECK" "$BATS_TEST_TMPDIR/oracle.json" "$OUT" 0 1
	echo "$output"
	assert_success
	# measured as root, not read from nobody's entry; each kept for its own user
	grep -q "pid $WL_PID: shapes of .*measured in" "$FV_ERR"
	run ls "$FVBPF_CACHE_DIR"
	assert_line --regexp "^torch-layout-[0-9a-f]+-u$NOBODY\.txt$"
	assert_line --regexp "^torch-layout-[0-9a-f]+-u0\.txt$"
}

@test "torch layout: a layout that does not fit the job's own tensors is refused in one line, counted, its cache dropped" {
	need_syspy
	STEPS=2 start_job shift "$SYSPY" $NOBODY
	start_fvbpf -p "$WL_PID" -o "$OUT" -r torch:shapes_step -n 2 --record-shapes
	wait_long grep -q 'shapes of [0-9]* of [0-9]* torch operators\|no operator shapes' "$FV_ERR"
	ls "$FVBPF_CACHE_DIR"/torch-layout-*.txt # what the next attach would read
	touch "$TDIR/go"
	wait_long test -e "$TDIR/done"
	wait_fvbpf 15
	[ "$FV_STATUS" -eq 0 ]
	one_why "the TensorImpl layout its python reported does not fit its tensors"
	grep -q 'refused, measured again next time' "$FV_ERR"
	# the manifest and the exit report say so, no operator row holds a shape,
	# the cache entry is gone
	grep -q 'shapes: none: the TensorImpl layout its python reported does not fit' "$FV_OUT"
	run python3 -c '
import glob, json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
p = m["processes"][0]["torch"]
assert "does not fit its tensors" in p["shapes_unavailable"], p
lc = p["shapes_layout_check"]
assert lc["result"] == "refused" and lc["tensors_misfit"] >= 4, lc
n = 0
for f in glob.glob(sys.argv[1] + "/summary_*.json"):
    for r in json.load(open(f))["rows"]:
        if r["name"].startswith("aten::"):
            assert r["shapes"] == "", r
            n += 1
assert n > 10, n
' "$OUT"
	echo "$output"
	assert_success
	run ls "$FVBPF_CACHE_DIR"
	assert_output ""
}

@test "torch layout: a .pth in the job user's ~/.local does not run in the measurement" {
	need_syspy
	local home=$TDIR/home usite
	usite=$home/.local/lib/python3.11/site-packages
	mkdir -p "$usite"
	# runs in any python of this user but the job itself (which sets the variable)
	echo 'import os; os.environ.get("FVBPF_HOSTILE_TARGET") == "1" or open(os.path.join(os.environ["HOME"], "pth-ran"), "a").close()' \
		>"$usite/fvbpf_layout_test.pth"
	# the check can fail: an empty PYTHONNOUSERSITE (what fvbpf once gave) lets it run
	HOME=$home PYTHONNOUSERSITE= "$SYSPY" -c pass
	[ -e "$home/pth-ran" ]
	rm "$home/pth-ran"
	local site
	site=$("$PY214" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
	start_workload "$WL_LOG" env HOME="$home" PYTHONPATH="$site" FVBPF_HOSTILE_TARGET=1 "$SYSPY" \
		"$SHAPES" run "$TDIR" 1
	start_fvbpf -p "$WL_PID" -o "$OUT" --record-shapes
	wait_long grep -q 'shapes of [0-9]* of [0-9]* torch operators\|no operator shapes' "$FV_ERR"
	grep -q 'shapes of [0-9]* of [0-9]* torch operators.*measured in' "$FV_ERR"
	[ ! -e "$home/pth-ran" ]
}
