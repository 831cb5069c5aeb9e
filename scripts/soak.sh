#!/usr/bin/env bash
# soak.sh - random-instant crash soak behind `cairn drill --soak N`.
#
# The demo's application (examples/heat, 8 ranks on 4 emulated nodes, one
# encoding set of 4 with m = 2, a PFS directory) checkpoints every EVERY steps
# at one level L (1-4). Each trial injects one failure (the pairs of kind and
# level are dealt from a shuffled list: see "pairs" below):
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
# exit 0, restore a generation no older than the newest one the application
# was told is safe (cairn_checkpoint returned 0: rank 0's "generation G
# complete" line of its log, at info level, written once every rank's call
# agreed the generation is complete), and finish with a field equal
# byte for byte to an uninterrupted run's. When nothing was acknowledged (a
# disk full from the first checkpoint on) the restart must either refuse
# cleanly (cairn_restart returns an error: "no checkpoint found", or a
# damaged or lost generation named) or restore one and still end bit-exact. The
# first line gives the seed; one line per trial, and for a trial that lost
# data its parameters, what the nodes and the PFS held before and after, and
# the tails of both runs; then a summary. Exits 1 if any trial lost data.
#   soak.sh N [--seed S]      (BUILD, NX, NY may be set)
# SOAK_KINDS (e.g. "enospc daemon") and SOAK_LEVELS (e.g. "3 4") restrict the
# draw to those kinds and levels (only those levels are calibrated), to
# replay or hunt one failure; SOAK_FREE_PCT=P leaves enospc trials P% of a
# finished run's footprint free instead of a random share.
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
echo "soak: seed $seed (replay: $(for v in SOAK_KINDS SOAK_LEVELS SOAK_FREE_PCT NX NY; do
  [ -z "${!v:-}" ] || printf '%s="%s" ' $v "${!v}"; done)cairn drill --soak $n --seed $seed)"
np=8 nodes=4 nx=${NX:-128} ny=${NY:-128} steps=200 every=25 m=2
root=0; [ "$(id -u)" -eq 0 ] && root=1

work=$(mktemp -d "${TMPDIR:-/tmp}/cairn-soak.XXXXXX") || exit 1
trap 'pkill -f "^[^ ]*cairnd --job soak-$$-" 2>/dev/null; umount "$work"/*/local 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
export CAIRN_RANKS_PER_NODE=2 CAIRN_SET_SIZE=$nodes CAIRN_EC_M=$m CAIRN_LOG_LEVEL=warn
export CAIRN_DAEMON_LAUNCHER="bash $here/mpirun.sh"
export CAIRN_MPI_FLAVOR=${CAIRN_MPI_FLAVOR:-$(bash "$here/mpirun.sh" --flavor)} # asked once
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
newest_complete() { # the newest generation `cairn ls` lists complete at level >= $1, or 0;
  # level 4 is a generation indexed on the PFS (LEVEL 4, the PFS column gives its files)
  "$cli" ls --job "$CAIRN_JOB" 2>/dev/null | awk -v l="$1" '$1 ~ /^[0-9]+$/ &&
    (l < 4 ? $2 >= l && $NF == "complete" : / [0-9]+ files, /) {g = $1 > g ? $1 : g} END {print g + 0}'
}
acked() { # the newest generation acknowledged to the application (log $1), or 0: rank 0
  # logs "generation G complete at level ..." once, after every one of the $np ranks'
  # cairn_checkpoint calls agreed that G is complete (they all return 0)
  sed -n 's/^cairn\[rank 0 .*\] info: generation \([0-9]*\) complete at level .*/\1/p' "$1" |
    sort -n | awk '{g = $1} END {print g + 0}'
}
held() { # what each node directory and the PFS hold of $CAIRN_JOB
  local j=$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB x g s d
  for x in $(seq 0 $((nodes - 1))) pfs; do
    s= d=$j/node$x
    [ $x = pfs ] && d=$CAIRN_PFS_DIR/cairn-$(id -u)/$CAIRN_JOB
    for g in $(ls "$d" 2>/dev/null | sed -n 's/^gen-\([0-9]*\)$/\1/p' | sort -n); do
      s+=" $g"
      if [ $x = pfs ]; then [ -e "$d/gen-$g/index" ] || s+="(no index)"
      else [ -e "$d/gen-$g/manifest" ] || s+="(no manifest)"; [ -e "$d/gen-$g/parity.ec" ] && s+="+parity"
      fi
    done
    [ -d "$d" ] || s=" (no directory)"
    printf '%s%s:%s\n' "$([ $x = pfs ] || echo node)" "$x" "${s:- (no generation)}"
  done
}

kinds=(app-sync app-sync app-daemon daemon)
[ $root = 1 ] && kinds+=(enospc)
[ -n "${SOAK_KINDS:-}" ] && read -r -a kinds <<<"$SOAK_KINDS"
levels=(1 2 3 4)
[ -n "${SOAK_LEVELS:-}" ] && read -r -a levels <<<"$SOAK_LEVELS"
for k in "${kinds[@]}"; do
  case $k in app-sync|app-daemon|daemon) ;; enospc) [ $root = 1 ] || { echo "soak: enospc needs root" >&2; exit 2; } ;;
    *) echo "soak: SOAK_KINDS: unknown kind '$k'" >&2; exit 2 ;; esac
done
for L in "${levels[@]}"; do [[ "$L" =~ ^[1-4]$ ]] || { echo "soak: SOAK_LEVELS: '$L' is not 1-4" >&2; exit 2; }; done
[ -z "${SOAK_FREE_PCT:-}" ] || [[ "$SOAK_FREE_PCT" =~ ^[0-9]+$ ]] ||
  { echo "soak: SOAK_FREE_PCT: '$SOAK_FREE_PCT' is not a whole number" >&2; exit 2; }

mkdir -m 700 "$work/ref"
CAIRN_JOB=soak-$$-ref CAIRN_BASE=$work/ref mpi --ckpt-every 0 --out "$work/ref.bin" >"$work/ref.log" 2>&1 ||
  { echo "soak: the reference run failed:"; head -n 20 "$work/ref.log"; exit 1; }

# Per level: the mean duration of one checkpoint (us) and the node-local
# footprint of a finished run (bytes), from a run without failures.
declare -A dur foot
cal=$(printf '%s\n' "${levels[@]}" | sort -un | tr '\n' ' ')
for L in $cal; do
  d=$work/cal$L
  mkdir -p -m 700 "$d/local" "$d/pfs"
  CAIRN_JOB=soak-$$-cal$L CAIRN_BASE=$d/local CAIRN_PFS_DIR=$d/pfs CAIRN_LOG_LEVEL=info \
    mpi --levels $L >"$d.log" 2>&1 || { echo "soak: the calibration run at level $L failed:"; tail "$d.log"; exit 1; }
  [ "$(acked "$d.log")" = $steps ] || # the trials' expectations rest on these lines
    { echo "soak: no 'generation $steps complete' line from every rank in the calibration run's log"; exit 1; }
  dur[$L]=$(awk '/^heat: [0-9]+ checkpoints/ {c = $2} /^heat: time compute/ {t = $7}
                 END { printf "%d\n", (c > 0 ? t / c * 1e6 + 1 : 1000) }' "$d.log")
  foot[$L]=$(du -sb "$d/local" | cut -f1)
  rm -rf "$d"
done
echo "soak: one checkpoint takes $(for L in $cal; do printf '%s us at L%s, ' "${dur[$L]}" $L; done | sed 's/, $//')"

# The trials' (kind, level) pairs: every pair of the lists above (app-sync
# twice), shuffled once by the seed and dealt in turn, so that N trials cover
# min(N, pairs) different pairs, each again only after all have come once.
pairs=()
for k in "${kinds[@]}"; do for L in "${levels[@]}"; do pairs+=("$k $L"); done; done
for ((i = ${#pairs[@]} - 1; i > 0; i--)); do
  j=$((RANDOM % (i + 1))) p=${pairs[i]}; pairs[i]=${pairs[j]} pairs[j]=$p
done

printf '%-6s %-10s %5s %5s %9s %-8s %8s %6s\n' TRIAL KIND LEVEL GEN KILL_US RESULT RESTORED TIME
lost=0; declare -A count
for i in $(seq "$n"); do
  t0=$(date +%s.%N)
  read -r kind L <<<"${pairs[(i - 1) % ${#pairs[@]}]}"
  g=$(( (2 + RANDOM % (steps / every - 1)) * every )) # never the first: one must be complete before
  rank=$((RANDOM % np)) node=$((RANDOM % nodes))
  us=$(uniform $((seed + i)) "${dur[$L]}")
  d=$work/$i
  export CAIRN_JOB=soak-$$-$i CAIRN_BASE=$d/local CAIRN_PFS_DIR=$d/pfs
  mkdir -p -m 700 "$CAIRN_BASE" "$CAIRN_PFS_DIR"
  log=$d/run.log rlog=$d/restart.log fault=
  case $kind in # the failing run logs at info: its "generation G complete" lines tell what was acknowledged
    app-sync)
      fault=ckpt.begin:gen=$g:rank=$rank:after_us=$us
      CAIRN_FAULT=$fault CAIRN_LOG_LEVEL=info mpi --levels $L >"$log" 2>&1 ;;
    app-daemon)
      fault=ckpt.begin:gen=$g:rank=$rank:after_us=$us
      "$cli" start --nodes $nodes >>"$log" 2>&1
      CAIRN_FAULT=$fault CAIRN_LOG_LEVEL=info mpi --levels $L >>"$log" 2>&1
      daemons_idle; "$cli" stop >>"$log" 2>&1 ;;
    daemon) # the application runs to its end; the daemons are resumed after
      fault=cairnd.gen:gen=$g:rank=$node:after_us=$us
      CAIRN_FAULT=$fault "$cli" start --nodes $nodes >>"$log" 2>&1
      CAIRN_LOG_LEVEL=info mpi --levels $L >>"$log" 2>&1 || echo "soak: the application failed beside a dying daemon" >>"$log"
      "$cli" stop >>"$log" 2>&1
      "$cli" start --nodes $nodes >>"$log" 2>&1 && daemons_idle; "$cli" stop >>"$log" 2>&1 ;;
    enospc) # free space drawn from [0, 1.5 x a finished run's footprint]
      mount -t tmpfs -o size=64m,mode=700 tmpfs "$CAIRN_BASE"
      free=$(uniform $((seed + i)) $((foot[$L] * 3 / 2)))
      [ -n "${SOAK_FREE_PCT:-}" ] && free=$((foot[$L] * SOAK_FREE_PCT / 100))
      fill=$(( 64 * 1048576 - free - 65536 ))
      fault="node-local disk with $free bytes free"
      [ $fill -gt 0 ] && head -c "$fill" /dev/zero >"$CAIRN_BASE/filler" 2>/dev/null
      CAIRN_LOG_LEVEL=info mpi --levels $L >"$log" 2>&1
      us=free:$free g=-
      rm -f "$CAIRN_BASE/filler" ;;
  esac
  # What must come back: every generation acknowledged to the application (a
  # killed checkpoint's predecessor was; a daemon's death costs nothing).
  # `cairn ls` (complete at level >= L; level 4: indexed on the PFS) is shown
  # beside it, but never lowers the bar: it sees only what survived.
  ack=$(acked "$log") listed=$(newest_complete "$L")
  case $kind in
    app-*) want=$(( ack > g - every ? ack : g - every )) ;;
    daemon) want=$steps ;;
    enospc) want=$ack ;;
  esac
  before=$("$cli" ls --job "$CAIRN_JOB" 2>&1; held)
  # Lose what level L survives losing (a replaced node comes back empty).
  case $L in
    2) lose=$node ;;
    3) lose="$node $(( (node + 1 + RANDOM % (nodes - 1)) % nodes ))" ;;
    4) lose=$(seq 0 $((nodes - 1)) | tr '\n' ' ' | sed 's/ $//') ;;
    *) lose= ;;
  esac
  for x in $lose; do rm -rf "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node$x"; done
  mpi --levels $L --restart --out "$d/out.bin" >"$rlog" 2>&1
  rc=$?
  got=$(sed -n 's/^heat: restored generation \([0-9]*\).*/\1/p' "$rlog" | tail -n 1)
  result=ok
  if [ "$want" -eq 0 ] && [ $rc -ne 0 ]; then # nothing was acknowledged (a disk full from the first checkpoint on)
    grep -Eq '^heat: rank [0-9]+: cairn_restart: ' "$rlog" || result=LOST # a clean refusal, no crash
    got=none
  elif [ $rc -ne 0 ] || [ -z "$got" ] || [ "$got" -lt "$want" ] || ! cmp -s "$work/ref.bin" "$d/out.bin"; then
    result=LOST # (with nothing acknowledged, a generation restored anyway must still end bit-exact)
  fi
  [ $result = ok ] || lost=$((lost + 1))
  count[$kind]=$(( ${count[$kind]:-0} + 1 ))
  printf '%-6s %-10s %5s %5s %9s %-8s %8s %6.1f\n' "$i" "$kind" "$L" "$g" "$us" "$result" \
    "${got:--}" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')"
  if [ $result != ok ]; then
    {
      echo "trial $i of seed $seed: kind $kind, level $L, fault $fault, rank $rank, node $node; job $CAIRN_JOB"
      echo "expected a generation >= $want (acknowledged to the application: $ack; cairn ls, complete at level >= $L: $listed)"
      echo "lost nodes: ${lose:-none}; the restart exited $rc and restored ${got:-nothing}; final field $(cmp -s "$work/ref.bin" "$d/out.bin" && echo equal || echo DIFFERENT)"
      echo "before the nodes were lost:"; echo "$before" | sed 's/^/  /'
      echo "after the restart:"; held | sed 's/^/  /'
      echo "the failing run (tail without info lines, then its last acknowledgements):"
      grep -v '\] info: ' "$log" | grep -v '^ *-*$' | tail -n 12 | sed 's/^/  /'
      grep '\] info: generation .* complete at' "$log" | tail -n 2 | sed 's/^/  /'
      dlog=$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/cairnd.log
      [ -e "$dlog" ] && { echo "the daemons' log (warnings and errors):"; grep -E ' (warn|error): ' "$dlog" | tail -n 8 | sed 's/^/  /'; }
      echo "the restart (tail):"; grep -v '^ *-*$' "$rlog" | tail -n 14 | sed 's/^/  /'
    } | sed 's/^/    | /'
  fi
  [ $kind = enospc ] && umount "$CAIRN_BASE"
  rm -rf "$d"
done
summary=$(for k in app-sync app-daemon daemon enospc; do printf '%s %s, ' "${count[$k]:-0}" "$k"; done | sed 's/, $//')
echo "soak: $n trials ($summary): $((n - lost)) restored bit-exact, $lost lost"
[ $lost -eq 0 ]
