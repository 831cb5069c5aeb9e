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
# A disk that fills at level 4 after a generation reached the PFS: every node is
# then wiped and the restart takes that generation from the PFS. The soak once
# expected nothing here (node manifests say level 3; level 4 is the PFS index)
# and called the good restart a loss.
if [ "$(id -u)" -eq 0 ]; then
  check "cairn drill --soak, disk full at level 4 after a generation reached the PFS: restored from the PFS, no loss" \
    run_grep '^1 +enospc +4 +- +free:[0-9]+ +ok +[0-9]+ ' \
    env SOAK_KINDS=enospc SOAK_LEVELS=4 SOAK_FREE_PCT=60 "$BUILD/cairn" drill --soak 1 --seed 1
else
  skip "cairn drill --soak, disk full at level 4: needs root to mount a small tmpfs"
fi
check "cairn drill --soak 20: random-instant kills of ranks and daemons, disks filled, levels 1-4: 0 lost" \
  run_grep '^soak: 20 trials .*: 20 restored bit-exact, 0 lost$' "$BUILD/cairn" drill --soak 20
