# cairn-hook-lib.sh - shared by cairn-prolog and cairn-epilog (sourced).
#
# Reads, for any scheduler (Slurm sets the SLURM_* ones; PBS, LSF or Flux
# wrappers set the CAIRN_* ones):
#   job id     CAIRN_JOB, else SLURM_JOB_ID
#   user       CAIRN_JOB_UID, else SLURM_JOB_UID, else the caller's uid
#   node       `cairn config --node`: CAIRN_NODE, else SLURMD_NODENAME, else
#              the full hostname (the library's and cairnd's rule, one place)
#   base       CAIRN_BASE (store.base), else /dev/shm
#   cairn      CAIRN_CLI (the cairn binary), else `cairn` on PATH, else
#              <prefix>/bin/cairn beside <prefix>/share/cairn/ (make install)
#   log        CAIRN_HOOK_LOG (a file), else syslog (logger), else stderr
# Every path below <base> is checked before use: no symlink, owned by the
# job's user, mode 0700; nothing here ever follows a link out of it.

HOOK_DIR=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")

hook_init() { # hook_init NAME
  HOOK=$1
  JOB=${CAIRN_JOB:-${SLURM_JOB_ID:-}}
  JUID=${CAIRN_JOB_UID:-${SLURM_JOB_UID:-$(id -u)}}
  BASE=${CAIRN_BASE:-/dev/shm}
  CLI=${CAIRN_CLI:-$(command -v cairn 2>/dev/null || echo "$HOOK_DIR/../../bin/cairn")}
  local why
  NODE=$("$CLI" config --node 2>/dev/null) ||
    { why=$("$CLI" config --node 2>&1); NODE=; die_usage "cannot name this node ($CLI config --node): $why"; }
  [ -n "$JOB" ] || die_usage "no job id: set SLURM_JOB_ID or CAIRN_JOB"
  valid_id "$JOB" || die_usage "job id '$JOB' is not 1-63 of A-Z a-z 0-9 . _ -"
  valid_id "$NODE" || die_usage "node name '$NODE' is not 1-63 of A-Z a-z 0-9 . _ -"
  case $JUID in ''|*[!0-9]*) die_usage "uid '$JUID' is not a number" ;; esac
  JGID=$(getent passwd "$JUID" | cut -d: -f4)
  JGID=${JGID:-$JUID}
  USERDIR=$BASE/cairn-$JUID
  JOBDIR=$USERDIR/$JOB
  NODEDIR=$JOBDIR/$NODE
}

valid_id() { [[ $1 =~ ^[A-Za-z0-9_-][A-Za-z0-9._-]{0,62}$ ]]; }

log() { # log LEVEL MESSAGE
  local line="$HOOK job ${JOB:-?} node ${NODE:-?}: $2"
  if [ -n "${CAIRN_HOOK_LOG:-}" ]; then
    printf '%s %s %s\n' "$(date '+%F %T')" "$1" "$line" >>"$CAIRN_HOOK_LOG"
  elif command -v logger >/dev/null 2>&1; then
    logger -t cairn -p "user.$1" -- "$line" 2>/dev/null || echo "$line" >&2
  else
    echo "$line" >&2
  fi
  [ "$1" = info ] || echo "$line" >&2
}
# Exit statuses: 1 only when the node should be drained (the scheduler does);
# a bad environment is the site's configuration, not the node: it is logged
# as an error and the hook does nothing, with status 0.
die_node() { log err "$1; the node should be drained"; exit 1; }
die_usage() { log err "$1; nothing done"; exit 0; }

# as_user CMD...: run CMD as the job's user (the hooks run as root under Slurm).
as_user() {
  if [ "$(id -u)" = "$JUID" ]; then "$@"; else setpriv --reuid="$JUID" --regid="$JGID" --clear-groups -- "$@"; fi
}

# check_dir PATH: PATH is a real directory (not a link) of the job's user, mode 0700.
check_dir() {
  local p=$1 st
  [ -L "$p" ] && die_node "$p is a symlink; refusing it (someone planted it?)"
  [ -d "$p" ] || die_node "$p is not a directory"
  st=$(stat -c '%u %a' -- "$p") || die_node "cannot stat $p"
  [ "${st% *}" = "$JUID" ] || die_node "$p is owned by uid ${st% *}, not by the job's user $JUID"
  [ "${st#* }" = 700 ] || die_node "$p has mode ${st#* }; it must be 700"
}

# make_dir PATH: create PATH (0700, the job's user's) unless it exists; check it.
# Made aside, given to the user, then renamed into place without replacing
# anything: a prolog of another job of the user running at the same instant
# never sees it half made.
make_dir() {
  if [ ! -e "$1" ] && [ ! -L "$1" ]; then
    local tmp
    tmp=$(mktemp -d "$(dirname -- "$1")/.cairn-new.XXXXXX") || die_node "cannot create $1"
    chmod 700 -- "$tmp" && chown "$JUID:$JGID" -- "$tmp" || { rmdir -- "$tmp"; die_node "cannot give $1 to uid $JUID"; }
    mv -T -n -- "$tmp" "$1" 2>/dev/null
    [ -d "$tmp" ] && rmdir -- "$tmp" # another prolog was first
  fi
  check_dir "$1"
}
