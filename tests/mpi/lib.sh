#!/usr/bin/env bash
# lib.sh - helpers every MPI scenario script uses; sourced once by
# tests/run.sh before any of them, so each script also runs alone
# (CAIRN_TEST_ONLY=NAME make test). Provides fresh scenario directories, the
# launcher wrappers and `run_grep`, the one way a check looks at a run's
# output: the run's exit status AND the pattern, never the pattern alone.
: "${BUILD:=build}"
T=$BUILD/tests/t_ckpt
NP=4
# Job ids carry this run's tag, so that two suites on one machine (or a
# suite and a demo) never stop each other's daemons.
export CAIRN_TEST_TAG=${CAIRN_TEST_TAG:-$$}

mpi() { scripts/mpirun.sh "$NP" "$T" "$@"; }
fresh() { # fresh base and job for one scenario
  export CAIRN_BASE; CAIRN_BASE=$(mktemp -d /dev/shm/cairn-test.XXXXXX)
  export CAIRN_JOB="t$CAIRN_TEST_TAG-$1"
  SCRATCH_DIRS+=("$CAIRN_BASE")
}
gen_dir() { echo "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node$1/gen-$2"; }
crash() { # crash SPECS ARGS...: a job that must die, killed at the last fault point of SPECS
  local last=${1##*;} out  # (POINT:gen=G[:...]; the ones before it must not fire)
  local gen; gen=$(sed -n 's/.*:gen=\([0-9]*\).*/\1/p' <<<"$last")
  out=$(CAIRN_FAULT=$1 mpi "${@:2}" 2>&1) && { echo "the job did not die"; return 1; }
  grep -q "fault injection: killing the process at ${last%%:*} (generation $gen)" <<<"$out" && return 0
  echo "the job died, but not at ${last%%:*} (generation $gen):"; tail -n 20 <<<"$out"; return 1
}
pfs_gen() { echo "$CAIRN_PFS_DIR/cairn-$(id -u)/$CAIRN_JOB/gen-$1"; }
wipe_nodes() { for x in "$@"; do rm -rf "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node$x"; done; }
fresh_pfs() { fresh "$1"; export CAIRN_PFS_DIR; CAIRN_PFS_DIR=$(mktemp -d /dev/shm/cairn-pfs.XXXXXX); SCRATCH_DIRS+=("$CAIRN_PFS_DIR"); }

# run_grep PATTERN CMD...: CMD must exit 0 AND print a line matching the
# extended regular expression PATTERN (stdout and stderr together). The
# output is read in full (no early-closing grep -q, no SIGPIPE) and shown
# when the check fails.
run_grep() {
  local pat=$1; shift
  local out rc; out=$(mktemp)
  "$@" >"$out" 2>&1; rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "run_grep: exit status $rc from: $*"; tail -n 30 "$out"; rm -f "$out"; return 1
  fi
  if ! grep -Eq -- "$pat" "$out"; then
    echo "run_grep: no line matches '$pat' in the output of: $*"; tail -n 30 "$out"; rm -f "$out"; return 1
  fi
  rm -f "$out"
}
# run_grep_rc RC PATTERN CMD...: as run_grep, for a command that must exit RC.
run_grep_rc() {
  local want=$1 pat=$2; shift 2
  local out rc; out=$(mktemp)
  "$@" >"$out" 2>&1; rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "run_grep_rc: exit status $rc, expected $want, from: $*"; tail -n 30 "$out"; rm -f "$out"; return 1
  fi
  if ! grep -Eq -- "$pat" "$out"; then
    echo "run_grep_rc: no line matches '$pat' in the output of: $*"; tail -n 30 "$out"; rm -f "$out"; return 1
  fi
  rm -f "$out"
}
export -f run_grep run_grep_rc mpi fresh gen_dir pfs_gen wipe_nodes
export T NP
