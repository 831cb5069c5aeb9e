#!/usr/bin/env bash
# run_soak.sh - `cairn drill --soak`: random-instant kills of ranks and
# daemons and disks filled at levels 1-4, each trial restarted and compared
# byte for byte. Sourced by tests/run.sh (uses `check`); its own section so
# that it runs beside `cairn drill --all` (run_drill.sh).
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
check "cairn drill --soak 10: random-instant kills of ranks and daemons, disks filled, levels 1-4 (10 different pairs of kind and level): 0 lost" \
  run_grep '^soak: 10 trials .*: 10 restored bit-exact, 0 lost$' "$BUILD/cairn" drill --soak 10
