#!/usr/bin/env bash
# run_cluster.sh - cairn on real separate nodes: a head and 4 nodes as Linux
# namespaces (tests/cluster/lab.sh: own network, hostname and node-local tmpfs
# at /dev/shm each; the build and a PFS directory shared), MPI across them
# over TCP, node names from each node's hostname (no CAIRN_NODE, no emulation).
# Every scenario runs examples/heat on 8 ranks (2 per node, one encoding set
# of the 4 nodes, m = 2), crashes rank 5 after step 100 (checkpoints every 20
# steps), injects its failure, restarts from the head and checks the restart's
# exit status, the generation it restored and, byte for byte, its final field
# against an uninterrupted run. Prints ok / not ok per scenario and
# "N passed, N failed"; exits 1 on any failure. The lab is torn down at exit,
# also on failure or Ctrl-C.
#   BUILD=build [CAIRN_LAB_MPI=openmpi|mpich] bash tests/cluster/run_cluster.sh [SCENARIO...]
set -euo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
BUILD=$(cd "${BUILD:-build}" && pwd)
heat=$BUILD/examples/heat cli=$BUILD/cairn lab="bash $here/lab.sh"
export CAIRN_LAB_MPI=${CAIRN_LAB_MPI:-openmpi}
SCENARIOS="l1-crash l2-one-node l2-two-nodes l3-one-node l3-two-nodes l4-three-nodes
  l4-every-node daemons-from-node daemons-from-head rebuild slurm-hooks"
[ $# -gt 0 ] || set -- $SCENARIOS
for s in "$@"; do
  [[ " $(echo $SCENARIOS) " == *" $s "* ]] || { echo "cluster: no scenario '$s' ($(echo $SCENARIOS))" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "cluster: needs root (namespaces, mounts)" >&2; exit 1; }
case "$BUILD/ $root/" in /tmp/*|*" /tmp/"*)
  echo "cluster: $root and $BUILD must not be under /tmp: every node has a private /tmp" >&2; exit 1 ;;
esac
[ -x "$heat" ] && [ -x "$cli" ] && [ -x "$BUILD/cairnd" ] && [ -x "$BUILD/cairn-rebuild" ] ||
  { echo "cluster: $BUILD is not built (make all)" >&2; exit 1; }

export CAIRN_LAB_DIR; CAIRN_LAB_DIR=$(mktemp -d /var/tmp/cairn-lab.XXXXXX)
W=$CAIRN_LAB_DIR/work
teardown() { $lab down || echo "cluster: teardown failed; see $CAIRN_LAB_DIR" >&2; }
trap teardown EXIT
trap 'exit 130' INT TERM
mkdir -p "$W"

# The job's configuration: the same on every node (the default base, /dev/shm).
# Nothing of the caller's (a test suite, a Slurm job) leaks in: no CAIRN_NODE,
# no emulated nodes, no launcher.
for v in $(compgen -e); do
  case $v in CAIRN_LAB_*) ;; CAIRN_*|SLURM_*|SLURMD_*) unset "$v" ;; esac
done
export CAIRN_BASE=/dev/shm CAIRN_PFS_DIR=$CAIRN_LAB_DIR/pfs CAIRN_SET_SIZE=4 CAIRN_EC_M=2
export CAIRN_LOG_LEVEL=warn CAIRN_DAEMON_TIMEOUT=20
NP=8 STEPS=120 EVERY=20 CRASH_AT=100 NODES="n0 n1 n2 n3"
G=$((CRASH_AT - EVERY)) # the newest generation complete before the crash
args=(--nx 128 --ny 128 --steps "$STEPS")
T=180 # seconds any one command may take; a hang is a failure

fail() { echo "FAIL: $*"; return 1; }
show() { echo "--- $1 (last lines)"; tail -n "${2:-15}" "$1" | sed 's/^/    | /'; }
# on NODE CMD...: CMD inside NODE's namespaces (bounded).
# In the background, waited for: a signal to this script is acted on at once
# (the trap tears the lab down, ending whatever ran in it).
on() { local n=$1; shift; timeout "$T" $lab exec "$n" "$@" & wait $!; }
# run_heat NAME JOB CMD...: heat on 8 ranks launched from the head; output in $W/NAME.log; sets rc.
run_heat() {
  local name=$1 job=$2; shift 2
  rc=0
  CAIRN_JOB=$job on head $lab mpirun -n "$NP" "$@" >"$W/$name.log" 2>&1 || rc=$?
}
# crash_run JOB LEVELS: checkpoints every EVERY steps at LEVELS in turn; rank 5
# kills itself after step CRASH_AT; the run must fail by that crash.
crash_run() {
  run_heat "$1-crash" "$1" "$heat" "${args[@]}" --ckpt-every "$EVERY" --levels "$2" \
    --crash-at "$CRASH_AT" --crash-rank 5
  [ "$rc" -ne 0 ] || { show "$W/$1-crash.log"; fail "the crash run of $1 exited 0"; }
  grep -q "rank 5: crashing after step $CRASH_AT" "$W/$1-crash.log" ||
    { show "$W/$1-crash.log"; fail "the crash run of $1 failed (status $rc), not by the planned crash"; }
}
# restart JOB GEN [PATTERN]: restart from the head; it must exit 0, restore
# generation GEN (its log matching PATTERN, if given) and end with the
# reference's bytes.
restart() {
  local job=$1 gen=$2 pat=${3:-} got
  run_heat "$job-restart" "$job" "$heat" "${args[@]}" --ckpt-every "$EVERY" --restart --out "$W/$job.bin"
  [ "$rc" -eq 0 ] || { show "$W/$job-restart.log"; fail "the restart of $job exited $rc"; }
  got=$(sed -n 's/^heat: restored generation \([0-9]*\).*/\1/p' "$W/$job-restart.log")
  [ "$got" = "$gen" ] ||
    { show "$W/$job-restart.log"; fail "the restart of $job restored generation '${got:-none}', expected $gen"; }
  if [ -n "$pat" ] && ! grep -Eq -- "$pat" "$W/$job-restart.log"; then
    show "$W/$job-restart.log"; fail "the restart of $job says nothing like '$pat'"
  fi
  cmp "$W/ref.bin" "$W/$job.bin" ||
    fail "the final field of $job after the restart differs from the uninterrupted run"
  echo "restored generation $got, $(stat -c %s "$W/$job.bin") bytes identical to the uninterrupted run"
}
# no_line PATTERN FILE: PATTERN does not occur in FILE.
no_line() { ! grep -Eq -- "$1" "$2" || { show "$2"; fail "unexpected '$1' in ${2##*/}"; }; }
# has_file NODE PATH: PATH exists in NODE's mount namespace.
has() { on "$1" test -e "$2"; }
jobdir() { echo "/dev/shm/cairn-0/$1"; }
# daemons_gone JOB: no node's socket answers for JOB (cairn status exits 3 everywhere).
daemons_gone() {
  local n st
  for n in $NODES; do
    st=0; on "$n" "$cli" status --job "$1" >/dev/null 2>&1 || st=$?
    [ "$st" -ne 0 ] || return 1
  done
}
stop_daemons() { # best effort, for a scenario that failed half-way
  local n; for n in $NODES; do on "$n" "$cli" stop --job "$1" --timeout 20 >/dev/null 2>&1 || true; done
}

# ---- scenarios: each prints what it saw and returns non-zero on a failure ----
s_l1-crash() { # a rank crash: level 1 on every node as written
  crash_run "$1" 1 && restart "$1" $G &&
    no_line 'by decoding|from the PFS' "$W/$1-restart.log"
}
s_l2-one-node() { # partner copies: one node wiped
  crash_run "$1" 2 && $lab wipe n1 && restart "$1" $G && no_line 'from the PFS' "$W/$1-restart.log"
}
s_l2-two-nodes() { # partner copies: two nodes wiped, not neighbours (n1's copy is on n2, n3's on n0)
  crash_run "$1" 2 && $lab wipe n1 n3 && restart "$1" $G && no_line 'from the PFS' "$W/$1-restart.log"
}
s_l3-one-node() { # parity: one node wiped, rebuilt by decoding
  crash_run "$1" 3 && $lab wipe n2 && restart "$1" $G 'by decoding' &&
    no_line 'from the PFS' "$W/$1-restart.log"
}
s_l3-two-nodes() { # parity: m = 2 nodes wiped (rank 0's node among them)
  crash_run "$1" 3 && $lab wipe n0 n2 && restart "$1" $G 'by decoding' &&
    no_line 'from the PFS' "$W/$1-restart.log"
}
s_l4-three-nodes() { # m + 1 nodes wiped: level 3 cannot, the PFS can (levels 1,4,3,4: 80 is on the PFS)
  crash_run "$1" 1,4,3,4 && $lab wipe n1 n2 n3 && restart "$1" $G 'from the PFS \(level 4\)'
}
s_l4-every-node() { # every node wiped (a new allocation): the PFS
  crash_run "$1" 1,4,3,4 && $lab wipe $NODES && restart "$1" $G 'from the PFS \(level 4\)'
}
# daemons FROM JOB: cairnd on every node, started by `cairn start` run on FROM;
# the job checkpoints at levels 1,3 (80 at level 3, on no PFS), crashes;
# `cairn drain` on a node flushes 80 to the PFS, `cairn stop` ends them all;
# every node is wiped; the restart takes 80 from the PFS.
daemons() {
  local from=$1 job=$2 st=0 n
  CAIRN_DAEMON_LAUNCHER="bash $here/lab.sh mpirun --ppn 1" CAIRN_JOB=$job \
    on "$from" "$cli" start --nodes 4 --timeout 60 >"$W/$job-start.log" 2>&1 || st=$?
  [ "$st" -eq 0 ] || { show "$W/$job-start.log"; fail "cairn start on $from exited $st"; return 1; }
  for n in $NODES; do
    on "$n" "$cli" status --job "$job" >"$W/$job-status-$n.log" 2>&1 ||
      { show "$W/$job-status-$n.log"; fail "no cairnd answers on $n after cairn start on $from"; return 1; }
  done
  crash_run "$job" 1,3 || return 1
  no_line 'synchronous' "$W/$job-crash.log" || return 1 # the daemons served the job
  CAIRN_JOB=$job on n1 "$cli" drain --timeout 120 >"$W/$job-drain.log" 2>&1 ||
    { show "$W/$job-drain.log"; fail "cairn drain on n1 failed"; return 1; }
  grep -q "generation $G flushed to the PFS" "$W/$job-drain.log" ||
    { show "$W/$job-drain.log"; fail "cairn drain did not flush generation $G"; return 1; }
  CAIRN_JOB=$job on n2 "$cli" stop --timeout 60 >"$W/$job-stop.log" 2>&1 ||
    { show "$W/$job-stop.log"; fail "cairn stop on n2 failed"; return 1; }
  local until=$((SECONDS + 30))
  until daemons_gone "$job"; do
    [ "$SECONDS" -lt "$until" ] || { fail "a cairnd of $job still answers after cairn stop"; return 1; }
    sleep 0.2
  done
  $lab wipe $NODES && restart "$job" $G 'from the PFS \(level 4\)'
}
s_daemons-from-node() { daemons n0 "$1" || { stop_daemons "$1"; return 1; }; }
s_daemons-from-head() { daemons head "$1" || { stop_daemons "$1"; return 1; }; }
s_rebuild() { # level 3, two nodes wiped, `cairn rebuild` from a node, then a plain level-1 restart
  local n
  crash_run "$1" 3 && $lab wipe n0 n3 || return 1
  CAIRN_JOB=$1 CAIRN_LAUNCHER="bash $here/lab.sh mpirun" on n1 "$cli" rebuild --np "$NP" \
    >"$W/$1-rebuild.log" 2>&1 || { show "$W/$1-rebuild.log"; fail "cairn rebuild failed"; return 1; }
  for n in n0 n3; do
    has "$n" "$(jobdir "$1")/lab-$n/gen-$G/manifest" ||
      { show "$W/$1-rebuild.log"; fail "cairn rebuild did not give $n back its generation $G"; return 1; }
  done
  restart "$1" $G && no_line 'by decoding|from the PFS' "$W/$1-restart.log"
}
# The Slurm hooks on a node whose NodeName (SLURMD_NODENAME) differs from its
# hostname: job A checkpoints (80 on the PFS) and crashes; job B restarts it:
# each node's prolog stages A's generation 80 in, A's PFS copy is then moved
# away, B's ranks (SLURMD_NODENAME set, as Slurm sets it) must restore from
# what the prolog staged, and each node's epilog must remove B's directory
# (B checkpoints at level 4: an epilog removes only what the PFS holds).
hook() { # hook NODE HOOK JOB: run a hook as slurmd would (bare environment, root)
  on "$1" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_JOB_ID="$3" SLURM_JOB_UID=0 \
    SLURMD_NODENAME="slurm-$1" CAIRN_BASE=/dev/shm CAIRN_PFS_DIR="$CAIRN_PFS_DIR" \
    CAIRN_RESTART_FROM="$4" CAIRN_CLI="$cli" CAIRN_HOOK_LOG="$W/hooks.log" \
    bash "$root/scripts/slurm/$2"
}
s_slurm-hooks() {
  local a=$1-a b=$1-b n pfs=$CAIRN_PFS_DIR/cairn-0
  crash_run "$a" 1,4,3,4 || return 1
  for n in $NODES; do
    hook "$n" cairn-prolog "$b" "$a" || { show "$W/hooks.log"; fail "cairn-prolog failed on $n"; return 1; }
    has "$n" "$(jobdir "$b")/slurm-$n/stage/cairn-0/$a/gen-$G/index" ||
      { show "$W/hooks.log"; fail "cairn-prolog on $n staged nothing into $(jobdir "$b")/slurm-$n"; return 1; }
  done
  mv "$pfs/$a" "$pfs/$a.moved-away" # the restart must read the staged copies
  run_heat "$b-restart" "$b" env CAIRN_RESTART_FROM="$a" bash "$here/slurm-task" "$heat" "${args[@]}" \
    --ckpt-every "$EVERY" --levels 4 --restart --out "$W/$b.bin"
  local got; got=$(sed -n 's/^heat: restored generation \([0-9]*\).*/\1/p' "$W/$b-restart.log")
  [ "$rc" -eq 0 ] && [ "$got" = $G ] ||
    { show "$W/$b-restart.log"; fail "job $b (status $rc) restored '${got:-nothing}', not generation $G staged by the prolog"; return 1; }
  grep -q "of job $a from the PFS" "$W/$b-restart.log" ||
    { show "$W/$b-restart.log"; fail "job $b does not say it restored job $a's generation"; return 1; }
  cmp "$W/ref.bin" "$W/$b.bin" || { fail "job $b's final field differs from the uninterrupted run"; return 1; }
  for n in $NODES; do
    hook "$n" cairn-epilog "$b" "$a" || { show "$W/hooks.log"; fail "cairn-epilog failed on $n"; return 1; }
    ! has "$n" "$(jobdir "$b")" ||
      { on "$n" find "$(jobdir "$b")" -maxdepth 2 | sed 's/^/    | /'; fail "the epilog left job $b's directory on $n"; return 1; }
  done
  echo "prolog staged generation $G on 4 nodes, job $b restored it bit-exact, epilogs removed its directories"
}

# ---- run ----
t0=$SECONDS
$lab up 4
echo "# cluster: head + 4 nodes as namespaces, $CAIRN_LAB_MPI, heat 128x128 on $NP ranks (2 per node), build $BUILD"
run_heat ref "lab-$$-ref" "$heat" "${args[@]}" --ckpt-every 0 --out "$W/ref.bin"
[ "$rc" -eq 0 ] && [ -s "$W/ref.bin" ] || { show "$W/ref.log" 30; echo "cluster: the reference run failed"; exit 1; }
passed=0 failed=0
for s in "$@"; do
  t1=$SECONDS st=0
  "s_$s" "lab-$$-$s" >"$W/$s.out" 2>&1 || st=$?
  if [ "$st" -eq 0 ]; then
    passed=$((passed + 1)); echo "ok - cluster: $s ($((SECONDS - t1)) s): $(tail -n 1 "$W/$s.out")"
  else
    failed=$((failed + 1)); echo "not ok - cluster: $s ($((SECONDS - t1)) s)"; sed 's/^/#   /' "$W/$s.out" | tail -n 25
  fi
done
echo "# cluster: $CAIRN_LAB_MPI, $((SECONDS - t0)) s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
