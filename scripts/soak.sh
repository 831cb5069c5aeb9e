#!/usr/bin/env bash
# soak.sh - random-instant crash soak behind `cairn drill --soak N`.
#
# The demo's application (examples/heat, 8 ranks on 4 emulated nodes, one
# encoding set of 4 with m = 2, a PFS directory) checkpoints every EVERY steps
# at one level L (1-4, drawn per trial). Each trial injects one failure:
#   app-sync    SIGKILL to one rank at a random instant of generation G's
#               checkpoint (synchronous levels),
#   app-daemon  the same with cairnd serving the job (levels 2-4 raised in the
#               background; the daemons finish before the nodes are wiped),
#   daemon      SIGKILL to one node's cairnd at a random instant of its work
#               on generation G (the application goes on synchronously; a new
#               `cairn start` resumes what the dead daemons left),
#   enospc      the node-local disk (a tmpfs, root only) filled to a random
#               level so a checkpoint runs out of space mid-way.
# The instant is uniform over the checkpoint's duration, measured per level
# in this run (CAIRN_FAULT=POINT:gen=G:rank=R:after_us=U; U drawn from
# [0, duration]). Then the nodes that level L survives losing are wiped (1 at
# level 2, m = 2 at level 3, all at level 4) and a new job restarts: it must
# exit 0, restore a generation no older than the last one complete before
# the failure, and finish with a field equal byte for byte to an
# uninterrupted run's. One line per trial, then a summary; exits 1 if any
# trial lost data.
#   soak.sh N [--seed S]      (BUILD, NX, NY may be set)
set -u
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
BUILD=${BUILD:-$here/../build}
heat=${HEAT:-$BUILD/examples/heat} cli=$BUILD/cairn
[ -x "$heat" ] || heat=$here/heat
n=${1:-}
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -gt 0 ] || { echo "usage: cairn drill --soak N [--seed S]" >&2; exit 2; }
seed=$$
[ "${2:-}" = --seed ] && [[ "${3:-}" =~ ^[0-9]+$ ]] && seed=$3
RANDOM=$seed
np=8 nodes=4 nx=${NX:-128} ny=${NY:-128} steps=200 every=25 m=2
root=0; [ "$(id -u)" -eq 0 ] && root=1

work=$(mktemp -d "${TMPDIR:-/tmp}/cairn-soak.XXXXXX") || exit 1
trap 'pkill -f "^[^ ]*cairnd --job soak-$$-" 2>/dev/null; umount "$work"/*/local 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
export CAIRN_RANKS_PER_NODE=2 CAIRN_SET_SIZE=$nodes CAIRN_EC_M=$m CAIRN_LOG_LEVEL=warn
export CAIRN_DAEMON_LAUNCHER="bash $here/mpirun.sh"
unset CAIRN_FAULT
mpi() { timeout 300 bash "$here/mpirun.sh" "$np" "$heat" --nx "$nx" --ny "$ny" --steps "$steps" \
          --ckpt-every "$every" "$@"; }
uniform() { awk -v s="$1" -v hi="$2" 'BEGIN { srand(s); printf "%d\n", rand() * hi }'; }
# Wait (bounded) until every daemon of $CAIRN_JOB is idle with nothing queued.
daemons_idle() {
  local _
  for _ in $(seq 1200); do
    "$cli" status 2>/dev/null | awk 'NR>1 && ($3!=0 || $4!="idle") {b=1} END {exit b}' && return 0
    sleep 0.1
  done
  return 1
}
newest_complete() { # the newest generation `cairn ls` lists at level >= $1, or 0
  "$cli" ls --job "$CAIRN_JOB" 2>/dev/null | awk -v l="$1" '$1 ~ /^[0-9]+$/ && $2 >= l {g = $1 > g ? $1 : g} END {print g + 0}'
}

mkdir -m 700 "$work/ref"
CAIRN_JOB=soak-$$-ref CAIRN_BASE=$work/ref mpi --ckpt-every 0 --out "$work/ref.bin" >"$work/ref.log" 2>&1 ||
  { echo "soak: the reference run failed:"; head -n 20 "$work/ref.log"; exit 1; }

# Per level: the mean duration of one checkpoint (us) and the node-local
# footprint of a finished run (bytes), from a run without failures.
declare -A dur foot
for L in 1 2 3 4; do
  d=$work/cal$L
  mkdir -p -m 700 "$d/local" "$d/pfs"
  CAIRN_JOB=soak-$$-cal$L CAIRN_BASE=$d/local CAIRN_PFS_DIR=$d/pfs mpi --levels $L >"$d.log" 2>&1 ||
    { echo "soak: the calibration run at level $L failed:"; tail "$d.log"; exit 1; }
  dur[$L]=$(awk '/^heat: [0-9]+ checkpoints/ {c = $2} /^heat: time compute/ {t = $7}
                 END { printf "%d\n", (c > 0 ? t / c * 1e6 + 1 : 1000) }' "$d.log")
  foot[$L]=$(du -sb "$d/local" | cut -f1)
  rm -rf "$d"
done
echo "soak: seed $seed; one checkpoint takes $(for L in 1 2 3 4; do printf '%s us at L%s, ' "${dur[$L]}" $L; done | sed 's/, $//')"

kinds=(app-sync app-sync app-daemon daemon)
[ $root = 1 ] && kinds+=(enospc)
printf '%-6s %-10s %5s %5s %9s %-8s %8s %6s\n' TRIAL KIND LEVEL GEN KILL_US RESULT RESTORED TIME
lost=0; declare -A count
for i in $(seq "$n"); do
  t0=$(date +%s.%N)
  kind=${kinds[RANDOM % ${#kinds[@]}]}
  L=$((1 + RANDOM % 4))
  g=$(( (2 + RANDOM % (steps / every - 1)) * every )) # never the first: one must be complete before
  rank=$((RANDOM % np)) node=$((RANDOM % nodes))
  us=$(uniform $((seed + i)) "${dur[$L]}")
  d=$work/$i
  export CAIRN_JOB=soak-$$-$i CAIRN_BASE=$d/local CAIRN_PFS_DIR=$d/pfs
  mkdir -p -m 700 "$CAIRN_BASE" "$CAIRN_PFS_DIR"
  want=$((g - every)) log=$d/trial.log
  case $kind in
    app-sync)
      CAIRN_FAULT=ckpt.begin:gen=$g:rank=$rank:after_us=$us mpi --levels $L >"$log" 2>&1 ;;
    app-daemon)
      "$cli" start --nodes $nodes >>"$log" 2>&1
      CAIRN_FAULT=ckpt.begin:gen=$g:rank=$rank:after_us=$us mpi --levels $L >>"$log" 2>&1
      daemons_idle; "$cli" stop >>"$log" 2>&1 ;;
    daemon) # the application runs to its end; the daemons are resumed after
      CAIRN_FAULT=cairnd.gen:gen=$g:rank=$node:after_us=$us "$cli" start --nodes $nodes >>"$log" 2>&1
      mpi --levels $L >>"$log" 2>&1 || echo "soak: the application failed beside a dying daemon" >>"$log"
      "$cli" stop >>"$log" 2>&1
      "$cli" start --nodes $nodes >>"$log" 2>&1 && daemons_idle; "$cli" stop >>"$log" 2>&1
      want=$steps us=$us ;;
    enospc) # free space drawn from [0, 1.5 x a finished run's footprint]
      mount -t tmpfs -o size=64m,mode=700 tmpfs "$CAIRN_BASE"
      free=$(uniform $((seed + i)) $((foot[$L] * 3 / 2)))
      fill=$(( 64 * 1048576 - free - 65536 ))
      [ $fill -gt 0 ] && head -c "$fill" /dev/zero >"$CAIRN_BASE/filler" 2>/dev/null
      mpi --levels $L >"$log" 2>&1
      want=$(newest_complete "$L") us=free:$free g=-
      rm -f "$CAIRN_BASE/filler" ;;
  esac
  # Lose what level L survives losing (a replaced node comes back empty).
  case $L in
    2) lose=$node ;;
    3) lose="$node $(( (node + 1 + RANDOM % (nodes - 1)) % nodes ))" ;;
    4) lose=$(seq 0 $((nodes - 1))) ;;
    *) lose= ;;
  esac
  for x in $lose; do rm -rf "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node$x"; done
  mpi --levels $L --restart --out "$d/out.bin" >>"$log" 2>&1
  rc=$?
  got=$(sed -n 's/^heat: restored generation \([0-9]*\).*/\1/p' "$log" | tail -n 1)
  result=ok
  if [ "$want" -eq 0 ]; then # nothing was complete (a disk full from the first checkpoint on)
    [ $rc -ne 0 ] && grep -q 'no checkpoint found' "$log" || { result=LOST lost=$((lost + 1)); }
    got=none
  elif [ $rc -ne 0 ] || [ -z "$got" ] || [ "$got" -lt "$want" ] || ! cmp -s "$work/ref.bin" "$d/out.bin"; then
    result=LOST lost=$((lost + 1))
  fi
  count[$kind]=$(( ${count[$kind]:-0} + 1 ))
  printf '%-6s %-10s %5s %5s %9s %-8s %8s %6.1f\n' "$i" "$kind" "$L" "$g" "$us" "$result" \
    "${got:--}" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
  if [ $result != ok ]; then
    echo "    | lost nodes: ${lose:-none}; expected a generation >= $want, exit status $rc"
    sed 's/^/    | /' "$log" | tail -n 12
  fi
  [ $kind = enospc ] && umount "$CAIRN_BASE"
  rm -rf "$d"
done
summary=$(for k in app-sync app-daemon daemon enospc; do printf '%s %s, ' "${count[$k]:-0}" "$k"; done | sed 's/, $//')
echo "soak: $n trials ($summary): $((n - lost)) restored bit-exact, $lost lost"
[ $lost -eq 0 ]
