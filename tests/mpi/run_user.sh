#!/usr/bin/env bash
# run_user.sh - what a new user meets, on real jobs: `cairn ls` finds the PFS
# (CAIRN_PFS_DIR, pfs.dir of --config, --pfs) and shows a flushed generation
# at level 4, as cairn_generations does, and says in one line when it knows
# no PFS; `cairn verify` and `cairn inspect` read the PFS files (aggregated
# files, index); `verify --job` names the nodes it cannot see, as ls counts
# them; progress lines appear on a terminal only (script(1) gives a pty) and
# piped output has no trace of them; log level info prints one line per
# generation, from rank 0. Sourced by tests/run.sh (lib.sh's fresh_pfs,
# pfs_gen, wipe_nodes, run_grep; run.sh's `check`); the checks are functions
# of this shell, each asserting exit statuses and output.

C=$BUILD/cairn
# The views of a level-4 job with its parity on the nodes (level 3 there, 4 with
# the PFS): pfs.parity on, so no level-4 checkpoint skips it (auto decides by
# times measured; run_pfs.sh tests that).
export CAIRN_RANKS_PER_NODE=2 CAIRN_SET_SIZE=4 CAIRN_EC_M=1 CAIRN_PFS_GROUP=3 CAIRN_PFS_PARITY=on
U=$(mktemp -d /dev/shm/cairn-user.XXXXXX); SCRATCH_DIRS+=("$U")

# ls_has GEN_OR_JOB_AWK [ARGS...]: `cairn ls ARGS` exits 0 and a row matches the awk condition.
ls_has() {
  "$C" ls "${@:2}" >"$U/ls" 2>"$U/ls.err" || { echo "cairn ls ${*:2}: exit $?"; cat "$U/ls.err"; return 1; }
  awk "$1" "$U/ls" | grep -q . || { echo "no row of 'cairn ls ${*:2}' matches $1:"; cat "$U/ls" "$U/ls.err"; return 1; }
}
# on_pty OUT CMD...: run CMD under a pseudo-terminal (script -q -e), its
# output in OUT with the terminal's CR LF made LF; returns CMD's exit status.
on_pty() {
  local out=$1 cmd; shift
  printf -v cmd '%q ' "$@"
  script -q -e -c "$cmd" /dev/null </dev/null >"$out.raw"; local rc=$?
  sed 's/\r$//' "$out.raw" >"$out"
  return $rc
}
# strip_progress FILE: FILE without its progress drawing (each drawing is CR,
# text, ESC[K; the last one is followed by a newline of its own).
strip_progress() { sed -e 's/\r[^\r]*\x1b\[K//g' "$1" | sed '/^$/d'; }
# progress_shown WHAT PTY_OUT PIPED_OUT: on the pty WHAT drew a progress
# line; the pty output without it equals the piped output, which has no CR or ESC.
progress_shown() {
  grep -q $'\r'"$1: " "$2" || { echo "no '$1:' progress drawn on the terminal:"; cat -A "$2" | tail -n 20; return 1; }
  diff <(strip_progress "$2") "$3" || { echo "the terminal output, progress aside, differs from the piped output"; return 1; }
  ! grep -q $'[\r\x1b]' "$3" || { echo "piped output holds CR or ESC:"; cat -A "$3" | head; return 1; }
}
# pty_vs_pipe WHAT RC CMD...: CMD exits RC on a pty and piped, draws WHAT's
# progress on the pty only, piped stderr stays empty.
pty_vs_pipe() {
  local what=$1 want=$2 rc; shift 2
  on_pty "$U/pty" "$@"; rc=$?
  [ $rc = "$want" ] || { echo "exit $rc on a terminal, want $want"; cat -A "$U/pty" | tail; return 1; }
  "$@" >"$U/piped" 2>"$U/perr"; rc=$?
  [ $rc = "$want" ] || { echo "exit $rc piped, want $want"; cat "$U/piped" "$U/perr" | tail; return 1; }
  [ ! -s "$U/perr" ] || { echo "piped stderr:"; cat "$U/perr"; return 1; }
  progress_shown "$what" "$U/pty" "$U/piped"
}

fresh_pfs user
check "user: 8 ranks on 4 nodes save 3 generations at level 4 (groups of 3: 3 PFS files each)" \
  scripts/mpirun.sh 8 "$T" save 3 4
check "  ... cairn_generations reports the flushed generations 3 and 2 at level 4" \
  env T_GEN_LEVELS=4,4 scripts/mpirun.sh 8 "$T" gens 2
check "  ... cairn ls --job (CAIRN_PFS_DIR): generation 3 at LEVEL 4 with its 3 PFS files" \
  ls_has '$1==3 && $2==4 && / 3 files, .* complete$/' --job "$CAIRN_JOB"
check "  ... and generation 2 too" ls_has '$1==2 && $2==4 && / 3 files, /' --job "$CAIRN_JOB"
check "  ... cairn ls (every job): the job's newest complete generation 3 at LEVEL 4" \
  ls_has "\$1==\"$CAIRN_JOB\" && \$4==3 && \$5==4"
# ls --json and report --svg on this real job: generations 3 and 2 at level 4 with
# their 3 aggregated files' bytes, as on disk; the picture holds the same numbers.
user_json() {
  "$C" ls --job "$CAIRN_JOB" --json >"$U/ls.json" && "$C" report --job "$CAIRN_JOB" --svg "$U/r.svg" ||
    { echo "exit $?"; return 1; }
  python3 - "$U/ls.json" "$U/r.svg" "$(pfs_gen 3)" "$(pfs_gen 2)" <<'PY'
import json, os, sys, xml.etree.ElementTree as ET
d = json.load(open(sys.argv[1]))
g = {x["gen"]: x for x in d["generations"]}
for gen, dirp in ((3, sys.argv[3]), (2, sys.argv[4])):
    stored = sum(os.path.getsize(os.path.join(dirp, f)) for f in os.listdir(dirp) if f.startswith("agg-"))
    x, p = g[gen], g[gen]["pfs"]
    assert x["level"] == 4 and x["status"] == "complete" and x["ranks"] == 8, x
    assert p["complete"] and p["files"] == 3 and p["bytes"] == stored and p["state_bytes"] > 0, (x, stored)
svg = {int(e.get("data-gen")): e for e in ET.parse(sys.argv[2]).getroot().iter() if e.get("data-gen")}
assert sorted(svg) == sorted(g), (sorted(svg), sorted(g))
for gen in (2, 3):
    e, x = svg[gen], g[gen]
    assert int(e.get("data-level")) == 4 and int(e.get("data-bytes-l4")) == x["pfs"]["bytes"], e.attrib
    assert int(e.get("data-bytes-l3")) == x["bytes"] > 0 and abs(float(e.get("data-seconds")) - x["seconds"]) < 1e-5, e.attrib
PY
}
check "  ... ls --json and report --svg: generations 3 and 2 at level 4, their PFS bytes as on disk, the same in the picture" user_json
no_pfs_known() {
  env -u CAIRN_PFS_DIR "$C" ls --job "$CAIRN_JOB" >"$U/out" 2>"$U/err" || return 1
  [ "$(wc -l <"$U/err")" = 1 ] && grep -q '^cairn: ls: no PFS directory known' "$U/err" ||
    { echo "want one line on stderr saying no PFS is known:"; cat "$U/err"; return 1; }
  awk '$1==3 && $2==3 && / - +complete$/' "$U/out" | grep -q . || { cat "$U/out"; return 1; }
  env -u CAIRN_PFS_DIR "$C" ls >"$U/out" 2>"$U/err" && [ "$(wc -l <"$U/err")" = 1 ] &&
    grep -q '^cairn: ls: no PFS directory known' "$U/err" || { cat "$U/out" "$U/err"; return 1; }
}
check "  ... no CAIRN_PFS_DIR, no --config: one line says no PFS is known; LEVEL is node-local (3)" no_pfs_known
check "  ... --pfs DIR names the PFS: LEVEL 4" \
  env -u CAIRN_PFS_DIR bash -c "$(declare -f ls_has); C='$C' U='$U'; ls_has '\$1==3 && \$2==4' --job '$CAIRN_JOB' --pfs '$CAIRN_PFS_DIR'"
printf '[pfs]\ndir = %s\n' "$CAIRN_PFS_DIR" >"$U/pfs.ini"
check "  ... pfs.dir of --config names the PFS: LEVEL 4, nothing on stderr" \
  env -u CAIRN_PFS_DIR bash -c "$(declare -f ls_has); C='$C' U='$U'; ls_has '\$1==3 && \$2==4' --job '$CAIRN_JOB' --config '$U/pfs.ini' && ! test -s '$U/ls.err'"
check "  ... --pfs naming a directory that does not exist: exit 1, naming it" \
  run_grep_rc 1 "^cairn: ls: .*$U/nonesuch" "$C" ls --job "$CAIRN_JOB" --pfs "$U/nonesuch"

P3=$(pfs_gen 3)
check "  ... cairn verify of an aggregated PFS file: OK, exit 0" \
  run_grep "^OK $P3/agg-000001.cz$" "$C" verify "$P3/agg-000001.cz"
check "  ... cairn verify of a PFS index: OK, exit 0" run_grep "^OK $P3/index$" "$C" verify "$P3/index"
verify_all() {
  "$C" verify --job "$CAIRN_JOB" >"$U/out" 2>&1 || { echo "exit $?"; cat "$U/out"; return 1; }
  [ "$(grep -c "^OK $CAIRN_PFS_DIR/.*/gen-[23]/agg-00000[012]\.cz$" "$U/out")" = 6 ] &&
    [ "$(grep -c "^OK $CAIRN_PFS_DIR/.*/gen-[23]/index$" "$U/out")" = 2 ] &&
    grep -q '^verify: 1 job, 2 generations, 32 files: 32 ok, 0 corrupt, 0 missing$' "$U/out" ||
    { cat "$U/out"; return 1; }
}
check "  ... cairn verify --job: every rank file, parity file, aggregated file and index OK" verify_all
inspect_index() {
  "$C" inspect "$P3/index" >"$U/out" 2>&1 || { echo "exit $?"; cat "$U/out"; return 1; }
  grep -Eq '^kind: +PFS index' "$U/out" && grep -Eq '^generation: +3$' "$U/out" &&
    grep -Eq "^job: +$CAIRN_JOB$" "$U/out" && grep -Eq '^ranks: +8 on 4 nodes, 3 per file' "$U/out" &&
    [ "$(grep -Ec '^ +[0-2] +agg-00000[0-2]\.cz +[0-9]+ +0x[0-9a-f]{16} +[0-9]+-[0-9]+$' "$U/out")" = 3 ] ||
    { cat "$U/out"; return 1; }
}
check "  ... cairn inspect of the PFS index: generation, job, layout and its 3 files" inspect_index
inspect_agg() {
  "$C" inspect "$P3/agg-000001.cz" >"$U/out" 2>&1 || { echo "exit $?"; cat "$U/out"; return 1; }
  grep -Eq '^kind: +aggregated file' "$U/out" && grep -Eq '^ +3 +field +var +double +37x53 ' "$U/out" &&
    grep -Eq '^ +5 +step +var +int64 ' "$U/out" && ! grep -Eq '^ +[0-2] +field ' "$U/out" || { cat "$U/out"; return 1; }
}
check "  ... cairn inspect of an aggregated file: its scheme and the variables of ranks 3-5" inspect_agg

check "  ... verify --job on a terminal draws progress (bytes, rate); piped, no trace of it" \
  pty_vs_pipe verify 0 "$C" verify --job "$CAIRN_JOB"
check "  ... the final progress line gives bytes, time and rate" \
  grep -Eq $'\r''verify: [0-9.]+ [KMG]?i?B in [0-9]+:[0-9]{2} \([0-9.]+ [KMG]?i?B/s\)' "$U/pty"

# verify --job counts the nodes it cannot see, as ls does.
wipe_nodes 3
check "  ... node 3 not visible: ls says 3/3 of 4, partial" \
  ls_has '$1==3 && / 3\/3 of 4 +6\/8 .* partial$/' --job "$CAIRN_JOB"
check "  ... verify --job: a PARTIAL note names node 3 and its ranks, exit 0, as ls" \
  run_grep "^PARTIAL $CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/gen-3: 3 of 4 nodes visible here; not seen: node 3 \(ranks 6-7\)$" \
  "$C" verify --job "$CAIRN_JOB" --gen 3

# cairn rebuild on a terminal: the bytes written into the node directories.
rebuild_drawn() {
  local launch=(env "CAIRN_LAUNCHER=bash scripts/mpirun.sh")
  on_pty "$U/pty" "${launch[@]}" "$C" rebuild --np 8 --gen 2 || { echo "exit $? on a terminal"; cat -A "$U/pty" | tail; return 1; }
  grep -q $'\r''rebuild: ' "$U/pty" && grep -Eq $'\r''rebuild: [1-9][0-9.]* [KMG]?i?B in [0-9]+:[0-9]{2} \(' "$U/pty" &&
    strip_progress "$U/pty" | grep -qx 'generation 2 is whole on every node' ||
    { echo "no rebuild progress, or not the launcher's line:"; cat -A "$U/pty" | tail; return 1; }
  "${launch[@]}" "$C" rebuild --np 8 --gen 3 >"$U/piped" 2>"$U/perr" || { echo "exit $? piped"; cat "$U/piped" "$U/perr"; return 1; }
  [ "$(cat "$U/piped")" = 'generation 3 is whole on every node' ] && ! grep -q $'[\r\x1b]' "$U/piped" "$U/perr" ||
    { echo "piped:"; cat -A "$U/piped" "$U/perr"; return 1; }
}
check "  ... cairn rebuild of generation 2 on a terminal: progress with the bytes rebuilt; piped (generation 3): none" \
  rebuild_drawn
check "  ... node 3 rebuilt: ls says 4/4 again" ls_has '$1==3 && / 4\/4 +8\/8 .* complete$/' --job "$CAIRN_JOB"

# Damage: an index gone, an aggregated file and an index flipped.
rm "$(pfs_gen 2)/index"
check "  ... generation 2's index removed: ls says LEVEL 3 and PFS incomplete" \
  ls_has '$1==2 && $2==3 && / incomplete /' --job "$CAIRN_JOB"
check "  ... and cairn_generations says 4 for generation 3, 3 for 2" \
  env T_GEN_LEVELS=4,3 scripts/mpirun.sh 8 "$T" gens 2
f=$P3/agg-000001.cz
printf '\x5a' | dd of="$f" bs=1 seek=$(($(stat -c %s "$f") / 2)) conv=notrunc status=none
check "  ... a flipped byte in an aggregated file: verify FILE says CORRUPT, exit 4" \
  run_grep_rc 4 "^CORRUPT $f: " "$C" verify "$f"
check "  ... verify --job: CORRUPT against the index, exit 4" \
  run_grep_rc 4 "^CORRUPT $f: .*(checksum does not match the index|checksum mismatch)" "$C" verify --job "$CAIRN_JOB"
check "  ... inspect of it: exit 4 naming the damage" run_grep_rc 4 "^cairn: inspect: $f: " "$C" inspect "$f"
printf '\x5a' | dd of="$P3/index" bs=1 seek=40 conv=notrunc status=none
check "  ... a flipped byte in the index: verify says CORRUPT (checksum), exit 4" \
  run_grep_rc 4 "^CORRUPT $P3/index: .*checksum mismatch" "$C" verify "$P3/index"
check "  ... inspect of it: exit 4" run_grep_rc 4 "checksum mismatch" "$C" inspect "$P3/index"

# cairn drain on a terminal: the bytes the daemons write to the PFS. 4 ranks
# on the 4 nodes, one a node (what drain draws does not depend on the ranks a
# node holds).
fresh_pfs user-drain
export CAIRN_DAEMON_LAUNCHER="bash scripts/mpirun.sh" CAIRN_RANKS_PER_NODE=1
drain_drawn() {
  "$C" start --nodes 4 >/dev/null || return 1
  scripts/mpirun.sh 4 "$T" save 1 1 >/dev/null || { "$C" stop; return 1; }
  "$C" status --json >"$U/st.json" || { echo "status --json: exit $?"; "$C" stop; return 1; }
  python3 - "$U/st.json" "$CAIRN_JOB" <<'PY' || { "$C" stop; return 1; }
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "cairn.status" and d["job"] == sys.argv[2] and d["daemons"] == 4, d
assert len(d["nodes"]) == 4 and all(n["state"] in ("idle", "busy") for n in d["nodes"]), d
for n in d["nodes"]:
    os.kill(n["pid"], 0)  # each pid is a live daemon of this user
PY
  on_pty "$U/pty" "$C" drain --timeout 120; local rc=$?
  "$C" drain --timeout 120 >"$U/piped" 2>"$U/perr"; local rc2=$?
  "$C" stop >/dev/null
  [ $rc = 0 ] && [ $rc2 = 0 ] || { echo "drain exits $rc (terminal), $rc2 (piped)"; cat -A "$U/pty" "$U/piped" "$U/perr"; return 1; }
  grep -Eq $'\r''drain: [1-9][0-9.]* [KMG]?i?B in [0-9]+:[0-9]{2} \(' "$U/pty" &&
    strip_progress "$U/pty" | grep -Eqx "drained job $CAIRN_JOB: generation 1 flushed to the PFS \(.*\)" ||
    { echo "terminal:"; cat -A "$U/pty"; return 1; }
  [ "$(wc -l <"$U/piped")" = 1 ] && grep -Eqx "drained job $CAIRN_JOB: generation 1 is on the PFS \(.*\)" "$U/piped" &&
    ! test -s "$U/perr" || { echo "piped:"; cat -A "$U/piped" "$U/perr"; return 1; }
}
check "cairn drain on a terminal: progress with the bytes flushed; piped: the one line it always printed (status --json before: 4 live daemons)" drain_drawn
unset CAIRN_DAEMON_LAUNCHER
export CAIRN_RANKS_PER_NODE=2

check "cairn drill rank-crash on a terminal: a progress line counts the scenarios; the row is there" \
  bash -c "$(declare -f on_pty strip_progress); on_pty '$U/pty' '$C' drill rank-crash &&
           grep -q \$'\r''drill: 0 of 1 scenarios' '$U/pty' && grep -Eq \$'\r''drill: 1 of 1 scenarios in [0-9]+:[0-9]{2}' '$U/pty' &&
           strip_progress '$U/pty' | grep -Eq '^rank-crash +PASS '"

# One info line per generation per job, from rank 0, with the totals. 8 ranks,
# two a node: a line from rank 1 (rank 0's node, not rank 0) must be caught too.
info_lines() { # info_lines LOG GENS...
  local g n
  for g in "${@:2}"; do
    n=$(grep -c "\] info: generation $g " "$1")
    [ "$n" = 1 ] || { echo "$n info lines for generation $g:"; grep ' info: ' "$1"; return 1; }
  done
  ! grep ' info: ' "$1" | grep -v '^cairn\[rank 0 ' || { echo "info lines from other ranks than 0"; return 1; }
  grep -Eq "\] info: generation $2 complete at level [0-9] \([a-z]+\): 8 ranks, [0-9.]+ [KMG]?i?B in [0-9.]+ s" "$1" ||
    { echo "no totals in the summary:"; grep ' info: ' "$1"; return 1; }
}
info_run() { # info_run LOG ARGS...: an 8-rank t_ckpt run at log level info, its log in LOG
  CAIRN_LOG_LEVEL=info scripts/mpirun.sh 8 "$T" "${@:2}" >"$1" 2>&1 || { echo "exit $?"; tail "$1"; return 1; }
}
fresh_pfs user-log
check "log.level info, 8 ranks, level 1: one info line per generation, from rank 0, with totals" \
  bash -c "$(declare -f info_lines info_run); T='$T'; info_run '$U/log1' save 3 1 && info_lines '$U/log1' 1 2 3"
check "  ... level 4 (raise and flush): still one line per generation" \
  bash -c "$(declare -f info_lines info_run); T='$T'; T_FIRST=4 info_run '$U/log4' save 2 4 && info_lines '$U/log4' 4 5"
check "  ... a restart: one info line 'restored generation 5', from rank 0" \
  bash -c "$(declare -f info_run); T='$T'; info_run '$U/logr' restore 5 && [ \$(grep -c '\] info: restored generation 5' '$U/logr') = 1 ] &&
           ! grep ' info: ' '$U/logr' | grep -v '^cairn\[rank 0 '"
unset CAIRN_PFS_GROUP CAIRN_SET_SIZE CAIRN_EC_M CAIRN_PFS_DIR CAIRN_PFS_PARITY
export CAIRN_RANKS_PER_NODE=2
