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

# Levels 2 and 3 verify what they protect. A daemon holds generation 1 (2 s,
# so the application has handed it over and finished) and dies about to
# raise it (it stays at level 1, queued); a byte of one rank file is then
# flipped; the next daemons resume generation 1 and must refuse to copy or
# encode the damaged file: it stays at level 1, no partner copy or parity
# file of it exists, and the daemon's log names the file. Level 3 runs 4
# ranks on the 4 nodes (one a node: the damaged file is rank 1's, on node 1);
# level 2 keeps 8 ranks, two a node, so the partner copy it must refuse is
# one of a node's two ranks' files (rank 2's, the first of node 1's).
export CAIRN_SET_SIZE=4 CAIRN_EC_M=2 CAIRN_DAEMON_LAUNCHER="bash scripts/mpirun.sh"
verify_before_raise() { # LEVEL NP: NP ranks on the 4 nodes (CAIRN_RANKS_PER_NODE = NP / 4)
  local lvl=$1 np=$2 C=$BUILD/cairn job_dir
  local r=$((np / 4)) # the first rank of node 1: its file is the one damaged
  [ "$CAIRN_RANKS_PER_NODE" = "$r" ] || { echo "verify_before_raise: $np ranks need CAIRN_RANKS_PER_NODE=$r"; return 2; }
  job_dir=$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB
  local go; go=$(mktemp -u /dev/shm/cairn-levels-go.XXXXXX); SCRATCH_DIRS+=("$go")
  # held at generation 1 until the application handed it over everywhere, then dies
  CAIRN_FAULT="cairnd.gen:gen=1:until=$go;cairnd.gen:gen=1:rank=0" "$C" start --nodes 4 >/dev/null || return 1
  run_grep 'PASS save' scripts/mpirun.sh "$np" "$T" save 1 "$lvl" || return 1
  touch "$go"
  local _; for _ in $(seq 600); do pgrep -f "^[^ ]*cairnd --job $CAIRN_JOB( |\$)" >/dev/null || break; sleep 0.1; done
  "$C" ls --job "$CAIRN_JOB" | awk '$1==1 && $2!=1 {exit 1}' || { echo "generation 1 left level 1 before the flip"; return 1; }
  printf '\xff' | dd of="$job_dir/node1/gen-1/rank-$r.ckpt" bs=1 seek=5000 conv=notrunc status=none
  "$C" start --nodes 4 >/dev/null || return 1
  local busy=1
  for _ in $(seq 1200); do # idle with nothing queued, or gone
    "$C" status 2>/dev/null | awk 'NR>1 && ($3!=0 || $4!="idle") {b=1} END {exit b}' && { busy=0; break; }
    sleep 0.1
  done
  "$C" stop >/dev/null
  [ "$busy" = 0 ] || { echo "daemons never went idle"; return 1; }
  "$C" ls --job "$CAIRN_JOB" | awk '$1==1 && $2!=1 {exit 1}' || { echo "generation 1 was raised"; "$C" ls --job "$CAIRN_JOB"; return 1; }
  if ls "$job_dir"/node*/gen-1/parity.ec "$job_dir"/node*/gen-1/partner/rank-$r.ckpt 2>/dev/null | grep -q .; then
    echo "damaged data was protected:"; ls -R "$job_dir"; return 1
  fi
  # the source file in the generation (not the partner's received copy) and the block
  grep -Eq "stays at level 1: .*node1/gen-1/rank-$r.ckpt: '[a-z]+' block [0-9]+ .*checksum mismatch" "$job_dir/cairnd.log" ||
    { echo "the daemon log does not name the damaged file and block"; tail "$job_dir/cairnd.log"; return 1; }
}
export CAIRN_RANKS_PER_NODE=1
fresh verify-l3
check "level 3: a rank file damaged before encoding is reported and not encoded into parity" verify_before_raise 3 4
export CAIRN_RANKS_PER_NODE=2
fresh verify-l2
check "level 2: a rank file damaged before its partner copy is reported and not copied" verify_before_raise 2 8
unset CAIRN_SET_SIZE CAIRN_EC_M CAIRN_DAEMON_LAUNCHER
export CAIRN_RANKS_PER_NODE=2

# The same with an intact older generation: generation 2's raise is refused
# (damaged after level 1), and a restart skips it and restores generation 1
# bit-exact. The daemons wait at generation 2 until the application has handed
# it over on every node (a file: a condition, not a time) and die there. 4
# ranks on the 4 nodes, one a node: the damaged file is rank 3's, on node 3.
export CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=4 CAIRN_EC_M=2 CAIRN_DAEMON_LAUNCHER="bash scripts/mpirun.sh"
damaged_newest() {
  local C=$BUILD/cairn job_dir=$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB _
  local go; go=$(mktemp -u /dev/shm/cairn-levels-go.XXXXXX); SCRATCH_DIRS+=("$go")
  CAIRN_FAULT="cairnd.gen:gen=2:until=$go;cairnd.gen:gen=2:rank=0" "$C" start --nodes 4 >/dev/null || return 1
  run_grep 'PASS save' scripts/mpirun.sh 4 "$T" save 2 3 || return 1
  touch "$go"
  for _ in $(seq 600); do pgrep -f "^[^ ]*cairnd --job $CAIRN_JOB( |\$)" >/dev/null || break; sleep 0.1; done
  "$C" ls --job "$CAIRN_JOB" | awk '$1==2 && $2!=1 {exit 1}' || { echo "generation 2 left level 1 before the flip"; return 1; }
  printf '\xff' | dd of="$job_dir/node3/gen-2/rank-3.ckpt" bs=1 seek=5000 conv=notrunc status=none
  "$C" start --nodes 4 >/dev/null || return 1
  local busy=1
  for _ in $(seq 1200); do
    "$C" status 2>/dev/null | awk 'NR>1 && ($3!=0 || $4!="idle") {b=1} END {exit b}' && { busy=0; break; }
    sleep 0.1
  done
  "$C" stop >/dev/null
  [ "$busy" = 0 ] || { echo "daemons never went idle"; return 1; }
  "$C" ls --job "$CAIRN_JOB" | awk '$1==2 && $2!=1 {exit 1}' || { echo "generation 2 was raised"; return 1; }
  ! ls "$job_dir"/node*/gen-2/parity.ec 2>/dev/null | grep -q . || { echo "parity of damaged data was kept"; return 1; }
  grep -Eq "generation 2 stays at level 1: .*node3/gen-2/rank-3.ckpt: '[a-z]+' block [0-9]+ .*checksum mismatch" "$job_dir/cairnd.log" ||
    { echo "the daemon log does not say why"; tail -5 "$job_dir/cairnd.log"; return 1; }
  run_grep 'generation 2 is unusable .*rank-3\.ckpt' scripts/mpirun.sh 4 "$T" restore 1
}
fresh verify-older
check "level 3: a damaged newest generation is not encoded; a restart restores the older one bit-exact" damaged_newest
unset CAIRN_SET_SIZE CAIRN_EC_M CAIRN_DAEMON_LAUNCHER
export CAIRN_RANKS_PER_NODE=2
