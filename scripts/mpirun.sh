#!/usr/bin/env bash
# mpirun.sh: the one launcher every test, demo and benchmark goes through.
#   scripts/mpirun.sh [-n] NP PROGRAM [ARGS...]
# CAIRN_LAUNCHER overrides the launcher (e.g. "srun" or "mpiexec.mpich -n"),
# unless it names this script (then the default below runs);
# by default Open MPI's or MPICH's mpirun runs NP ranks on this machine,
# oversubscribed, as root if need be. Emulated nodes are set by the caller
# (CAIRN_RANKS_PER_NODE or CAIRN_NODE in the environment).
set -eu
[ "$1" = -n ] && shift # as `cairn start` calls a launcher: LAUNCHER -n NP ...
np=$1; shift
case "${CAIRN_LAUNCHER:-}" in
  "") ;;
  *mpirun.sh*) ;; # this script itself (as for `cairn rebuild`): exec'ing it would loop forever
  *) exec ${CAIRN_LAUNCHER} -n "$np" "$@" ;;
esac
if mpirun --version 2>&1 | grep -q 'Open MPI'; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  # Shared-memory transport within the host, TCP on loopback otherwise; no
  # network probing on machines without one.
  exec mpirun --oversubscribe --bind-to none --mca btl self,vader,tcp \
       --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo \
       -np "$np" "$@"
fi
exec mpirun -n "$np" "$@"
