#!/usr/bin/env bash
# test_cli.sh - drive the cairn CLI over a checkpoint tree built by
# tests/cli/mktree.c, damage the tree, and check the output and every exit
# status (0 ok, 1 error, 2 usage, 3 missing, 4 corrupt).
#
#   BUILD=build bash tests/cli/test_cli.sh
#
# Uses $CAIRN (default $BUILD/cairn) and $MKTREE (default $BUILD/tests/mktree,
# else compiled here from tests/cli/mktree.c and src/common). Prints
# "ok - ..." / "not ok - ..." per check; exits 1 if any check failed.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CAIRN=${CAIRN:-$BUILD/cairn}
T=$(mktemp -d "${TMPDIR:-/tmp}/cairn-cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
npass=0
nfail=0

ok() { echo "ok - $1"; npass=$((npass + 1)); }
notok() {
    echo "not ok - $1"
    nfail=$((nfail + 1))
    sed 's/^/#   out: /' "$T/out" | head -20
    sed 's/^/#   err: /' "$T/err" | head -20
}

# run CMD...: output in $T/out and $T/err, status in $rc.
run() { "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# check DESC WANT_STATUS CMD...: run CMD and check its exit status.
check() {
    local desc=$1 want=$2
    shift 2
    run "$@"
    if [ "$rc" -eq "$want" ]; then ok "$desc"; else notok "$desc (exit $rc, want $want)"; fi
}
# out_has DESC ERE / err_has DESC ERE: the last run's stdout / stderr matches.
out_has() { if grep -Eq -- "$2" "$T/out"; then ok "$1"; else notok "$1 (no /$2/ in stdout)"; fi; }
err_has() { if grep -Eq -- "$2" "$T/err"; then ok "$1"; else notok "$1 (no /$2/ in stderr)"; fi; }
out_count() {
    local n
    n=$(grep -Ec -- "$2" "$T/out")
    if [ "$n" -eq "$3" ]; then ok "$1"; else notok "$1 ($n lines match /$2/, want $3)"; fi
}
# flip BYTE_OFFSET FILE: overwrite one byte with 0xff.
flip() { printf '\xff' | dd of="$2" bs=1 seek="$1" conv=notrunc status=none; }

if [ ! -x "$CAIRN" ]; then
    echo "not ok - $CAIRN is not built (make $CAIRN)"
    exit 1
fi
MKTREE=${MKTREE:-$BUILD/tests/mktree}
if [ ! -x "$MKTREE" ]; then
    MKTREE=$T/mktree
    ${CC:-cc} -std=c11 -D_GNU_SOURCE -DCAIRN_NO_MPI -O1 -Iinclude -Isrc -o "$MKTREE" \
        tests/cli/mktree.c src/common/*.c \
        $(pkg-config --libs libxxhash 2>/dev/null || echo -lxxhash) \
        $(pkg-config --libs inih 2>/dev/null || echo -linih) -lm ||
        { echo "not ok - cannot build mktree"; exit 1; }
fi

B=$T/base
mkdir -m 700 "$B"
U=$B/cairn-$(id -u)
"$MKTREE" "$B" jobA 2 2 1 2 3 && "$MKTREE" "$B" jobB 1 1 9 --level 3 ||
    { echo "not ok - mktree failed"; exit 1; }
A=$U/jobA

# ---- help, version, usage errors --------------------------------------------
check "--help exits 0" 0 "$CAIRN" --help
out_has "--help lists the verbs" '^  verify '
out_has "--help documents exit status 4" '^  4  corruption'
check "--version exits 0" 0 "$CAIRN" --version
out_has "--version prints the version" "^cairn $(sed -n 's/^#define CAIRN_VERSION_STRING "\(.*\)"/\1/p' include/cairn.h)"
for v in ls inspect verify config; do
    check "$v --help exits 0" 0 "$CAIRN" $v --help
    out_has "$v --help prints its usage" "^Usage: cairn $v"
    check "help $v exits 0" 0 "$CAIRN" help $v
done
check "no verb: status 2" 2 "$CAIRN"
check "unknown verb: status 2" 2 "$CAIRN" frobnicate
err_has "unknown verb message" "^cairn: unknown verb 'frobnicate'"
check "help for an unknown verb: status 2" 2 "$CAIRN" help frobnicate
check "unknown option: status 2" 2 "$CAIRN" ls --frob
err_has "unknown option message names the verb" "^cairn: ls: unknown option '--frob'"
check "missing option argument: status 2" 2 "$CAIRN" ls --job
err_has "missing argument message" "option '--job' requires an argument"
check "bad --gen: status 2" 2 "$CAIRN" verify --job jobA --gen x
check "--gen without --job: status 2" 2 "$CAIRN" verify --base "$B" --gen 1
check "bad job id: status 2" 2 "$CAIRN" ls --base "$B" --job ../etc
check "config without an option: status 2" 2 "$CAIRN" config
check "inspect without a file: status 2" 2 "$CAIRN" inspect

# ---- a healthy tree ---------------------------------------------------------
check "ls lists jobs" 0 "$CAIRN" ls --base "$B"
out_has "ls shows jobA's newest complete generation" '^jobA +2 +3 +3 +1 .* complete$'
out_has "ls shows jobB at level 3" '^jobB +1 +1 +9 +3 .* complete$'
check "ls takes the base from CAIRN_BASE" 0 env CAIRN_BASE="$B" "$CAIRN" ls
out_has "CAIRN_BASE listing has jobA" '^jobA '
check "ls --job lists generations" 0 "$CAIRN" ls --base "$B" --job jobA
out_has "ls --job header" '^GEN +LEVEL +KIND +NODES +RANKS +BYTES +SECONDS +CHANGED +PFS +STATUS +LABEL$'
out_count "ls --job: three complete generations" '^ +[123] +1 +full +2/2 +4/4 .* 100% +- +complete$' 3
if [ "$(sed -n 2p "$T/out" | awk '{print $1}')" = 3 ]; then ok "ls --job: newest first"; else notok "ls --job: newest first"; fi

R1=$A/node0/gen-3/rank-1.ckpt
check "inspect a checkpoint file" 0 "$CAIRN" inspect "$R1"
out_has "inspect: job" '^job: +jobA$'
out_has "inspect: generation" '^generation: +3$'
out_has "inspect: rank" '^rank: +1 of 4$'
out_has "inspect: node" '^node: +0 of 2$'
out_has "inspect: block size" '^block size: +4\.0 KiB \(4096 bytes\)$'
out_has "inspect: header checksum" '^header checksum: +0x[0-9a-f]{16}$'
out_has "inspect: says the data is not verified" 'data not verified'
out_has "inspect: entry u" '^u +var +double +48x100 +4800 +38400 +38400 +raw +1\.00 +10 +0\.001 +- +-$'
out_has "inspect: entry hist (3 dims)" '^hist +var +float +4x5x6 +120 +480 +480 +raw +1\.00 +1 +- +- +-$'
out_has "inspect: empty entry" '^empty +var +uint8 +- +0 +0 +0 +raw +- +0 +- +- +-$'
out_has "inspect: routed file" '^out\.dat +file +byte +- +5000 +5000 +5000 +raw +1\.00 +2 +- +- +-$'
check "inspect a manifest" 0 "$CAIRN" inspect "$A/node1/gen-3/manifest"
out_has "inspect manifest: kind" '^kind: +node manifest'
out_has "inspect manifest: node" '^node: +node1 \(1 of 2\)$'
out_has "inspect manifest: rank map" 'node 1: ranks 2-3$'
out_count "inspect manifest: its two ranks" '^ +[23] +rank-[23]\.ckpt +[0-9]+ +0x[0-9a-f]{16} +[0-9]+ +[0-9]+$' 2

check "verify a healthy job" 0 "$CAIRN" verify --base "$B" --job jobA
out_count "verify: one OK line per rank file" '^OK ' 12
out_has "verify: summary" '^verify: 1 job, 3 generations, 12 files: 12 ok, 0 corrupt, 0 missing$'
check "verify every job" 0 "$CAIRN" verify --base "$B"
out_count "verify every job: 13 files" '^OK ' 13
check "verify files" 0 "$CAIRN" verify "$R1" "$A/node0/gen-3/manifest"
out_has "verify files: summary" '^verify: 2 files: 2 ok, 0 corrupt, 0 missing$'

# ---- missing data: status 3 -------------------------------------------------
check "ls: no such job" 3 "$CAIRN" ls --base "$B" --job nosuch
err_has "no such job message" "^cairn: ls: no such job 'nosuch'"
check "verify: no such job" 3 "$CAIRN" verify --base "$B" --job nosuch
check "verify: no such generation" 3 "$CAIRN" verify --base "$B" --job jobA --gen 42
mkdir -m 700 "$T/empty"
check "ls: base without a cairn directory" 3 "$CAIRN" ls --base "$T/empty"
check "inspect: no such file" 3 "$CAIRN" inspect "$T/nonexistent"
check "verify: no such file" 3 "$CAIRN" verify "$T/nonexistent"
out_has "verify: MISSING line" "^MISSING $T/nonexistent$"

# ---- config -----------------------------------------------------------------
check "config --reference" 0 "$CAIRN" config --reference
out_has "reference names CAIRN_BASE" 'CAIRN_BASE'
printf '[store]\nkeep = 3\nblock_size = 64K\n' >"$T/good.ini"
printf '[store]\nkeep = abc\n' >"$T/bad.ini"
check "config --check a good file" 0 "$CAIRN" config --check "$T/good.ini"
out_has "config --check prints ok" '^ok$'
check "config --check a bad file: status 1" 1 "$CAIRN" config --check "$T/bad.ini"
err_has "config --check names line and key" '^cairn: config: .*bad\.ini:2: store\.keep'
check "config --check a missing file: status 1" 1 "$CAIRN" config --check "$T/none.ini"

# config --intervals: each level's interval, configured or Young/Daly for a given cost
printf '[ckpt]\nevery_1 = 3\nevery_2 = 90s\nauto = on\n[fail]\nmtbf_3 = 1h\nmtbf_4 = 7d\n[pfs]\ndir = /tmp\n' >"$T/when.ini"
check "config --intervals --cost 1=18" 0 "$CAIRN" config --intervals --config "$T/when.ini" --cost 1=18
out_has "intervals: header" '^LEVEL +INTERVAL +FROM$'
out_has "intervals: level 1 every 3 iterations (ckpt.every_1)" '^ +1 +every 3 iterations +ckpt\.every_1$'
out_has "intervals: level 2 every 90 s (ckpt.every_2)" '^ +2 +every 90\.000000 s \(90 s\) +ckpt\.every_2$'
# C = 18 s, M = 1 h: C/2M = 1/400, sqrt(2CM) = 360: T = 360 (1 + 1/60 + 1/3600) - 18 = 348.1 s
out_has "intervals: level 3 by Daly from level 1's cost: 348.1 s (computed by hand)" \
    "^ +3 +every 348\.100000 s \(5\.8 min\) +Young/Daly: cost 18 s \(a lower level's\), fail\.mtbf_3 = 60 min$"
check "config --intervals --cost 1=18 --cost 4=2 (M = 7 d = 604800 s)" 0 \
    "$CAIRN" config --intervals --config "$T/when.ini" --cost 1=18 --cost 4=2
# C = 2 s, M = 604800 s: C/2M = 1/604800, sqrt(2CM) = 1555.6349...: T = sqrt(2419200) (1 + sqrt(1/604800)/3 + 1/5443200) - 2
want4=$(awk 'BEGIN { c = 2; m = 604800; r = c / (2 * m); printf "%.6f", sqrt(2 * c * m) * (1 + sqrt(r) / 3 + r / 9) - c }')
out_has "intervals: level 4 by Daly from its own cost ($want4 s)" "^ +4 +every $want4 s .*Young/Daly: cost 2 s, fail\.mtbf_4 = 7 d$"
check "config --intervals: auto level without a cost" 0 env CAIRN_CONFIG_FILE="$T/when.ini" "$CAIRN" config --intervals
out_has "intervals: no cost, unknown (file from CAIRN_CONFIG_FILE)" '^ +3 +unknown +Young/Daly: no cost \(--cost 3=SECONDS\)'
check "config --intervals without pfs.dir or auto" 0 env CAIRN_CKPT_EVERY_4=5 "$CAIRN" config --intervals
out_has "intervals: level 4 never without pfs.dir" '^ +4 +never +no pfs\.dir$'
out_has "intervals: level 2 never when unset" '^ +2 +never +ckpt\.every_2 unset, ckpt\.auto = off$'
for bad in 5=1 1=0 1=-2 1=x 1= =3 1=1s 12=3; do
    check "config --intervals --cost $bad: status 2" 2 "$CAIRN" config --intervals --cost "$bad"
done
err_has "bad --cost names the rule" "^cairn: config: --cost takes LEVEL=SECONDS, LEVEL 1\.\.4 and SECONDS more than 0"
check "--cost without --intervals: status 2" 2 "$CAIRN" config --reference --cost 1=2
# config --probe-pfs DIR: the write bandwidth level 4 measures, nothing left behind
mkdir -p "$T/probe"
check "config --probe-pfs DIR" 0 "$CAIRN" config --probe-pfs "$T/probe"
out_has "probe-pfs: MiB/s, above 0" "^$T/probe: writes [1-9][0-9]* MiB/s \(16 MiB written and synced, the faster of 2 passes\)$"
if [ -z "$(ls -A "$T/probe")" ]; then ok "probe-pfs leaves nothing in DIR"; else notok "probe-pfs left $(ls -A "$T/probe")"; fi
check "config --probe-pfs a missing directory: status 1" 1 "$CAIRN" config --probe-pfs "$T/none"
err_has "probe-pfs names the directory" "^cairn: config: $T/none: "
check "config --probe-pfs with --reference: status 2" 2 "$CAIRN" config --reference --probe-pfs "$T/probe"
check "config --intervals with a bad ckpt value: status 1" 1 env CAIRN_CKPT_EVERY_2=often "$CAIRN" config --intervals
err_has "bad ckpt value named" "CAIRN_CKPT_EVERY_2: 'often' is not an interval"

# CAIRN_CONFIG_FILE: the file every verb reads without --config; --config wins
printf '[store]\nbase = %s\n' "$B" >"$T/base.ini"
check "ls with store.base from the file CAIRN_CONFIG_FILE names" 0 env -u CAIRN_BASE CAIRN_CONFIG_FILE="$T/base.ini" "$CAIRN" ls
out_has "CAIRN_CONFIG_FILE listing has jobA" '^jobA '
check "ls with CAIRN_CONFIG_FILE naming a bad file: status 1" 1 env -u CAIRN_BASE CAIRN_CONFIG_FILE="$T/bad.ini" "$CAIRN" ls
err_has "the error names CAIRN_CONFIG_FILE, the file, line and key" "^cairn: ls: CAIRN_CONFIG_FILE: config .*bad\.ini:2: store\.keep"
check "ls --config FILE wins over CAIRN_CONFIG_FILE" 0 env -u CAIRN_BASE CAIRN_CONFIG_FILE="$T/bad.ini" "$CAIRN" ls --config "$T/base.ini"
out_has "--config listing has jobA" '^jobA '
printf '[job]\nnode = n-from-file\n' >"$T/node.ini"
check "config --node reads CAIRN_CONFIG_FILE too" 0 env -u CAIRN_NODE CAIRN_CONFIG_FILE="$T/node.ini" "$CAIRN" config --node
out_has "config --node: the name from the file" '^n-from-file$'

# ---- corruption: status 4 ---------------------------------------------------
flip $((4096 + 100)) "$R1"
check "flipped data byte: verify job" 4 "$CAIRN" verify --base "$B" --job jobA
out_has "flipped data byte: CORRUPT line" "^CORRUPT $R1: 'u' block 0 checksum mismatch$"
out_count "flipped data byte: the other files stay OK" '^OK ' 11
check "flipped data byte: verify file" 4 "$CAIRN" verify "$R1"
check "flipped data byte: inspect still reads header and table" 0 "$CAIRN" inspect "$R1"
check "flipped data byte: ls (cheap checks) still lists" 0 "$CAIRN" ls --base "$B" --job jobA
out_has "flipped data byte: ls still says complete" '^ +3 +1 +full +2/2 +4/4 .*complete$'

R3=$A/node1/gen-2/rank-3.ckpt
truncate -s 30000 "$R3"
check "truncated file: verify generation" 4 "$CAIRN" verify --base "$B" --job jobA --gen 2
out_has "truncated file: CORRUPT line" "^CORRUPT $R3: .*truncated"
check "truncated file: inspect" 4 "$CAIRN" inspect "$R3"
check "truncated file: ls" 0 "$CAIRN" ls --base "$B" --job jobA
out_has "truncated file: ls says corrupt" '^ +2 +1 +full +1/2 +3/4 .*corrupt$'

H=$A/node0/gen-2/rank-0.ckpt
flip 21 "$H"
check "flipped header byte: verify file" 4 "$CAIRN" verify "$H"
out_has "flipped header byte: header checksum" "^CORRUPT $H: header checksum mismatch$"
check "flipped header byte: inspect" 4 "$CAIRN" inspect "$H"
check "not a cairn file: inspect" 4 "$CAIRN" inspect "$T/good.ini"
check "not a cairn file: verify" 4 "$CAIRN" verify "$T/good.ini"

# ---- missing files and leftovers --------------------------------------------
rm "$A/node1/gen-1/rank-2.ckpt"
: >"$A/node1/gen-1/rank-2.ckpt.tmp"
check "missing rank file: verify generation" 3 "$CAIRN" verify --base "$B" --job jobA --gen 1
out_has "missing rank file: MISSING line" "^MISSING $A/node1/gen-1/rank-2\.ckpt$"
out_has "leftover .tmp reported" "^LEFTOVER $A/node1/gen-1/rank-2\.ckpt\.tmp$"
check "missing rank file: ls" 0 "$CAIRN" ls --base "$B" --job jobA
out_has "missing rank file: ls says incomplete" '^ +1 +1 +full +1/2 +3/4 .*incomplete$'
check "missing and corrupt: corrupt wins" 4 "$CAIRN" verify --base "$B" --job jobA
out_has "missing and corrupt: summary" '^verify: 1 job, 3 generations, 12 files: 8 ok, 3 corrupt, 1 missing, 1 note$'

rm "$A/node0/gen-3/manifest"
check "missing manifest: verify" 3 "$CAIRN" verify --base "$B" --job jobA --gen 3
out_has "missing manifest: MISSING line" "^MISSING $A/node0/gen-3/manifest$"

# ---- manifests, partial views, never-completed generations ------------------
flip 30 "$U/jobB/node0/gen-9/manifest"
check "corrupt manifest: ls" 0 "$CAIRN" ls --base "$B" --job jobB
out_has "corrupt manifest: ls says corrupt" '^ +9 +- +- +0/1 +- .*corrupt$'
check "corrupt manifest: verify" 4 "$CAIRN" verify --base "$B" --job jobB
out_has "corrupt manifest: CORRUPT line" "^CORRUPT $U/jobB/node0/gen-9/manifest: manifest checksum mismatch$"
check "corrupt manifest: inspect" 4 "$CAIRN" inspect "$U/jobB/node0/gen-9/manifest"

"$MKTREE" "$B" jobC 2 1 4 5
rm -rf "$U/jobC/node1"
check "one of two nodes visible: ls" 0 "$CAIRN" ls --base "$B" --job jobC
out_has "one of two nodes visible: partial" '^ +5 +1 +full +1/1 of 2 +1/2 .*partial$'
check "one of two nodes visible: verify" 0 "$CAIRN" verify --base "$B" --job jobC
out_has "one of two nodes visible: verify notes it, as ls counts it" \
    "^PARTIAL $U/jobC/gen-5: 1 of 2 nodes visible here; not seen: node 1 \(rank 1\)$"

"$MKTREE" "$B" jobD 2 1 1 2
rm "$U/jobD/node0/gen-2/manifest" "$U/jobD/node1/gen-2/manifest"
check "never-completed generation: verify job" 0 "$CAIRN" verify --base "$B" --job jobD
out_count "never-completed generation: INCOMPLETE notes" '^INCOMPLETE ' 2
check "never-completed generation named by --gen: missing" 3 "$CAIRN" verify --base "$B" --job jobD --gen 2
check "never-completed generation: ls" 0 "$CAIRN" ls --base "$B" --job jobD
out_has "never-completed generation: ls says incomplete" '^ +2 +- +- +0/2 +- .*incomplete$'

"$MKTREE" "$B" jobE 2 1 1
cp "$U/jobE/node0/gen-1/manifest" "$U/jobE/node1/gen-1/manifest"
check "manifest copied to another node: verify" 4 "$CAIRN" verify --base "$B" --job jobE
out_has "manifest copied to another node: named" "^CORRUPT $U/jobE/node1/gen-1/manifest: manifest of node 'node0' in node 'node1'$"

# ---- unsafe entries ---------------------------------------------------------
ln -s "$A" "$U/jobLink"
check "symlinked job directory: ls skips it" 0 "$CAIRN" ls --base "$B"
err_has "symlinked job directory: warned" 'jobLink is a symlink; skipped'
check "symlinked job directory: not opened as a job" 1 "$CAIRN" ls --base "$B" --job jobLink
"$MKTREE" "$B" jobF 1 2 1
mv "$U/jobF/node0/gen-1/rank-1.ckpt" "$T/r1"
ln -s "$T/r1" "$U/jobF/node0/gen-1/rank-1.ckpt"
check "symlinked rank file: verify" 4 "$CAIRN" verify --base "$B" --job jobF
out_has "symlinked rank file: refused" 'rank-1\.ckpt: is a symlink; refusing to follow it$'
"$MKTREE" "$B" jobG 2 1 1
mv "$U/jobG/node1/gen-1" "$T/g1"
ln -s "$T/g1" "$U/jobG/node1/gen-1"
check "symlinked generation directory: verify" 4 "$CAIRN" verify --base "$B" --job jobG
out_has "symlinked generation directory: refused" "^CORRUPT $U/jobG/node1/gen-1: gen-1 is a symlink"
check "symlinked generation directory: ls" 0 "$CAIRN" ls --base "$B" --job jobG
out_has "symlinked generation directory: ls says corrupt" '^ +1 +1 +full +1/2 +1/2 .*corrupt$'
chmod 755 "$U/jobF"
check "job directory with a loose mode: error" 1 "$CAIRN" ls --base "$B" --job jobF
err_has "loose mode named" 'must be 0700'

# ---- prune: generations removed by hand -------------------------------------
check "prune --help exits 0" 0 "$CAIRN" prune --help
out_has "prune --help prints its usage" '^Usage: cairn prune'
check "prune without --job: status 2" 2 "$CAIRN" prune --base "$B" --gen 1
check "prune without --gen or --above: status 2" 2 "$CAIRN" prune --base "$B" --job jobA
check "prune --gen x: status 2" 2 "$CAIRN" prune --base "$B" --job jobA --gen x
check "prune of a generation that is not there: status 3" 3 "$CAIRN" prune --base "$B" --job jobA --gen 99
check "prune --dry-run: status 0" 0 "$CAIRN" prune --base "$B" --job jobA --above 1 --dry-run
out_has "prune --dry-run names generation 3 of node1" "^would remove $A/node1/gen-3$"
check "prune --dry-run removed nothing" 0 test -e "$A/node1/gen-3/manifest"
check "prune --gen 3 --gen 2: status 0" 0 "$CAIRN" prune --base "$B" --job jobA --gen 3 --gen 2
out_has "prune names what it removed" "^removed $A/node0/gen-2$"
check "prune removed 2 and 3 on every node, kept 1, left nothing aside" 0 \
    bash -c "! ls -a '$A'/node* | grep -q 'gen-[23]\|trash' && test -e '$A/node1/gen-1/manifest'"
check "prune of a symlinked generation directory removes the link only" 0 \
    bash -c "'$CAIRN' prune --base '$B' --job jobG --gen 1 >/dev/null && test ! -e '$U/jobG/node1/gen-1' && test -e '$T/g1/manifest'"

# ---- level 4 known or not; progress on a terminal only --------------------
"$MKTREE" "$B" jobP 2 2 1 2
check "ls with no PFS known: exit 0" 0 env -u CAIRN_PFS_DIR "$CAIRN" ls --base "$B" --job jobP
if [ "$(wc -l <"$T/err")" = 1 ]; then ok "ls with no PFS known: one line on stderr"; else notok "ls with no PFS known: one line on stderr"; fi
err_has "  ... saying so" '^cairn: ls: no PFS directory known .*level 4 not shown$'
check "ls --pfs naming a missing directory: exit 1" 1 "$CAIRN" ls --base "$B" --pfs "$T/nonesuch"
check "verify FILE with --pfs: usage error" 2 "$CAIRN" verify --pfs "$T" "$T/good.ini"
mkdir -m 700 "$T/pfs"
check "verify with no PFS known: the same one line on stderr" 0 env -u CAIRN_PFS_DIR "$CAIRN" verify --base "$B" --job jobP
err_has "  ... verify says so" '^cairn: verify: no PFS directory known .*level 4 not shown$'
check "ls --pfs with nothing of the job on it: the PFS column says -" 0 "$CAIRN" ls --base "$B" --pfs "$T/pfs" --job jobP
out_count "  ... for both generations, LEVEL from the manifests" '^ +[12] +1 +full +2/2 +4/4 .* - +complete$' 2
if ! command -v script >/dev/null; then
    notok "script(1) (util-linux) is needed for the progress tests"
else
    # on a pseudo-terminal (script -q -e): progress drawn as CR text ESC[K on stderr
    script -q -e -c "$CAIRN verify --base $B --pfs $T/pfs --job jobP" /dev/null </dev/null >"$T/pty.raw" 2>&1
    rc=$?
    sed 's/\r$//' "$T/pty.raw" >"$T/pty"
    if [ $rc = 0 ]; then ok "verify on a terminal: exit 0"; else notok "verify on a terminal: exit $rc"; fi
    if grep -Eq $'\r''verify: [0-9.]+ [KMG]?i?B in [0-9]+:[0-9]{2} \([0-9.]+ [KMG]?i?B/s\)'$'\x1b''\[K$' "$T/pty"; then
        ok "verify on a terminal: a final progress line with bytes, time and rate"
    else notok "verify on a terminal: a final progress line with bytes, time and rate"; cat -A "$T/pty" | tail -5; fi
    run "$CAIRN" verify --base "$B" --pfs "$T/pfs" --job jobP
    if [ $rc = 0 ] && [ ! -s "$T/err" ] && ! grep -q $'[\r\x1b]' "$T/out"; then ok "verify piped: no progress, nothing on stderr"
    else notok "verify piped: no progress, nothing on stderr"; fi
    if diff <(sed -e 's/\r[^\r]*\x1b\[K//g' "$T/pty" | sed '/^$/d') "$T/out" >/dev/null; then
        ok "verify: the terminal's lines, progress aside, are the piped output byte for byte"
    else notok "verify: the terminal's lines, progress aside, are the piped output byte for byte"; diff <(sed -e 's/\r[^\r]*\x1b\[K//g' "$T/pty" | sed '/^$/d') "$T/out" | head; fi
    script -q -e -c "$CAIRN verify $U/jobP/node0/gen-2/rank-0.ckpt" /dev/null </dev/null >"$T/pty.raw" 2>&1
    if [ $? = 0 ] && grep -q $'\r''verify: ' "$T/pty.raw"; then ok "verify FILE on a terminal: progress too"
    else notok "verify FILE on a terminal: progress too"; fi
fi

echo "# cli: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
