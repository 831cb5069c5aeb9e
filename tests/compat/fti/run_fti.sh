#!/usr/bin/env bash
# run_fti.sh - the FTI layer (libcairn-fti): FTI-style programs that know only
# fti.h and MPI, set up by an FTI configuration file alone, crash and restart
# at levels 1-4 and must end bit-exact with an uninterrupted run. Sourced by
# tests/run.sh (section fti; uses its `check` and tests/mpi/lib.sh).
#
# Every run gets no CAIRN_* variable but the launcher's: the copy of
# tests/compat/fti/config.fti in the scenario's directory is the whole setup
# (ckpt_dir, glbl_dir, node_size with local_test = 1, group_size, ckpt_lN; the
# job is the file's [restart] exec_id, as FTI keeps it). The one cairn
# variable a scenario adds is CAIRN_CKPT_EVERY_<L> (iterations instead of the
# file's minutes, so a run checkpoints within seconds) and, to crash at a
# known instant, CAIRN_FAULT; one scenario kills a rank from outside instead.

FTI_H=$BUILD/tests/compat/fti/heatdis
FTI_RV=$BUILD/tests/compat/fti/recovervar
FTI_MB=1     # MB per process: 512 x 131 doubles twice on 4 ranks
FTI_EVERY=60 # iterations between checkpoints (heatdis runs 600)
FTI_AFTER=500 # the same after a restart (fewer: the restart is what is tested)
FTI_EXTRA=() # cairn variables fti_crash gives both of its runs (CAIRN_EC_M=1)

fti_clean() { # fti_clean CMD...: run CMD without the CAIRN_* variables of the suite
  local v unset=()
  for v in $(compgen -e); do
    case $v in CAIRN_LAUNCHER | CAIRN_TEST_TAG) ;; CAIRN_*) unset+=(-u "$v") ;; esac
  done
  env "${unset[@]}" "$@"
}
fti_new() { # fti_new NAME: scenario directory with local/, pfs/ and config.fti
  FTI_DIR=$(mktemp -d "/dev/shm/cairn-fti-$1.XXXXXX")
  SCRATCH_DIRS+=("$FTI_DIR")
  mkdir "$FTI_DIR/local" "$FTI_DIR/pfs"
  FTI_CFG=$FTI_DIR/config.fti
  cp tests/compat/fti/config.fti "$FTI_CFG"
  fti_set Ckpt_dir "$FTI_DIR/local"
  fti_set Glbl_dir "$FTI_DIR/pfs"
}
fti_set() { sed -i -E "s|^([[:space:]]*$1[[:space:]]*=).*|\1 $2|I" "$FTI_CFG"; }
fti_get() { sed -n -E "s|^[[:space:]]*$1[[:space:]]*=[[:space:]]*([^ #;]*).*|\1|Ip" "$FTI_CFG"; }
fti_levels() { # fti_levels L: checkpoints at level L only (the others' intervals 0)
  local l
  for l in 1 2 3 4; do fti_set "Ckpt_L$l" "$([ "$l" = "$1" ] && echo 1 || echo 0)"; done
}
fti_job() { echo "$FTI_DIR/local/cairn-$(id -u)/$(fti_get exec_id)"; }
fti_wipe() { local x; for x in "$@"; do rm -rf "$(fti_job)/node$x"; done; }
fti_run() { # fti_run LOG NP PROGRAM ARGS...: a run of the scenario, output to LOG (its tail
  local log=$1 rc; shift # printed if it fails: shown when the check fails)
  fti_clean scripts/mpirun.sh "$@" >"$log" 2>&1
  rc=$?
  [ "$rc" = 0 ] || { tail -n 12 "$log"; echo "exit status $rc of: $*"; }
  return "$rc"
}
fti_need() { # fti_need LOG PATTERN...: every extended regex is in LOG
  local p
  for p in "${@:2}"; do
    grep -Eq -- "$p" "$1" || { echo "no line matches '$p' in $1:"; tail -n 25 "$1"; return 1; }
  done
}
descendants() { local c; for c in $(pgrep -P "$1"); do echo "$c"; descendants "$c"; done; }

check "fti: the test programs were built" test -x "$FTI_H" -a -x "$FTI_RV" -a -x "$BUILD/tests/compat/fti/surface"
check "fti: the test programs use only fti.h and MPI (no cairn call, type or header)" \
  bash -c "! grep -nE 'cairn_|CAIRN_|<cairn' tests/compat/fti/*.c"
check "fti: libcairn-fti.so exports FTI's names only (SONAME libcairn-fti.so.0)" \
  bash -c "nm -D --defined-only '$BUILD/libcairn-fti.so' | awk '{print \$3}' | grep -Ev '^(FTI_|_init\$|_fini\$|__odr_asan\.FTI_)' | (! grep .) &&
           objdump -p '$BUILD/libcairn-fti.so' | grep -q 'SONAME *libcairn-fti.so.0'"

# FTI 1.6's whole public surface: surface.c names every function (with
# FTI's signature, so -Werror checks ours), type and constant of the list it
# keeps; each name must be declared in fti.h and used beyond the list. Run,
# the calls cairn cannot honour return FTI_NSCS and say why once per process.
fti_surface() {
  local names n missing="" w
  names=$(sed -n '/NAMES-BEGIN/,/NAMES-END/p' tests/compat/fti/surface.c | grep -o '"[A-Za-z_0-9]*"' | tr -d '"')
  n=$(echo "$names" | wc -l)
  [ "$n" -gt 100 ] || { echo "only $n names in surface.c's list"; return 1; }
  for w in $names; do
    grep -qw -- "$w" src/compat/fti/fti.h || missing="$missing $w(fti.h)"
    [ "$(grep -ow -- "$w" tests/compat/fti/surface.c | wc -l)" -ge 2 ] || missing="$missing $w(unused)"
  done
  [ -z "$missing" ] || { echo "missing:$missing"; return 1; }
  mpicc -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter -Isrc/compat/fti -fsyntax-only \
    tests/compat/fti/surface.c || return 1
  fti_run "$FTI_DIR/log" 4 "$BUILD/tests/compat/fti/surface" "$FTI_CFG" &&
    fti_need "$FTI_DIR/log" "PASS: $n names of FTI 1.6" || return 1
  for w in FTI_BitFlip FTI_GetStageDir FTI_GetStageStatus FTI_SendFile FTI_DefineGlobalDataset \
    FTI_AddSubset FTI_RecoverDatasetDimension FTI_GetDatasetSpan FTI_GetDatasetRank \
    FTI_UpdateGlobalDataset FTI_UpdateSubset; do
    [ "$(grep -c "cairn-fti: rank [0-9]*: $w: not supported" "$FTI_DIR/log")" = 4 ] ||
      { echo "$w: not said once per process:"; grep -- "$w" "$FTI_DIR/log"; return 1; }
  done
}
fti_new surface
check "fti: FTI 1.6's public names (functions with FTI's signatures, types, constants) compile; calls not honoured say FTI_NSCS and why, once per process" \
  fti_surface

# FTI's own template configuration, every key at FTI's default (template.fti):
# FTI_Init takes it (dcp_block_size = -1 with dCP off), and each key is
# honoured, mapped, warned about once or rejected as docs/fti.md says.
fti_template() {
  cp tests/compat/fti/template.fti "$FTI_CFG"
  fti_set Ckpt_dir "$FTI_DIR/local"
  fti_set Glbl_dir "$FTI_DIR/pfs"
  fti_set Meta_dir "$FTI_DIR/meta"
  fti_set Verbosity 1
  fti_run "$FTI_DIR/log" 4 "$FTI_RV" "$FTI_CFG" 4 crash &&
    fti_need "$FTI_DIR/log" 'FTI_Init = 0' 'PASS: 2 checkpoints at level 4' '^direct = on$' \
      '^use = off$' '^ranks_per_node = 2$' || return 1
  [ "$(grep -c 'cairn-fti: warning: .*ckpt_io = 0' "$FTI_DIR/log")" = 1 ] ||
    { echo "ckpt_io = 0 (FTI: not a mode, POSIX) not warned once"; grep ckpt_io "$FTI_DIR/log"; return 1; }
  ! grep -E 'cairn-fti: error|not a key of FTI' "$FTI_DIR/log" || return 1
  fti_run "$FTI_DIR/log2" 4 "$FTI_RV" "$FTI_CFG" 4 crash &&
    fti_need "$FTI_DIR/log2" 'FTI_Status = 1' 'PASS: 5 variables recovered'
}
fti_new template
check "fti: FTI's template configuration (every key, FTI's defaults: dcp_block_size = -1 with dCP off) initialises; inline_l4 = 1 is pfs.direct" \
  fti_template
fti_rejects() { # FTI's own refusals, with FTI's reason; the file unchanged
  local key val why
  while IFS='|' read -r key val why; do
    cp tests/compat/fti/template.fti "$FTI_CFG"
    fti_set Ckpt_dir "$FTI_DIR/local"
    fti_set "$key" "$val"
    [ "$key" = Group_size ] && fti_set Ckpt_L3 5
    cp "$FTI_CFG" "$FTI_DIR/before"
    fti_run "$FTI_DIR/log" 2 "$FTI_RV" "$FTI_CFG" 1 crash && { echo "$key = $val accepted"; return 1; }
    fti_need "$FTI_DIR/log" 'FTI_Init = -1' "$why" && cmp "$FTI_CFG" "$FTI_DIR/before" || return 1
  done <<'EOF'
Verbosity|4|verbosity.*1, 2 or 3
Block_size|4096|block_size.*between 1 and 2048
Local_test|2|local_test.*0 or 1
Keep_last_ckpt|3|keep_last_ckpt.*0 or 1
Keep_heads_alive|1|keep_heads_alive.*head = 0
Group_size|40|group size must be lower than 32
Head|2|head.*0 or 1
EOF
}
fti_new rejects
check "fti: what FTI refuses is refused with FTI's reason (verbosity 4, block_size 4096, local_test 2, ...), the file unchanged" \
  fti_rejects

# The reference: heatdis uninterrupted, without checkpoints.
fti_new ref
fti_levels 0
FTI_REF=$FTI_DIR/ref.bin
fti_ref() {
  cp "$FTI_CFG" "$FTI_DIR/before"
  fti_run "$FTI_DIR/log" 4 "$FTI_H" $FTI_MB "$FTI_CFG" "$FTI_REF" &&
    fti_need "$FTI_DIR/log" 'cairn-fti: job [^ ]+: fresh start' 'Final iteration 600;' || return 1
  ! grep -E 'cairn-fti: (warning|error)|cairn\[.*\] (warn|error):' "$FTI_DIR/log" ||
    { echo "FTI's own keys were warned about"; return 1; }
  # the file got the new exec_id; every other line (comments included) is as it was
  grep -Eq '^Exec_ID = [0-9]{4}-[0-9]{2}-[0-9]{2}_[0-9]{2}-[0-9]{2}-[0-9]{2}' "$FTI_CFG" &&
    diff <(grep -v '^Exec_ID' "$FTI_DIR/before") <(grep -v '^Exec_ID' "$FTI_CFG")
}
check "fti: heatdis on 4 ranks, uninterrupted: the reference grid (exit 0, a fresh start, FTI's keys taken without a warning)" fti_ref

# fti_crash LEVEL NP NODE_SIZE WIPE...: heatdis checkpoints at LEVEL every
# FTI_EVERY iterations and dies (SIGKILL, CAIRN_FAULT) as its third checkpoint
# begins; nodes WIPE then lose their storage; the rerun with the same file
# must recover checkpoint 2 from LEVEL and end bit-exact with the reference.
fti_crash() {
  local lvl=$1 np=$2 ns=$3 job lost
  shift 3
  fti_set Node_size "$ns"
  fti_levels "$lvl"
  if fti_run "$FTI_DIR/crash.log" "$np" env "CAIRN_CKPT_EVERY_$lvl=$FTI_EVERY" "${FTI_EXTRA[@]}" \
    CAIRN_FAULT=ckpt.begin:gen=3 "$FTI_H" $FTI_MB "$FTI_CFG" "$FTI_DIR/crash.bin"; then
    echo "the run did not crash"; tail "$FTI_DIR/crash.log"; return 1
  fi
  [ "$(fti_get failure)" = 1 ] || { echo "failure = $(fti_get failure) after a crash"; return 1; }
  job=$(fti_get exec_id)
  if [ "$lvl" = 4 ]; then
    test -e "$FTI_DIR/pfs/cairn-$(id -u)/$job/gen-2/index" || { echo "no PFS generation 2"; return 1; }
  else
    "$BUILD/cairn" ls --base "$FTI_DIR/local" --job "$job" | awk -v l="$lvl" '$1==2 && $2==l' | grep -q . ||
      { echo "generation 2 is not at level $lvl:"; "$BUILD/cairn" ls --base "$FTI_DIR/local" --job "$job"; return 1; }
  fi
  fti_wipe "$@"
  fti_run "$FTI_DIR/restart.log" "$np" env "CAIRN_CKPT_EVERY_$lvl=$FTI_AFTER" "${FTI_EXTRA[@]}" \
    "$FTI_H" $FTI_MB "$FTI_CFG" "$FTI_DIR/final.bin" || return 1
  lost=""
  [ $# -gt 0 ] && [ "$lvl" != 4 ] && lost=", after [a-z]+ $# lost node"
  fti_need "$FTI_DIR/restart.log" "cairn-fti: job $job: restart from checkpoint 2 \(generation 2, level $lvl$lost" \
    'cairn-fti: recovered checkpoint 2 from level' 'Final iteration 600;' || return 1
  cmp "$FTI_REF" "$FTI_DIR/final.bin" || return 1
  [ "$(fti_get failure)" = 0 ] || { echo "failure = $(fti_get failure) after FTI_Finalize"; return 1; }
}

fti_new l2
check "fti: level 2 (4 ranks, 2 nodes): crash, node 1 lost, recovered from partner copies, bit-exact" \
  fti_crash 2 4 2 1
fti_new l3
check "fti: level 3 (4 nodes, group_size 4): crash, nodes 1 and 2 lost, decoded, bit-exact" \
  fti_crash 3 4 1 1 2
fti_new l4
check "fti: level 4 (glbl_dir): crash, every node lost, recovered from the PFS, bit-exact" \
  fti_crash 4 4 2 0 1
# cairn ls / verify / report / inspect --fti FILE: the job (exec_id), base
# (ckpt_dir) and PFS (glbl_dir) from FTI's file alone, as the layer finds them.
fti_cli() {
  local job c=$BUILD/cairn
  job=$(fti_get exec_id)
  fti_clean "$c" ls --base "$FTI_DIR/local" --pfs "$FTI_DIR/pfs" --job "$job" --json >"$FTI_DIR/want.json" &&
    fti_clean "$c" ls --fti "$FTI_CFG" --json >"$FTI_DIR/ls.json" || { echo "cairn ls: exit $?"; return 1; }
  python3 - "$FTI_DIR/want.json" "$FTI_DIR/ls.json" "$job" "$FTI_DIR/pfs/cairn-$(id -u)/$job" <<'PY' || return 1
import json, os, sys
want, got = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert got == want, (got, want)
assert got["job"] == sys.argv[3], got["job"]
pfs = sorted(int(g[4:]) for g in os.listdir(sys.argv[4]) if os.path.exists(os.path.join(sys.argv[4], g, "index")))
assert pfs and [g["gen"] for g in got["generations"] if g["level"] == 4] == pfs[::-1], (got, pfs)
PY
  fti_clean "$c" verify --fti "$FTI_CFG" --json >"$FTI_DIR/v.json" || { echo "cairn verify --fti: exit $?"; return 1; }
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); s=d["summary"]; assert s["jobs"]==1 and s["ok"]>0 and s["corrupt"]==s["missing"]==0, s' "$FTI_DIR/v.json" || return 1
  fti_clean "$c" report --fti "$FTI_CFG" --svg "$FTI_DIR/r.svg" || { echo "cairn report --fti: exit $?"; return 1; }
  python3 - "$FTI_DIR/r.svg" "$FTI_DIR/ls.json" <<'PY' || return 1
import json, sys, xml.etree.ElementTree as ET
gens = [int(g.get("data-gen")) for g in ET.parse(sys.argv[1]).getroot().iter() if g.get("data-gen")]
assert gens == sorted(g["gen"] for g in json.load(open(sys.argv[2]))["generations"]), gens
PY
  fti_clean "$c" inspect --fti "$FTI_CFG" >"$FTI_DIR/where" || { echo "cairn inspect --fti: exit $?"; return 1; }
  grep -qx "job: *$job" "$FTI_DIR/where" && grep -qx "base: *$FTI_DIR/local" "$FTI_DIR/where" &&
    grep -qx "pfs: *$FTI_DIR/pfs" "$FTI_DIR/where" || { cat "$FTI_DIR/where"; return 1; }
  printf '[basic]\nckpt_dir = %s\nnode_size = x\n' "$FTI_DIR/local" >"$FTI_DIR/bad.fti"
  fti_clean "$c" ls --fti "$FTI_DIR/bad.fti" >"$FTI_DIR/out" 2>&1
  [ $? = 1 ] && grep -q "bad.fti:3: .*node_size" "$FTI_DIR/out" || { echo "a bad FTI file:"; cat "$FTI_DIR/out"; return 1; }
}
check "  ... cairn ls/verify/report/inspect --fti config.fti: its job, base and PFS from the file alone (ls --json as with --base/--pfs/--job)" fti_cli

# Level 4 with erasure.m = 1 (group_size 4, node_size 1: 4 nodes; m by
# CAIRN_EC_M), inline_l4 = 0 (so level 1 and parity first, then the PFS): 2 of the 4 nodes lost is more than level 3 rebuilds, and the PFS
# holds checkpoint 2 whole. FTI_Init must say so (the restart query: READY at
# level 4, not "lost"), recover it bit-exact and go on from its iteration,
# never from 0; the later checkpoints set nothing aside (no abandoned-gen-*).
fti_pfs_m1() {
  fti_set Inline_L4 0 # FTI's level 4 through level 1 (inline_l4 = 1 writes straight to the PFS)
  FTI_EXTRA=(CAIRN_EC_M=1)
  fti_crash 4 4 1 0 1
  local rc=$?
  FTI_EXTRA=()
  [ "$rc" = 0 ] || return 1
  fti_need "$FTI_DIR/restart.log" 'encoding set 0 lost 2 nodes \(0 1\), level 3 rebuilds at most erasure.m = 1' \
    'restoring generation 2 from the PFS \(level 4\)' || return 1
  ! grep -E '^Step : 0,' "$FTI_DIR/restart.log" || { echo "the restarted run began at iteration 0"; return 1; }
  ! find "$FTI_DIR/pfs" "$FTI_DIR/local" -name 'abandoned-*' | grep . ||
    { echo "generations were set aside as abandoned"; return 1; }
}
fti_new pfsm1
check "fti: level 4, erasure.m = 1, 2 of 4 nodes lost: FTI_Init finds checkpoint 2 on the PFS, recovers it bit-exact, goes on from it; nothing set aside" \
  fti_pfs_m1

# Level 1, killed from outside: once a generation of id 2 or more is
# complete, one rank of the running job gets SIGKILL, wherever it is; the
# rerun recovers the newest complete checkpoint (2 or later) from level 1 and
# ends bit-exact. The run waits for a hold file after its last iteration, so
# a fast machine cannot finish it before the kill; the file is only created
# if no rank was found to kill, to let the run end and the test fail.
fti_kill() {
  fti_set Node_size 2
  fti_levels 1
  fti_clean env "CAIRN_CKPT_EVERY_1=5" scripts/mpirun.sh 4 "$FTI_H" $FTI_MB "$FTI_CFG" \
    "$FTI_DIR/crash.bin" "$FTI_DIR/hold" >"$FTI_DIR/crash.log" 2>&1 &
  local pid=$! victim=""
  while kill -0 "$pid" 2>/dev/null; do # until a generation >= 2 is complete
    "$BUILD/cairn" ls --base "$FTI_DIR/local" --job "$(fti_get exec_id)" 2>/dev/null |
      awk '$1+0 >= 2 && / complete( |$)/' | grep -q . && break
    sleep 0.1
  done
  victim=$(descendants "$pid" | xargs -r ps -o pid=,comm= -p | awk '$2=="heatdis" {print $1; exit}')
  if [ -n "$victim" ]; then kill -9 "$victim"; else touch "$FTI_DIR/hold"; fi
  if wait "$pid"; then echo "the run was not killed"; return 1; fi
  [ "$(fti_get failure)" = 1 ] || { echo "failure = $(fti_get failure) after a crash"; return 1; }
  fti_run "$FTI_DIR/restart.log" 4 env "CAIRN_CKPT_EVERY_1=$FTI_AFTER" "$FTI_H" $FTI_MB "$FTI_CFG" \
    "$FTI_DIR/final.bin" || return 1
  fti_need "$FTI_DIR/restart.log" 'restart from checkpoint ([2-9]|[1-9][0-9]+) \(generation [0-9]+, level 1\)' \
    'Final iteration 600;' && cmp "$FTI_REF" "$FTI_DIR/final.bin"
}
fti_new l1
check "fti: level 1: a rank killed (SIGKILL) mid-run after checkpoint 2, recovered, bit-exact" fti_kill

# A restart whose protected sizes do not match (heatdis given 2 MB instead of
# 1): the first FTI_Snapshot says so once, and the run goes on from its own
# start and finishes.
fti_mismatch() { # 2 ranks on 2 nodes: nothing here depends on two ranks sharing a node
  fti_set Node_size 1
  fti_levels 1
  fti_run "$FTI_DIR/crash.log" 2 env "CAIRN_CKPT_EVERY_1=$FTI_EVERY" CAIRN_FAULT=ckpt.begin:gen=2 \
    "$FTI_H" $FTI_MB "$FTI_CFG" "$FTI_DIR/crash.bin" && { echo "the run did not crash"; return 1; }
  fti_run "$FTI_DIR/restart.log" 2 env "CAIRN_CKPT_EVERY_1=$FTI_AFTER" "$FTI_H" 2 "$FTI_CFG" \
    "$FTI_DIR/final.bin" &&
    fti_need "$FTI_DIR/restart.log" 'restart from checkpoint 1' 'cannot recover generation 1: .*does not match' \
      'FTI_Snapshot: recovery failed; going on without it' 'Final iteration 600;' &&
    [ "$(grep -c 'recovery failed' "$FTI_DIR/restart.log")" = 1 ]
}
fti_new mismatch
check "fti: a restart with other sizes: FTI_Snapshot says so once (FTI_NREC) and the run goes on from its start" \
  fti_mismatch

# FTI_GetStoredSize, FTI_Realloc, FTI_RecoverVar (recovervar.c).
fti_recovervar() { # LEVEL NP NODE_SIZE WIPE...
  local lvl=$1 np=$2
  fti_set Node_size "$3"
  fti_levels 0
  shift 3
  fti_run "$FTI_DIR/first.log" "$np" "$FTI_RV" "$FTI_CFG" "$lvl" crash &&
    fti_need "$FTI_DIR/first.log" "PASS: 2 checkpoints at level $lvl" || return 1
  [ "$(fti_get failure)" = 1 ] || { echo "failure = $(fti_get failure) after leaving"; return 1; }
  fti_wipe "$@"
  fti_run "$FTI_DIR/second.log" "$np" "$FTI_RV" "$FTI_CFG" "$lvl" crash &&
    fti_need "$FTI_DIR/second.log" 'FTI_Init = 0' 'FTI_Status = 1' 'PASS: 5 variables recovered one by one' || return 1
  [ "$(fti_get failure)" = 0 ] || { echo "failure = $(fti_get failure) after FTI_Finalize"; return 1; }
}
fti_new rv1
check "fti: FTI_GetStoredSize + FTI_Realloc + FTI_RecoverVar, shuffled, a user type (level 1), bit-exact" \
  fti_recovervar 1 2 1

# FTI_RecoverVar per rank (FTI's recoverVar test): 4 nodes, each rank asks
# the sizes and recovers its variables in an order of its own, every third
# rank only some of them (the other keeps its memory); bit-exact at each
# level, with nodes lost where the level survives it. Levels 2 and 3 run 8
# ranks, two a node (a partner copy and a node's parity hold two ranks'
# files; ranks 0-7 take five different orders, and three of them recover a
# subset); levels 1 and 4, where a rank's files stand alone, run 4 ranks.
fti_anyorder() { # NP NODE_SIZE LEVEL WIPE...
  local np=$1 lvl=$3
  fti_set Node_size "$2"
  shift 3
  fti_set Group_size 4
  fti_levels 0
  fti_run "$FTI_DIR/first.log" "$np" "$FTI_RV" "$FTI_CFG" "$lvl" crash &&
    fti_need "$FTI_DIR/first.log" "PASS: 2 checkpoints at level $lvl" || return 1
  fti_wipe "$@"
  fti_run "$FTI_DIR/second.log" "$np" "$FTI_RV" "$FTI_CFG" "$lvl" crash anyorder &&
    fti_need "$FTI_DIR/second.log" 'FTI_Status = 1' \
      'PASS: 5 variables recovered one by one, bit-exact on every rank \(each rank its own order, some a subset\)'
}
fti_new rvany1
check "fti: FTI_RecoverVar per rank, 4 ranks on 4 nodes: each rank its own order, some a subset, level 1, bit-exact" \
  fti_anyorder 4 1 1
fti_new rvany2
check "  ... 8 ranks on 4 nodes, level 2, node 1 lost (partner copies)" fti_anyorder 8 2 2 1
fti_new rvany3
check "  ... 8 ranks on 4 nodes, level 3, nodes 0 and 3 lost (decoded)" fti_anyorder 8 2 3 0 3
fti_new rvany4
check "  ... 4 ranks on 4 nodes, level 4, every node lost (the PFS)" fti_anyorder 4 1 4 0 1 2 3
fti_new rv3
check "fti: the same at level 3 with 2 of 4 nodes lost (rebuilt by decoding first)" \
  fti_recovervar 3 4 1 0 3
fti_afresh() {
  local old; old=$(fti_get exec_id)
  fti_run "$FTI_DIR/third.log" 4 "$FTI_RV" "$FTI_CFG" 1 finish &&
    fti_need "$FTI_DIR/third.log" 'FTI_Status = 0' 'PASS: 2 checkpoints' &&
    [ "$(fti_get exec_id)" != "$old" ] && [ "$(fti_get failure)" = 0 ]
}
check "  ... after FTI_Finalize (keep_last_ckpt = 0) the next run starts afresh under a new exec_id" fti_afresh

fti_keep() { # 2 ranks on 2 nodes (level 2's partner copies of two ranks' files: fti_crash 2 4 2)
  fti_set Keep_last_ckpt 1
  fti_set Node_size 1
  fti_levels 0
  fti_run "$FTI_DIR/first.log" 2 "$FTI_RV" "$FTI_CFG" 2 finish &&
    fti_need "$FTI_DIR/first.log" 'PASS: 2 checkpoints at level 2' || return 1
  [ "$(fti_get failure)" = 2 ] || { echo "failure = $(fti_get failure) after FTI_Finalize"; return 1; }
  fti_run "$FTI_DIR/second.log" 2 "$FTI_RV" "$FTI_CFG" 2 finish &&
    fti_need "$FTI_DIR/second.log" 'FTI_Status = 2' 'PASS: 5 variables recovered'
}
fti_new keep
check "fti: keep_last_ckpt = 1: a finished run leaves failure = 2; the next has FTI_Status 2 and recovers it" fti_keep

# FTI's Fortran interface (module fti, fti_mod.f90): heatdis_f.f90, written
# like FTI's Fortran heat example, built against fti.mod alone; at level 2 it
# crashes as its third checkpoint begins, node 1 loses its storage, and the
# rerun (FTI_Status 1, FTI_Recover) ends bit-exact with an uninterrupted run.
# 2 ranks on 2 nodes (level 2 with two ranks a node: fti_crash 2 4 2).
fti_fortran() {
  local f=$BUILD/tests/compat/fti/heatdis_f r
  grep -qi '^ *use fti$' tests/compat/fti/heatdis_f.f90 && ! grep -qi 'use cairn' tests/compat/fti/heatdis_f.f90 ||
    { echo "heatdis_f.f90 must use module fti only"; return 1; }
  fti_set Node_size 1
  fti_levels 0
  fti_run "$FTI_DIR/ref.log" 2 "$f" "$FTI_CFG" "$FTI_DIR/ref" &&
    fti_need "$FTI_DIR/ref.log" 'Final iteration 600' || return 1
  fti_levels 2
  if fti_run "$FTI_DIR/crash.log" 2 env CAIRN_CKPT_EVERY_2=60 CAIRN_FAULT=ckpt.begin:gen=3 \
    "$f" "$FTI_CFG" "$FTI_DIR/crash"; then
    echo "the run did not crash"; return 1
  fi
  [ "$(fti_get failure)" = 1 ] || { echo "failure = $(fti_get failure) after a crash"; return 1; }
  fti_wipe 1
  fti_run "$FTI_DIR/restart.log" 2 env CAIRN_CKPT_EVERY_2=$FTI_AFTER "$f" "$FTI_CFG" "$FTI_DIR/final" &&
    fti_need "$FTI_DIR/restart.log" 'restart from checkpoint 2 \(generation 2, level 2, after restoring 1 lost node' \
      'recovered at iteration 119' 'Final iteration 600' || return 1
  for r in 0 1; do cmp "$FTI_DIR/ref.$r" "$FTI_DIR/final.$r" || return 1; done
  [ "$(fti_get failure)" = 0 ] || { echo "failure = $(fti_get failure) after FTI_Finalize"; return 1; }
}
fti_new fortran
check "fti: Fortran (use fti): a heat program written like FTI's Fortran example crashes at level 2, node 1 lost, restarts bit-exact" \
  fti_fortran

# The configuration file: mapping, refusals, warnings, CAIRN_* winning.
fti_mapping() {
  fti_set Verbosity 1
  fti_run "$FTI_DIR/log" 4 "$FTI_RV" "$FTI_CFG" 1 finish &&
    fti_need "$FTI_DIR/log" "^base = $FTI_DIR/local\$" "^dir = $FTI_DIR/pfs\$" '^ranks_per_node = 2$' \
      '^set_size = 4$' '^m = 2$' '^every_1 = 3m$' '^every_2 = 5m$' '^every_3 = 7m$' '^every_4 = 11m$' \
      '^use = off$' '^level = debug$' 'PASS: 2 checkpoints at level 1'
}
fti_new map
check "fti: FTI's keys become cairn settings (ckpt_dir, glbl_dir, node_size, group_size, ckpt_lN minutes, inline, verbosity)" \
  fti_mapping

fti_bad() {
  fti_set Node_size abc
  cp "$FTI_CFG" "$FTI_DIR/before"
  local line; line=$(grep -n -i '^Node_size' "$FTI_CFG" | cut -d: -f1)
  fti_run "$FTI_DIR/log" 2 "$FTI_RV" "$FTI_CFG" 1 crash
  local rc=$?
  [ "$rc" = 2 ] || { echo "exit $rc, expected 2"; cat "$FTI_DIR/log"; return 1; }
  fti_need "$FTI_DIR/log" 'FTI_Init = -1' "cairn-fti: error: .*config.fti:$line: node_size: .abc. is not an integer" &&
    cmp "$FTI_CFG" "$FTI_DIR/before" && ! find "$FTI_DIR/local" "$FTI_DIR/pfs" -mindepth 1 | grep -q .
}
fti_new bad
check "fti: a bad value: FTI_Init = FTI_NSCS naming file, line and key; nothing written or created" fti_bad
fti_missing() {
  fti_run "$FTI_DIR/log2" 2 "$FTI_RV" /nonexistent/config.fti 1 crash
  local rc=$?
  [ "$rc" = 2 ] || { echo "exit $rc, expected 2"; cat "$FTI_DIR/log2"; return 1; }
  fti_need "$FTI_DIR/log2" 'FTI_Init = -1' 'cannot read FTI configuration file /nonexistent/config.fti'
}
check "fti: a missing configuration file: FTI_Init = FTI_NSCS, saying so" fti_missing

fti_warn() { # 2 ranks on 2 nodes: "once" is once for the two
  fti_set Head 1
  fti_set Node_size 1
  sed -i 's/^\[Basic\]$/[Basic]\nBogus_key = 3/' "$FTI_CFG"
  fti_run "$FTI_DIR/log" 2 "$FTI_RV" "$FTI_CFG" 1 finish &&
    fti_need "$FTI_DIR/log" 'head = 1 .* is not supported: every rank computes' 'PASS: 2 checkpoints' &&
    [ "$(grep -c '\[basic\] bogus_key is not a key of FTI.s configuration; ignored' "$FTI_DIR/log")" = 1 ]
}
fti_new warn
check "fti: head = 1 runs as head = 0 and an unknown key is ignored, each warned once" fti_warn

fti_noent() { # 2 ranks on 2 nodes
  fti_set Failure 1
  fti_set Exec_ID no-such-run
  fti_set Node_size 1
  fti_run "$FTI_DIR/log" 2 "$FTI_RV" "$FTI_CFG" 1 crash &&
    fti_need "$FTI_DIR/log" 'FTI_Init = -2' 'failure = 1, but job no-such-run holds no checkpoint: starting afresh' \
      'FTI_Status = 0' 'PASS: 2 checkpoints' && [ "$(fti_get failure)" = 1 ] && [ "$(fti_get exec_id)" = no-such-run ]
}
fti_new noent
check "fti: failure = 1 naming a run without checkpoints: FTI_Init = FTI_NREC, the run starts afresh" fti_noent

fti_unusable() { # level 3, 3 of 4 nodes lost (m = 2), no PFS copy
  fti_set Node_size 1
  fti_levels 0
  fti_run "$FTI_DIR/first.log" 4 "$FTI_RV" "$FTI_CFG" 3 crash &&
    fti_need "$FTI_DIR/first.log" 'PASS: 2 checkpoints at level 3' || return 1
  local old; old=$(fti_get exec_id)
  fti_wipe 0 1 2
  fti_run "$FTI_DIR/log" 4 env CAIRN_JOB="$old" "$FTI_RV" "$FTI_CFG" 3 crash
  local rc=$?
  [ "$rc" = 2 ] || { echo "under CAIRN_JOB: exit $rc, expected 2"; return 1; }
  fti_need "$FTI_DIR/log" 'FTI_Init = -1' "job $old holds a checkpoint this run cannot use" || return 1
  fti_run "$FTI_DIR/second.log" 4 "$FTI_RV" "$FTI_CFG" 3 crash &&
    fti_need "$FTI_DIR/second.log" 'FTI_Init = -2' "job $old holds a checkpoint this run cannot use \\(more nodes lost" \
      'starting afresh under the new execution id' 'FTI_Status = 0' 'PASS: 2 checkpoints' || return 1
  [ "$(fti_get exec_id)" != "$old" ] && [ -d "$FTI_DIR/local/cairn-$(id -u)/$old/node3/gen-2" ] ||
    { echo "the run did not move to a new exec_id, or the old job was touched"; return 1; }
}
fti_new unusable
check "fti: a checkpoint that cannot be used (3 of 4 nodes lost, m = 2) is left intact: FTI_NREC and a new exec_id; under CAIRN_JOB FTI_Init refuses" \
  fti_unusable

fti_l1_lost() { # level 1 keeps no copy elsewhere: a node lost loses the checkpoint (2 ranks, 2 nodes)
  fti_set Node_size 1
  fti_levels 0
  fti_run "$FTI_DIR/first.log" 2 "$FTI_RV" "$FTI_CFG" 1 crash &&
    fti_need "$FTI_DIR/first.log" 'PASS: 2 checkpoints at level 1' || return 1
  local old; old=$(fti_get exec_id)
  fti_wipe 1
  fti_run "$FTI_DIR/second.log" 2 "$FTI_RV" "$FTI_CFG" 1 crash &&
    fti_need "$FTI_DIR/second.log" 'FTI_Init = -2' "job $old holds a checkpoint this run cannot use" \
      'starting afresh under the new execution id' 'FTI_Status = 0' 'PASS: 2 checkpoints' || return 1
  [ "$(fti_get exec_id)" != "$old" ] && [ -d "$FTI_DIR/local/cairn-$(id -u)/$old/node0/gen-2" ] ||
    { echo "the run did not move to a new exec_id, or the old job was touched"; return 1; }
}
fti_new l1lost
check "fti: level 1, node 1 lost (no copy anywhere): FTI_NREC, a fresh start under a new exec_id, node 0's files left as they are" \
  fti_l1_lost

fti_env_wins() { # 2 ranks on 2 nodes
  fti_set Node_size 1
  mkdir "$FTI_DIR/other" "$FTI_DIR/other2"
  printf '[store]\nbase = %s\n' "$FTI_DIR/other2" >"$FTI_DIR/cairn.ini"
  fti_run "$FTI_DIR/log0" 2 env CAIRN_CONFIG_FILE="$FTI_DIR/cairn.ini" "$FTI_RV" "$FTI_CFG" 1 finish &&
    fti_need "$FTI_DIR/log0" 'PASS: 2 checkpoints' || return 1
  [ -d "$FTI_DIR/other2/cairn-$(id -u)/$(fti_get exec_id)" ] && [ -z "$(ls -A "$FTI_DIR/local")" ] ||
    { echo "CAIRN_CONFIG_FILE did not win over ckpt_dir"; return 1; }
  fti_run "$FTI_DIR/log" 2 env CAIRN_BASE="$FTI_DIR/other" "$FTI_RV" "$FTI_CFG" 1 finish &&
    fti_need "$FTI_DIR/log" 'PASS: 2 checkpoints' || return 1
  [ -d "$FTI_DIR/other/cairn-$(id -u)/$(fti_get exec_id)" ] && [ -z "$(ls -A "$FTI_DIR/local")" ] ||
    { echo "CAIRN_BASE did not win over ckpt_dir"; return 1; }
  cp "$FTI_CFG" "$FTI_DIR/before"
  local job="t$CAIRN_TEST_TAG-fti-env"
  fti_run "$FTI_DIR/log2" 2 env CAIRN_JOB="$job" "$FTI_RV" "$FTI_CFG" 1 crash &&
    fti_run "$FTI_DIR/log3" 2 env CAIRN_JOB="$job" "$FTI_RV" "$FTI_CFG" 1 crash &&
    fti_need "$FTI_DIR/log3" 'FTI_Status = 1' 'PASS: 5 variables recovered' || return 1
  [ -d "$FTI_DIR/local/cairn-$(id -u)/$job" ] && cmp "$FTI_CFG" "$FTI_DIR/before"
}
fti_new env
check "fti: CAIRN_CONFIG_FILE's settings and CAIRN_BASE win over ckpt_dir; with CAIRN_JOB the job restarts by it and the file is left alone" \
  fti_env_wins

# Installed: `make install` into a temporary prefix, heatdis.c built out of the
# tree with nothing but `pkg-config cairn-fti` (shared libraries), run from its
# own directory: same grid as the reference; then `make uninstall`.
fti_installed() {
  local P=$FTI_DIR/prefix a=$FTI_DIR/app v major san=()
  v=$(sed -n 's/^#define CAIRN_VERSION_STRING "\(.*\)"/\1/p' include/cairn.h)
  major=${v%%.*}
  [ -n "${CAIRN_SANITIZE:-}" ] && san=(-fsanitize=address,undefined)
  make -s --no-print-directory BUILD="$BUILD" install PREFIX="$P" >"$FTI_DIR/install.log" 2>&1 ||
    { tail "$FTI_DIR/install.log"; return 1; }
  test -f "$P/include/cairn/fti/fti.h" && test -f "$P/lib/libcairn-fti.a" &&
    test "$(readlink "$P/lib/libcairn-fti.so.$major")" = "libcairn-fti.so.$v" &&
    test "$(readlink "$P/lib/libcairn-fti.so")" = "libcairn-fti.so.$major" &&
    readelf -d "$P/lib/libcairn-fti.so.$v" | grep -q "SONAME.*\[libcairn-fti.so.$major\]" ||
    { echo "installed layout:"; ls -lR "$P/lib" "$P/include"; return 1; }
  local pcf=(env -u PKG_CONFIG_LIBDIR PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config)
  [ "$("${pcf[@]}" --cflags cairn-fti | xargs)" = "-I$P/include/cairn/fti -I$P/include" ] &&
    [ "$("${pcf[@]}" --libs cairn-fti | xargs)" = "-L$P/lib -lcairn-fti -lcairn" ] ||
    { echo "pkg-config cairn-fti: $("${pcf[@]}" --cflags --libs cairn-fti)"; return 1; }
  mkdir "$a" && cp tests/compat/fti/heatdis.c "$a/" &&
    (cd "$a" && env -u CPATH -u C_INCLUDE_PATH -u LIBRARY_PATH mpicc "${san[@]}" \
      $("${pcf[@]}" --cflags cairn-fti) heatdis.c -o heatdis $("${pcf[@]}" --libs cairn-fti) -lm) || return 1
  LD_LIBRARY_PATH=$P/lib ldd "$a/heatdis" | grep "libcairn-fti.so.$major => $P/lib/" >/dev/null ||
    { LD_LIBRARY_PATH=$P/lib ldd "$a/heatdis"; return 1; }
  fti_set Node_size 2
  fti_levels 0
  fti_run "$FTI_DIR/log" 4 env LD_LIBRARY_PATH="$P/lib" "$a/heatdis" $FTI_MB "$FTI_CFG" "$FTI_DIR/final.bin" &&
    cmp "$FTI_REF" "$FTI_DIR/final.bin" || return 1
  # the Fortran module: heatdis_f.f90 built with pkg-config cairn-fti-fortran alone
  [ "$("${pcf[@]}" --cflags cairn-fti-fortran | xargs)" = "-I$P/include/cairn/fti/fortran -I$P/include/cairn/fti -I$P/include" ] ||
    { echo "pkg-config cairn-fti-fortran: $("${pcf[@]}" --cflags --libs cairn-fti-fortran)"; return 1; }
  cp tests/compat/fti/heatdis_f.f90 "$a/" &&
    (cd "$a" && mpif90 "${san[@]}" $("${pcf[@]}" --cflags cairn-fti-fortran) heatdis_f.f90 -o heatdis_f \
      $("${pcf[@]}" --libs cairn-fti-fortran)) || return 1
  LD_LIBRARY_PATH=$P/lib ldd "$a/heatdis_f" | grep "libcairn-fti-fortran.so.$major => $P/lib/" >/dev/null ||
    { LD_LIBRARY_PATH=$P/lib ldd "$a/heatdis_f"; return 1; }
  fti_run "$FTI_DIR/logf" 4 env LD_LIBRARY_PATH="$P/lib" "$a/heatdis_f" "$FTI_CFG" "$FTI_DIR/outf" &&
    fti_need "$FTI_DIR/logf" 'Final iteration 600' || return 1
  make -s --no-print-directory BUILD="$BUILD" uninstall PREFIX="$P" >"$FTI_DIR/uninstall.log" 2>&1 &&
    ! find "$P" -name '*fti*' | grep . || { echo "left after uninstall"; return 1; }
}
fti_new installed
check "fti: make install; heatdis.c built out of the tree with pkg-config cairn-fti (shared) runs bit-exact, heatdis_f.f90 with cairn-fti-fortran runs; uninstall removes it" \
  fti_installed
