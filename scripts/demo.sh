#!/usr/bin/env bash
# demo.sh: the main job behind `make demo`. A heat-diffusion run (examples/heat)
# on 8 ranks over 4 emulated nodes, with a node daemon (cairnd) per node,
# checkpoints at every level, crashes, loses two nodes, is restarted from its
# node-local checkpoints (the lost nodes rebuilt by decoding), and its final
# field is compared byte for byte with an uninterrupted run:
#   1. reference: the whole run, no crash, no checkpoints
#   2. crash:     `cairn start` runs the daemons; checkpoints every EVERY steps
#                 at the levels LEVELS in turn (1 local, 2 partner copy, 3
#                 parity over one encoding set of the 4 nodes with m = 2, 4 the
#                 PFS too): each returns at level 1, the daemons do the rest;
#                 rank 5 SIGKILLs itself after step CRASH_AT; the launcher
#                 fails; the daemons live on: `cairn drain` finishes their work
#                 and makes sure the newest complete generation is on the PFS
#   3. node loss: the daemons stop; the node-local directories of LOST_NODES
#                 are wiped, as replaced nodes come back empty
#   4. restart:   new daemons, same job id, --restart: the lost nodes' files are
#                 rebuilt by decoding and the run continues from the newest
#                 generation that survives, the last at level 3 or 4 before the
#                 crash
#   5. verify:    cmp of the restarted run's final field with the reference's
#                 at the same step
#   6. fewer ranks: the job goes on MORE steps on 6 ranks over 3 nodes
#                 (heat --restart-ranks): cairn remaps the 8 ranks' newest
#                 generation onto the 6 (node 3 is not in the job, so from the
#                 PFS copy); its final field must equal the uninterrupted
#                 reference run's, which ran STEPS + MORE steps on 8 ranks
# Storage (node-local and the PFS) is a fresh temporary directory, removed at
# exit, daemons stopped. Exits non-zero on any mismatch or unexpected failure.
#   BUILD=build bash scripts/demo.sh   (NX, NY, STEPS, EVERY, LEVELS, CRASH_AT,
#                                        LOST_NODES, MORE may be set)
set -u

BUILD=${BUILD:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
heat=$BUILD/examples/heat
cli=$BUILD/cairn
np=8 per_node=2 crash_rank=5
nx=${NX:-1024} ny=${NY:-1024} steps=${STEPS:-400} every=${EVERY:-50} crash_at=${CRASH_AT:-250}
more=${MORE:-100}           # steps the job goes on for on 6 ranks (step 6)
levels=${LEVELS:-1,2,3,4}   # the checkpoints' levels in turn
lost_nodes=${LOST_NODES:-"1 2"}   # wiped after the crash, as replaced nodes come back empty
args=(--nx "$nx" --ny "$ny" --steps "$steps" --levels "$levels")
timeout=${DEMO_TIMEOUT:-300}   # seconds per run; a hang is a failure

[ -x "$heat" ] || { echo "demo: FAIL: $heat not built (run: make all)"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cairn-demo.XXXXXX") || exit 1
job=demo-$(hostname -s 2>/dev/null || echo host)-$$-$(date +%s)
trap '"$cli" stop --job "$job" >/dev/null 2>&1; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
export CAIRN_BASE=$work/local CAIRN_PFS_DIR=$work/pfs CAIRN_RANKS_PER_NODE=$per_node
export CAIRN_SET_SIZE=4 CAIRN_EC_M=2   # one encoding set of the 4 nodes: k = 2, m = 2
export CAIRN_LOG_LEVEL=${CAIRN_LOG_LEVEL:-warn}
export CAIRN_DAEMON_LAUNCHER="bash $root/scripts/mpirun.sh"   # cairn start: LAUNCHER -n N cairnd
export CAIRN_MPI_FLAVOR=${CAIRN_MPI_FLAVOR:-$(bash "$root/scripts/mpirun.sh" --flavor)} # asked once
mkdir -m 700 "$CAIRN_BASE" "$CAIRN_PFS_DIR"

fail() { echo "demo: FAIL: $*"; exit 1; }
# run_heat NAME JOB ARGS...: heat on $np ranks, output in $work/NAME.log; sets $secs.
run_heat() {
  local name=$1 t0 rc; t0=$(date +%s.%N)
  CAIRN_JOB=$2 timeout "$timeout" "$root/scripts/mpirun.sh" "$np" "$heat" "${@:3}" \
    >"$work/$name.log" 2>&1
  rc=$?
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  return $rc
}
# show_log NAME: after a failure, the failing ranks' own messages and statuses
# (scripts/mpirun.sh's report), else the last lines of the run's output, indented.
show_log() {
  if grep -q '^mpirun.sh: ' "$work/$1.log"; then
    grep '^mpirun.sh: ' "$work/$1.log" | sed 's/^/    | /'
  else
    tail -n 15 "$work/$1.log" | sed 's/^/    | /'
  fi
}
# show_disk: the generation directories on each emulated node (when the CLI can't say).
show_disk() {
  local n
  for n in "$CAIRN_BASE/cairn-$(id -u)/$job"/node*; do
    [ -d "$n" ] || continue
    echo "      ${n##*/}: $(cd "$n" && printf '%s\n' gen-* | sort -t- -k2n | xargs)"
  done
}
heat_lines() { sed -n 's/^heat: \(grid\|[0-9]* checkpoints\|time\)/    \1/p' "$work/$1.log"; }

echo "demo: heat ${nx}x${ny}, $steps steps, checkpoint every $every at levels $levels in turn" \
     "(level 3: m = 2), $np ranks on $((np / per_node)) emulated nodes, one cairnd each"
echo "demo: job $job, node-local storage $CAIRN_BASE, PFS $CAIRN_PFS_DIR"
# daemons NAME: start one cairnd per emulated node for the job.
daemons() {
  "$cli" start --job "$job" --nodes $((np / per_node)) >"$work/start-$1.log" 2>&1 ||
    { sed 's/^/    | /' "$work/start-$1.log"; fail "cairn start failed"; }
}
# level_at STEP: the level of the checkpoint at STEP.
level_at() { local IFS=,; local l=($levels); echo "${l[$(( ($1 / every - 1) % ${#l[@]} ))]}"; }

# 1. reference: STEPS + MORE steps, the field at step STEPS kept (--snap)
run_heat ref "$job-ref" "${args[@]}" --steps $((steps + more)) --snap "$steps" --ckpt-every 0 \
  --out "$work/ref.bin" || { show_log ref; fail "reference run failed"; }
[ -s "$work/ref.bin.$steps" ] || fail "the reference run wrote no field at step $steps"
echo "demo: [1/6] reference: uninterrupted run of $((steps + more)) steps, no checkpoints: done in ${secs}s"

# 2. crash
daemons crash
run_heat crash "$job" "${args[@]}" --ckpt-every "$every" --crash-at "$crash_at" \
  --crash-rank "$crash_rank"
rc=$?
[ $rc -ne 0 ] || { show_log crash; fail "the crash run exited 0: rank $crash_rank did not crash"; }
grep -q "rank $crash_rank: crashing after step $crash_at" "$work/crash.log" ||
  { show_log crash; fail "the crash run failed (status $rc), but not by the planned crash"; }
echo "demo: [2/6] crash: rank $crash_rank killed itself after step $crash_at;" \
     "launcher exit status $rc, as expected (${secs}s)"
t0=$(date +%s.%N)
timeout "$timeout" "$cli" drain --job "$job" --timeout "$timeout" >"$work/drain.log" 2>&1 ||
  { sed 's/^/    | /' "$work/drain.log"; fail "cairn drain failed after the crash"; }
echo "    cairnd outlived the application: $(sed 's/^drained job [^:]*: //' "$work/drain.log")" \
     "($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s)"
if [ -x "$cli" ] && timeout 60 "$cli" ls --base "$CAIRN_BASE" --job "$job" >"$work/ls.out" 2>&1
then
  echo "    cairn ls --job $job:"
  sed 's/^/      /' "$work/ls.out" | head -n 20
else
  if [ -x "$cli" ]; then
    echo "    (note: cairn ls failed, not part of the verdict: $(head -n 1 "$work/ls.out"))"
  else
    echo "    (note: $cli not built; not part of the verdict)"
  fi
  echo "    generation directories on disk:"
  show_disk
fi

# 3. lose nodes: their node-local directories are wiped
"$cli" stop --job "$job" >/dev/null || fail "cairn stop failed"
for n in $lost_nodes; do rm -rf "$CAIRN_BASE/cairn-$(id -u)/$job/node$n"; done
echo "demo: [3/6] node loss: nodes $lost_nodes replaced, their node-local storage wiped"

# 4. restart: rebuild the lost nodes by decoding, then restore
daemons restart
run_heat restart "$job" "${args[@]}" --ckpt-every "$every" --restart --out "$work/restart.bin" ||
  { show_log restart; fail "the restarted run failed"; }
restored=$(sed -n 's/^heat: restored generation \([0-9]*\).*/\1/p' "$work/restart.log")
# the last checkpoint at level 3 or 4 completed before the crash
expected=none
for ((st = (crash_at - 1) / every * every; st > 0; st -= every)); do
  [ "$(level_at "$st")" -ge 3 ] && { expected=$st; break; }
done
rebuilt=$(grep -c 'by decoding' "$work/restart.log")
echo "demo: [4/6] restart: $rebuilt lost node(s) rebuilt by decoding, restored generation" \
     "${restored:-?}, ran to step $steps (${secs}s)"
heat_lines restart
"$cli" drain --job "$job" --timeout "$timeout" >"$work/drain2.log" 2>&1 ||
  { sed 's/^/    | /' "$work/drain2.log"; fail "cairn drain failed after the restarted run"; }
"$cli" stop --job "$job" >/dev/null || fail "cairn stop failed"
echo "    after the run: $(sed 's/^drained job [^:]*: //' "$work/drain2.log"); node-local and PFS:"
timeout 60 "$cli" ls --job "$job" 2>&1 | sed 's/^/      /' | head -n 12
[ "$restored" = "$expected" ] || fail "restored generation ${restored:-none}, expected $expected"

# 5. verify
bytes=$(stat -c %s "$work/ref.bin.$steps") want=$(( nx * ny * 8 ))
[ "$bytes" -eq "$want" ] || fail "reference field has $bytes bytes, not $want"
cmp -s "$work/ref.bin.$steps" "$work/restart.bin" ||
  fail "final field after crash + restart differs from the reference at step $steps:" \
       "$(cmp "$work/ref.bin.$steps" "$work/restart.bin" 2>&1)"
echo "demo: [5/6] verify: final field after crash, node loss and restart identical to the reference" \
     "at step $steps ($bytes bytes)"
[ "$rebuilt" -ge 1 ] || fail "no node was rebuilt by decoding"

# 6. fewer ranks: 6 ranks on 3 nodes go on from the newest generation
np=6
newest=$(( steps / every * every ))
run_heat fewer "$job" "${args[@]}" --steps $((steps + more)) --ckpt-every "$every" --restart-ranks \
  --out "$work/fewer.bin" || { show_log fewer; fail "the run on 6 ranks failed"; }
remapped=$(sed -n 's/^heat: restored generation \([0-9]*\).*/\1/p' "$work/fewer.log")
[ "$remapped" = "$newest" ] || { show_log fewer; fail "6 ranks restored generation ${remapped:-none}, expected $newest"; }
cmp -s "$work/ref.bin" "$work/fewer.bin" ||
  fail "the field after $more more steps on 6 ranks differs from the reference:" \
       "$(cmp "$work/ref.bin" "$work/fewer.bin" 2>&1)"
echo "demo: [6/6] fewer ranks: 8 ranks' generation $newest remapped onto 6 ranks on 3 nodes" \
     "(heat --restart-ranks), $more more steps (${secs}s): identical to the reference at step $((steps + more))"
echo "demo: PASS (crash after step $crash_at, nodes $lost_nodes lost, rebuilt by decoding," \
     "restored generation $restored, went on on 6 ranks from generation $newest, $bytes bytes verified twice)"
