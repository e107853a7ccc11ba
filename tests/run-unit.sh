#!/usr/bin/env bash
# SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
# `make unit`: the C unit tests alone (no root needed).
set -u
rc=0
for t in "$@"; do
	echo "# --- $t"
	"$t" || rc=1
done
exit $rc
