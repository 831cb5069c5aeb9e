#!/usr/bin/env bash
# on_host.sh - run one MPI rank as if on its own host: in a UTS namespace of
# its own whose hostname is word <rank> of T_HOSTS (needs root and unshare).
#   T_HOSTS="n1.rack-a n1.rack-b" scripts/mpirun.sh 2 tests/mpi/on_host.sh PROGRAM [ARGS...]
# A word "-" leaves that rank on this host. The MPI library is unaffected (its
# connections are made by then); cairn sees the hostname the rank's host has.
set -eu
r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}
read -r -a hosts <<<"${T_HOSTS:?set T_HOSTS: one host per rank}"
h=${hosts[$r]:?T_HOSTS has no word for rank $r}
[ "$h" = - ] && exec "$@"
exec unshare --uts sh -c 'hostname "$0" && exec "$@"' "$h" "$@"
