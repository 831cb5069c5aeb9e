#!/usr/bin/env bash
# run_scr_dropin.sh - cairn-scr as a drop-in for real SCR programs: files
# shared by ranks (SCR_CACHE_BYPASS=1, shared_scr.c, the pattern of SCR's
# test_api --shared-file) after a crash, node losses and every node wiped;
# the cache directory SCR_Init creates and the directories it still refuses;
# the job id by SCR's rules. Sourced by run_scr.sh (section scr), after it:
# uses its helpers (scr_fresh, scr_env, scr_run, scr_crash, scr_resume_saw,
# scr_level) and lib.sh's (wipe_nodes, run_grep, run_grep_rc).

# ---- files shared by ranks: 8 ranks on 4 emulated nodes, one file per checkpoint ----
SCR_H_HEAT=$SCR_H SCR_REF_HEAT=$SCR_REF
SCR_H=${SCR_H%/*}/shared_scr SCR_ARGS=(-t 8 -s 40000) SCR_NP=8 SCR_RPN=2
SCR_SHARED_BYTES=$((8 * (40000 + 16) + 37 * 28)) # every rank's part: 40000 + 37 r bytes and a header
scr_fresh shared-ref
SCR_REF=$SCR_W/ref.bin SCR_SHARED_REF=$SCR_W
export SCR_COPY_TYPE=SINGLE
check "scr shared file: uninterrupted run, 8 ranks on 4 nodes write one file per checkpoint" \
  run_grep '^No checkpoint to restart from$' scr_run 8 -f "$SCR_REF"
scr_shared_whole() { # scr_shared_whole STEP: the prefix holds ckpt.STEP's one file, as the reference
  local f=$SCR_W/ckpt.$1/shared.ckpt
  [ "$(stat -c %s "$f")" = "$SCR_SHARED_BYTES" ] || { echo "$f: not $SCR_SHARED_BYTES bytes"; return 1; }
  cmp "$SCR_SHARED_REF/ckpt.$1/shared.ckpt" "$f"
}
check "  ... ckpt.4/shared.ckpt is one file of every rank's part, in the prefix" scr_shared_whole 4

scr_shared_gen4() { # scr_shared_gen4 LEVEL: generation 4 (ckpt.4) at LEVEL, its file whole
  if [ "$1" = 4 ]; then test -e "$SCR_W/cairn-$(id -u)/$CAIRN_JOB/gen-4/index" || return 1
  else scr_level 4 "$1" || { "$BUILD/cairn" ls --base "$CAIRN_BASE" --job "$CAIRN_JOB"; return 1; }; fi
  scr_shared_whole 4
}
scr_shared_case() { # scr_shared_case NAME COPY_TYPE LEVEL NODES...: crash, lose NODES, restart
  local name=$1 ct=$2 level=$3; shift 3
  scr_fresh "shared-$name"
  export SCR_COPY_TYPE=$ct
  check "scr shared file ($ct, SCR_CACHE_BYPASS=1 by SCR_Config, 8 ranks on 4 nodes): killed as ckpt.5 begins" \
    scr_crash 5 ckpt.4
  check "  ... ckpt.4 is generation 4 at level $level; its file is whole in the prefix" \
    scr_shared_gen4 "$level"
  [ $# -eq 0 ] || wipe_nodes "$@"
  check "  ... ${*:+nodes $* lost: }restart names ckpt.4, every rank reads its part, final bytes identical" \
    scr_resume ckpt.4
}
scr_shared_case l1 SINGLE 1
wipe_nodes 0 1 2 3
scr_shared_fresh() { # nothing to restore: the run starts at step 0, exits 0, ends as the reference
  local log=$SCR_W/fresh.log
  scr_run 8 "${SCR_ARGS[@]}" -f "$SCR_W/fresh.bin" >"$log" 2>&1 || { tail -n 20 "$log"; return 1; }
  grep -q '^No checkpoint to restart from$' "$log" || { tail -n 20 "$log"; return 1; }
  cmp "$SCR_REF" "$SCR_W/fresh.bin"
}
check "  ... every node lost, no copy on the PFS (SINGLE): no checkpoint offered, the run from step 0 byte-identical" \
  scr_shared_fresh
scr_shared_case l2 PARTNER 2 1
export SCR_SET_SIZE=4
scr_shared_case l3 XOR 3 2
unset SCR_SET_SIZE
export SCR_FLUSH=2
scr_shared_case l4 PARTNER 4 0 1 2 3
export SCR_FLUSH=0

# One name for every checkpoint (-k): ckpt.5 is written over ckpt.4's file before the crash.
# SCR would read the changed bytes back; cairn-scr finds the file changed and offers older
# checkpoints, whose file has changed too: the run starts again from step 0, and says why.
scr_fresh shared-same
export SCR_COPY_TYPE=SINGLE
check "scr shared file under one name for every checkpoint: killed as ckpt.5 begins" scr_crash 5 ckpt.4 -k
check "  ... ckpt.4's file has changed since: refused, no checkpoint restored, run from step 0 byte-identical" \
  scr_resume_saw ckpt.4 'shared.ckpt has changed since the checkpoint was written' -k
check "  ... and it says no checkpoint was left" grep -q '^No checkpoint to restart from$' "$SCR_W/run.log"

# Without SCR_CACHE_BYPASS (SCR's rule: shared files only in bypass mode) the dataset fails
# and cairn-scr names the shared file and the setting.
scr_fresh shared-cache
scr_shared_cache() {
  local log=$SCR_W/cache.log
  scr_env SCR_CACHE_BYPASS=0 scr_run 8 -n -t 1 >"$log" 2>&1 && { echo "it succeeded"; return 1; }
  grep -q 'ckpt.1/shared.ckpt was routed by 8 ranks: .*SCR_CACHE_BYPASS=1' "$log" ||
    { tail -n 20 "$log"; return 1; }
}
check "scr shared file with SCR_CACHE_BYPASS=0: the checkpoint fails, naming the file and SCR_CACHE_BYPASS=1" \
  scr_shared_cache
SCR_H=$SCR_H_HEAT SCR_REF=$SCR_REF_HEAT

# From here on 2 ranks on 2 nodes (scr_ranks): nothing below depends on two ranks sharing a node.
scr_ranks 2 1

# ---- the cache directory: SCR_Init creates it, and still refuses what is not the user's ----
scr_fresh cachedir
SCR_NEWCACHE=$SCR_W/new/cache
check "scr SCR_CACHE_BASE missing: SCR_Init creates it (mode 0700), killed at checkpoint 5" \
  scr_env CAIRN_BASE= SCR_CACHE_BASE="$SCR_NEWCACHE" scr_crash 5 ckpt.20 -c 5
scr_newcache() { # this user's, mode 700, and ckpt.20 (generation 4) at level 1 in it
  test "$(stat -c '%a %u' "$SCR_NEWCACHE")" = "700 $(id -u)" || { stat "$SCR_NEWCACHE"; return 1; }
  CAIRN_BASE=$SCR_NEWCACHE scr_level 4 1
}
check "  ... it is a directory of this user, mode 700, and holds ckpt.20 at level 1" scr_newcache
check "  ... restart names ckpt.20 and ends byte-identical" \
  scr_env CAIRN_BASE= SCR_CACHE_BASE="$SCR_NEWCACHE" scr_resume ckpt.20 -c 5
mkdir -p "$SCR_W/elsewhere"; ln -s "$SCR_W/elsewhere-missing" "$SCR_W/link"
check "scr SCR_CACHE_BASE a dangling symlink: SCR_Init refuses to follow it, exit 1" \
  run_grep_rc 1 'cache directory .*/link: a symlink; refusing to follow it' \
  scr_env CAIRN_BASE= SCR_CACHE_BASE="$SCR_W/link" scr_run 2 -c 5
check "  ... nothing was created through it" test ! -e "$SCR_W/elsewhere-missing"
mkdir -m 700 "$SCR_W/c2"; ln -s "$SCR_W/elsewhere" "$SCR_W/c2/cairn-$(id -u)"
check "scr cache directory whose cairn-<uid> is a symlink: SCR_Init fails, exit 1" \
  run_grep_rc 1 'is a symlink; refusing to follow it' scr_env CAIRN_BASE= SCR_CACHE_BASE="$SCR_W/c2" scr_run 2 -c 5
if [ "$(id -u)" -eq 0 ]; then
  mkdir -m 700 -p "$SCR_W/c3/cairn-0"; chown 65534 "$SCR_W/c3/cairn-0"
  check "scr cache directory whose cairn-<uid> is another user's: SCR_Init fails, exit 1" \
    run_grep_rc 1 'is owned by uid 65534, not by this user' scr_env CAIRN_BASE= SCR_CACHE_BASE="$SCR_W/c3" scr_run 2 -c 5
fi

# ---- the job id: SCR_JOB_ID, then the scheduler's; said once ----
scr_fresh jobids
check "scr SCR_JOB_ID=alpha: killed at checkpoint 5" scr_env CAIRN_JOB= SCR_JOB_ID=alpha scr_crash 5 ckpt.20 -c 5
scr_beta() { # another job id, same prefix and cache: nothing of alpha's restored
  local log=$SCR_W/beta.log
  scr_env CAIRN_JOB= SCR_JOB_ID=beta scr_run "$SCR_NP" -c 5 -t 10 >"$log" 2>&1 &&
    grep -q '^cairn-scr: job id beta (SCR_JOB_ID)$' "$log" &&
    grep -q '^No checkpoint to restart from$' "$log" && ! grep -q '^Restarting' "$log" ||
    { tail -n 20 "$log"; return 1; }
}
check "  ... SCR_JOB_ID=beta in the same prefix and cache: says its job id, restores nothing of alpha's, runs from step 0" \
  scr_beta
check "  ... SCR_JOB_ID=alpha again (SLURM_JOB_ID=777 too: SCR_JOB_ID wins): restart names ckpt.20, byte-identical" \
  scr_env CAIRN_JOB= SCR_JOB_ID=alpha SLURM_JOB_ID=777 scr_resume_saw ckpt.20 '^cairn-scr: job id alpha \(SCR_JOB_ID\)$' -c 5
check "scr no SCR_JOB_ID: Slurm's job id (SLURM_JOB_ID=777), said once" \
  run_grep '^cairn-scr: job id 777 \(SLURM_JOB_ID\)$' scr_env CAIRN_JOB= SLURM_JOB_ID=777 scr_run 2 -t 5 -c 5

# ---- SCR_Config as SCR's test_config uses it ----
scr_fresh config
scr_config() { (cd "$SCR_W" && env -u SCR_COPY_TYPE -u SCR_FLUSH CAIRN_RANKS_PER_NODE=1 "$SCR_MPIRUN" 2 "${SCR_H%/*}/config_scr"); }
check "scr SCR_Config as in SCR's test_config: set returns the value, spaces, queries, unsets, refusals, \$VAR; none after SCR_Init" \
  run_grep '^PASS config$' scr_config
check "  ... SCR_Init took SCR_COPY_TYPE=SINGLE from SCR_Config: cfg.1 is generation 1 at level 1" scr_level 1 1

# ---- SCR's Fortran interface (scrf.h): a program written as SCR's test_ckpt.F90 ----
SCR_H=${SCR_H_HEAT%/*}/ckpt_scr SCR_ARGS=()
scr_fresh fortran-ref
SCR_REF=$SCR_W/ref.bin
export SCR_COPY_TYPE=PARTNER
check "scr Fortran (INCLUDE 'scrf.h', CALL SCR_INIT(IERR)...): uninterrupted, 2 ranks on 2 nodes, 6 checkpoints and outputs" \
  run_grep '^Completed checkpoint 6\.$' scr_run "$SCR_NP" -f "$SCR_REF"
scr_fresh fortran
check "scr Fortran, PARTNER: killed as its 4th checkpoint begins" scr_crash 4 3
check "  ... its output datasets are in the prefix, under their names" \
  bash -c "cd '$SCR_W' && for r in $(seq -s ' ' 0 $((SCR_NP - 1))); do test -s output_00003/rank_0000\$r.out || exit 1; done"
wipe_nodes 1
check "  ... node 1 lost: SCR_HAVE_RESTART names scr.dataset.5 (the 3rd checkpoint), final array byte-identical" \
  scr_resume scr.dataset.5
scr_fortran_installed() { # built out of the tree with the installed cairn-scr's flags alone
  local a=$SCR_W/fapp san=() # the installed library is instrumented under CAIRN_SANITIZE
  [ -n "${CAIRN_SANITIZE:-}" ] && san=(-fsanitize=address,undefined)
  mkdir -p "$a" && cp tests/compat/scr/ckpt_scr.F90 "$a/" && test -f "$SCR_P/include/cairn/scr/scrf.h" &&
    (cd "$a" && mpif90 "${san[@]}" $(scr_pc --cflags cairn-scr) ckpt_scr.F90 -o ckpt_scr $(scr_pc --libs cairn-scr)) &&
    readelf -d "$a/ckpt_scr" | grep -q 'NEEDED.*\[libcairn-scr.so.0\]'
}
check "scr Fortran installed: scrf.h beside scr.h, ckpt_scr.F90 built with pkg-config cairn-scr alone (shared)" \
  scr_fortran_installed
SCR_H=$SCR_W/fapp/ckpt_scr
scr_fresh fortran-inst
check "  ... it runs against libcairn-scr.so.0, killed as its 4th checkpoint begins" \
  scr_env LD_LIBRARY_PATH="$SCR_P/lib" scr_crash 4 3
check "  ... restart names scr.dataset.5, byte-identical" \
  scr_env LD_LIBRARY_PATH="$SCR_P/lib" scr_resume scr.dataset.5
SCR_H=$SCR_H_HEAT SCR_REF=$SCR_REF_HEAT
scr_ranks 4 2
