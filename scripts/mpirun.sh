#!/usr/bin/env bash
# mpirun.sh: the one launcher every test, demo and benchmark goes through.
#   scripts/mpirun.sh [-n] NP PROGRAM [ARGS...]
#   scripts/mpirun.sh --flavor      (ompi or other: export it as CAIRN_MPI_FLAVOR)
# CAIRN_LAUNCHER overrides the launcher (e.g. "srun" or "mpiexec.mpich -n"),
# unless it names this script (then the default below runs);
# by default Open MPI's or MPICH's mpirun runs NP ranks on this machine,
# oversubscribed, as root if need be. Emulated nodes are set by the caller
# (CAIRN_RANKS_PER_NODE or CAIRN_NODE in the environment).
#
# When the default run fails, the failing rank speaks for itself: after the
# launcher's message ("exited without calling finalize" alone names no cause)
# comes the rank that failed first, with its exit status (or signal) and the
# last lines of its own stderr. Open MPI names that rank and keeps each rank's
# stderr in a file itself; under MPICH each rank runs under this script
# (--rank, below), which copies its stderr into a per-rank file and records
# its exit status, and every rank that failed is printed, first first.
set -eu

# --rank DIR PROGRAM [ARGS...]: one rank, as the launcher started it. Runs
# PROGRAM with stdin, stdout and the environment as given, stderr also copied
# to DIR/rank-R.err; then writes "STATUS TIME" to DIR/rank-R.status and ends
# as PROGRAM did (its exit status, or the same signal). Signals the launcher
# sends to this wrapper go on to PROGRAM.
if [ "${1:-}" = --rank ]; then
  dir=$2; shift 2
  r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}
  [ -n "$r" ] && [ -d "$dir" ] || exec "$@" # not a rank we know how to name: run it plainly
  # tee is this wrapper's child, not PROGRAM's: a PROGRAM that execs a tracer
  # (strace -f waits for every child it has) must not wait for its own tee.
  exec 3> >(tee "$dir/rank-$r.err" >&2)
  "$@" 0<&0 2>&3 3>&- &
  child=$!
  exec 3>&-
  for s in TERM INT HUP QUIT USR1 USR2; do trap "kill -$s $child 2>/dev/null" "$s"; done
  while :; do # (bash's own "Killed" notice is not the rank's: not shown)
    { wait "$child" && rc=0 || rc=$?; } 2>/dev/null
    kill -0 "$child" 2>/dev/null || break # ended; else a trapped signal ended the wait
  done
  echo "$rc $EPOCHREALTIME" >"$dir/rank-$r.status" # (bash's clock: no process for it)
  if [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then # ended by a signal: end by it too
    for s in TERM INT HUP QUIT USR1 USR2; do trap - "$s"; done
    kill -"$((rc - 128))" $$ 2>/dev/null
  fi
  exit "$rc"
fi

# --flavor: which mpirun this is (ompi or other), for the caller to export as
# CAIRN_MPI_FLAVOR: a suite, demo or drill asks once, not once per launch
# (`mpirun --version` is a process of its own, 35 ms of CPU; a test suite
# launches some 1800 jobs).
flavor() { if mpirun --version 2>&1 | grep -q 'Open MPI'; then echo ompi; else echo other; fi; }
[ "${1:-}" = --flavor ] && { flavor; exit 0; }
[ "$1" = -n ] && shift # as `cairn start` calls a launcher: LAUNCHER -n NP ...
np=$1; shift
case "${CAIRN_LAUNCHER:-}" in
  "") ;;
  *mpirun.sh*) ;; # this script itself (as for `cairn rebuild`): exec'ing it would loop forever
  *) exec ${CAIRN_LAUNCHER} -n "$np" "$@" ;;
esac

# report DIR: the ranks that failed, first first, each with its status and its
# own last lines on stderr (to stderr).
report() {
  local d=$1 f r rc t n=0 quiet=() none=()
  for ((r = 0; r < np; r++)); do [ -e "$d/rank-$r.status" ] || none+=("$r"); done
  while read -r t rc r; do
    [ -n "$r" ] || continue
    if [ "$rc" -gt 128 ] && [ "$rc" -lt 160 ]; then
      how="killed by signal $((rc - 128)) ($(kill -l "$((rc - 128))" 2>/dev/null || echo '?'))"
    else
      how="exit status $rc"
    fi
    f=$d/rank-$r.err
    if [ "$n" -lt 3 ] && [ -s "$f" ]; then
      echo "mpirun.sh: rank $r: $how; its last lines on stderr:"
      tail -n 8 "$f" | sed 's/^/mpirun.sh:   | /'
      n=$((n + 1))
    elif [ "$n" -lt 3 ]; then
      echo "mpirun.sh: rank $r: $how; nothing on stderr"
      n=$((n + 1))
    else
      quiet+=("rank $r: $how")
    fi
  done < <(for f in "$d"/rank-*.status; do
             [ -e "$f" ] || continue
             r=${f##*/rank-}; r=${r%.status}
             read -r rc t <"$f" && [ "$rc" != 0 ] && echo "$t $rc $r"
           done | sort -n)
  [ ${#quiet[@]} -eq 0 ] || (IFS=';'; echo "mpirun.sh: then ${quiet[*]}" | sed 's/;/; /g')
  [ ${#none[@]} -eq 0 ] || echo "mpirun.sh: rank(s) ${none[*]}: no exit status recorded (stopped by the launcher, or never started)"
  return 0
}

# report_ompi: the rank Open MPI names as the first to fail (in its own
# message, kept in $rd/launcher.err), with its status and its last lines on
# stderr (Open MPI keeps each rank's in $rd/JOB/rank.R/stderr: --output-filename).
report_ompi() {
  local e=$rd/launcher.err m r= how= f
  local exited='Process name: \[\[[0-9]+,[0-9]+\],([0-9]+)\] +Exit code: +([0-9]+)'
  local signal='process rank ([0-9]+) with PID [0-9]+ on node .* exited on signal ([0-9]+)'
  local improper='exited due to process rank ([0-9]+) with PID'
  local aborted='MPI_ABORT was invoked on rank ([0-9]+) .* errorcode ([0-9]+)'
  m=$(tr '\n' ' ' <"$e" 2>/dev/null)
  if [[ $m =~ $aborted ]]; then
    r=${BASH_REMATCH[1]} how="called MPI_Abort with error code ${BASH_REMATCH[2]}"
  elif [[ $m =~ $exited ]]; then
    r=${BASH_REMATCH[1]} how="exit status ${BASH_REMATCH[2]}"
  elif [[ $m =~ $signal ]]; then
    r=${BASH_REMATCH[1]}
    how="killed by signal ${BASH_REMATCH[2]} ($(kill -l "${BASH_REMATCH[2]}" 2>/dev/null || echo '?'))"
  elif [[ $m =~ $improper ]]; then
    r=${BASH_REMATCH[1]} how="ended without calling MPI_Finalize"
  fi
  if [ -z "$r" ]; then
    echo "mpirun.sh: the launcher named no rank; the ranks that wrote on stderr, their last lines:"
    for ((r = 0; r < np; r++)); do
      f=$(ls "$rd"/*/rank."$r"/stderr 2>/dev/null | head -n 1)
      [ -n "$f" ] && [ -s "$f" ] || continue
      echo "mpirun.sh: rank $r:"; tail -n 4 "$f" | sed 's/^/mpirun.sh:   | /'
    done
    return 0
  fi
  f=$(ls "$rd"/*/rank."$r"/stderr 2>/dev/null | head -n 1)
  if [ -n "$f" ] && [ -s "$f" ]; then
    echo "mpirun.sh: rank $r: $how; its last lines on stderr:"
    tail -n 8 "$f" | sed 's/^/mpirun.sh:   | /'
  else
    echo "mpirun.sh: rank $r: $how; nothing on stderr"
  fi
}

# launch HOW CMD...: run the launcher CMD, signals passed on to it; on
# failure, report the ranks (HOW: wrapped, each rank under --rank above, from
# their files in $rd; ompi, from Open MPI's own account); exit with its status.
launch() {
  local how=$1 pid rc tee_pid; shift
  exec 4> >(tee "$rd/launcher.err" >&2) # the launcher's stderr (and the ranks'), also kept
  tee_pid=$!
  "$@" 0<&0 2>&4 4>&- &
  pid=$!
  exec 4>&-
  for s in TERM INT HUP QUIT; do trap "kill -$s $pid 2>/dev/null" "$s"; done
  while :; do
    wait "$pid" && rc=0 || rc=$?
    kill -0 "$pid" 2>/dev/null || break
  done
  wait "$tee_pid" 2>/dev/null # all of it in launcher.err
  if [ "$rc" -ne 0 ] && [ "$how" = ompi ]; then
    echo "mpirun.sh: the launcher exited with status $rc; the rank that failed first:"
    report_ompi
  elif [ "$rc" -ne 0 ]; then
    echo "mpirun.sh: the launcher exited with status $rc; the ranks that failed, in the order they ended:"
    report "$rd"
  fi >&2
  exit "$rc"
}
self=$(readlink -f "$0")
rd=$(mktemp -d "${TMPDIR:-/tmp}/cairn-ranks.XXXXXX")
trap 'rm -rf "$rd"' EXIT
# Every MPI process would load hwloc's plugins for GPUs, OpenCL, PCI and
# libxml2 (20 libraries) and read each PCI device's configuration (linuxio):
# a rank on an emulated node needs none of it, and a test launches hundreds
# of jobs. A setting of the caller's own wins.
export HWLOC_PLUGINS_BLACKLIST=${HWLOC_PLUGINS_BLACKLIST-hwloc_gl,hwloc_opencl,hwloc_pci,hwloc_xml_libxml}
export HWLOC_COMPONENTS=${HWLOC_COMPONENTS--linuxio}
if [ "${CAIRN_MPI_FLAVOR:-$(flavor)}" = ompi ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Shared-memory transport within the host (ob1 over vader: UCX would load
  # its own transports in every rank), TCP on loopback otherwise; no network
  # probing on machines without one.
  # Open MPI names the rank that failed first and keeps each rank's stderr
  # (--output-filename): no wrapper per rank (a bash and a tee each: a third
  # of the cost of starting 8 ranks).
  # Each launch keeps its session directory under its own $rd: in the shared
  # one (TMPDIR/ompi.HOST.UID), a job that ends removes the top directory when
  # it looks empty, and another starting at that moment fails in orte_init
  # ("orte_session_dir failed", "File exists"); jobs side by side met it.
  launch ompi mpirun --oversubscribe --bind-to none --mca pml ob1 --mca btl self,vader,tcp \
       --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo --output-filename "$rd" \
       --mca orte_tmpdir_base "$rd/s" \
       -np "$np" "$@"
fi
launch wrapped mpirun -n "$np" bash "$self" --rank "$rd" "$@"
