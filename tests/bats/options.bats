#!/usr/bin/env bats
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# Options in one place: attach's ranges and defaults are written once, in
# user/cli/attach_options.c; `fvbpf attach --help` and the table in
# docs/options.md are rendered from it, and `fvbpf --help` from the command
# table in user/cli/fvbpf.c.  These tests fail when the copies drift.

load helpers

setup() { common_setup; }
teardown() { common_teardown; }

# The generated table in docs/options.md, without its marker lines.
doc_table() {
	sed -n '/^<!-- options: begin/,/^<!-- options: end/p' "$ROOT/docs/options.md" | sed '1d;$d'
}

# Text with argp's line wrapping undone: one line, single spaces.
flat() { tr '\n' ' ' | tr -s ' '; }

@test "docs/options.md's option table is the binary's (fvbpf attach --help-markdown)" {
	# The sanitizer build defaults --max-memory to 4G (util/budget.h).
	[ -z "${FVBPF_SANITIZED:-}" ] || skip "the ASan build has its own --max-memory default"
	run doc_table
	[ "${#lines[@]}" -gt 20 ] || fail "docs/options.md has no '<!-- options: begin' table"
	diff -u <(doc_table) <("$FVBPF" attach --help-markdown) ||
		fail "docs/options.md is out of date: run tests/update-options-doc.sh $BUILD"
}

@test "fvbpf attach --help says each option's range and default, as the docs table does" {
	local help row acc def n=0
	help=$("$FVBPF" attach --help | flat)
	while IFS='|' read -r _ opt _ acc def _; do
		# cells: strip the padding, the markdown escapes and the backticks
		acc=$(printf '%s' "$acc" | sed 's/^ *//; s/ *$//; s/\\//g')
		def=$(printf '%s' "$def" | sed 's/^ *//; s/ *$//; s/`//g')
		[ -n "$acc" ] && { [[ $help == *"$acc"* ]] || fail "--help lacks '$acc' ($opt)"; }
		[ -n "$def" ] && { [[ $help == *"default $def"* ]] || fail "--help lacks 'default $def' ($opt)"; }
		n=$((n + 1))
	done < <("$FVBPF" attach --help-markdown | tail -n +3)
	[ "$n" -eq 31 ] # rows of the option table
	# the hidden flag stays hidden
	[[ $help != *help-markdown* ]]
}

@test "fvbpf --help: the command table, -r not required, --step-by named" {
	run "$FVBPF" --help
	assert_success
	for c in attach report merge export regions version help; do
		assert_line --regexp "^  $c( |\$)"
	done
	# the three ways to cut segments, none of them required
	assert_output --partial "[--step-by GLOB | -r REGIONS | --window SECONDS]"
	refute_output --regexp "attach -p [^ ]+ -r"
	run "$FVBPF" help
	assert_success
	assert_output --partial "Usage: fvbpf COMMAND [OPTIONS]"
	run "$FVBPF" -h
	assert_success
	assert_output --partial "Usage: fvbpf COMMAND [OPTIONS]"
	run "$FVBPF"
	assert_failure 2
	assert_output --partial "Usage: fvbpf COMMAND [OPTIONS]"
	run "$FVBPF" --version
	assert_success
	assert_output --regexp "^fvbpf [0-9]+\.[0-9]+\.[0-9]+$"
	run "$FVBPF" attac
	assert_failure 2
	assert_output "fvbpf: error: unknown command 'attac': try 'fvbpf --help'"
}
