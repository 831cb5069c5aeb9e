#!/usr/bin/env bash
# run_hooks.sh - the scheduler hooks in scripts/slurm/ driven by plain
# environment variables (as any scheduler can; the real-Slurm test is apart):
# the prolog makes each node's directory, sets aside a symlink planted as
# <base>/cairn-<uid>, refuses a job directory of another user and a disk
# without the space asked for; a job
# checkpoints with daemons; the epilog drains to the PFS, stops the daemons
# and cleans up without following a symlink; a second job restores from the
# PFS. Sourced by tests/run.sh after run_daemon.sh (fresh_pfs, check, $T).

PRO=${HOOK_PRO:-scripts/slurm/cairn-prolog} EPI=${HOOK_EPI:-scripts/slurm/cairn-epilog}
export CAIRN_CLI=$BUILD/cairn CAIRN_DAEMON_LAUNCHER="bash scripts/mpirun.sh"
export CAIRN_RANKS_PER_NODE=2 CAIRN_SET_SIZE=4 CAIRN_EC_M=2
hooks_all() { # hooks_all HOOK: run HOOK for node0..node3 as Slurm would (SLURM_* only)
  local n rc=0
  for n in 0 1 2 3; do
    env -u CAIRN_JOB SLURM_JOB_ID="$CAIRN_JOB" SLURM_JOB_UID="$(id -u)" SLURMD_NODENAME="node$n" \
      "$1" || rc=$?
  done
  return $rc
}
export -f hooks_all

fresh_pfs hooks
export CAIRN_HOOK_LOG=$CAIRN_BASE/hooks.log
u=$CAIRN_BASE/cairn-$(id -u)
check "prolog on 4 nodes makes <base>/cairn-<uid>/<job>/node<i>, mode 700; twice is fine" \
  bash -c "hooks_all $PRO && hooks_all $PRO && test \$(stat -c %a '$u/$CAIRN_JOB/node3') = 700 && grep -q 'cairn-prolog job $CAIRN_JOB node node2: ready' '$CAIRN_HOOK_LOG'"
check "  ... a job on them with daemons: 3 checkpoints at level 3, every 2nd to the PFS" \
  bash -c "'$CAIRN_CLI' start --nodes 4 >/dev/null && CAIRN_PFS_EVERY=2 scripts/mpirun.sh 8 $T save 3 3"
check "  ... epilog on 4 nodes: drains generation 3 to the PFS, stops the daemons, cleans up" \
  bash -c "hooks_all $EPI && grep -q 'generation 3 flushed to the PFS' '$CAIRN_HOOK_LOG' && test -e '$(pfs_gen 3)/index' && ! test -e '$u/$CAIRN_JOB' && '$CAIRN_CLI' status 2>&1 | grep -q 'no such job'"
check "  ... epilog again: nothing to do, exit 0" bash -c "hooks_all $EPI"
check "  ... a second job (the same id, empty nodes) restores generation 3 from the PFS" \
  bash -c "hooks_all $PRO && run_grep 'restoring generation 3 from the PFS' scripts/mpirun.sh 8 $T restore 3 && hooks_all $EPI"

# A new job restarting the one above: its prolog stages generation 3 in, and
# the restart reads the staged copy (the PFS copy is moved away to prove it).
first=$CAIRN_JOB
export CAIRN_JOB=t$CAIRN_TEST_TAG-hooks-second
check "prolog of a job restarting another (CAIRN_RESTART_FROM) stages its generation 3 in" \
  bash -c "CAIRN_RESTART_FROM=$first hooks_all $PRO && CAIRN_RESTART_FROM=$first hooks_all $PRO && test -e '$u/$CAIRN_JOB/node2/stage/cairn-$(id -u)/$first/gen-3/index' && grep -q 'staged generation 3 of job $first in' '$CAIRN_HOOK_LOG'"
mv "$CAIRN_PFS_DIR/cairn-$(id -u)/$first" "$CAIRN_PFS_DIR/moved-away"
check "  ... the new job restores generation 3 of $first from the staged copy, bit-exact" \
  run_grep "restoring generation 3 of job $first from the PFS \\(level 4\\): this job \\($CAIRN_JOB\\) has none" env CAIRN_RESTART_FROM=$first scripts/mpirun.sh 8 "$T" restore 3
check "  ... a second restart finds generation 3 on node-local storage; the epilog cleans up" \
  bash -c "CAIRN_RESTART_FROM=$first scripts/mpirun.sh 8 $T restore 3 && hooks_all $EPI && ! test -e '$u/$CAIRN_JOB'"

# A stage-in that failed (no room, a copy error) leaves a node's stage
# directory without the generation, on every node or only on some: the
# restart reads the PFS there. It once took the empty stage for the PFS and
# answered "no checkpoint" (the application would have started over), and a
# node whose stage lacked the generation failed the restore.
mv "$CAIRN_PFS_DIR/moved-away" "$CAIRN_PFS_DIR/cairn-$(id -u)/$first"
export CAIRN_JOB=t$CAIRN_TEST_TAG-hooks-third
st=$u/$CAIRN_JOB/node # + N/stage/cairn-<uid>/<first>: node N's stage copy
sf=stage/cairn-$(id -u)/$first
check "a stage-in that failed on every node (empty stage directories): the restart reads generation 3 of $first from the PFS, bit-exact" \
  bash -c "hooks_all $PRO && for n in 0 1 2 3; do (umask 077; mkdir -p '$st'\$n/'$sf') || exit 1; done && run_grep 'restoring generation 3 of job $first from the PFS' env CAIRN_RESTART_FROM=$first scripts/mpirun.sh 8 $T restore 3 && hooks_all $EPI"
check "  ... staged on node 2 only (the others empty): restored bit-exact" \
  bash -c "hooks_all $PRO && for n in 0 1 3; do (umask 077; mkdir -p '$st'\$n/'$sf') || exit 1; done && env -u CAIRN_JOB SLURM_JOB_ID=$CAIRN_JOB SLURM_JOB_UID=$(id -u) SLURMD_NODENAME=node2 CAIRN_RESTART_FROM=$first $PRO && test -e '${st}2/$sf/gen-3/index' && run_grep 'restoring generation 3 of job $first from the PFS' env CAIRN_RESTART_FROM=$first scripts/mpirun.sh 8 $T restore 3 && hooks_all $EPI"

# The same with a chain on the PFS: the prolog stages every link.
fresh_pfs hooks-chain
export CAIRN_HOOK_LOG=$CAIRN_BASE/hooks.log
u=$CAIRN_BASE/cairn-$(id -u)
TI=$BUILD/tests/t_incr
check "a job with incremental checkpoints saves 3 at level 4 (PFS chain 1 <- 2 <- 3)" \
  bash -c "hooks_all $PRO && CAIRN_INCR=on T_WORK=few scripts/mpirun.sh 8 $TI save 3 4 && hooks_all $EPI"
first=$CAIRN_JOB
export CAIRN_JOB=t$CAIRN_TEST_TAG-hooks-chain-second
check "  ... the prolog of a job restarting it stages generation 3 with its chain (1, 2)" \
  bash -c "CAIRN_RESTART_FROM=$first hooks_all $PRO && for g in 1 2 3; do test -e '$u/$CAIRN_JOB/node1/stage/cairn-$(id -u)/$first/gen-'\$g/index || exit 1; done"
for n in 0 1 2 3; do rm -rf "$u/$CAIRN_JOB/node$n/stage/cairn-$(id -u)/$first/gen-1"; done
check "  ... a staged copy that lacks a link (gen-1 removed): the restart reads the PFS instead, bit-exact" \
  run_grep "restoring generation 3 of job $first from the PFS" \
  env CAIRN_RESTART_FROM="$first" CAIRN_INCR=on T_WORK=few scripts/mpirun.sh 8 "$TI" restore 3
check "  ... epilog, then the prolog stages the chain again" \
  bash -c "hooks_all $EPI && CAIRN_RESTART_FROM=$first hooks_all $PRO && test -e '$u/$CAIRN_JOB/node3/stage/cairn-$(id -u)/$first/gen-1/index'"
mv "$CAIRN_PFS_DIR/cairn-$(id -u)/$first" "$CAIRN_PFS_DIR/moved-away"
check "  ... the new job restores generation 3 from the staged chain, bit-exact" \
  run_grep "restoring generation 3 of job $first from the PFS" \
  env CAIRN_RESTART_FROM="$first" CAIRN_INCR=on T_WORK=few scripts/mpirun.sh 8 "$TI" restore 3
check "  ... the epilog cleans up" hooks_all "$EPI"

# No daemon at all (as the caller's own uid): the epilogs, at once as Slurm runs them, flush
# the newest generation themselves (cairn flush --node-only on each node, the last commits).
hooks_par() { # hooks_par HOOK: HOOK on node0..node3 at once; each one's status checked
  local n rc=0 pids=()
  for n in 0 1 2 3; do
    env -u CAIRN_JOB SLURM_JOB_ID="$CAIRN_JOB" SLURM_JOB_UID="$(id -u)" SLURMD_NODENAME="node$n" "$1" & pids+=($!)
  done
  for n in 0 1 2 3; do wait "${pids[$n]}" || { echo "$1 on node$n: status $?"; rc=1; }; done
  return $rc
}
export -f hooks_par
fresh_pfs hooks-eflush
export CAIRN_HOOK_LOG=$CAIRN_BASE/hooks.log
u=$CAIRN_BASE/cairn-$(id -u)
check "no daemon: a job saves 3 at level 1, every 2nd to the PFS; the 4 epilogs at once flush generation 3 themselves, commit it, clean up" \
  bash -c "hooks_all $PRO && CAIRN_PFS_EVERY=2 scripts/mpirun.sh 8 $T save 3 1 && ! test -e '$(pfs_gen 3)' && hooks_par $EPI && test -e '$(pfs_gen 3)/index' && ! test -e '$u/$CAIRN_JOB' && grep -q 'committed generation 3 (8 ranks from 4 nodes)' '$CAIRN_HOOK_LOG' || { cat '$CAIRN_HOOK_LOG'; exit 1; }"
check "  ... the next job restores generation 3 from the PFS, bit-exact" \
  bash -c "hooks_all $PRO && run_grep 'restoring generation 3 from the PFS' scripts/mpirun.sh 8 $T restore 3 && hooks_all $EPI"

fresh_pfs hooks-refuse
export CAIRN_HOOK_LOG=$CAIRN_BASE/hooks.log
u=$CAIRN_BASE/cairn-$(id -u)
victim=$(mktemp -d /dev/shm/cairn-victim.XXXXXX); SCRATCH_DIRS+=("$victim"); touch "$victim/precious"
ln -s "$victim" "$u"
check "epilog leaves a symlink planted as <base>/cairn-<uid> alone: exit 0, not followed" \
  bash -c "CAIRN_NODE=node0 $EPI && test -L '$u' && test -e '$victim/precious' && test \$(ls -A '$victim') = precious"
check "prolog sets a symlink planted as <base>/cairn-<uid> aside (not followed), makes the directory: exit 0, says so" \
  bash -c "CAIRN_NODE=node0 $PRO 2>&1 && grep -q 'cairn-$(id -u) is a symlink: set aside as' '$CAIRN_HOOK_LOG' && ! test -L '$u' && test -d '$u/$CAIRN_JOB/node0' && test \$(ls -A '$victim') = precious"
rm -rf "$u"; mkdir -m 700 "$u"; mkdir -m 700 "$u/$CAIRN_JOB"; chown 65534 "$u/$CAIRN_JOB"
check "prolog refuses a job directory owned by another user: exit 1, names the owner" \
  bash -c "CAIRN_NODE=node0 $PRO 2>&1; test \$? = 1 && grep -q 'is owned by uid 65534, not by the job.s user' '$CAIRN_HOOK_LOG'"
rm -rf "${u:?}/$CAIRN_JOB"; mkdir -m 700 "$u/$CAIRN_JOB"; ln -s "$victim" "$u/$CAIRN_JOB/node1"
check "epilog removes a symlink in place of a node directory, not what it points to" \
  bash -c "CAIRN_NODE=node1 $EPI && test -e '$victim/precious' && ! test -L '$u/$CAIRN_JOB/node1'"
check "prolog refuses a disk without the space asked for (CAIRN_HOOK_NEED=1P): exit 1" \
  bash -c "CAIRN_HOOK_NEED=1P CAIRN_NODE=node0 $PRO 2>&1; test \$? = 1 && grep -q 'free in .*the job needs 1.0PB' '$CAIRN_HOOK_LOG'"
full=$(mktemp -d /dev/shm/cairn-full.XXXXXX); SCRATCH_DIRS+=("$full")
if mount -t tmpfs -o size=1m,mode=1777 tmpfs "$full"; then
  MOUNTS+=("$full")
  dd if=/dev/zero of="$full/filler" bs=64k count=64 status=none 2>/dev/null
  check "prolog refuses a full node-local disk (CAIRN_HOOK_NEED=64K on a full 1 MiB tmpfs)" \
    bash -c "CAIRN_BASE='$full' CAIRN_HOOK_NEED=64K CAIRN_NODE=node0 $PRO 2>&1; test \$? = 1 && grep -q 'only 0B free in $full; the job needs 64KB' '$CAIRN_HOOK_LOG'"
else
  skip "the full-disk hook scenario: cannot mount a small tmpfs here"
fi
check "hooks without a job id: say which variable, do nothing, exit 0 (not the node's fault)" \
  bash -c "env -u CAIRN_JOB -u SLURM_JOB_ID $PRO 2>&1 | grep -q 'set SLURM_JOB_ID or CAIRN_JOB; nothing done'; test \${PIPESTATUS[0]} = 0"
check "hooks with a bad setting (CAIRN_HOOK_UNFLUSHED=maybe, CAIRN_HOOK_NEED=lots): say which, do nothing, exit 0" \
  bash -c "for e in CAIRN_HOOK_UNFLUSHED=maybe CAIRN_HOOK_NEED=lots; do out=\$(env \$e CAIRN_NODE=node0 CAIRN_BASE='$CAIRN_BASE/none' $PRO 2>&1) || exit 1; grep -q \"\${e%%=*}='\${e#*=}' is not .*; nothing done\" <<<\"\$out\" || exit 1; done; ! test -e '$CAIRN_BASE/none'"
check "cairn help hook: the environment and exit statuses; a bad argument is a usage error (2)" \
  bash -c "'$CAIRN_CLI' help hook | grep -q 'CAIRN_HOOK_UNFLUSHED=keep|drain' && '$CAIRN_CLI' hook prologue 2>/dev/null; test \$? = 2"
PRO=$PWD/$PRO EPI=$PWD/$EPI
source tests/mpi/run_hooks_users.sh
unset CAIRN_HOOK_LOG CAIRN_CLI CAIRN_DAEMON_LAUNCHER CAIRN_PFS_DIR CAIRN_SET_SIZE CAIRN_EC_M
