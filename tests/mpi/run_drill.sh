#!/usr/bin/env bash
# run_drill.sh - `cairn drill --all`: every failure scenario restarts and
# verifies the final field byte for byte, from the level and generation the
# scenario leaves. Sourced by tests/run.sh (uses `check`).
drill_out=$(mktemp); SCRATCH_DIRS+=("$drill_out")
check "cairn drill --all: every scenario restored and verified against an uninterrupted run" \
  bash -c "'$BUILD/cairn' drill --all > '$drill_out' 2>&1; rc=\$?; cat '$drill_out'; test \$rc = 0"
expect_row() { # expect_row SCENARIO LEVEL GENERATION
  awk -v s="$1" -v l="$2" -v g="$3" '$1==s && $2=="PASS" && $3==l && $4==g {f=1} END {exit !f}' "$drill_out"
}
export -f expect_row; export drill_out
check "  ... node losses: 1-2 decoded (level 3), 3 = m + 1 from the PFS (level 4), generation 200" \
  bash -c "expect_row node-loss-1 3 200 && expect_row node-loss-2 3 200 && expect_row node-loss-3 4 200"
check "  ... damaged data or parity: decoded, also a damaged file beside a lost node (m = 2 in all); damaged PFS generation: the older one (100)" \
  bash -c "expect_row flip-data 3 200 && expect_row flip-data-loss-1 3 200 && expect_row flip-parity 3 200 && expect_row manifest-parity 3 200 && expect_row flip-pfs 4 100 && expect_row index-pfs 4 100"
check "  ... a crash inside checkpoint 200 restores 150; a daemon crash loses nothing" \
  bash -c "expect_row crash-in-checkpoint 1 150 && expect_row daemon-crash 1 200"
