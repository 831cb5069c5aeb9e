#!/usr/bin/env bash
# run_nodes.sh - node names: one rule for the library, cairnd, the CLI and
# the hooks (job.node / CAIRN_NODE, else SLURMD_NODENAME, else the full
# hostname, mapped to a valid name; `cairn config --node` prints it). Hosts are
# emulated by UTS namespaces (tests/mpi/on_host.sh; root only): hosts
# n1.rack-a and n1.rack-b are two nodes; one name claimed on two hosts fails
# cairn_init; the hooks and the job agree on the node directory, also where
# Slurm's node name is not the hostname; `cairn start` works from a machine
# that serves no daemon (a login node). Sourced by tests/run.sh (check,
# fresh, fresh_pfs, pfs_gen, $T, $BUILD).

PRO=scripts/slurm/cairn-prolog EPI=scripts/slurm/cairn-epilog
C=$BUILD/cairn
on_hosts() { # on_hosts "HOST..." NP PROGRAM ARGS...: rank r runs on host word r
  T_HOSTS=$1 scripts/mpirun.sh "$2" tests/mpi/on_host.sh "${@:3}"
}
export -f on_hosts
export PRO EPI C CAIRN_CLI=$C
# This scenario names nodes itself: no emulation from the caller's environment.
unset CAIRN_NODE CAIRN_RANKS_PER_NODE SLURMD_NODENAME
uid=$(id -u)

check "config --node: CAIRN_NODE, else SLURMD_NODENAME, else the hostname; one per line" \
  bash -c "test \"\$(CAIRN_NODE=emu-1 SLURMD_NODENAME=sn-1 '$C' config --node)\" = emu-1 && test \"\$(SLURMD_NODENAME=sn-1 '$C' config --node)\" = sn-1"
check "config --node: a bad CAIRN_NODE is refused (exit 1), not mapped" \
  run_grep_rc 1 "CAIRN_NODE.*is not 1-63 of" env CAIRN_NODE=a/b "$C" config --node
fresh nodes-nocli
check "hooks: without a cairn binary: say so, do nothing, exit 0" \
  bash -c "run_grep 'cannot find the cairn binary \\(/nonexistent/cairn\\); nothing done' env CAIRN_CLI=/nonexistent/cairn $PRO && ! test -e '$CAIRN_BASE/cairn-$uid'"

if [ "$(id -u)" -ne 0 ] || ! unshare --uts true 2>/dev/null; then
  skip "node names on emulated hosts: needs root and unshare --uts"
else
  check "config --node: on host n1.rack-a the full hostname, not n1" \
    run_grep '^n1\.rack-a$' unshare --uts sh -c "hostname n1.rack-a && '$C' config --node"

  fresh nodes-dots
  d=$CAIRN_BASE/cairn-$uid/$CAIRN_JOB
  check "node names: hosts n1.rack-a and n1.rack-b are two nodes, each with its own directory; a level-2 checkpoint across them" \
    bash -c "on_hosts 'n1.rack-a n1.rack-a n1.rack-b n1.rack-b' 4 $T save 2 2 && test -e '$d/n1.rack-a/gen-2/manifest' && test -e '$d/n1.rack-b/gen-2/manifest' && ! test -e '$d/n1'"
  check "  ... n1.rack-a lost: restored bit-exact from its partner's copy on n1.rack-b" \
    bash -c "rm -rf '$d/n1.rack-a' && on_hosts 'n1.rack-a n1.rack-a n1.rack-b n1.rack-b' 4 $T restore 2"

  fresh nodes-clash
  check "node names: one name on two hosts (SLURMD_NODENAME=c1 leaked to both) fails cairn_init, naming it and the hosts; nothing written" \
    bash -c "run_grep \"node name 'c1' \\(from SLURMD_NODENAME\\) is claimed by ranks on different hosts: hostA \\(rank 0\\) and hostB \\(rank 1\\)\" env SLURMD_NODENAME=c1 bash -c \"on_hosts 'hostA hostB' 2 $T expect-init-fail CAIRN_ECONFIG\" && ! test -e '$CAIRN_BASE/cairn-$uid'"
  check "  ... CAIRN_NODE=c1 on both hosts: the same refusal" \
    run_grep "node name 'c1' \(from job.node\) is claimed by ranks on different hosts: hostA \(rank 0\) and hostB \(rank 1\)" env CAIRN_NODE=c1 bash -c "on_hosts 'hostA hostB' 2 $T expect-init-fail CAIRN_ECONFIG"
  check "  ... CAIRN_NODE=c1 for 2 ranks on one host: one (emulated) node, allowed" \
    bash -c "CAIRN_NODE=c1 scripts/mpirun.sh 2 $T save 1 && test -e '$CAIRN_BASE/cairn-$uid/$CAIRN_JOB/c1/gen-1/manifest'"

  # An older cairn named host n1.rack-a node n1: its directory is not missed without a word.
  fresh nodes-legacy
  d=$CAIRN_BASE/cairn-$uid/$CAIRN_JOB
  check "node names: a restart on host n1.rack-a finds <job>/n1 of an older cairn (short hostname): warns, names the rename, touches nothing" \
    bash -c "CAIRN_NODE=n1 on_hosts 'n1.rack-a n1.rack-a' 2 $T save 2 >/dev/null && run_grep \"directory n1/ holds what an older cairn wrote on this host.*rename n1 to n1.rack-a\" on_hosts 'n1.rack-a n1.rack-a' 2 $T expect-fail CAIRN_ENOENT && test -e '$d/n1/gen-2/manifest'"
  check "  ... renamed as it says, the restart restores generation 2 bit-exact" \
    bash -c "rm -rf '$d/n1.rack-a' && mv '$d/n1' '$d/n1.rack-a' && on_hosts 'n1.rack-a n1.rack-a' 2 $T restore 2"

  fresh nodes-hooks-host
  export CAIRN_HOOK_LOG=$CAIRN_BASE/hooks.log
  d=$CAIRN_BASE/cairn-$uid/$CAIRN_JOB
  check "hooks: on host n1.rack-a without CAIRN_NODE or SLURMD_NODENAME, prolog and job use <job>/n1.rack-a; the epilog removes it" \
    bash -c "unshare --uts sh -c 'hostname n1.rack-a && $PRO' && test -d '$d/n1.rack-a' && on_hosts 'n1.rack-a n1.rack-a' 2 $T save 1 && test -e '$d/n1.rack-a/gen-1/manifest' && unshare --uts sh -c 'hostname n1.rack-a && $EPI' && ! test -e '$d'"
  unset CAIRN_HOOK_LOG
fi

# Slurm's NodeName is not the hostname (NodeName=sn-0 NodeHostname=...): the
# prolog, the job step and the epilog all see SLURMD_NODENAME=sn-0.
fresh_pfs nodes-hooks
export CAIRN_HOOK_LOG=$CAIRN_BASE/hooks.log
u=$CAIRN_BASE/cairn-$uid
first=$CAIRN_JOB second=$CAIRN_JOB-restart
check "hooks: a job step on Slurm node sn-0 (not the hostname) writes to <job>/sn-0 and flushes generation 1 to the PFS" \
  bash -c "SLURMD_NODENAME=sn-0 scripts/mpirun.sh 2 $T save 1 4 && test -e '$u/$first/sn-0/gen-1/manifest' && test -e '$(pfs_gen 1)/index'"
as_slurm() { env -u CAIRN_JOB SLURM_JOB_ID="$second" SLURM_JOB_UID="$(id -u)" SLURMD_NODENAME=sn-0 "$@"; }
export -f as_slurm
export first second
check "  ... the prolog of a job restarting it on sn-0 stages generation 1 into <job>/sn-0/stage" \
  bash -c "CAIRN_RESTART_FROM=$first as_slurm $PRO && test -e '$u/$second/sn-0/stage/cairn-$uid/$first/gen-1/index'"
mv "$CAIRN_PFS_DIR/cairn-$uid/$first" "$CAIRN_PFS_DIR/moved-away"
check "  ... the job's step on sn-0 restores from the staged copy (the PFS copy is gone)" \
  run_grep "restoring generation 1 of job $first from the PFS \(level 4\): this job \($second\) has none" \
  env CAIRN_RESTART_FROM="$first" bash -c "as_slurm scripts/mpirun.sh 2 $T restore 1"
check "  ... the epilog on sn-0 removes the job's directory: nothing left behind" \
  bash -c "as_slurm $EPI && ! test -e '$u/$second'"
unset CAIRN_HOOK_LOG CAIRN_PFS_DIR

# `cairn start` on a login node: its node-local storage is not the daemons'
# (they run on the job's nodes), so no daemon socket is ever visible there.
fresh nodes-login
login=$(mktemp -d /dev/shm/cairn-login.XXXXXX); SCRATCH_DIRS+=("$login")
check "cairn start on a machine serving no daemon (a login node) returns once the 2 daemons serve the job elsewhere" \
  run_grep "2 daemon\(s\) serve job $CAIRN_JOB; none on this machine" \
  env CAIRN_BASE="$login" CAIRN_RANKS_PER_NODE=1 CAIRN_DAEMON_LAUNCHER="env CAIRN_BASE=$CAIRN_BASE bash scripts/mpirun.sh" "$C" start --nodes 2 --timeout 20
check "  ... they serve the job's nodes: both idle; cairn stop on a job node ends them" \
  bash -c "test \"\$(CAIRN_RANKS_PER_NODE=1 '$C' status | grep -c idle)\" = 2 && CAIRN_RANKS_PER_NODE=1 '$C' stop"
check "  ... a later start there whose daemons never come up fails: the earlier ready line in the log does not count" \
  run_grep_rc 1 "no daemon of job $CAIRN_JOB answered within 10 s" \
  env CAIRN_BASE="$login" CAIRN_RANKS_PER_NODE=1 CAIRN_DAEMON=/bin/false CAIRN_DAEMON_LAUNCHER="env CAIRN_BASE=$CAIRN_BASE bash scripts/mpirun.sh" "$C" start --nodes 2 --timeout 10
unset CAIRN_CLI
