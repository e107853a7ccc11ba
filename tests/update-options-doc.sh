#!/bin/sh
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Rewrites the option table in docs/options.md from the binary's own table
# (fvbpf attach --help-markdown, rendered from user/cli/attach_options.c);
# tests/bats/options.bats fails while the two differ.  Usage:
#   tests/update-options-doc.sh [BUILD]     (default build)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
doc=docs/options.md
table=$(mktemp)
trap 'rm -f "$table" "$doc.tmp"' EXIT
"$build/fvbpf" attach --help-markdown >"$table"
grep -q '^<!-- options: begin' "$doc" && grep -q '^<!-- options: end' "$doc" || {
	echo "$doc: no '<!-- options: begin' / '<!-- options: end' lines" >&2
	exit 1
}
awk -v table="$table" '
	/^<!-- options: end/ { while ((getline l < table) > 0) print l; skip = 0 }
	!skip { print }
	/^<!-- options: begin/ { skip = 1 }
' "$doc" >"$doc.tmp"
mv "$doc.tmp" "$doc"
