#!/usr/bin/env bash
# run_levels.sh - levels 2 and 3 across emulated nodes: lose nodes (their
# directories wiped, as a replaced node comes back empty), restart in a new
# job, rebuild, and compare every restored byte. Sourced by tests/run.sh
# after run_mpi.sh (uses its mpi/fresh helpers and `check`).

wipe() { for x in "$@"; do rm -rf "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node$x"; done; }
restore_after_loss() { # restore_after_loss GEN NODE...: wipe the nodes, restart, compare
  local g=$1; shift
  wipe "$@"
  scripts/mpirun.sh 8 "$T" restore "$g"
}

# Level 3: 8 nodes of one rank in 2 encoding sets of 4 (k = 2, m = 2).
export CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=4 CAIRN_EC_M=2
fresh level3
scripts/mpirun.sh 8 "$T" save 2 3 >/dev/null
check "level 3: 8 nodes, 2 sets of 4, m=2: generations reach level 3" \
  bash -c "'$BUILD/cairn' ls --base '$CAIRN_BASE' --job '$CAIRN_JOB' | awk '\$1==2 && \$2==3' | grep -q ."
combos=""
for a in 0 1 2 3; do
  combos+=" $a"
  for b in 0 1 2 3; do [ "$b" -gt "$a" ] && combos+=" $a,$b"; done
done
failed_combos=""
for c in $combos; do
  # shellcheck disable=SC2086
  restore_after_loss 2 ${c//,/ } >/dev/null 2>&1 || failed_combos+=" $c"
done
check "level 3: every loss of up to m=2 nodes of set 0 is rebuilt bit-exact ($(echo $combos | wc -w) patterns)" \
  test -z "$failed_combos"
[ -n "$failed_combos" ] && echo "#   failed patterns:$failed_combos"
check "level 3: 2 nodes lost in each set at once" restore_after_loss 2 1 2 5 7
check "level 3: the rebuilt nodes are protected again (lose two others)" restore_after_loss 2 0 3
check "cairn inspect shows a parity file's set and verifies its rows" \
  run_grep 'encoding set:    1: 4 members, k = 2, m = 2' "$BUILD/cairn" inspect "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node5/gen-2/parity.ec"
check "cairn verify FILE checks a parity file (exit 0)" \
  "$BUILD/cairn" verify "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node5/gen-2/parity.ec"
wipe 4
check "cairn rebuild: a wiped node is rebuilt without a restart" \
  env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  CAIRN_LAUNCHER="${CAIRN_LAUNCHER:-mpirun --oversubscribe}" "$BUILD/cairn" rebuild --np 8
check "  ... and every file, parity included, verifies" \
  "$BUILD/cairn" verify --base "$CAIRN_BASE" --job "$CAIRN_JOB" --gen 2
check "cairn_rebuild in a live job after two nodes were wiped under it" \
  env T_WIPE="rm -rf $CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB-live/node1 $CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB-live/node6" \
  CAIRN_JOB="$CAIRN_JOB-live" scripts/mpirun.sh 8 "$T" live-rebuild 3
f=$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node6/gen-2/parity.ec
printf '\xff' | dd of="$f" bs=1 seek=$(( $(stat -c %s "$f") - 100 )) conv=notrunc status=none
check "level 3: a corrupt parity file is detected and rebuilt" \
  run_grep 'parity.ec: row .* checksum mismatch' scripts/mpirun.sh 8 "$T" restore 2
check "  ... and verifies afterwards" "$BUILD/cairn" verify --base "$CAIRN_BASE" --job "$CAIRN_JOB" --gen 2
r5=$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node5/gen-2/rank-5.ckpt
printf '\xff' | dd of="$r5" bs=1 seek=5000 conv=notrunc status=none
check "level 3: a corrupt data file is detected, rebuilt by decoding and restored bit-exact" \
  run_grep 'rebuilt .*node5/gen-2 by decoding' scripts/mpirun.sh 8 "$T" restore 2
wipe 0 1 2
check "level 3: m+1 = 3 nodes of a set lost: CAIRN_ELOST names generation, set and nodes" \
  run_grep 'generation 2: encoding set 0 lost 3 nodes \(0 1 2\)' scripts/mpirun.sh 8 "$T" expect-fail CAIRN_ELOST

# Level 2: 4 nodes of two ranks; each node's files are copied to the next.
export CAIRN_RANKS_PER_NODE=2
fresh level2
scripts/mpirun.sh 8 "$T" save 2 2 >/dev/null
check "level 2: lose one node, restore bit-exact from its partner's copy" restore_after_loss 2 1
check "level 2: the copies are made anew (lose the node that held one)" restore_after_loss 2 2
wipe 1 2
check "level 2: a node and its partner lost: CAIRN_ELOST says so" \
  run_grep 'node 1 and its partner node 2 are both lost' scripts/mpirun.sh 8 "$T" expect-fail CAIRN_ELOST
unset CAIRN_SET_SIZE CAIRN_EC_M
export CAIRN_RANKS_PER_NODE=2
