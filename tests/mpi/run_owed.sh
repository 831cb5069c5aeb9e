#!/usr/bin/env bash
# run_owed.sh - nothing the daemons were given is lost: a generation owed to
# the PFS (pfs.every, or level 4) whose flush a dying daemon left unfinished
# is flushed by the next daemons, even after the application wrote newer
# generations meanwhile, so a job that then loses every node restarts from
# it; and `cairn prune` holds the job's daemons (HOLD, as the library does)
# before it removes generation directories, so it never takes one from under
# a daemon at work on it. Sourced by tests/run.sh (section owed); uses lib.sh
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

# 8 ranks on 4 nodes, one set of 4 with m = 2; every 2nd checkpoint of a run
# also goes to the PFS (pfs.every = 2): generation 2 of `save`.
export CAIRN_RANKS_PER_NODE=2 CAIRN_SET_SIZE=4 CAIRN_EC_M=2 CAIRN_PFS_GROUP=3 CAIRN_PFS_EVERY=2

# The daemons die in the flush of generation 2 (its files on the PFS, not its
# index); the application goes on and writes generation 3 (a new run: its
# first checkpoint, not owed to the PFS) synchronously; then the daemons
# come back. They must flush 2, not stop at the newer 3.
# The daemons wait at generation 2 until the application has handed it over on
# every node (a file, touched after save: a condition, not a time); else a fast
# daemon could die first and the application would fall back to writing it.
fresh_pfs owed-every
O_GO=$(mktemp -u /dev/shm/cairn-owed-go.XXXXXX); SCRATCH_DIRS+=("$O_GO")
check "pfs.every: the daemons die in the flush of generation 2 (level 3 on the nodes, no PFS index)" \
  bash -c "CAIRN_FAULT='cairnd.gen:gen=2:until=$O_GO;pfs.index:gen=2:rank=0' '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 8 $T save 2 3 && touch '$O_GO' && o_gone && test \"\$(o_level 2)\" = 3 && ! test -e '$(pfs_gen 2)/index'"
check "  ... a new run writes generation 3 at level 3 without daemons (not owed to the PFS)" \
  bash -c "T_FIRST=3 scripts/mpirun.sh 8 $T save 1 3 && test \"\$(o_level 3)\" = 3 && ! test -e '$(pfs_gen 3)'"
check "  ... the next cairn start flushes generation 2: its index is written" \
  bash -c "'$C' start --nodes 4 >/dev/null && o_idle && test -e '$(pfs_gen 2)/index' && '$C' stop >/dev/null"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 2 restored from the PFS, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' scripts/mpirun.sh 8 "$T" restore 2

# The daemons die before they even raise generation 2 (owed to the PFS by
# pfs.every): the next daemons raise it and flush it.
fresh_pfs owed-raise
O_GO2=$(mktemp -u /dev/shm/cairn-owed-go.XXXXXX); SCRATCH_DIRS+=("$O_GO2")
check "pfs.every: the daemons die as they take generation 2 (level 1 on the nodes, nothing on the PFS)" \
  bash -c "CAIRN_FAULT='cairnd.gen:gen=2:until=$O_GO2;cairnd.gen:gen=2:rank=1' '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 8 $T save 2 3 && touch '$O_GO2' && o_gone && test \"\$(o_level 2)\" = 1 && ! test -e '$(pfs_gen 2)/index'"
check "  ... the next cairn start raises generation 2 to level 3 and flushes it" \
  bash -c "'$C' start --nodes 4 >/dev/null && o_idle && test \"\$(o_level 2)\" = 3 && test -e '$(pfs_gen 2)/index' && '$C' stop >/dev/null"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 2 restored from the PFS, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' scripts/mpirun.sh 8 "$T" restore 2
unset CAIRN_PFS_EVERY CAIRN_PFS_DIR

# cairn prune while the daemons raise the generation it removes: it holds
# them first, so the raise ends before the directory goes. The daemons hold
# each generation 10 s before they work on it. Generation 1 comes alone (so
# they take it: behind, they would pass it over for 2), then a new run hands
# over 2, which the daemons do not take until that run has ended (a file: a
# condition), so they are seen at work on it; prune comes while they are on 2.
fresh owed-prune
O_GO3=$(mktemp -u /dev/shm/cairn-owed-go.XXXXXX); SCRATCH_DIRS+=("$O_GO3")
check "cairn prune and cairnd: generations 1 then 2 handed over at level 3 (two runs), the daemons at work on generation 2" \
  bash -c "CAIRN_DAEMON_DELAY_MS=10000 CAIRN_FAULT='cairnd.offer:gen=2:until=$O_GO3' '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 8 $T save 1 3 && T_FIRST=2 scripts/mpirun.sh 8 $T save 1 3 && touch '$O_GO3' && o_busy_after 1"
check "  ... cairn prune --gen 2 holds the daemons of the 4 nodes, then removes generation 2 from every node" \
  bash -c "out=\$('$C' prune --job '$CAIRN_JOB' --gen 2) && grep -qx 'held cairnd on 4 node(s) of job $CAIRN_JOB' <<<\"\$out\" && grep -q '^removed .*/node3/gen-2\$' <<<\"\$out\""
check "  ... no daemon gave up a generation half-way (prune waited for the raise), no gen-2 left anywhere" \
  bash -c "o_idle && o_log_clean && o_no_gen 2"
check "  ... cairn verify finds generation 1 whole" \
  run_grep '0 corrupt, 0 missing' "$C" verify --job "$CAIRN_JOB"
check "  ... a restart restores generation 1, bit-exact" run_grep PASS scripts/mpirun.sh 8 "$T" restore 1
check "  ... cairn stop; prune without daemons (a stale socket file left) removes generation 1 as before" \
  bash -c "'$C' stop >/dev/null && : > '$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node1/cairnd.sock' && out=\$('$C' prune --job '$CAIRN_JOB' --gen 1) && grep -q 'node1/gen-1\$' <<<\"\$out\" && ! grep -q held <<<\"\$out\" && o_no_gen 1"
# A daemon that does not pause within 30 x daemon.timeout (1 s here; it holds
# its generation 45 s): prune removes nothing and says why.
fresh owed-prune-busy
check "cairn prune while a daemon does not pause in time (daemon.timeout 1: 30 s): exit 1, nothing removed" \
  bash -c "CAIRN_DAEMON_DELAY_MS=45000 '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 8 $T save 1 3 && o_busy_after -1 && CAIRN_DAEMON_TIMEOUT=1 run_grep_rc 1 'node node0 did not pause its work within 30 s' '$C' prune --job '$CAIRN_JOB' --gen 1 && test \$(ls -d '$CAIRN_BASE'/cairn-*/'$CAIRN_JOB'/node*/gen-1 | wc -l) = 4"
check "  ... the daemons go on: generation 1 reaches level 3; cairn stop" \
  bash -c "o_idle && test \"\$(o_level 1)\" = 3 && '$C' stop >/dev/null"
logs=()
for d in "${SCRATCH_DIRS[@]}"; do logs+=("$d"/cairn-*/t*-owed*/cairnd.log); done
check "no daemon log of this section shows a sanitizer report" \
  bash -c "! cat ${logs[*]} 2>/dev/null | grep -E 'runtime error|Sanitizer'"
unset CAIRN_DAEMON_LAUNCHER CAIRN_SET_SIZE CAIRN_EC_M CAIRN_PFS_GROUP
export CAIRN_RANKS_PER_NODE=2
