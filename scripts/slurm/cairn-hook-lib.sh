# cairn-hook-lib.sh - shared by cairn-prolog and cairn-epilog (sourced): finds
# the cairn binary and execs `cairn hook prolog|epilog`, which does the work
# in compiled code (src/tools/cli_hook*.c): root acts only through directory
# descriptors it opened and checked, and everything inside the job's user's
# directory is done as that user. These scripts hold no logic of their own.
#
# `cairn hook` reads, for any scheduler (Slurm sets the SLURM_* ones; PBS,
# LSF or Flux wrappers set the CAIRN_* ones):
#   job id     CAIRN_JOB, else SLURM_JOB_ID
#   user       CAIRN_JOB_UID, else SLURM_JOB_UID, else the caller's uid
#   node       as `cairn config --node`: CAIRN_NODE, else SLURMD_NODENAME,
#              else the full hostname (the library's and cairnd's rule)
#   base       CAIRN_BASE (store.base), else /dev/shm
#   log        CAIRN_HOOK_LOG (a file), else syslog; warnings also on stderr
#   prolog     CAIRN_HOOK_NEED, CAIRN_RESTART_FROM with CAIRN_PFS_DIR
#   epilog     CAIRN_HOOK_DRAIN_TIMEOUT, CAIRN_HOOK_FLUSH_WAIT, CAIRN_HOOK_UNFLUSHED=keep|drain
# The cairn binary: CAIRN_CLI, else `cairn` on PATH, else <prefix>/bin/cairn
# beside <prefix>/share/cairn/ (make install).
# Exit: 0 ready, 1 drain the node; a bad environment is logged, status 0.

HOOK_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")

hook_exec() { # hook_exec NAME prolog|epilog
  local cli=${CAIRN_CLI:-$(command -v cairn 2>/dev/null || echo "$HOOK_DIR/../../bin/cairn")}
  if [ -x "$cli" ]; then
    exec "$cli" hook "$2"
  fi
  local line="$1 job ${CAIRN_JOB:-${SLURM_JOB_ID:-?}}: cannot find the cairn binary ($cli); nothing done"
  if [ -n "${CAIRN_HOOK_LOG:-}" ]; then
    printf '%s err %s\n' "$(date '+%F %T')" "$line" >>"$CAIRN_HOOK_LOG"
  else
    logger -t cairn -p user.err -- "$line" 2>/dev/null
  fi
  echo "$line" >&2
  exit 0
}
