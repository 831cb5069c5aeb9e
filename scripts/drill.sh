#!/usr/bin/env bash
# drill.sh - failure-injection drills behind `cairn drill`: the demo's
# application (examples/heat, 8 ranks on 4 emulated nodes, one encoding set
# with m = 2, checkpoints every 50 steps at levels 1,4,3,4 so the PFS holds
# generations 100 and 200) runs under cairn, one failure is injected, the job
# is restarted, and its final field is compared byte for byte with an
# uninterrupted run. One line per scenario:
#   SCENARIO  RESULT  LEVEL (restored from: 1 node-local, 3 decoded, 4 PFS)
#   GENERATION  VERIFIED (bytes)  TIME (s)
# disk-full fills the node-local disk (a 64 MiB tmpfs; needs root, else it is
# skipped) before the restart: the restarted run must stop at its first
# checkpoint with "no space", and a restart after space is freed must still
# verify. Exits 1 if any scenario lost data or restored wrong data, 2 on bad
# usage.
#   drill.sh --list | --all | SCENARIO...     (BUILD, NX, NY may be set)
#   drill.sh --soak N [--seed S]              random-instant crashes: scripts/soak.sh
set -u
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)   # scripts/, or share/cairn installed
BUILD=${BUILD:-$here/../build}
heat=${HEAT:-$BUILD/examples/heat} cli=$BUILD/cairn
[ -x "$heat" ] || heat=$here/heat   # installed: share/cairn/heat
np=8 nx=${NX:-256} ny=${NY:-256} steps=400 every=50 crash_at=250 m=2
args=(--nx "$nx" --ny "$ny" --steps "$steps" --ckpt-every "$every" --levels 1,4,3,4)
SCENARIOS="rank-crash node-loss-1 node-loss-2 node-loss-3 flip-data flip-data-loss-1 truncate-data
  manifest-data flip-parity truncate-parity manifest-parity flip-pfs truncate-pfs
  index-pfs crash-in-checkpoint daemon-crash disk-full"

case "${1:-}" in
  --soak) shift; exec bash "$here/soak.sh" "$@" ;;
  --list) for s in $SCENARIOS; do echo "$s"; done; exit 0 ;;
  --all) set -- $SCENARIOS ;;
  ''|-h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; echo "scenarios: $(echo $SCENARIOS)"
    [ -n "${1:-}" ]; exit $? ;;
esac
for s in "$@"; do
  [[ " $(echo $SCENARIOS) " == *" $s "* ]] || { echo "drill: no scenario '$s' (--list)" >&2; exit 2; }
done
[ -x "$heat" ] && [ -x "$cli" ] || { echo "drill: $heat or $cli not built (make all)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/cairn-drill.XXXXXX") || exit 1
trap 'pkill -f "^[^ ]*cairnd --job drill-$$-" 2>/dev/null; umount "$work"/*/local 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
export CAIRN_RANKS_PER_NODE=2 CAIRN_SET_SIZE=4 CAIRN_EC_M=$m CAIRN_LOG_LEVEL=warn
export CAIRN_DAEMON_LAUNCHER="bash $here/mpirun.sh"
export CAIRN_MPI_FLAVOR=${CAIRN_MPI_FLAVOR:-$(bash "$here/mpirun.sh" --flavor)} # asked once
mpi() { timeout 300 bash "$here/mpirun.sh" "$np" "$heat" "$@"; }

CAIRN_JOB=drill-$$-ref CAIRN_BASE=$work mpi "${args[@]}" --ckpt-every 0 --out "$work/ref.bin" \
  >"$work/ref.log" 2>&1 || { echo "drill: the reference run failed:"; tail "$work/ref.log"; exit 1; }

# Flip one bit in the middle of FILE, or cut it in half.
flip() {
  local off b; off=$(($(stat -c %s "$1") / 2)); b=$(od -An -tu1 -j "$off" -N1 "$1" | tr -d ' ')
  printf "\\x$(printf %02x $((b ^ 1)))" | dd of="$1" bs=1 seek="$off" conv=notrunc status=none
}
cut_half() { truncate -s $(($(stat -c %s "$1") / 2)) "$1"; }
wipe() { local n; for n in "$@"; do rm -rf "$jobdir/node$n"; done; }

# inject SCENARIO: after the crashed run; $jobdir holds the node directories,
# $node is node0's, $pfs the job's PFS directory.
inject() {
  case $1 in
    rank-crash|crash-in-checkpoint|daemon-crash) ;;
    node-loss-1) wipe 1 ;;
    node-loss-2) wipe 1 2 ;;
    node-loss-3) wipe 1 2 3 ;;                                   # m + 1: the PFS
    flip-data) flip "$node/gen-200/rank-0.ckpt" ;;
    flip-data-loss-1) flip "$node/gen-200/rank-0.ckpt"; wipe 1 ;;  # damaged + lost = m: decode
    truncate-data) cut_half "$node/gen-200/rank-1.ckpt" ;;
    manifest-data) rm -f "$node/gen-200/manifest" ;;
    flip-parity) flip "$node/gen-200/parity.ec"; wipe 1 ;;        # a loss that needs parity
    truncate-parity) cut_half "$node/gen-200/parity.ec"; wipe 1 ;;
    manifest-parity) rm -f "$jobdir/node1/gen-200/manifest"; wipe 2 ;;
    flip-pfs) flip "$pfs/gen-200/agg-000000.cz"; wipe 0 1 2 3 ;;
    truncate-pfs) cut_half "$pfs/gen-200/agg-000000.cz"; wipe 0 1 2 3 ;;
    index-pfs) rm -f "$pfs/gen-200/index"; wipe 0 1 2 3 ;;
  esac
}

# The scenarios whose failure comes after the crash share one crashed run:
# its node-local and PFS directories are copied for each (same job name, so
# the copy is what that run left), then the scenario's damage is done to the copy.
shared() { case $1 in crash-in-checkpoint|daemon-crash) return 1 ;; esac; }

printf '%-20s %-6s %5s %10s %9s %6s\n' SCENARIO RESULT LEVEL GENERATION VERIFIED TIME
failed=0 crashed=
for s in "$@"; do
  t0=$(date +%s.%N)
  export CAIRN_JOB=drill-$$-$s CAIRN_BASE=$work/$s/local CAIRN_PFS_DIR=$work/$s/pfs
  shared "$s" && CAIRN_JOB=drill-$$-crashed
  mkdir -p -m 700 "$CAIRN_BASE" "$CAIRN_PFS_DIR"
  if [ "$s" = disk-full ] && ! mount -t tmpfs -o size=64m,mode=700 tmpfs "$CAIRN_BASE" 2>/dev/null; then
    printf '%-20s %-6s %5s %10s %9s %6s\n' "$s" SKIP - - - "(needs root to mount a small tmpfs)"
    continue
  fi
  jobdir=$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB pfs=$CAIRN_PFS_DIR/cairn-$(id -u)/$CAIRN_JOB
  node=$jobdir/node0
  crash=(--crash-at "$crash_at" --crash-rank 5) fault=
  [ "$s" = crash-in-checkpoint ] && crash=() fault=ckpt.write:gen=200:rank=3
  if [ "$s" = daemon-crash ]; then
    CAIRN_FAULT=cairnd.gen:gen=150:rank=1 "$cli" start --nodes 4 >"$work/$s.start" 2>&1
  fi
  if shared "$s" && [ -n "$crashed" ]; then # the shared crashed run, copied
    cp -a "$crashed/local/." "$CAIRN_BASE/" && cp -a "$crashed/pfs/." "$CAIRN_PFS_DIR/"
  else
    CAIRN_FAULT=$fault mpi "${args[@]}" "${crash[@]}" >"$work/$s.crash" 2>&1
    if shared "$s"; then # kept as it was for the next scenarios
      crashed=$work/crashed
      mkdir -m 700 "$crashed" && cp -a "$CAIRN_BASE" "$crashed/local" && cp -a "$CAIRN_PFS_DIR" "$crashed/pfs"
    fi
  fi
  [ "$s" = daemon-crash ] && "$cli" stop >/dev/null 2>&1
  inject "$s"
  nospace=ok
  if [ "$s" = disk-full ]; then # the first restart must fail cleanly, nothing lost
    dd if=/dev/zero of="$CAIRN_BASE/filler" bs=1M status=none 2>/dev/null
    mpi "${args[@]}" --restart >"$work/$s.full" 2>&1 && nospace=bad
    grep -q 'no space left' "$work/$s.full" || nospace=bad
    rm -f "$CAIRN_BASE/filler"
  fi
  mpi "${args[@]}" --restart --out "$work/$s.bin" >"$work/$s.log" 2>&1
  rc=$?
  [ $nospace = ok ] || { rc=1; cat "$work/$s.full" >>"$work/$s.log"; }
  gen=$(sed -n 's/^heat: restored generation \([0-9]*\).*/\1/p' "$work/$s.log")
  level=1
  grep -q 'by decoding' "$work/$s.log" && level=3
  grep -q 'from the PFS (level 4)' "$work/$s.log" && level=4
  result=PASS bytes=0
  if [ $rc -ne 0 ] || [ -z "$gen" ] || ! cmp -s "$work/ref.bin" "$work/$s.bin"; then
    result=FAIL failed=1
  else
    bytes=$(stat -c %s "$work/$s.bin")
  fi
  printf '%-20s %-6s %5s %10s %9s %6.1f\n' "$s" "$result" "$level" "${gen:--}" "$bytes" \
    "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
  [ $result = PASS ] || sed 's/^/    | /' "$work/$s.log" | tail -n 8
  [ "$s" = disk-full ] && umount "$CAIRN_BASE"
  rm -rf "${work:?}/$s"
done
exit $failed
