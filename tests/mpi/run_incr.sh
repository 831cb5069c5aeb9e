#!/usr/bin/env bash
# run_incr.sh - incremental chains across real jobs: every generation of a
# chain restored bit-exact for workloads that change nothing, a few blocks,
# half and everything; variables that grow and shrink; a record split by a
# block boundary; lossy variables whose changed blocks are compressed
# together, within their bounds; a kill during an incremental checkpoint; a
# corrupt and a missing link; level 3 with nodes lost mid-chain; mixed
# levels; a restarted job continuing the chain; hints. Sourced by
# tests/run.sh after run_mpi.sh (uses its fresh/check helpers).
TI=$BUILD/tests/t_incr
# ti launches TI_NP ranks on 2 emulated nodes: 4, 2 per node, for the first
# scenario (a chain per workload; ti_two_per_node); 2, one per node, for the
# scenarios whose checks need no two ranks on a node (ti_one_per_node: a
# 2-rank launch costs ~40% less CPU).
ti_two_per_node() { TI_NP=4; export CAIRN_RANKS_PER_NODE=2; }
ti_one_per_node() { TI_NP=2; export CAIRN_RANKS_PER_NODE=1; }
ti() { scripts/mpirun.sh "$TI_NP" "$TI" "$@"; }
export CAIRN_INCR=on CAIRN_INCR_BLOCK=4K CAIRN_KEEP=2
unset CAIRN_FAULT T_WORK

restore_every() { # restore_every FIRST LAST: a new job restores each generation bit-exact
  [ $# = 2 ] || { echo "restore_every: FIRST and LAST, not '$*'"; return 2; }
  ti restore-ids "$1" "$2" # (each by a context of its own, in one launch)
}

ti_two_per_node
for w in none few half all; do
  fresh "incr-$w"
  export T_WORK=$w
  ti save 6 >/dev/null
  if [ $w = all ]; then # everything changed: no increment pays; keep = 2 leaves 5 and 6
    check "incr (all changes): every generation is full" ti parents -1 -1
    check "  ... each restores bit-exact in a new job" restore_every 5 6
  else
    check "incr ($w changes): generations 1..6 are one chain, none pruned" ti parents -1 1 2 3 4 5
    check "  ... every generation restores bit-exact in a new job (grow resized, record 170 split)" \
      restore_every 1 6
  fi
done
unset T_WORK

ti_one_per_node
fresh incr-ls
ti save 3 >/dev/null
check "cairn ls: full or incremental, and the stored share of the full size" \
  bash -c "$BUILD/cairn ls --base $CAIRN_BASE --job $CAIRN_JOB | awk '\$1==1 && /full/' | grep -q . &&
           $BUILD/cairn ls --base $CAIRN_BASE --job $CAIRN_JOB | awk '\$1==3 && /incr <- 2/' | grep -Eq ' [0-9.]+%'"
check "cairn inspect: a delta entry names its runs" \
  run_grep '^grid .* delta [0-9]+ blocks' "$BUILD/cairn" inspect "$(gen_dir 0 3)/rank-0.ckpt"
check "cairn verify: every link verifies" "$BUILD/cairn" verify --base "$CAIRN_BASE" --job "$CAIRN_JOB"

fresh incr-full-every
CAIRN_INCR_FULL_EVERY=3 ti save 7 >/dev/null
check "incr.full_every = 3: chains 1-3, 4-6, 7; keep = 2 keeps 7 and 6 with its chain" \
  ti parents -1 4 5 -1
check "  ... the chain 1-3 is gone" bash -c "[ ! -e $(gen_dir 0 1) ] && [ ! -e $(gen_dir 1 3) ]"
check "  ... generation 7 (full) and 6 (chain 4-6) restore" restore_every 6 7

fresh incr-kill
ti save 3 >/dev/null
check "kill -9 in the middle of incremental generation 4: the job dies" \
  bash -c "! CAIRN_FAULT=ckpt.write:gen=4:rank=1 scripts/mpirun.sh $TI_NP $TI save 5 >/dev/null 2>&1"
check "  ... a new job restores generation 3 (its chain intact)" ti restore 3

fresh incr-corrupt
CAIRN_KEEP=8 CAIRN_INCR_FULL_EVERY=4 ti save 7 >/dev/null # chains 1-4 and 5-7, all kept
f=$(gen_dir 1 6)/rank-1.ckpt
printf '\xff' | dd of="$f" bs=1 seek=5000 conv=notrunc status=none
check "a corrupt link (6): generation 5 is the newest restorable, and the message names 6" \
  run_grep 'generation 7 \(incremental, chain from 5\) needs generation 6: .*rank-1.ckpt' scripts/mpirun.sh "$TI_NP" "$TI" restore 5
rm "$(gen_dir 0 5)/manifest"
check "  ... link 5 missing too: cairn ls says 6 and 7 have a broken chain" \
  bash -c "$BUILD/cairn ls --base $CAIRN_BASE --job $CAIRN_JOB | grep -E '^ +7 .*broken-chain$' &&
           $BUILD/cairn ls --base $CAIRN_BASE --job $CAIRN_JOB | grep -E '^ +6 .*broken-chain$'"
check "  ... and a new job restores generation 4 (the older chain)" ti restore 4

fresh incr-retype
T_RETYPE=1 ti save 4 >/dev/null
check "a variable re-protected with another type of the same size diffs by its bytes" \
  bash -c "T_RETYPE=1 scripts/mpirun.sh $TI_NP $TI restore 4 && T_RETYPE=1 scripts/mpirun.sh $TI_NP $TI parents -1 1 2 3"

fresh incr-resume
ti save 3 >/dev/null
check "a restarted job continues the chain (restores 3, writes 4 and 5 onto it)" ti resume 3 5
check "  ... generations 1..5 form one chain" ti parents -1 1 2 3 4
check "  ... and a third job restores 5 bit-exact" ti restore 5

fresh incr-hint
check "hints: calm unchanged, step changed (no hashing)" ti hint 4
check "  ... calm stored no block after generation 1" \
  run_grep '^calm .* delta 0 blocks' "$BUILD/cairn" inspect "$(gen_dir 1 3)/rank-1.ckpt"
check "  ... every generation restores bit-exact" restore_every 1 4

# A failed restart leaves protected memory unchanged, even when the chain's
# older links could already have been applied (cairn.h, cairn_restart).
fresh incr-untouched
CAIRN_KEEP=8 ti save 4 >/dev/null # one chain 1 <- 2 <- 3 <- 4
cp "$(gen_dir 1 2)/rank-1.ckpt" "$CAIRN_BASE/rank-1.ckpt.good"
printf '\xff' | dd of="$(gen_dir 1 2)/rank-1.ckpt" bs=1 seek=5000 conv=notrunc status=none
check "link 2 of 1..4 has a flipped byte (rank 1): restart of 4 fails, memory unchanged everywhere" \
  run_grep 'PASS expect-fail-id' ti expect-fail-id 4 CAIRN_ECORRUPT
cp "$CAIRN_BASE/rank-1.ckpt.good" "$(gen_dir 1 2)/rank-1.ckpt"
check "  ... link 2 put back; t_forge: its 'smooth' frame passes every stored checksum, does not decode" \
  run_grep '^forged smooth ' "$BUILD/tests/t_forge" "$(gen_dir 1 2)/rank-1.ckpt" smooth
check "  ... restart of 4 (link 1 could be applied first): CAIRN_ECORRUPT, memory unchanged everywhere" \
  run_grep 'PASS expect-fail-id' ti expect-fail-id 4 CAIRN_ECORRUPT
check "  ... generation 1 (before the forged link) still restores bit-exact" ti restore-id 1

# A restart decodes each frame once (issue 31): the check decodes every
# link's frames into buffers it keeps, and the restore copies those; nothing
# compressed is decoded again, and each generation still comes out bit-exact.
fresh incr-once
export CAIRN_CODEC=zstd T_WORK=few
CAIRN_KEEP=8 ti save 4 >/dev/null # one chain 1 <- 2 <- 3 <- 4, compressed
check "zstd chain 1..4: every generation restores bit-exact in a new job" restore_every 1 4
check "  ... the restore copies what the check decoded: nothing applied from the files again" \
  run_grep 'restore: [1-9][0-9]* bytes copied as the check decoded them, 0 applied from the files' \
  env CAIRN_LOG_LEVEL=debug scripts/mpirun.sh "$TI_NP" "$TI" restore 4
check "  ... a node short of memory (the check may keep 0 bytes: CAIRN_TEST_KEEP_BYTES=0): every frame decoded again by the restore, bit-exact" \
  run_grep 'restore: 0 bytes copied as the check decoded them, [1-9][0-9]* applied from the files' \
  env CAIRN_LOG_LEVEL=debug CAIRN_TEST_KEEP_BYTES=0 scripts/mpirun.sh "$TI_NP" "$TI" restore 4
"$BUILD/tests/t_forge" "$(gen_dir 1 4)/rank-1.ckpt" smooth >/dev/null
check "  ... newest link 4 forged (rank 1): restart of 4 fails its check, memory unchanged everywhere" \
  run_grep 'PASS expect-fail-id' ti expect-fail-id 4 CAIRN_ECORRUPT
check "  ... generation 3 (its chain 1..3 untouched) still restores bit-exact" ti restore-id 3
unset CAIRN_CODEC T_WORK

# Lossy variables in increments: a delta's changed blocks reach the lossy
# codec gathered into one flat array, and every element must still come back
# within its bound, link after link. t_ckpt with T_CODECS=mixed on 8 ranks / 4
# nodes gives the wavelet, predict and auto codecs to field (within 1e-6 of
# values near 1e18: exact in practice) and smooth (1e-3 of its range) on
# different ranks; every block changes, and incr.max_changed = 100 keeps the
# increments anyway. Then t_incr with grid and smooth lossy (T_LOSSY), a few
# or half of the blocks changed: the gathered runs are not the whole array.
# (t_ckpt stays at 8 ranks, 2 per node: smooth gets wavelet, auto and
# predict on ranks 3, 5 and 6 only; t_incr below runs 2 ranks, one per node.)
export CAIRN_RANKS_PER_NODE=2
lossy_every() { # lossy_every FIRST LAST: t_ckpt restores each generation within every bound
  [ $# = 2 ] || { echo "lossy_every: FIRST and LAST, not '$*'"; return 2; }
  T_CODECS=mixed scripts/mpirun.sh 8 "$T" restore-ids "$1" "$2" # (a context each, one launch)
}
for b in 4K 1K; do
  fresh "incr-lossy-$b"
  CAIRN_INCR_BLOCK=$b CAIRN_KEEP=8 CAIRN_INCR_MAX_CHANGED=100 T_CODECS=mixed \
    scripts/mpirun.sh 8 "$T" save 4 >/dev/null
  check "lossy codecs, every block of $b changed, incr.max_changed = 100: 2..4 are increments" \
    bash -c "$BUILD/cairn ls --base $CAIRN_BASE --job $CAIRN_JOB | grep -Eq '^ +4 .*incr <- 3'"
  check "  ... each generation restores within every bound in a new job (field, wavelet, rank 1)" \
    lossy_every 1 4
done
ti_one_per_node
for l in wavelet predict; do
  for w in few half; do
    fresh "incr-lossy-$l-$w"
    export T_WORK=$w T_LOSSY=$l
    CAIRN_KEEP=8 ti save 5 >/dev/null
    check "grid and smooth lossy ($l), $w changes: one chain 1..5" ti parents -1 1 2 3 4
    check "  ... every generation restores within the bounds (grid 1e-9, smooth 1e-4 of range)" \
      restore_every 1 5
  done
done
unset T_WORK T_LOSSY
fresh incr-lossy-spike
export T_SPIKE=1 T_WORK=few
CAIRN_KEEP=8 ti save 3 >/dev/null
check "smooth's relative bound 25000x tighter after generation 1 (a spike gone): 1..3 one chain" \
  ti parents -1 1 2
check "  ... 2 and 3 restore within their own bounds (smooth stored whole in 2, not left to 1)" \
  restore_every 1 3
unset T_SPIKE T_WORK

# Level 3: 8 nodes of one rank, 2 sets of 4 (k = 2, m = 2).
export CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=4 CAIRN_EC_M=2
ti8() { scripts/mpirun.sh 8 "$TI" "$@"; }
fresh incr-l3
ti8 save 4 3 >/dev/null
check "level 3, incremental: generations 1..4 form one chain, each with its own parity" \
  bash -c "scripts/mpirun.sh 8 $TI parents -1 1 2 3 && [ -e $(gen_dir 5 3)/parity.ec ]"
lost_ok="" lost_log=$(mktemp) lost_tail=""
for g in 1 2 3 4; do
  wipe_nodes 1 2
  scripts/mpirun.sh 8 "$TI" restore-id "$g" >"$lost_log" 2>&1 ||
    { lost_ok+=" $g"; lost_tail+=$(echo "restore-id $g:"; tail -n 15 "$lost_log")$'\n'; }
done
rm -f "$lost_log"
check "  ... nodes 1 and 2 lost before each restart: every generation rebuilt link by link" \
  test -z "$lost_ok"
[ -n "$lost_ok" ] && { echo "#   failed generations:$lost_ok"; printf '%s' "$lost_tail" | sed 's/^/#   | /'; }
wipe_nodes 0 3 6
check "  ... 2 lost in set 0 and 1 in set 1 at once: the newest restores" ti8 restore 4
wipe_nodes 0 1 2
check "  ... 3 lost in a set: CAIRN_ELOST" bash -c "! ti8 restore 4 >/dev/null 2>&1"

fresh incr-alt
ti8 save 6 alt >/dev/null # odd generations at level 1, even at level 3
check "mixed levels: level-3 generations diff against the previous level-3 one (2 <- 4 <- 6);" \
  ti8 parents -1 2 4 4
check "  ... keep = 2 kept 6, 5 and their chain (2, 4), dropped 1 and 3" \
  bash -c "[ ! -e $(gen_dir 0 1) ] && [ ! -e $(gen_dir 0 3) ] && [ -e $(gen_dir 7 2) ]"
wipe_nodes 4 5
check "  ... two nodes lost: generation 6 (chain 2, 4, 6, all level 3) is rebuilt" ti8 restore 6
rm -rf "$(gen_dir 0 6)" "$(gen_dir 1 6)" "$(gen_dir 2 6)"
wipe_nodes 4 5
check "  ... 6 gone too: 5 (level 1) is lost with its nodes, 4 restores" ti8 restore 4
unset CAIRN_SET_SIZE CAIRN_EC_M

# More generation directories than the node-local prune once looked at (4096,
# in readdir order; issue 29): 5000 directories it must leave alone (their
# manifests do not read) come after generation 1 was written, so the listing
# (tmpfs: newest first) ends with 1. Generation 2 diffs against 1, and 3 is
# full again (incr.full_every = 2): keep = 2 keeps 3 and 2 with the chain 2
# needs. A prune that did not see 1 took 2 for unrestorable, and dropped it.
ti_one_per_node
fresh incr-many
check "more than 4096 generation directories: generation 1 saved (2 ranks on 2 nodes)" ti save 1
fake_gens() { # fake_gens N: N gen-* directories on each node whose manifest does not read
  python3 - "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB" "$1" <<'PY'
import os, sys
job, n = sys.argv[1], int(sys.argv[2])
for node in ("node0", "node1"):
    for i in range(n):
        d = os.path.join(job, node, "gen-%d" % (100000 + i))
        os.mkdir(d, 0o700)
        with open(os.path.join(d, "manifest"), "w") as f:
            f.write("not a manifest")
PY
}
export -f fake_gens
check "  ... 5000 more gen-* directories on each node" fake_gens 5000
check "  ... a new job restores 1, saves 2 (changes since 1) and 3 (full: incr.full_every = 2)" \
  env CAIRN_INCR_FULL_EVERY=2 scripts/mpirun.sh "$TI_NP" "$TI" resume-id 1 3 1
check "  ... the prune kept 2 and the 1 it needs on every node (it saw every directory)" \
  bash -c "for n in 0 1; do for g in 1 2 3; do test -e \"\$(gen_dir \$n \$g)/manifest\" || { echo \"node\$n gen-\$g missing\"; exit 1; }; done; done"
check "  ... and left the 5000 it cannot judge alone" \
  bash -c "[ \$(ls -d '$CAIRN_BASE'/cairn-*/'$CAIRN_JOB'/node0/gen-1?????  | wc -l) = 5000 ]"
check "  ... a new job restores generation 2 (its chain 1, 2), bit-exact" ti restore-id 2
check "  ... and 3, bit-exact" ti restore-id 3
unset CAIRN_INCR CAIRN_INCR_BLOCK CAIRN_KEEP
ti_two_per_node # the script ends as it began: 4 ranks, 2 per node
