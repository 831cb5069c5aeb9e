#!/usr/bin/env bash
# run_owed.sh - nothing the daemons were given is lost: a generation owed to
# the PFS (pfs.every, or level 4) whose flush a dying daemon left unfinished
# is flushed by the next daemons, even after the application wrote newer
# generations meanwhile, so a job that then loses every node restarts from
# it; and `cairn prune` holds the job's daemons (HOLD, as the library does)
# and the running application (app.lock) before it removes generation
# directories, so it never takes one from under a daemon or a checkpoint at
# work on it, and never one a generation that stays, or the application's
# next checkpoint, needs. Sourced by tests/run.sh (section owed); uses lib.sh
# and `check`, and runs alone (CAIRN_TEST_ONLY=owed).

export CAIRN_DAEMON_LAUNCHER="bash scripts/mpirun.sh"
export C=$BUILD/cairn
# The level generation $1 reached on node-local storage (cairn ls without the PFS).
o_level() { env -u CAIRN_PFS_DIR "$C" ls --job "$CAIRN_JOB" 2>/dev/null | awk -v g="$1" '$1==g {print $2}'; }
# Wait (at most 120 s) until every daemon is idle with nothing queued.
o_idle() {
  for _ in $(seq 1200); do
    "$C" status | awk 'NR>1 && ($3!=0 || $4!="idle") {b=1} END {exit b}' && return 0
    sleep 0.1
  done
  return 1
}
# Wait (at most 120 s) until no daemon of this scenario's job runs.
o_gone() {
  for _ in $(seq 1200); do
    pgrep -f "^[^ ]*cairnd --job $CAIRN_JOB( |\$)" >/dev/null || return 0
    sleep 0.1
  done
  return 1
}
# Wait (at most 120 s) until a daemon is busy after finishing generation $1
# (so it works on the next one: it does not stop before that one is done).
o_busy_after() {
  for _ in $(seq 1200); do
    "$C" status | awk -v g="$1" 'NR>1 && $4=="busy" && $5==g {f=1} END {exit !f}' && return 0
    sleep 0.1
  done
  return 1
}
# No gen-$1 directory on any node of the job.
o_no_gen() { ! ls -d "$CAIRN_BASE"/cairn-*/"$CAIRN_JOB"/node*/gen-"$1" 2>/dev/null; }
# No warning in the daemons' log that a generation was given up half-way.
o_log_clean() { ! grep -E 'stays at level|left as it is|MPI failed' "$CAIRN_BASE"/cairn-*/"$CAIRN_JOB"/cairnd.log; }
export -f o_level o_idle o_gone o_busy_after o_no_gen o_log_clean

# 8 ranks on 4 nodes (owed-every, owed-prune-hold; the other scenarios 4
# ranks, one a node), one set of 4 with m = 2; every 2nd checkpoint of a run
# also goes to the PFS (pfs.every = 2): generation 2 of `save`.
export CAIRN_RANKS_PER_NODE=2 CAIRN_SET_SIZE=4 CAIRN_EC_M=2 CAIRN_PFS_GROUP=3 CAIRN_PFS_EVERY=2

# The daemons die in the flush of generation 2 (its files on the PFS, not its
# index; the flush comes before the raise, so it is still at level 1); the application goes on and writes generation 3 (a new run: its
# first checkpoint, not owed to the PFS) synchronously; then the daemons
# come back. They must flush 2, not stop at the newer 3.
# The daemons wait at generation 2 until the application has handed it over on
# every node (a file, touched after save: a condition, not a time); else a fast
# daemon could die first and the application would fall back to writing it.
fresh_pfs owed-every
O_GO=$(mktemp -u /dev/shm/cairn-owed-go.XXXXXX); SCRATCH_DIRS+=("$O_GO")
check "pfs.every: the daemons die in the flush of generation 2 (level 1 on the nodes: the flush comes first; no PFS index)" \
  bash -c "CAIRN_FAULT='cairnd.gen:gen=2:until=$O_GO;pfs.index:gen=2:rank=0' '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 8 $T save 2 3 && touch '$O_GO' && o_gone && test \"\$(o_level 2)\" = 1 && ! test -e '$(pfs_gen 2)/index'"
check "  ... a new run writes generation 3 at level 3 without daemons (not owed to the PFS)" \
  bash -c "T_FIRST=3 scripts/mpirun.sh 8 $T save 1 3 && test \"\$(o_level 3)\" = 3 && ! test -e '$(pfs_gen 3)'"
check "  ... the next cairn start flushes generation 2 (its index written) and raises it to level 3" \
  bash -c "'$C' start --nodes 4 >/dev/null && o_idle && test -e '$(pfs_gen 2)/index' && test \"\$(o_level 2)\" = 3 && '$C' stop >/dev/null"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 2 restored from the PFS, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' scripts/mpirun.sh 8 "$T" restore 2

# The daemons die before they even raise generation 2 (owed to the PFS by
# pfs.every): the next daemons raise it and flush it. 4 ranks on the 4 nodes
# (pfs.group 3 still spans nodes: ranks 0-2 of nodes 0-2 in one file).
export CAIRN_RANKS_PER_NODE=1
fresh_pfs owed-raise
O_GO2=$(mktemp -u /dev/shm/cairn-owed-go.XXXXXX); SCRATCH_DIRS+=("$O_GO2")
check "pfs.every: the daemons die as they take generation 2 (level 1 on the nodes, nothing on the PFS)" \
  bash -c "CAIRN_FAULT='cairnd.gen:gen=2:until=$O_GO2;cairnd.gen:gen=2:rank=1' '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 4 $T save 2 3 && touch '$O_GO2' && o_gone && test \"\$(o_level 2)\" = 1 && ! test -e '$(pfs_gen 2)/index'"
check "  ... the next cairn start raises generation 2 to level 3 and flushes it" \
  bash -c "'$C' start --nodes 4 >/dev/null && o_idle && test \"\$(o_level 2)\" = 3 && test -e '$(pfs_gen 2)/index' && '$C' stop >/dev/null"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 2 restored from the PFS, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' scripts/mpirun.sh 4 "$T" restore 2
unset CAIRN_PFS_EVERY CAIRN_PFS_DIR

# cairn prune while the daemons raise the generation it removes: it holds
# them first, so the raise ends before the directory goes. The daemons hold
# each generation 10 s before they work on it. Generation 1 comes alone (so
# they take it: behind, they would pass it over for 2), then a new run hands
# over 2, which the daemons do not take until that run has ended (a file: a
# condition), so they are seen at work on it; prune comes while they are on 2.
# The daemons serve nodes, whatever their ranks: 4 ranks on the 4 nodes.
export CAIRN_RANKS_PER_NODE=1
fresh owed-prune
O_GO3=$(mktemp -u /dev/shm/cairn-owed-go.XXXXXX); SCRATCH_DIRS+=("$O_GO3")
check "cairn prune and cairnd: generations 1 then 2 handed over at level 3 (two runs), the daemons at work on generation 2" \
  bash -c "CAIRN_DAEMON_DELAY_MS=10000 CAIRN_FAULT='cairnd.offer:gen=2:until=$O_GO3' '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 4 $T save 1 3 && T_FIRST=2 scripts/mpirun.sh 4 $T save 1 3 && touch '$O_GO3' && o_busy_after 1"
check "  ... cairn prune --gen 2 holds the daemons of the 4 nodes, then removes generation 2 from every node" \
  bash -c "out=\$('$C' prune --job '$CAIRN_JOB' --gen 2) && grep -qx 'held cairnd on 4 node(s) of job $CAIRN_JOB' <<<\"\$out\" && grep -q '^removed .*/node3/gen-2\$' <<<\"\$out\""
check "  ... no daemon gave up a generation half-way (prune waited for the raise), no gen-2 left anywhere" \
  bash -c "o_idle && o_log_clean && o_no_gen 2"
check "  ... cairn verify finds generation 1 whole" \
  run_grep '0 corrupt, 0 missing' "$C" verify --job "$CAIRN_JOB"
check "  ... a restart restores generation 1, bit-exact" run_grep PASS scripts/mpirun.sh 4 "$T" restore 1
check "  ... cairn stop; prune without daemons (a stale socket file left) removes generation 1 as before" \
  bash -c "'$C' stop >/dev/null && : > '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node1/cairnd.sock' && out=\$('$C' prune --job '$CAIRN_JOB' --gen 1) && grep -q 'node1/gen-1\$' <<<\"\$out\" && ! grep -q held <<<\"\$out\" && o_no_gen 1"
# A daemon that does not pause within 30 x daemon.timeout (1 s here; it holds
# its generation until the prune has answered): prune removes nothing and says why.
# 4 ranks on the 4 nodes.
export CAIRN_RANKS_PER_NODE=1
fresh owed-prune-busy
O_GO6=$(mktemp -u /dev/shm/cairn-owed-go.XXXXXX); SCRATCH_DIRS+=("$O_GO6")
check "cairn prune while a daemon does not pause in time (daemon.timeout 1: 30 s): exit 1, nothing removed" \
  bash -c "CAIRN_FAULT='cairnd.gen:gen=1:until=$O_GO6' '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 4 $T save 1 3 && o_busy_after -1 && CAIRN_DAEMON_TIMEOUT=1 run_grep_rc 1 'node node0 did not pause its work within 30 s' '$C' prune --job '$CAIRN_JOB' --gen 1 && test \$(ls -d '$CAIRN_BASE'/cairn-*/'$CAIRN_JOB'/node*/gen-1 | wc -l) = 4; rc=\$?; touch '$O_GO6'; exit \$rc"
check "  ... the daemons go on: generation 1 reaches level 3; cairn stop" \
  bash -c "o_idle && test \"\$(o_level 1)\" = 3 && '$C' stop >/dev/null"
# cairn prune and incremental chains (issue 29): a generation another one
# that stays is stored as changes to is not removed on node-local storage
# either, unless --with-dependents (which removes those too, and lists them).
TI=$BUILD/tests/t_incr
export TI
o_incr() { env -u CAIRN_PFS_EVERY CAIRN_INCR=on CAIRN_INCR_BLOCK=4K CAIRN_KEEP=3 T_WORK=few "$@"; }
# o_gens G...: exactly these generations on each of the 4 nodes
o_gens() {
  for n in 0 1 2 3; do
    got=$(ls "$CAIRN_BASE"/cairn-*/"$CAIRN_JOB/node$n" | sed -n 's/^gen-//p' | sort -n | xargs)
    [ "$got" = "$*" ] || { echo "node$n holds generations '$got', expected '$*'"; return 1; }
  done
}
# o_wait PATTERN FILE: wait (at most 120 s) until a line of FILE matches PATTERN
o_wait() {
  for _ in $(seq 1200); do grep -Eq -- "$1" "$2" 2>/dev/null && return 0; sleep 0.1; done
  echo "no line matches '$1' in $2:"; cat "$2"; return 1
}
export -f o_incr o_gens o_wait
# 4 ranks on the 4 nodes (prune reads each node's manifests).
export CAIRN_RANKS_PER_NODE=1
fresh owed-prune-chain
check "prune and chains: 4 ranks on 4 nodes save generations 1..3 as one chain (3 <- 2 <- 1)" \
  bash -c "o_incr scripts/mpirun.sh 4 $TI save 3 >/dev/null && o_incr scripts/mpirun.sh 4 $TI parents -1 1 2"
check "  ... cairn prune --gen 2 refuses on node-local storage: generation 3 is stored as changes to it (exit 1)" \
  run_grep_rc 1 'node3/gen-2: not removed: generation 3 is stored as changes to it .*--with-dependents' \
  "$C" prune --job "$CAIRN_JOB" --gen 2
check "  ... and removed nothing: 1, 2 and 3 on every node" o_gens 1 2 3
check "  ... --with-dependents --dry-run: generation 3 would go too, and says why; nothing removed" \
  bash -c "run_grep 'node0/gen-3: would go too: stored as changes to generation 2' '$C' prune --job '$CAIRN_JOB' --gen 2 --with-dependents --dry-run && o_gens 1 2 3"
check "  ... --with-dependents: 2 and 3 removed from every node, 3 listed as a dependent; 1 stays" \
  bash -c "out=\$('$C' prune --job '$CAIRN_JOB' --gen 2 --with-dependents) && grep -q 'node2/gen-3: goes too' <<<\"\$out\" && grep -q '^removed .*/node1/gen-2\$' <<<\"\$out\" && o_gens 1"
check "  ... a new job restores generation 1, bit-exact" o_incr scripts/mpirun.sh 4 "$TI" restore 1

# ... and the running application: it publishes the parent of its next
# checkpoint (<node>/app.lock), so prune never takes it nor what its chain
# needs. The application waits at the start of its checkpoint 3 (after 1 and
# 2 <- 1) until a file exists: alive, between two checkpoints. 4 ranks on
# the 4 nodes (owed-prune-hold below has 2 ranks a node).
export CAIRN_RANKS_PER_NODE=1
fresh owed-prune-live
O_GO4=$(mktemp -u /dev/shm/cairn-owed-go.XXXXXX); O_APP=$(mktemp /dev/shm/cairn-owed-app.XXXXXX)
SCRATCH_DIRS+=("$O_GO4" "$O_APP" "$O_APP.rc")
(o_incr env CAIRN_FAULT="ckpt.begin:gen=3:until=$O_GO4" scripts/mpirun.sh 4 "$TI" save 3 >"$O_APP" 2>&1; echo $? >"$O_APP.rc") &
check "the running application: generations 1 and 2 (<- 1) written, it waits before 3; app.lock names parent 2 on every node" \
  bash -c "o_wait 'waiting at ckpt.begin' '$O_APP' && for n in 0 1 2 3; do o_wait '^parents 2 ' \"\$(dirname \"\$(gen_dir \$n 1)\")/app.lock\" || exit 1; done"
check "  ... cairn prune --gen 2 --with-dependents refuses: the application's next checkpoint diffs against 2" \
  run_grep_rc 1 'node0/gen-2: not removed: the running application \(pid [0-9]+\) diffs its next checkpoint at level 1 against generation 2$' \
  "$C" prune --job "$CAIRN_JOB" --gen 2 --with-dependents
check "  ... cairn prune --gen 1 --with-dependents refuses too: 2, which the application needs, is stored as changes to 1" \
  run_grep_rc 1 'node3/gen-1: not removed: the running application .* against generation 2, whose chain needs it' \
  "$C" prune --job "$CAIRN_JOB" --gen 1 --with-dependents
check "  ... nothing removed" o_gens 1 2
touch "$O_GO4"
check "  ... the application goes on: generation 3 (changes since 2) written, exit 0" \
  bash -c "o_wait . '$O_APP.rc' && test \"\$(cat '$O_APP.rc')\" = 0 && grep -q PASS '$O_APP' && o_incr scripts/mpirun.sh 4 $TI parents -1 1 2"
check "  ... a new job restores generation 3 (chain 1, 2, 3), bit-exact" o_incr scripts/mpirun.sh 4 "$TI" restore 3
check "  ... the application gone, app.lock names no live run: prune --gen 3 removes 3 alone" \
  bash -c "'$C' prune --job '$CAIRN_JOB' --gen 3 >/dev/null && o_gens 1 2"

# prune holds the application: one in the middle of a checkpoint (waiting
# before its manifests, until a file exists) is waited for; prune removes
# nothing until the checkpoint is over, and the application's next one waits
# for prune. The application then waits before its checkpoint 3 (a second
# file), alive, until prune is done. 8 ranks on the 4 nodes: only a node's
# leader holds app.lock, for both ranks of its node, in the middle of their
# checkpoint.
export CAIRN_RANKS_PER_NODE=2
fresh owed-prune-hold
O_GO5=$(mktemp -u /dev/shm/cairn-owed-go.XXXXXX); O_PR=$(mktemp /dev/shm/cairn-owed-prune.XXXXXX)
SCRATCH_DIRS+=("$O_GO5" "$O_GO5.3" "$O_APP.2" "$O_APP.2.rc" "$O_PR" "$O_PR.rc")
(env -u CAIRN_PFS_EVERY CAIRN_KEEP=3 CAIRN_FAULT="ckpt.manifest:gen=2:until=$O_GO5;ckpt.begin:gen=3:until=$O_GO5.3" scripts/mpirun.sh 8 "$T" save 3 >"$O_APP.2" 2>&1; echo $? >"$O_APP.2.rc") &
check "prune holds the application: it wrote generation 1 and waits inside checkpoint 2" \
  o_wait 'waiting at ckpt.manifest' "$O_APP.2"
("$C" prune --job "$CAIRN_JOB" --gen 1 >"$O_PR" 2>&1; echo $? >"$O_PR.rc") &
check "  ... cairn prune --gen 1 waits for the application's checkpoint, and has removed nothing" \
  bash -c "o_wait 'waiting for the application on node node[0-3] to finish its checkpoint' '$O_PR' && ! grep -q removed '$O_PR' && test ! -e '$O_PR.rc' && for n in 0 1 2 3; do test -e \"\$(gen_dir \$n 1)/manifest\" || exit 1; done"
touch "$O_GO5"
check "  ... checkpoint 2 ends; then prune holds the application (alive) on 4 nodes and removes generation 1" \
  bash -c "o_wait . '$O_PR.rc' && test \"\$(cat '$O_PR.rc')\" = 0 && grep -qx 'held the running application on 4 node(s) of job $CAIRN_JOB' '$O_PR' &&
           grep -q '^removed .*/node3/gen-1\$' '$O_PR' && o_gens 2"
touch "$O_GO5.3"
check "  ... the application goes on: generation 3 written, exit 0" \
  bash -c "o_wait . '$O_APP.2.rc' && test \"\$(cat '$O_APP.2.rc')\" = 0 && o_gens 2 3"
check "  ... a new job restores generation 3, bit-exact" scripts/mpirun.sh 8 "$T" restore 3

# The daemons and the largest id (issue 29): their agreement took INT64_MAX
# for "nothing to work on", so a generation of id LONG_MAX stayed queued at
# level 1 forever. 4 ranks on the 4 nodes.
export CAIRN_RANKS_PER_NODE=1
fresh owed-maxid
check "cairnd and id LONG_MAX: handed over at level 3, the daemons raise it to level 3" \
  bash -c "'$C' start --nodes 4 >/dev/null && env -u CAIRN_PFS_EVERY T_FIRST=9223372036854775807 scripts/mpirun.sh 4 $T save 1 3 && o_idle && test \"\$(o_level 9223372036854775807)\" = 3 && '$C' stop >/dev/null"
wipe_nodes 2
check "  ... node 2 lost: a new job rebuilds it from the parity and restores it, bit-exact" \
  scripts/mpirun.sh 4 "$T" restore 9223372036854775807

logs=()
for d in "${SCRATCH_DIRS[@]}"; do logs+=("$d"/cairn-*/t*-owed*/cairnd.log); done
check "no daemon log of this section shows a sanitizer report" \
  bash -c "! cat ${logs[*]} 2>/dev/null | grep -E 'runtime error|Sanitizer'"
unset CAIRN_DAEMON_LAUNCHER CAIRN_SET_SIZE CAIRN_EC_M CAIRN_PFS_GROUP
export CAIRN_RANKS_PER_NODE=2
