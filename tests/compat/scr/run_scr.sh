#!/usr/bin/env bash
# run_scr.sh - cairn-scr, SCR's API over cairn: heat_scr.c (an SCR program,
# scr.h and MPI only) crashes and restarts at each SCR copy type, and must end
# byte-identical to an uninterrupted run. Sourced by tests/run.sh (section
# scr); uses lib.sh (fresh, wipe_nodes, run_grep) and run.sh's check.
# The crash is cairn's fault injection, set in the environment by this
# script: CAIRN_FAULT=ckpt.begin:gen=G kills rank 1 as generation G begins,
# so G-1 is the newest complete checkpoint. Checkpoints are every 5 steps of
# 60 (generations 1..12 at steps 5..60); the program runs in a directory of
# its own, which is SCR's prefix (the PFS of level 4 and of output datasets).

SCR_H=$(cd "$BUILD" && pwd)/tests/compat/scr/heat_scr
SCR_MPIRUN=$PWD/scripts/mpirun.sh
SCR_ARGS=(-x 48 -y 12 -t 60)
SCR_RPN=2 # ranks per emulated node
# cairn's own variables win over SCR's parameters: none may be left over from elsewhere.
unset CAIRN_PFS_DIR CAIRN_KEEP CAIRN_SET_SIZE CAIRN_EC_M CAIRN_PFS_KEEP CAIRN_PFS_EVERY \
  CAIRN_CKPT_EVERY_1 CAIRN_CKPT_EVERY_2 CAIRN_CKPT_EVERY_3 CAIRN_CKPT_EVERY_4 CAIRN_CKPT_AUTO \
  CAIRN_CONFIG_FILE CAIRN_LOG_LEVEL CAIRN_FAULT \
  SCR_PREFIX SCR_CONF_FILE SCR_COPY_TYPE SCR_CACHE_SIZE SCR_CURRENT SCR_SET_SIZE SCR_DEBUG
export SCR_FLUSH=0

scr_fresh() { # scr_fresh NAME: a cache base, a job and a working directory (SCR's prefix)
  fresh "scr-$1"
  SCR_W=$(mktemp -d /dev/shm/cairn-scr.XXXXXX); SCRATCH_DIRS+=("$SCR_W")
}
scr_env() { # scr_env VAR=VALUE... CMD ARGS...: CMD (a function too) with these in the environment
  ( while [[ $1 == *=* ]]; do export "${1?}"; shift; done; "$@" )
}
scr_run() { # scr_run NP ARGS...: heat_scr in the working directory
  local np=$1; shift
  (cd "$SCR_W" && CAIRN_RANKS_PER_NODE=$SCR_RPN "$SCR_MPIRUN" "$np" "$SCR_H" "${SCR_ARGS[@]}" "$@")
}
SCR_NP=4 # ranks of scr_crash and scr_resume
# scr_ranks NP RPN: the heat scenarios that follow run NP ranks, RPN a node, on
# the same 48 x 48 grid (48/NP rows a rank): the final grid depends on the
# steps alone, so every rank count ends as the 4-rank reference. Scenarios
# that test nothing two ranks of a node do run 2 ranks on 2 nodes.
scr_ranks() { SCR_NP=$1 SCR_RPN=$2 SCR_ARGS=(-x 48 -y $((48 / $1)) -t 60); }
scr_crash() { # scr_crash GEN LAST ARGS...: dies as generation GEN begins, after checkpoint LAST
  local gen=$1 last=$2 out rc; shift 2; out=$(mktemp)
  CAIRN_FAULT="ckpt.begin:gen=$gen:rank=1" scr_run "$SCR_NP" "$@" >"$out" 2>&1; rc=$?
  if [ "$rc" -eq 0 ] || ! grep -q "^Completed checkpoint $last\.\$" "$out" ||
     grep -q '^Final checksum' "$out"; then
    tail -n 25 "$out"; echo "scr_crash: exit status $rc; want it killed after 'Completed checkpoint $last.' (above: the last of $(wc -l <"$out") lines)"
    rm -f "$out"; return 1
  fi
  rm -f "$out"
}
scr_resume() { # scr_resume NAME ARGS...: restarts from checkpoint NAME, ends as the reference
  scr_resume_saw "$1" "^Restarting from checkpoint named $1\$" "${@:2}"
}
scr_resume_saw() { # scr_resume_saw NAME PATTERN ARGS...: as scr_resume, and a line matches PATTERN
  local log=$SCR_W/run.log rc
  rm -f "$SCR_W/final.bin"
  scr_run "$SCR_NP" "${@:3}" -f "$SCR_W/final.bin" >"$log" 2>&1; rc=$?
  if [ "$rc" -ne 0 ] || ! grep -q "^Restarting from checkpoint named $1\$" "$log" ||
     ! grep -Eq -- "$2" "$log"; then
    tail -n 25 "$log"; echo "scr_resume: exit status $rc; want 0, 'Restarting from checkpoint named $1' and /$2/ (above: the last of $(wc -l <"$log") lines)"
    return 1
  fi
  cmp "$SCR_REF" "$SCR_W/final.bin"
}
scr_level() { # scr_level GEN LEVEL: generation GEN is complete at LEVEL on node-local storage
  "$BUILD/cairn" ls --base "$CAIRN_BASE" --job "$CAIRN_JOB" | awk -v g="$1" -v l="$2" '
    $1 == g && $2 == l { ok = 1 } END { exit !ok }'
}
scr_in_prefix() { # scr_in_prefix PATH...: each is a non-empty file under the working directory
  local p; for p in "$@"; do [ -s "$SCR_W/$p" ] || { echo "missing: $SCR_W/$p"; return 1; }; done
}

check "scr: the SCR programs (tests/compat/scr/*.c) use SCR's API and MPI only (no cairn name in them)" \
  bash -c "! grep -nE 'cairn_|CAIRN_|cairn\\.h' tests/compat/scr/*.c"

# The API's rules, call by call (api_scr.c), over two runs.
scr_fresh api
scr_api() { (cd "$SCR_W" && CAIRN_RANKS_PER_NODE=2 SCR_COPY_TYPE=PARTNER "$SCR_MPIRUN" 4 "${SCR_H%/*}/api_scr" "$@"); }
printf 'SCR_CACHE_SIZE=2\nSCR_DEBUG=1\nSCR_FUTURE_KEY=1\n' >"$SCR_W/.scrconf" # SCR's file in the prefix
check "scr API, first run: order, flags, names, output datasets, invalid and unwritten datasets, unsupported calls" \
  run_grep '^PASS first$' scr_api first
scr_api_second() { # the second run, its output kept in api.log
  scr_api second >"$SCR_W/api.log" 2>&1 && grep -q '^PASS second$' "$SCR_W/api.log" ||
    { tail -n 30 "$SCR_W/api.log"; return 1; }
}
check "  ... second run: the default-named checkpoint scr.dataset.3 restores, once" scr_api_second
check "  ... <prefix>/.scrconf was read: its unknown key named and ignored" \
  grep -q 'scrconf:3: unknown SCR parameter SCR_FUTURE_KEY, ignored' "$SCR_W/api.log"
check "  ... and its SCR_CACHE_SIZE became CAIRN_KEEP (SCR_DEBUG=1 says so)" \
  grep -Eq 'SCR_CACHE_SIZE \(.*/\.scrconf:1\) -> CAIRN_KEEP=2' "$SCR_W/api.log"

scr_fresh ref
SCR_REF=$SCR_W/ref.bin
export SCR_COPY_TYPE=SINGLE
check "scr: uninterrupted run, 4 ranks, checkpoint every 5 steps (SINGLE): final grid written" \
  run_grep '^No checkpoint to restart from$' scr_run 4 -c 5 -f "$SCR_REF"

scr_fresh l1
check "scr level 1 (SINGLE, 4 ranks on 2 nodes): killed as checkpoint 5 begins" scr_crash 5 ckpt.20 -c 5
check "  ... ckpt.20 is generation 4 at level 1" scr_level 4 1
check "  ... restart names ckpt.20 and ends byte-identical" scr_resume ckpt.20 -c 5

scr_fresh jobid # no job id from cairn, SCR or Slurm: the job is named after the prefix
scr_ranks 2 1
check "scr with no CAIRN_JOB, SCR_JOB_ID or SLURM_JOB_ID: killed at checkpoint 5" \
  scr_env CAIRN_JOB= SLURM_JOB_ID= scr_crash 5 ckpt.20 -c 5
check "  ... a new run in the same prefix finds ckpt.20 and ends byte-identical" \
  scr_env CAIRN_JOB= SLURM_JOB_ID= scr_resume ckpt.20 -c 5
check "  ... under the one job directory scr-defjobid-<16 hex digits>" \
  bash -c "test \"\$(ls '$CAIRN_BASE/cairn-$(id -u)' | grep -Ex 'scr-defjobid-[0-9a-f]{16}' | wc -l)\" = 1"

scr_fresh l2 # 4 ranks on 2 nodes: a node's partner copy holds two ranks' files
scr_ranks 4 2
export SCR_COPY_TYPE=PARTNER
check "scr level 2 (PARTNER, 4 ranks on 2 nodes): killed at checkpoint 5" scr_crash 5 ckpt.20 -c 5
check "  ... ckpt.20 is generation 4 at level 2" scr_level 4 2
wipe_nodes 1
check "  ... node 1 lost and back empty: restart names ckpt.20, byte-identical" scr_resume ckpt.20 -c 5

scr_fresh l3
export SCR_COPY_TYPE=RS SCR_SET_SIZE=4 SCR_SET_FAILURES=2
scr_ranks 4 1
check "scr level 3 (RS, 2 failures per set, 4 ranks on 4 nodes): killed at checkpoint 5" \
  scr_crash 5 ckpt.20 -c 5
check "  ... ckpt.20 is generation 4 at level 3" scr_level 4 3
wipe_nodes 1 2
check "  ... nodes 1 and 2 lost: restart names ckpt.20, byte-identical" scr_resume ckpt.20 -c 5
unset SCR_SET_SIZE SCR_SET_FAILURES

scr_fresh l4 # 2 ranks on 2 nodes
scr_ranks 2 1
export SCR_COPY_TYPE=PARTNER SCR_FLUSH=2 SCR_PREFIX_SIZE=2
check "scr level 4 (SCR_FLUSH=2, prefix = working directory): killed at checkpoint 5" \
  scr_crash 5 ckpt.20 -c 5
check "  ... generations 2 and 4 are in the prefix directory (SCR_PREFIX_SIZE=2), 3 is not" \
  bash -c "p='$SCR_W/cairn-$(id -u)/$CAIRN_JOB'; test -e \$p/gen-2/index && test -e \$p/gen-4/index && test ! -e \$p/gen-3"
wipe_nodes 0 1
check "  ... every node lost: restart names ckpt.20, read from the PFS, byte-identical" \
  scr_resume_saw ckpt.20 'restoring generation 4 from the PFS' -c 5
export SCR_FLUSH=0
unset SCR_PREFIX_SIZE

# Level 4 with erasure.m = 1 (RS, SCR_SET_FAILURES=1, 4 nodes): 2 of the 4
# nodes lost is more than level 3 rebuilds, and the prefix (the PFS) holds
# ckpt.20 whole. SCR_Have_restart must offer it (the restart query: READY at
# level 4, not "lost"), it restores byte-identical, the run goes on from step
# 20 (never from 0), and its next checkpoints set nothing aside.
scr_fresh pfsm1
export SCR_COPY_TYPE=RS SCR_SET_SIZE=4 SCR_SET_FAILURES=1 SCR_FLUSH=2
scr_ranks 4 1
check "scr level 4 over RS with 1 failure per set (4 ranks on 4 nodes, SCR_FLUSH=2): killed at checkpoint 5" \
  scr_crash 5 ckpt.20 -c 5
check "  ... ckpt.20 (generation 4) is in the prefix directory" \
  test -e "$SCR_W/cairn-$(id -u)/$CAIRN_JOB/gen-4/index"
wipe_nodes 0 1
scr_pfs_m1() {
  scr_resume_saw ckpt.20 'restoring generation 4 from the PFS' -c 5 || return 1
  grep -Eq 'encoding set 0 lost 2 nodes \(0 1\), level 3 rebuilds at most erasure.m = 1' "$SCR_W/run.log" ||
    { echo "the restart did not lose more than level 3 rebuilds"; tail "$SCR_W/run.log"; return 1; }
  grep -q '^Completed checkpoint ckpt.25\.$' "$SCR_W/run.log" && ! grep -q '^Completed checkpoint ckpt.5\.$' "$SCR_W/run.log" ||
    { echo "the run did not go on from step 20"; return 1; }
  ! find "$SCR_W" "$CAIRN_BASE" -name 'abandoned-*' | grep . || { echo "generations were set aside"; return 1; }
}
check "  ... nodes 0 and 1 lost: SCR_Have_restart offers ckpt.20, read from the PFS, byte-identical; the run goes on from step 20, nothing set aside" \
  scr_pfs_m1
export SCR_FLUSH=0
unset SCR_SET_SIZE SCR_SET_FAILURES

# SCR_Complete_restart(0) on one rank: SCR offers the next older checkpoint.
# From here to the configuration file, 2 ranks on 2 nodes.
scr_fresh fallback
scr_ranks 2 1
export SCR_COPY_TYPE=SINGLE SCR_CACHE_SIZE=3
check "scr fallback: killed at checkpoint 5 (SCR_CACHE_SIZE=3 keeps ckpt.10, .15, .20)" \
  scr_crash 5 ckpt.20 -c 5
check "  ... rank 1 rejects ckpt.20: SCR_Complete_restart fails, ckpt.15 is offered and restores, byte-identical" \
  scr_resume_saw ckpt.15 '^Restart from ckpt.20 failed$' -c 5 -r ckpt.20
check "  ... a later restart takes that run's own newest checkpoint (ckpt.60), byte-identical" \
  scr_resume ckpt.60 -c 5
unset SCR_CACHE_SIZE

scr_fresh current
check "scr SCR_CURRENT: killed at checkpoint 5" scr_crash 5 ckpt.20 -c 5
check "  ... SCR_CURRENT=ckpt.15 restarts from ckpt.15, byte-identical" \
  scr_env SCR_CURRENT=ckpt.15 scr_resume ckpt.15 -c 5
check "  ... SCR_CURRENT naming no checkpoint: SCR_Have_restart fails and says so" \
  run_grep "no checkpoint named 'nope' can be restored" scr_env SCR_CURRENT=nope scr_run "$SCR_NP" -c 5

# SCR_Complete_output(0) on one rank: the dataset is kept nowhere.
scr_fresh invalid
check "scr invalid checkpoint: rank 1 fails ckpt.20 (SCR_Complete_output(0)); killed as ckpt.25 (generation 4) begins" \
  scr_crash 4 ckpt.15 -c 5 -i 20
check "  ... restart names ckpt.15, not the discarded ckpt.20, byte-identical" scr_resume ckpt.15 -c 5

# Output datasets (SCR_FLAG_OUTPUT): files under their names in the prefix, never a restart.
scr_fresh output
export SCR_COPY_TYPE=PARTNER
check "scr output every 10 steps, checkpoint+output every 20: killed as ckpt.30 (generation 6) begins" \
  scr_crash 6 ckpt.25 -c 5 -o 10 -p 20
SCR_RANKS=$(seq -s ' ' 0 $((SCR_NP - 1)))
check "  ... output.10 and output.20 are in the prefix, whole, no part file left" \
  bash -c "cd '$SCR_W' && for s in 10 20; do for r in $SCR_RANKS; do test -s output.\$s/rank_\$r.out || exit 1; done; done && test -z \"\$(find . -name '*.cairn-scr-part')\""
check "  ... ckpt.20 (checkpoint+output) is in the prefix as files and on the PFS as generation 4" \
  bash -c "cd '$SCR_W' && for r in $SCR_RANKS; do test -s ckpt.20/rank_\$r.ckpt || exit 1; done && test -e cairn-$(id -u)/$CAIRN_JOB/gen-4/index && test ! -e ckpt.15"
check "  ... restart names ckpt.25 (an output is no checkpoint), byte-identical" \
  scr_resume ckpt.25 -c 5 -o 10 -p 20
check "  ... output.60 holds the final grid, byte for byte" \
  bash -c "cd '$SCR_W' && for r in $SCR_RANKS; do cat output.60/rank_\$r.out || exit 1; done | cmp - '$SCR_REF'"

# SCR's configuration file, SCR_Need_checkpoint and XOR; CAIRN_BASE unset (empty).
scr_fresh conf
unset SCR_COPY_TYPE
cat >"$SCR_W/scr.conf" <<'EOF'
# as an SCR user writes it
SCR_COPY_TYPE = XOR    # one loss per set
SCR_SET_SIZE=4
SCR_CHECKPOINT_INTERVAL=5
SCR_CACHE_BASE=${SCR_TEST_CACHE}
SCR_CACHE_BYPASS=0
EOF
scr_ranks 4 1
check "scr SCR_CONF_FILE (XOR, SCR_CACHE_BASE by \${VAR}), SCR_Need_checkpoint every 5: killed at checkpoint 5" \
  scr_env CAIRN_BASE= SCR_TEST_CACHE="$CAIRN_BASE" SCR_CONF_FILE="$SCR_W/scr.conf" scr_crash 5 ckpt.20
check "  ... ckpt.20 is generation 4 at level 3 in SCR_CACHE_BASE" scr_level 4 3
wipe_nodes 2
check "  ... node 2 lost: restart names ckpt.20, byte-identical" \
  scr_env CAIRN_BASE= SCR_TEST_CACHE="$CAIRN_BASE" SCR_CONF_FILE="$SCR_W/scr.conf" scr_resume ckpt.20
scr_ranks 4 2

# Bad configuration: a clear error naming the key, SCR_Init fails, nothing written.
scr_fresh bad
printf 'SCR_FLUSH=4\nCKPT=0 TYPE=XOR SET_SIZE=4\n' >"$SCR_W/bad.conf"
check "scr SCR_COPY_TYPE=FILE: SCR_Init fails naming it, exit 1" \
  run_grep_rc 1 'SCR_COPY_TYPE=FILE \(environment\): .*descriptors are not supported' \
  scr_env SCR_COPY_TYPE=FILE scr_run 2 -c 5
check "scr SCR_CACHE_SIZE=two: SCR_Init fails naming it, exit 1" \
  run_grep_rc 1 'SCR_CACHE_SIZE=two \(environment\): not an integer' \
  scr_env SCR_CACHE_SIZE=two scr_run 2 -c 5
check "scr a CKPT descriptor in SCR_CONF_FILE: SCR_Init fails naming the file and line, exit 1" \
  run_grep_rc 1 'bad.conf:2: CKPT descriptors are not supported' \
  scr_env SCR_CONF_FILE="$SCR_W/bad.conf" scr_run 2 -c 5
check "  ... and nothing was written: no job directory in the cache base" \
  test ! -e "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB"
unset SCR_FLUSH

# Installed: an SCR program built out of the tree with only pkg-config's cairn-scr flags.
scr_fresh installed
SCR_P=$SCR_W/prefix
scr_pc() { env -u PKG_CONFIG_LIBDIR PKG_CONFIG_PATH="$SCR_P/lib/pkgconfig" pkg-config "$@"; }
scr_build_installed() { # the build line is the only change an SCR program needs
  local san=(); [ -n "${CAIRN_SANITIZE:-}" ] && san=(-fsanitize=address,undefined)
  make -s --no-print-directory BUILD="$BUILD" install PREFIX="$SCR_P" >/dev/null &&
    test "$(scr_pc --cflags cairn-scr | xargs)" = "-I$SCR_P/include/cairn/scr -I$SCR_P/include" &&
    test -f "$SCR_P/include/cairn/scr/scr.h" && readelf -d "$SCR_P/lib/libcairn-scr.so" | grep -q 'SONAME.*\[libcairn-scr.so.0\]' &&
    mkdir -p "$SCR_W/app" && cp tests/compat/scr/heat_scr.c "$SCR_W/app/" &&
    (cd "$SCR_W/app" && mpicc "${san[@]}" $(scr_pc --cflags cairn-scr) heat_scr.c -o heat_scr $(scr_pc --libs cairn-scr)) &&
    readelf -d "$SCR_W/app/heat_scr" | grep -q 'NEEDED.*\[libcairn-scr.so.0\]'
}
check "scr installed: make install, heat_scr.c built with pkg-config cairn-scr alone (shared libcairn-scr.so.0)" \
  scr_build_installed
SCR_H_TREE=$SCR_H SCR_H=$SCR_W/app/heat_scr
scr_ranks 2 1
check "  ... it runs, is killed at checkpoint 5 (PARTNER)" \
  scr_env LD_LIBRARY_PATH="$SCR_P/lib" SCR_COPY_TYPE=PARTNER scr_crash 5 ckpt.20 -c 5
wipe_nodes 0
check "  ... node 0 lost: restart names ckpt.20, byte-identical" \
  scr_env LD_LIBRARY_PATH="$SCR_P/lib" SCR_COPY_TYPE=PARTNER scr_resume ckpt.20 -c 5
SCR_H=$SCR_H_TREE
scr_ranks 4 2

# Shared files, the cache directory, the job id: run_scr_dropin.sh.
source tests/compat/scr/run_scr_dropin.sh

# cairn ls/verify/report/inspect --scr PREFIX: run_scr_cli.sh.
source tests/compat/scr/run_scr_cli.sh
