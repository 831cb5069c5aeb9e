#!/usr/bin/env bash
# test_json.sh - the machine-readable output of the cairn CLI (docs/json.md):
# `cairn ls --json`, `ls --job --json`, `status --json`, `verify --json`, and
# `cairn report --svg`, over trees built by tests/cli/mktree.c. Each document
# is parsed (python3 json / xml.etree) and its values checked against what
# the tree really holds: generations, levels, file sizes, damaged files.
# Paths hold a quote, a backslash, a newline and a byte that is not UTF-8.
#
#   BUILD=build bash tests/cli/test_json.sh
#
# Prints "ok - ..." / "not ok - ..." per check; exits 1 if any check failed.
set -u -o pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CAIRN=${CAIRN:-$BUILD/cairn}
MKTREE=${MKTREE:-$BUILD/tests/mktree}
T=$(mktemp -d "${TMPDIR:-/tmp}/cairn-json.XXXXXX")
trap 'rm -rf "$T"' EXIT
npass=0
nfail=0
ok() { echo "ok - $1"; npass=$((npass + 1)); }
notok() {
    echo "not ok - $1"
    nfail=$((nfail + 1))
    head -c 2000 "$T/out" | sed 's/^/#   out: /'
    sed 's/^/#   err: /' "$T/err" | head -20
}
# check DESC WANT_STATUS CMD...: run CMD (stdout $T/out, stderr $T/err), check its status.
check() {
    local desc=$1 want=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -eq "$want" ]; then ok "$desc"; else notok "$desc (exit $rc, want $want)"; fi
}
# py DESC PROGRAM: run python3 PROGRAM on the last stdout (file name in sys.argv[1]).
py() {
    if python3 -c "$2" "$T/out" >"$T/py" 2>&1; then ok "$1"; else notok "$1: $(cat "$T/py")"; fi
}
for x in "$CAIRN" "$MKTREE"; do
    [ -x "$x" ] || { echo "not ok - $x is not built"; exit 1; }
done

# A base whose path holds a quote, a backslash, a newline and the byte 0xff.
B=$T/$(printf 'b"a\\s\ne\xff')
mkdir -m 700 "$B"
U=$B/cairn-$(id -u)
"$MKTREE" "$B" jobA 2 2 1 2 3 >/dev/null && "$MKTREE" "$B" jobB 1 1 9 --level 3 >/dev/null ||
    { echo "not ok - mktree failed"; exit 1; }
export CAIRN_T_U=$U

# ---- ls --json --------------------------------------------------------------
check "ls --json exits 0" 0 "$CAIRN" ls --base "$B" --json
py "ls --json: one document, schema cairn.ls version 1, jobA (3 gens, newest 3, level 1) and jobB (level 3)" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "cairn.ls" and d["schema_version"] == 1, d
j = {x["job"]: x for x in d["jobs"]}
assert sorted(j) == ["jobA", "jobB"], j
a, b = j["jobA"], j["jobB"]
assert (a["nodes"], a["generations"], a["newest"], a["level"], a["status"]) == (2, 3, 3, 1, "complete"), a
assert (b["nodes"], b["generations"], b["newest"], b["level"]) == (1, 1, 9, 3), b
assert d["pfs"] is None, d["pfs"]'
py "ls --json: the base path (quote, backslash, newline, byte 0xff) round-trips through path_hex" '
import json, os, sys
d = json.load(open(sys.argv[1]))
raw = os.fsencode(os.environ["CAIRN_T_U"])
assert bytes.fromhex(d["store_hex"]) == raw, d
assert d["store"] == raw.decode("utf-8", "replace"), d["store"]'

check "ls --job jobA --json exits 0" 0 "$CAIRN" ls --base "$B" --job jobA --json
py "ls --job --json: generations 3, 2, 1, each level 1, full, 2/2 nodes, 4/4 ranks, bytes = the rank files' sizes" '
import json, os, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "cairn.ls.job" and d["schema_version"] == 1 and d["job"] == "jobA", d
gens = d["generations"]
assert [g["gen"] for g in gens] == [3, 2, 1], gens
u = os.fsencode(os.environ["CAIRN_T_U"])
for g in gens:
    want = sum(os.stat(os.path.join(u, b"jobA", b"node%d" % n, b"gen-%d" % g["gen"], f)).st_size
               for n in (0, 1) for f in os.listdir(os.path.join(u, b"jobA", b"node%d" % n, b"gen-%d" % g["gen"]))
               if f.startswith(b"rank-"))
    assert g["bytes"] == want, (g, want)
    assert (g["level"], g["kind"], g["parent"], g["status"]) == (1, "full", None, "complete"), g
    assert (g["nodes_complete"], g["nodes_seen"], g["ranks_ok"], g["ranks"]) == (2, 2, 4, 4), g
    assert g["pfs"] is None and g["changed"] == 1.0, g'

# ---- verify --json: healthy, then one rank file damaged -----------------------
check "verify --json on a healthy job exits 0" 0 "$CAIRN" verify --base "$B" --job jobA --json
py "verify --json: 12 files ok, none failed" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "cairn.verify" and d["schema_version"] == 1, d
s = d["summary"]
assert (s["jobs"], s["generations"], s["files"], s["ok"], s["corrupt"], s["missing"]) == (1, 3, 12, 12, 0, 0), s
assert len(d["files"]) == 12 and all(f["result"] == "ok" for f in d["files"]), d["files"]
assert d["exit_status"] == 0'
R=$U/jobA/node1/gen-2/rank-3.ckpt
size=$(stat -c %s "$R")
printf '\x00' | dd of="$R" bs=1 seek=$((size - 100)) conv=notrunc status=none
rm "$U/jobA/node0/gen-1/rank-0.ckpt"
check "verify --json with a damaged and a missing file exits 4 (as without --json)" 4 \
    "$CAIRN" verify --base "$B" --job jobA --json
py "verify --json: rank-3 of gen 2 corrupt (with a reason), rank-0 of gen 1 missing, 10 ok" '
import json, os, sys
d = json.load(open(sys.argv[1]))
u = os.fsencode(os.environ["CAIRN_T_U"])
bad = {bytes.fromhex(f["path_hex"]) if "path_hex" in f else f["path"].encode(): f for f in d["files"] if f["result"] != "ok"}
c = bad.pop(u + b"/jobA/node1/gen-2/rank-3.ckpt")
assert c["result"] == "corrupt" and c["reason"], c
m = bad.pop(u + b"/jobA/node0/gen-1/rank-0.ckpt")
assert m["result"] == "missing", m
assert not bad, bad
s = d["summary"]
assert (s["ok"], s["corrupt"], s["missing"]) == (10, 1, 1), s
assert d["exit_status"] == 4'
check "verify without --json: still exit 4" 4 "$CAIRN" verify --base "$B" --job jobA

# ---- status --json: no daemon -------------------------------------------------
check "status --json without a daemon exits 3 (as without --json)" 3 \
    env CAIRN_BASE="$B" "$CAIRN" status --job jobA --json
py "status --json: both nodes down" '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "cairn.status" and d["schema_version"] == 1 and d["job"] == "jobA", d
assert [(n["node"], n["state"], n["pid"]) for n in d["nodes"]] == [("node0", "down", None), ("node1", "down", None)], d'

# ---- report --svg -------------------------------------------------------------
"$MKTREE" "$B" jobR 2 1 4 5 6 >/dev/null || { echo "not ok - mktree failed"; exit 1; }
check "ls --job jobR --json (the numbers the picture must hold)" 0 "$CAIRN" ls --base "$B" --job jobR --json
cp "$T/out" "$T/jobR.json"
ln -s "$T/victim" "$T/pic.svg"
echo "keep me" >"$T/victim"
check "report --job jobR --svg FILE exits 0" 0 "$CAIRN" report --base "$B" --job jobR --svg "$T/pic.svg"
py "report: the SVG parses; one <g data-gen> per generation (4, 5, 6, oldest first) with ls's level and bytes" '
import json, sys, xml.etree.ElementTree as ET
ls = json.load(open(sys.argv[1].replace("out", "jobR.json")))
svg = ET.parse(sys.argv[1].replace("out", "pic.svg")).getroot()
assert svg.tag == "{http://www.w3.org/2000/svg}svg" and svg.get("data-job") == "jobR", svg.attrib
gens = [g for g in svg.iter() if g.get("data-gen") is not None]
assert [int(g.get("data-gen")) for g in gens] == [4, 5, 6], [g.attrib for g in gens]
want = {g["gen"]: g for g in ls["generations"]}
for g in gens:
    w = want[int(g.get("data-gen"))]
    assert int(g.get("data-level")) == w["level"] == 1, (g.attrib, w)
    assert int(g.get("data-bytes-l1")) == w["bytes"] > 0, (g.attrib, w)
    assert int(g.get("data-bytes-l4")) == 0 and int(g.get("data-state-bytes")) == w["state_bytes"], g.attrib
    assert abs(float(g.get("data-ratio")) - w["state_bytes"] / w["bytes"]) < 1e-5, g.attrib
    assert len([r for r in g.iter("{http://www.w3.org/2000/svg}rect") if r.get("data-level") == "1"]) == 1'
if [ "$(cat "$T/victim")" = "keep me" ] && [ ! -L "$T/pic.svg" ] && [ -f "$T/pic.svg" ]; then
    ok "report: the symlink at FILE was replaced, its target untouched"
else notok "report: the symlink at FILE was replaced, its target untouched"; fi
if [ -z "$(find "$T" -maxdepth 1 -name '.pic.svg.*')" ]; then ok "report: no temporary file left"; else notok "report: no temporary file left"; fi
check "report into a directory that does not exist: exit 1" 1 "$CAIRN" report --base "$B" --job jobR --svg "$T/none/pic.svg"
check "report of no such job: exit 3" 3 "$CAIRN" report --base "$B" --job nosuch --svg "$T/x.svg"
if [ ! -e "$T/x.svg" ]; then ok "  ... and no file written"; else notok "  ... and no file written"; fi
check "report without --svg: exit 2" 2 "$CAIRN" report --base "$B" --job jobR
check "report --help exits 0" 0 "$CAIRN" report --help
if grep -q -- '--svg FILE' "$T/out" && "$CAIRN" --help | grep -q '^  report '; then ok "report --help and cairn --help name it"
else notok "report --help and cairn --help name it"; fi
for v in ls verify status; do
    "$CAIRN" help $v >"$T/out" 2>&1
    if grep -q -- '--json' "$T/out"; then ok "help $v documents --json"; else notok "help $v documents --json"; fi
done

# ---- bad input -----------------------------------------------------------------
check "ls --json of no such job: exit 3, nothing on stdout" 3 "$CAIRN" ls --base "$B" --job nosuch --json
if [ ! -s "$T/out" ]; then ok "  ... stdout empty"; else notok "  ... stdout empty"; fi
check "verify FILE --json: a named file" 0 "$CAIRN" verify --json "$U/jobB/node0/gen-9/manifest"
py "verify FILE --json: one ok file" '
import json, sys
d = json.load(open(sys.argv[1]))
assert [f["result"] for f in d["files"]] == ["ok"] and d["summary"]["files"] == 1, d'

echo "# json: $npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
