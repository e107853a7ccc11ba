#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# fvbpf report --html: one self-contained page, checked against what the
# generator wrote (tests/lib/gen_rank_dirs.py), with hostile names and file
# names planted in the directories, then opened in a real headless Chromium
# (Debian's chromium): no console message, the charts in the DOM and on
# the screenshot.

load helpers

GEN=$ROOT/tests/lib/gen_rank_dirs.py
PNG=$ROOT/tests/lib/png_colours.py
HOSTILE_OP='<script>alert(1)</script><img src=x onerror=alert(2)>'
HOSTILE_HOST="nodeA\"'><b>"
HOSTILE_TRACE="t\"'<x>&.json"
SLOW='#d62728' # the straggler's bar
BAR='#4c78a8'  # the others'

setup() {
	common_setup
	GEN_OUT=$BATS_TEST_TMPDIR/gen
	PAGE=$BATS_TEST_TMPDIR/page/report.html
}
teardown() { common_teardown; }

# Two nodes; node0 renamed to a hostile host, a hostile operator in every
# summary, one trace file renamed to a name that needs escaping.
gen_hostile() {
	python3 "$GEN" "$GEN_OUT" --nodes 2 --ranks 2 --segments 3 >/dev/null
	python3 - "$GEN_OUT" "$HOSTILE_OP" "$HOSTILE_HOST" "$HOSTILE_TRACE" <<'PY'
import glob, json, os, sys
gen, op, host, trace = sys.argv[1:]
row = json.dumps({"name": op, "kind": "cpu_op", "shapes": "", "self_cpu_us": 1.0, "cpu_us": 1.0,
                  "self_device_us": 2.0, "device_us": 2.0, "count": 1})
for p in glob.glob(os.path.join(gen, "node*", "summary_*.json")):
    s = open(p).read()
    open(p, "w").write(s.replace('"rows": [', '"rows": [' + row + ",", 1))
m = os.path.join(gen, "node0", "manifest.json")
s = open(m).read().replace('"hostname": "node0"', '"hostname": ' + json.dumps(host))
old = "trace_rank0_segment0000_training_train_one_step.json"
os.rename(os.path.join(gen, "node0", old), os.path.join(gen, "node0", trace))
open(m, "w").write(s.replace(json.dumps(old), json.dumps(trace)))
PY
}

@test "report --html: self-contained, hostile text escaped, figures and links as the generator wrote" {
	gen_hostile
	mkdir -p "${PAGE%/*}"
	# links relative to the page: beside the directories, and inside one
	for page in "$PAGE" "$GEN_OUT/node1/in.html"; do
		run "$FVBPF" report --html "$page" "$GEN_OUT/node0" "$GEN_OUT/node1"
		assert_success
		assert_output "fvbpf report: wrote $page"
		check_page "$page"
	done
}

check_page() {
	run python3 - "$1" "$GEN_OUT" "$HOSTILE_OP" "$HOSTILE_HOST" "$HOSTILE_TRACE" <<'PY'
import html, json, os, re, sys, urllib.parse
page, gen, op, host, trace = sys.argv[1:]
text = open(page, encoding="utf-8").read()
truth = json.load(open(os.path.join(gen, "truth.json")))
# self-contained: no script at all, nothing fetched
assert not re.search(r"<script|<link|<iframe|<object|<embed|@import|url\(", text, re.I)
attrs = re.findall(r'\b(src|href|srcset|action|data)\s*=\s*"([^"]*)"', text, re.I)
assert not [v for k, v in attrs if k.lower() != "href"], attrs
hrefs = [v for k, v in attrs if k.lower() == "href"]
assert hrefs and not [h for h in hrefs if re.match(r"[a-z][a-z0-9+.-]*:|//", h, re.I)], hrefs
assert "default-src 'none'" in text
# hostile text only escaped: no tag of theirs survives, the text does
assert "<b>" not in text and "<img" not in text and "<x>" not in text
assert html.escape(op, quote=True) in text, "operator name not shown escaped"
assert html.escape(host, quote=True).replace("&#x27;", "&#39;") in text
# every link resolves, relative to the page, to a file that exists
base = os.path.dirname(page)
for h in hrefs:
    p = os.path.normpath(os.path.join(base, urllib.parse.unquote(h)))
    assert os.path.isfile(p), (h, p)
assert sum(1 for h in hrefs if os.path.basename(urllib.parse.unquote(h)) == trace) == 1
names = [os.path.basename(urllib.parse.unquote(h)) for h in hrefs]
traces = [n for n in names if n.startswith("trace_") or n == trace]
assert len(traces) == truth["segments"], (len(traces), truth["segments"])
# rank table: the mean of every rank as the generator computed it
rows = re.findall(r'<tr( class="slowest")?><td class="name">([^<]*)</td><td>(\d+)</td><td>(\d+)</td>'
                  r'<td>([\d.-]+)</td><td>([\d.-]+)</td><td>([\d.-]+)</td><td>0</td><td>0</td></tr>', text)
assert len(rows) == len(truth["ranks"]), rows
for k, t in truth["ranks"].items():
    want_host = host if t["host"] == "node0" else t["host"]
    label = html.escape("%s rank %d" % (want_host, t["rank"]), quote=True).replace("&#x27;", "&#39;")
    r = [r for r in rows if r[1] == label]
    assert len(r) == 1, (label, rows)
    assert r[0][4] == "%.3f" % t["mean_ms"] and int(r[0][2]) == t["segments"], (r, t)
    assert (r[0][0] != "") == (k == truth["slowest"]["key"]), r
# the charts: one bar per rank, the slowest red; one dot per complete segment
chart = re.search(r'<svg id="rank-chart-0".*?</svg>', text, re.S).group(0)
assert len(re.findall(r"<rect ", chart)) == len(truth["ranks"])
assert len(re.findall(r'fill="#d62728"', chart)) == 1
dots = re.search(r'<svg id="segment-chart-0".*?</svg>', text, re.S).group(0)
assert len(re.findall(r"<circle ", dots)) == truth["segments"] - truth["incomplete"]
print("ok", len(hrefs), "links")
PY
	assert_success
	assert_output --regexp '^ok [0-9]+ links$'
}

# Issue 35: red only for a straggler (at least 5 % over the median and more
# than the ranks' own spread), said on the page with the rule, a legend;
# a rank without a segment at a step a red cell.
@test "report --html: a 1 % slower rank is not flagged, a 25 % one is; the rule and a legend on the page; missing steps red" {
	mkdir -p "${PAGE%/*}"
	python3 "$GEN" "$GEN_OUT" --nodes 2 --ranks 2 --segments 3 --slow-ms 0.2 >/dev/null
	run "$FVBPF" report --html "$PAGE.1" "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	python3 "$GEN" "$GEN_OUT" --nodes 2 --ranks 2 --segments 4 --late 1:2 >/dev/null
	run "$FVBPF" report --html "$PAGE.25" "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	run python3 - "$PAGE" "$GEN_OUT/truth.json" <<'PY'
import json, re, sys
page, truth = sys.argv[1], json.load(open(sys.argv[2]))
one, real = open(page + ".1").read(), open(page + ".25").read()
for t in (one, real):
    assert 'class="legend' in t and "the straggler, only when there is one" in t
    assert "at least 5% over the median of the rank means and the difference is more than the ranks' own step-to-step spread" in t
chart = lambda t: re.search(r'<svg id="rank-chart-0".*?</svg>', t, re.S).group(0)
# 1 %: the slowest rank named, not flagged: nothing red
assert 'class="slowest"' not in one and "#d62728" not in chart(one), "a 1 % rank flagged"
assert re.search(r"<p>Slowest rank: node1 rank 2, mean [\d.]+ ms: [\d.]+ ms \(1\.0%\) over the median rank mean [\d.]+ ms: not a straggler\.</p>", one)
# 25 %: flagged, its row and bar red
assert re.search(r'<p class="slowest">Slowest rank: node1 rank 2, .*: a straggler\.</p>', real)
assert len(re.findall(r'<tr class="slowest"><td class="name">node1 rank 2</td>', real)) == 1
assert chart(real).count('fill="#d62728"') == 1
# rank 1 two steps late: steps 0 and 1 without its segment, in red, and 2 in its row
steps = real.split("<h3>Steps:")[1].split("</table>")[0]
assert steps.count('<td class="missing">no segment</td>') == 8, steps  # rank 1 at 0-1, the 3 others at 4-5
assert re.search(r'<tr><td class="name">node0 rank 1</td>(<td>[\d.-]+</td>){5}<td>0</td><td class="missing">2</td></tr>', real)
print("ok")
PY
	echo "$output"
	assert_success
	assert_output "ok"
}

@test "report --html: an unwritable page is one error line, exit 1; usage errors exit 2" {
	python3 "$GEN" "$GEN_OUT" --nodes 1 --ranks 1 --segments 1 >/dev/null
	run "$FVBPF" report --html "$BATS_TEST_TMPDIR/no/such/dir/r.html" "$GEN_OUT/node0"
	assert_failure 1
	assert_output --regexp 'r\.html: cannot write: '
	assert_equal "${#lines[@]}" 1
	run "$FVBPF" report --html "" "$GEN_OUT/node0"
	assert_failure 2
	run "$FVBPF" report --json --html "$BATS_TEST_TMPDIR/r.html" "$GEN_OUT/node0"
	assert_failure 2
	assert_output --partial "--json and --html: give one"
	assert_file_not_exists "$BATS_TEST_TMPDIR/r.html"
}

# chromium ARGS...: headless, as root, its profile in the test's folder.
chromium_run() {
	timeout 120 chromium --headless --disable-gpu --no-sandbox --no-first-run \
		--user-data-dir="$BATS_TEST_TMPDIR/chromium" --enable-logging=stderr --v=0 \
		--log-level=0 "$@"
}

@test "report --html: opens in headless Chromium without a console message, charts drawn" {
	# what this checks runs in the browser (or HTA), not in fvbpf: the ASan pass
	# (FVBPF_SANITIZED) has nothing more to find here
	[ -z "${FVBPF_SANITIZED:-}" ] || skip "no fvbpf code under test: the plain pass runs it"
	command -v chromium >/dev/null ||
		skip "chromium is not installed: apt-get install chromium (make deps installs it)"
	local blank=$BATS_TEST_TMPDIR/blank.html
	echo '<!DOCTYPE html><title>t</title><p id="x">x</p>' >"$blank"
	if ! chromium_run --dump-dom "file://$blank" 2>"$BATS_TEST_TMPDIR/probe.err" |
		grep -q 'id="x"'; then
		skip "chromium cannot run here: $(grep -m1 -iE 'error|fatal' "$BATS_TEST_TMPDIR/probe.err")"
	fi
	gen_hostile
	mkdir -p "${PAGE%/*}"
	run "$FVBPF" report --html "$PAGE" "$GEN_OUT/node0" "$GEN_OUT/node1"
	assert_success
	chromium_run --dump-dom "file://$PAGE" >"$BATS_TEST_TMPDIR/dom.html" 2>"$BATS_TEST_TMPDIR/dom.err"
	# the page's console (errors, CSP refusals) comes out as CONSOLE lines
	run grep -F ':CONSOLE' "$BATS_TEST_TMPDIR/dom.err"
	assert_failure
	run grep -c -E 'id="(rank|segment)-chart-0"' "$BATS_TEST_TMPDIR/dom.html"
	assert_output 2
	# the hostile operator is text in the DOM, not an element
	run grep -c -i '<script' "$BATS_TEST_TMPDIR/dom.html"
	assert_output 0
	chromium_run --hide-scrollbars --window-size=1200,1000 \
		--screenshot="$BATS_TEST_TMPDIR/shot.png" "file://$PAGE" 2>"$BATS_TEST_TMPDIR/shot.err"
	assert_file_exists "$BATS_TEST_TMPDIR/shot.png"
	run python3 "$PNG" "$BATS_TEST_TMPDIR/shot.png" "$SLOW" "$BAR"
	assert_success
	python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["distinct"] > 1, d
# the slowest rank bar (about 560 x 12 px) and the 3 others (shorter)
assert d["near"]["'"$SLOW"'"] > 2000 and d["near"]["'"$BAR"'"] > 6000, d
' "$output"
}

@test "report --html on a real attach: every segment's time, state and files as its summary says" {
	start_workload "$WL_LOG" "$TRAINER" --steps 6 --step-ms 12 --wait-signal --idle
	start_fvbpf -p "$WL_PID" -o "$OUT" -n 3 -r training_train_one_step,training_forward
	kill -USR1 "$WL_PID"
	wait_fvbpf
	[ "$FV_STATUS" -eq 0 ]
	run "$FVBPF" report --html "$BATS_TEST_TMPDIR/real.html" "$OUT"
	assert_success
	run python3 - "$BATS_TEST_TMPDIR/real.html" "$OUT" <<'PY'
import json, os, re, sys, urllib.parse
from decimal import Decimal
page, out = sys.argv[1:]
text = open(page, encoding="utf-8").read()
rows = re.findall(r'<tr><td class="name">[^<]*</td><td>(\d+)</td><td>([\d.]+)</td>'
                  r'<td class="name">(\w+)</td><td class="name"><a href="([^"]+)">[^<]*</a></td>'
                  r'<td class="name"><a href="([^"]+)">', text)
base = os.path.dirname(page)
got = {}
for seg, ms, state, trace, summary in rows:
    t = os.path.normpath(os.path.join(base, urllib.parse.unquote(trace)))
    s = os.path.normpath(os.path.join(base, urllib.parse.unquote(summary)))
    assert os.path.isfile(t) and os.path.isfile(s), (t, s)
    got[os.path.basename(t)] = (int(seg), ms, state, os.path.basename(s))
files = json.load(open(os.path.join(out, "manifest.json")))["files"]
assert files and len(got) == len(files), (len(got), len(files))
regions = set()
for f in files:
    meta = json.load(open(os.path.join(out, f["summary_json"])), parse_float=Decimal)["metadata"]
    regions.add(meta["region"])
    ns = int(Decimal(meta["duration_us"]) * 1000)  # exact, then as fvbpf divides: ns / 1e6
    want = (meta["segment"], "%.3f" % (ns / 1e6),
            "incomplete" if meta["incomplete"] else "complete", f["summary_json"])
    assert got[f["trace"]] == want, (f["trace"], got[f["trace"]], want)
for i in range(len(regions)):
    assert 'id="rank-chart-%d"' % i in text
print("ok", len(files), "segments")
PY
	assert_success
	assert_output --regexp '^ok [0-9]+ segments$'
}
