#!/usr/bin/env bash
# run_veloc.sh - the VeloC layer (libcairn-veloc): VeloC's own example
# programs, built against veloc.h with no cairn line, configured by a VeloC
# config file only (scratch, persistent, mode, ec_interval, ...; cairn keys
# as section.key), crash at a checkpoint (CAIRN_FAULT, the test harness's
# only cairn variable), lose nodes (their directories wiped), restart, and
# end byte-identical to an uninterrupted run, at levels 1, 2, 3 and 4; the
# file-based example through VELOC_Route_file; the API's finer points
# (veloc_api.c); bad config files refused; make install and a program built
# with pkg-config cairn-veloc; mode = async with cairnd. Sourced by tests/run.sh (uses
# `check`, run_grep and SCRATCH_DIRS); runs alone too:
#   CAIRN_TEST_ONLY=veloc bash tests/run.sh

VB=$BUILD/tests/compat/veloc
# Run NP ranks of a VeloC program with none of the CAIRN_* variables earlier
# sections exported: the config file says everything (CAIRN_FAULT and
# CAIRN_DAEMON_DELAY_MS are the harness's, given on the command line).
vmpi() {
  (
    for v in $(compgen -e | grep '^CAIRN_'); do
      case $v in CAIRN_TEST_TAG | CAIRN_LAUNCHER | CAIRN_FAULT | CAIRN_DAEMON_DELAY_MS) ;; *) unset "$v" ;; esac
    done
    exec scripts/mpirun.sh "$@"
  )
}
vfresh() { # scratch, persistent and a work directory for one scenario
  VS=$(mktemp -d /dev/shm/cairn-veloc-s.XXXXXX)
  VP=$(mktemp -d /dev/shm/cairn-veloc-p.XXXXXX)
  VW=$(mktemp -d /dev/shm/cairn-veloc-w.XXXXXX)
  SCRATCH_DIRS+=("$VS" "$VP" "$VW")
}
vjob() { echo "$VS/cairn-$(id -u)/${1:-veloc}"; }
vwipe() { for x in "$@"; do rm -rf "$(vjob)/node$x"; done; }
vlevel() { "$BUILD/cairn" ls --base "$VS" --job "${2:-veloc}" | awk -v g="$1" '$1==g {print $2}'; }
vpfs() { test -e "$VP/cairn-$(id -u)/${2:-veloc}/gen-$1/index"; }
# vcrash PROG CFG: a run of VNP ranks (4 unless set) killed (SIGKILL, rank 1)
# as it begins checkpoint 400, so checkpoint 200 is the newest; it must not exit 0.
vcrash() {
  CAIRN_FAULT=ckpt.begin:gen=400:rank=1 vmpi "${VNP:-4}" "$VB/$1" 1 "$2" "$VW/crashed.bin" >"$VW/crash.log" 2>&1 &&
    { echo "the run was not killed"; tail "$VW/crash.log"; return 1; }
  return 0
}
# vrestart PROG CFG: the restarted run (VNP ranks) resumes at 200 and ends
# byte-identical with VREF (the witness of as many ranks).
vrestart() {
  run_grep 'Previous checkpoint found at iteration 200,' vmpi "${VNP:-4}" "$VB/$1" 1 "$2" "$VW/restarted.bin" &&
    cmp "$VREF" "$VW/restarted.bin"
}
export -f vmpi vjob vwipe vlevel vpfs vcrash vrestart

# The witness: heatdis on 4 ranks, uninterrupted, level 1 only.
vfresh ref
VREF=$VW/ref.bin
export VREF VS VP VW VB
printf 'scratch = %s\nec_interval = -1\n' "$VS" >"$VW/ref.cfg"
check "veloc: heatdis_mem (VeloC's example, veloc.h only) runs 600 iterations on 4 ranks, 3 checkpoints" \
  bash -c "vmpi 4 '$VB/heatdis_mem' 1 '$VW/ref.cfg' '$VREF' && test -s '$VREF' && test \"\$(vlevel 600)\" = 1"
# cairn ls / verify --veloc FILE: the job ("veloc") and base (scratch) from the config file alone.
veloc_cli() {
  local c=$BUILD/cairn
  (for v in $(compgen -e | grep '^CAIRN_'); do unset "$v"; done
   "$c" ls --veloc "$VW/ref.cfg" --json >"$VW/ls.json" && "$c" verify --veloc "$VW/ref.cfg" --json >"$VW/v.json") ||
    { echo "cairn ls/verify --veloc: exit $?"; return 1; }
  python3 - "$VW/ls.json" "$VW/v.json" "$VS/cairn-$(id -u)" <<'PY'
import json, os, sys
ls, v = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert ls["job"] == "veloc" and ls["store"] == sys.argv[3], ls
job = sys.argv[3] + "/veloc"
kept = sorted({int(g[4:]) for n in os.listdir(job) for g in os.listdir(os.path.join(job, n)) if g.startswith("gen-")}, reverse=True)
assert kept[0] == 600 and [(g["gen"], g["level"], g["status"]) for g in ls["generations"]] == [(k, 1, "complete") for k in kept], (kept, ls["generations"])
assert v["summary"]["generations"] == len(kept) and v["summary"]["corrupt"] == 0 and v["exit_status"] == 0, v["summary"]
PY
}
check "  ... cairn ls/verify --veloc ref.cfg: job veloc under its scratch, the generations kept (600 newest)" veloc_cli
# The witness of the scenarios that run 2 ranks on 2 nodes (VNP=2, VREF=$VREF2):
# those in which nothing depends on two ranks sharing a node.
VREF4=$VREF VREF2=$VW/ref2.bin
export VREF4 VREF2
printf 'scratch = %s\nec_interval = -1\njob.ranks_per_node = 1\n' "$VW/two" >"$VW/ref2.cfg"
check "  ... and on 2 ranks of 2 nodes, 3 checkpoints: the witness of the 2-rank scenarios" \
  bash -c "vmpi 2 '$VB/heatdis_mem' 1 '$VW/ref2.cfg' '$VREF2' && test -s '$VREF2' && test \"\$(VS='$VW/two' vlevel 600)\" = 1"

# make install: libcairn-veloc.so.VERSION with its links, veloc.h under
# include/cairn/veloc, cairn-veloc.pc; heatdis_mem built out of the tree with
# pkg-config cairn-veloc alone, against the shared library, crashes and
# restarts byte-identical; make uninstall leaves nothing of the layer.
vfresh install
VI=$VW/prefix
vmk() { make -s --no-print-directory BUILD="$BUILD" "$@"; }
vpc() { env -u PKG_CONFIG_LIBDIR PKG_CONFIG_PATH="$VI/lib/pkgconfig" pkg-config "$@"; }
export VI
export -f vmk vpc
veloc_installed() {
  local v; v=$(sed -n 's/^#define CAIRN_VERSION_STRING "\(.*\)"/\1/p' include/cairn.h)
  vmk install PREFIX="$VI" >/dev/null || return 1
  test -f "$VI/lib/libcairn-veloc.so.$v" && test "$(readlink "$VI/lib/libcairn-veloc.so.${v%%.*}")" = "libcairn-veloc.so.$v" &&
    test "$(readlink "$VI/lib/libcairn-veloc.so")" = "libcairn-veloc.so.${v%%.*}" &&
    readelf -d "$VI/lib/libcairn-veloc.so.$v" | grep -q "SONAME.*\[libcairn-veloc.so.${v%%.*}\]" &&
    test -f "$VI/lib/libcairn-veloc.a" && test -f "$VI/include/cairn/veloc/veloc.h" &&
    test -f "$VI/include/cairn/veloc/include/veloc.h" || { ls -lR "$VI"; return 1; }
  test "$(vpc --cflags cairn-veloc | xargs)" = "-I$VI/include/cairn/veloc -I$VI/include" &&
    test "$(vpc --libs cairn-veloc | xargs)" = "-L$VI/lib -lcairn-veloc -lcairn" &&
    test "$(vpc --modversion cairn-veloc)" = "$v" || { cat "$VI/lib/pkgconfig/cairn-veloc.pc"; return 1; }
}
check "veloc install: libcairn-veloc.so.VERSION, its SONAME link and libcairn-veloc.so, veloc.h, cairn-veloc.pc for that prefix" \
  veloc_installed
veloc_outside() {
  local a=$VW/app san=(); [ -n "${CAIRN_SANITIZE:-}" ] && san=(-fsanitize=address,undefined)
  mkdir -p "$a" && cp tests/compat/veloc/heatdis_mem.c tests/compat/veloc/heatdis_common.c tests/compat/veloc/heatdis.h "$a/" &&
    ( cd "$a" && env -u CPATH -u C_INCLUDE_PATH -u LIBRARY_PATH mpicc "${san[@]}" $(vpc --cflags cairn-veloc) \
        heatdis_mem.c heatdis_common.c -o heatdis_mem $(vpc --libs cairn-veloc) -lm ) || return 1
  LD_LIBRARY_PATH=$VI/lib ldd "$a/heatdis_mem" >"$a/ldd.txt" && grep -q "libcairn-veloc.so.0 => $VI/lib/" "$a/ldd.txt" || { cat "$a/ldd.txt"; return 1; }
  printf 'scratch = %s\npersistent = %s\njob.ranks_per_node = 1\n' "$VS" "$VP" >"$a/v.cfg" # 2 ranks, 2 nodes
  CAIRN_FAULT=ckpt.begin:gen=400:rank=1 LD_LIBRARY_PATH=$VI/lib vmpi 2 "$a/heatdis_mem" 1 "$a/v.cfg" >"$a/crash.log" 2>&1 &&
    { echo "not killed"; return 1; }
  LD_LIBRARY_PATH=$VI/lib run_grep 'Previous checkpoint found at iteration 200,' vmpi 2 "$a/heatdis_mem" 1 "$a/v.cfg" "$a/out.bin" &&
    cmp "$VREF2" "$a/out.bin"
}
check "  ... heatdis_mem built out of the tree with pkg-config cairn-veloc (shared): crash at 400, restart, byte-identical" \
  veloc_outside
veloc_include_line() { # VeloC's examples write #include "include/veloc.h": unchanged, it compiles
  local a=$VW/app2
  mkdir -p "$a" && cp tests/compat/veloc/heatdis_file.c tests/compat/veloc/heatdis_common.c tests/compat/veloc/heatdis.h "$a/" &&
    grep -q '^#include "include/veloc.h"' "$a/heatdis_file.c" &&
    ( cd "$a" && env -u CPATH -u C_INCLUDE_PATH -u LIBRARY_PATH mpicc $(vpc --cflags cairn-veloc) \
        heatdis_file.c heatdis_common.c -o heatdis_file $(vpc --libs cairn-veloc) -lm ) &&
    readelf -d "$a/heatdis_file" | grep -q 'NEEDED.*\[libcairn-veloc.so.0\]'
}
check "  ... heatdis_file.c, with VeloC's line #include \"include/veloc.h\", built with pkg-config cairn-veloc alone" \
  veloc_include_line
check "  ... make uninstall removes the layer's files" \
  bash -c "vmk uninstall PREFIX='$VI' && test -z \"\$(find '$VI' -name '*veloc*')\""

# Level 1: a process crash, the nodes intact.
vfresh l1
printf 'scratch = %s\nmode = sync\nec_interval = -1\njob.ranks_per_node = 2\n' "$VS" >"$VW/v.cfg"
check "veloc level 1: crash at checkpoint 400 (4 ranks, 2 nodes); 200 complete at level 1" \
  bash -c "vcrash heatdis_mem '$VW/v.cfg' && test \"\$(vlevel 200)\" = 1 && test -z \"\$(vlevel 400)\""
check "  ... restart: VELOC_Restart_test gives 200, the result is byte-identical" \
  vrestart heatdis_mem "$VW/v.cfg"

# Level 2: ec on 2 nodes (level 3 needs 3 with m = 2): level 2, said once.
vfresh l2
printf 'scratch = %s\njob.ranks_per_node = 2\n' "$VS" >"$VW/v.cfg"
check "veloc level 2: ec on 2 nodes falls back to partner copies, and says so" \
  bash -c "vcrash heatdis_mem '$VW/v.cfg' && grep -q 'level 3 is not possible here' '$VW/crash.log' && test \"\$(vlevel 200)\" = 2"
vwipe 1
check "  ... node 1 lost (wiped): restart from the partner copy, byte-identical" \
  vrestart heatdis_mem "$VW/v.cfg"

# Level 3: 4 nodes of one rank, m = 2; two nodes lost.
vfresh l3
printf 'scratch = %s\nec_interval = 0\njob.ranks_per_node = 1\n' "$VS" >"$VW/v.cfg"
check "veloc level 3: ec on 4 nodes; crash at 400, 200 complete at level 3" \
  bash -c "vcrash heatdis_mem '$VW/v.cfg' && test \"\$(vlevel 200)\" = 3"
vwipe 1 2
check "  ... nodes 1 and 2 lost: restart decodes them, byte-identical" \
  vrestart heatdis_mem "$VW/v.cfg"

# Level 4: VeloC's own heatdis.cfg (persistent = the PFS; async mode with no
# cairnd running is synchronous; watchdog and AXL keys ignored), 2 ranks on 2
# nodes; then every node-local directory lost.
vfresh l4
export VNP=2 VREF=$VREF2
printf 'scratch = %s\npersistent = %s\nmode = async\nwatchdog_interval = 10\n\naxl_config = /tmp/axl.cfg\naxl_type = posix\njob.ranks_per_node = 1\n' "$VS" "$VP" >"$VW/v.cfg"
check "veloc level 4 (VeloC's heatdis.cfg): every checkpoint on the PFS, and at level 2 on 2 nodes" \
  bash -c "vcrash heatdis_mem '$VW/v.cfg' && vpfs 200 && test \"\$(vlevel 200)\" = 2"
rm -rf "$(vjob)"
check "  ... all node-local storage lost: restart from the PFS, byte-identical" \
  vrestart heatdis_mem "$VW/v.cfg"
export VNP=4 VREF=$VREF4

# Level 4 with erasure.m = 1 (4 nodes of one rank; cairn's key in VeloC's
# file): 2 of the 4 nodes lost is more than level 3 rebuilds, and the PFS
# holds checkpoint 200 whole. VELOC_Restart_test must give 200 (the restart
# query: READY at level 4, not "lost"), the restart reads it from the PFS, the
# run goes on from 200 (never from 0) byte-identical, and its checkpoints 400
# and 600 set nothing aside.
vfresh pfsm1
printf 'scratch = %s\npersistent = %s\nec_interval = 0\nerasure.m = 1\njob.ranks_per_node = 1\n' "$VS" "$VP" >"$VW/v.cfg"
check "veloc level 4 over ec with erasure.m = 1 (4 nodes): crash at 400; 200 at level 3 here and on the PFS" \
  bash -c "vcrash heatdis_mem '$VW/v.cfg' && test \"\$(vlevel 200)\" = 3 && vpfs 200"
vwipe 0 1
veloc_pfs_m1() {
  local log=$VW/restart.log
  vmpi 4 "$VB/heatdis_mem" 1 "$VW/v.cfg" "$VW/restarted.bin" >"$log" 2>&1 ||
    { tail -n 25 "$log"; echo "the restart failed"; return 1; }
  local p
  for p in 'Previous checkpoint found at iteration 200,' \
    'encoding set 0 lost 2 nodes \(0 1\), level 3 rebuilds at most erasure.m = 1' \
    'restoring generation 200 from the PFS \(level 4\)'; do
    grep -Eq -- "$p" "$log" || { tail -n 25 "$log"; echo "no line matches '$p'"; return 1; }
  done
  ! grep -Eq '^Step : (0|100),' "$log" || { echo "the restarted run did not go on from 200"; return 1; }
  cmp "$VREF" "$VW/restarted.bin" || return 1
  vpfs 400 && vpfs 600 || { echo "checkpoints 400 and 600 are not on the PFS"; return 1; }
  ! find "$VS" "$VP" -name 'abandoned-*' | grep . || { echo "generations were set aside"; return 1; }
}
check "  ... nodes 0 and 1 lost: VELOC_Restart_test gives 200, read from the PFS; the run goes on from it byte-identical, nothing set aside" \
  veloc_pfs_m1

# The file-based example: VELOC_Route_file, level 3, a node lost.
vfresh file
printf 'scratch = %s\njob.ranks_per_node = 1\n' "$VS" >"$VW/v.cfg"
check "veloc heatdis_file (routed files): crash at 400, 200 complete at level 3" \
  bash -c "vcrash heatdis_file '$VW/v.cfg' && test \"\$(vlevel 200)\" = 3"
vwipe 3
check "  ... node 3 lost: the restart reads its file back from the decoded copy, byte-identical" \
  vrestart heatdis_file "$VW/v.cfg"

# The API's finer points (2 ranks on 2 nodes).
vfresh api
printf 'scratch = %s\nec_interval = -1\nscratch_versions = 0\njob.ranks_per_node = 1\n' "$VS" >"$VW/v.cfg"
check "veloc API: checkpoints of 3 names, a selective one, success = 0 and refusals (veloc_api save)" \
  run_grep 'all passed' vmpi 2 "$VB/veloc_api" "$VW/v.cfg" save
check "  ... Restart_test per name and version, Recover_size, Recover_selective SOME/REST, larger and smaller regions (check)" \
  run_grep 'all passed' vmpi 2 "$VB/veloc_api" "$VW/v.cfg" check

# Intervals: ec_interval / persistent_interval in seconds (ckpt.every_3/4).
vfresh interval
printf 'scratch = %s\npersistent = %s\nec_interval = 3600\npersistent_interval = 3600\njob.ranks_per_node = 1\n' "$VS" "$VP" >"$VW/v.cfg"
check "veloc intervals of an hour: the run's 3 checkpoints stay at level 1, none on the PFS" \
  bash -c "vmpi 4 '$VB/heatdis_mem' 1 '$VW/v.cfg' '$VW/out.bin' && cmp '$VREF' '$VW/out.bin' && test \"\$(vlevel 600)\" = 1 && ! vpfs 600 && ! vpfs 200"
printf 'scratch = %s\npersistent = %s\npersistent_interval = -1\njob.ranks_per_node = 1\n' "$VS" "$VP" >"$VW/v2.cfg"
rm -rf "$(vjob)"
check "  ... persistent_interval = -1: never the PFS; ec every checkpoint (level 3)" \
  bash -c "vmpi 4 '$VB/heatdis_mem' 1 '$VW/v2.cfg' '$VW/out.bin' && test \"\$(vlevel 600)\" = 3 && ! vpfs 600"

# Bad config files: a clear error, VELOC_Init fails (the example exits 2), nothing written.
vfresh badcfg
bad_cfg() { # bad_cfg PATTERN CONFIG-TEXT
  printf '%b' "$2" >"$VW/bad.cfg"
  run_grep_rc 2 "$1" vmpi 2 "$VB/heatdis_mem" 1 "$VW/bad.cfg" || return 1
  [ -z "$(ls -A "$VS")" ] || { echo "the scratch directory is not empty"; return 1; }
}
export -f bad_cfg
check "veloc config: an unknown key is refused, naming it and the line" \
  bad_cfg "bad.cfg:2: unknown key 'scrach'" "scratch = $VS\nscrach = /tmp\n"
check "  ... no scratch" bad_cfg "scratch = <node-local directory> is missing" "mode = sync\n"
check "  ... a bad mode" bad_cfg "mode 'fast' is invalid" "scratch = $VS\nmode = fast\n"
check "  ... a bad interval" bad_cfg "ec_interval: '1h' is not an integer" "scratch = $VS\nec_interval = 1h\n"
check "  ... a bad cairn key (section.key), in cairn's words" bad_cfg "store.keep" "scratch = $VS\nstore.keep = lots\n"
check "  ... a missing file" run_grep_rc 2 "cannot open config file $VW/none.cfg" vmpi 2 "$VB/heatdis_mem" 1 "$VW/none.cfg"

# A missing scratch directory: VELOC_Init creates it (mode 0700), as VeloC does; what is not
# the user's below it, and a symlink in its place, are still refused. 2 ranks on 2 nodes.
vfresh scratch
export VNP=2 VREF=$VREF2
VSN=$VS/new/scratch
printf 'scratch = %s\nec_interval = -1\njob.ranks_per_node = 1\n' "$VSN" >"$VW/v.cfg"
check "veloc scratch missing: VELOC_Init creates it; heatdis_mem killed as it begins checkpoint 400" \
  vcrash heatdis_mem "$VW/v.cfg"
vscratch() { # this user's, mode 700, checkpoint 200 at level 1 in it
  test "$(stat -c '%a %u' "$VSN")" = "700 $(id -u)" || { stat "$VSN"; return 1; }
  test "$(VS=$VSN vlevel 200)" = 1 || { echo "checkpoint 200 is not at level 1 in $VSN"; return 1; }
}
check "  ... it is this user's directory, mode 700, holding checkpoint 200 at level 1" vscratch
check "  ... the restart resumes at 200 from it and ends byte-identical" vrestart heatdis_mem "$VW/v.cfg"
export VNP=4 VREF=$VREF4
ln -s "$VW/nowhere" "$VW/link"
printf 'scratch = %s\n' "$VW/link" >"$VW/link.cfg"
check "veloc scratch a dangling symlink: VELOC_Init refuses to follow it (exit 2), creates nothing" \
  bash -c "run_grep_rc 2 'scratch .*/link: a symlink; refusing to follow it' vmpi 2 '$VB/heatdis_mem' 1 '$VW/link.cfg' && test ! -e '$VW/nowhere'"
mkdir -m 700 -p "$VW/s2"; ln -s "$VW" "$VW/s2/cairn-$(id -u)"
printf 'scratch = %s\n' "$VW/s2" >"$VW/s2.cfg"
check "veloc scratch whose cairn-<uid> is a symlink: VELOC_Init fails (exit 2)" \
  run_grep_rc 2 'is a symlink; refusing to follow it' vmpi 2 "$VB/heatdis_mem" 1 "$VW/s2.cfg"
if [ "$(id -u)" -eq 0 ]; then
  mkdir -m 700 -p "$VW/s3/cairn-0"; chown 65534 "$VW/s3/cairn-0"
  printf 'scratch = %s\n' "$VW/s3" >"$VW/s3.cfg"
  check "veloc scratch whose cairn-<uid> is another user's: VELOC_Init fails (exit 2)" \
    run_grep_rc 2 'is owned by uid 65534, not by this user' vmpi 2 "$VB/heatdis_mem" 1 "$VW/s3.cfg"
fi

# mode = async: cairnd raises and flushes in the background.
vfresh async
VJ=t$CAIRN_TEST_TAG-veloc
printf 'scratch = %s\npersistent = %s\nmode = async\njob.id = %s\njob.ranks_per_node = 2\n' "$VS" "$VP" "$VJ" >"$VW/v.cfg"
vcairn() { env CAIRN_BASE="$VS" CAIRN_PFS_DIR="$VP" CAIRN_JOB="$VJ" CAIRN_RANKS_PER_NODE=2 \
  CAIRN_DAEMON_LAUNCHER="bash scripts/mpirun.sh" "$BUILD/cairn" "$@"; }
vidle() { # every daemon idle with nothing queued (at most 120 s)
  for _ in $(seq 1200); do
    vcairn status | awk 'NR>1 && ($3!=0 || $4!="idle") {b=1} END {exit b}' && return 0
    sleep 0.1
  done
  return 1
}
export -f vcairn vidle
export VJ
check "veloc mode = async: cairn start serves the job on its 2 nodes" bash -c "vcairn start --nodes 2 >/dev/null"
check "  ... heatdis_mem runs; the daemons flush its checkpoints to the PFS" \
  bash -c "vmpi 4 '$VB/heatdis_mem' 1 '$VW/v.cfg' '$VW/out.bin' && cmp '$VREF' '$VW/out.bin' && vidle && vpfs 600 '$VJ'"
vcairn stop >/dev/null
rm -rf "$(vjob "$VJ")"
check "  ... all node-local storage lost: a restart finds 600 on the PFS and ends byte-identical" \
  bash -c "run_grep 'Previous checkpoint found at iteration 600,' vmpi 4 '$VB/heatdis_mem' 1 '$VW/v.cfg' '$VW/again.bin' && cmp '$VREF' '$VW/again.bin'"
