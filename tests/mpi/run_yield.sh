#!/usr/bin/env bash
# run_yield.sh - daemons the application does not notice: cairnd's work
# thread runs at idle priority (SCHED_IDLE, I/O class idle) while nothing
# waits for it, at normal priority while a drain waits (and goes back after);
# beside CPU hogs a drain still finishes, and with daemon.boost_after the
# queue does too; pinned to the cores the ranks of its host do not use where
# there are any. Sourced by run_daemon.sh (section daemon): uses its start,
# stop, daemons_idle, daemons_busy and level_of, lib.sh's helpers and `check`.

# y_pids: the job's daemons' pids (cairn status, second column).
y_pids() { "$C" status | awk 'NR > 1 {print $2}'; }
# y_policy PID: the scheduling policy of the main (work) thread of PID, as chrt names it.
y_policy() { chrt -p "$1" | sed -n 's/.*current scheduling policy: *//p'; }
# y_io PID: the I/O class of the main thread of PID, as ionice names it (idle, none, ...).
y_io() { ionice -p "$1" | sed 's/:.*//'; }
# y_group PID: the nice value of PID's autogroup (empty on a kernel without autogroups).
y_group() { sed -n 's/.* nice *//p' "/proc/$1/autogroup" 2>/dev/null; }
# y_all_at POLICY IOCLASS: every daemon's work thread is at them (and there are 4 daemons),
# and its autogroup, where the kernel has them, at the nice daemon.share gives for
# SCHED_IDLE (Y_IDLE_NICE, default 12: daemon.share 7%), else 0: cairn start runs the daemons
# in a session of their own, which would otherwise weigh as much as the application's
# session, whatever the priority of the threads inside it (Y_ANY_GROUP set: the group is
# not checked).
y_all_at() {
  local p n=0 g
  for p in $(y_pids); do
    [ "$(y_policy "$p")" = "$1" ] && [ "$(y_io "$p")" = "$2" ] || return 1
    g=$(y_group "$p")
    [ -z "$g" ] || [ -n "${Y_ANY_GROUP:-}" ] || [ "$g" = "$([ "$1" = SCHED_IDLE ] && echo "${Y_IDLE_NICE:-12}" || echo 0)" ] || return 1
    n=$((n + 1))
  done
  [ "$n" -eq "${Y_N:-4}" ]
}
# y_wait_at POLICY IOCLASS [WHILE_PID]: wait (at most 120 s) until y_all_at holds; with
# WHILE_PID, fail if that process ends first (the state must be seen while it runs).
y_wait_at() {
  for _ in $(seq 1200); do
    y_all_at "$1" "$2" && { [ -z "${3:-}" ] || kill -0 "$3" 2>/dev/null; } && return 0
    [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null && { echo "process $3 ended first"; return 1; }
    sleep 0.1
  done
  echo "not at $1/$2:"
  for p in $(y_pids); do echo "  $p $(y_policy "$p") $(y_io "$p") autogroup nice $(y_group "$p")"; done
  return 1
}
# y_drain_boosts: start cairn drain, see every daemon at normal priority while it waits,
# then the drain's exit status 0 and generation $1 on the PFS, then idle again.
y_drain_boosts() {
  "$C" drain --timeout 600 >"$CAIRN_BASE/drain.out" 2>&1 &
  local d=$! rc=0
  y_wait_at SCHED_OTHER none "$d" || rc=1
  wait "$d" || { echo "cairn drain: exit $?"; cat "$CAIRN_BASE/drain.out"; rc=1; }
  grep -q "generation $1 " "$CAIRN_BASE/drain.out" && test -e "$(pfs_gen "$1")/index" || rc=1
  y_wait_at SCHED_IDLE idle || rc=1
  return $rc
}
# y_hog N: start N CPU hogs of our own (busy shell loops); their pids in Y_HOGS.
y_hog() { Y_HOGS=(); for _ in $(seq "$1"); do (while :; do :; done) & Y_HOGS+=($!); done; }
y_unhog() { kill "${Y_HOGS[@]}" 2>/dev/null; wait "${Y_HOGS[@]}" 2>/dev/null; Y_HOGS=(); }
# y_wait_file FILE: wait (at most 120 s) until FILE exists.
y_wait_file() { for _ in $(seq 1200); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
export -f y_pids y_group y_policy y_io y_all_at y_wait_at y_drain_boosts y_wait_file

# Each generation held 10 s by the daemons (so the drain waits long enough
# to be seen: the drain asked of one daemon reaches the others when they next
# agree, between two generations); boost_after far away and no burst
# (daemon.burst 0), so only what waits raises their priority.
fresh_pfs yield
export CAIRN_RANKS_PER_NODE=2 # this script's first scenario: 8 ranks, 2 per node (most others: 4, one per node)
check "yield: 4 daemons start with their work thread at SCHED_IDLE and I/O class idle, their autogroup at nice 12 (daemon.share 7, the default: a weight of 70 against a busy session's 1024)" \
  bash -c "CAIRN_DAEMON_DELAY_MS=10000 CAIRN_DAEMON_BOOST_AFTER=3600 CAIRN_DAEMON_BURST=0 '$C' start --nodes 4 >/dev/null && y_all_at SCHED_IDLE idle"
check "  ... 2 generations at level 4 handed over: with daemon.burst 0 the daemons work on them, still at idle priority" \
  bash -c "scripts/mpirun.sh 8 $T save 2 4 && daemons_busy && y_all_at SCHED_IDLE idle"
check "  ... cairn drain: normal priority while it waits, exit 0, generation 2 on the PFS, idle again after" \
  y_drain_boosts 2
check "  ... generation 2 reached level 3; cairn stop" bash -c "test \"\$(level_of 2)\" = 3 && '$C' stop >/dev/null"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 2 restored from the PFS, bit-exact" \
  run_grep 'restoring generation 2 from the PFS' scripts/mpirun.sh 8 "$T" restore 2

# The burst (daemon.burst, default 60 s of daemon.share saved): idle
# daemons save CPU time, and spend it at normal priority on the next piece of
# work, so that a flush beside busy ranks finishes at once instead of
# crawling at idle priority. The generation is held (asleep: it spends
# nothing; a level-4 generation queued is work a burst is for) until the
# burst has been seen on every daemon, then let go: idle again after. (It
# was held 3 s until 2026-11-30: with ASan's daemons beside stress-ng and
# another suite, the burst went unseen in that window.)
# A burst begins only on savings, earned from the daemons' start: at the
# default daemon.share (7% of 2 cores, split 4 ways) a host loaded well
# beyond this test can bring the generation before any daemon has saved a
# thing, and then idle priority is right. daemon.share 50 here earns each
# daemon a quarter of a core a second, savings whatever the load (the
# autogroup's nice then differs from the default's: Y_ANY_GROUP).
fresh_pfs yield-burst
export CAIRN_RANKS_PER_NODE=1
Y_GO1=$(mktemp -u /dev/shm/cairn-yield-go.XXXXXX); SCRATCH_DIRS+=("$Y_GO1")
check "yield: daemon.burst: 1 generation at level 4 handed over: the daemons work on it at normal priority (SCHED_OTHER, I/O class none), and go back to idle priority once it is on the PFS" \
  bash -c "CAIRN_DAEMON_SHARE=50 CAIRN_FAULT='cairnd.gen:until=$Y_GO1' CAIRN_DAEMON_BOOST_AFTER=3600 '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 4 $T save 1 4 && daemons_busy && y_wait_at SCHED_OTHER none; rc=\$?; touch '$Y_GO1'; test \$rc = 0 && daemons_idle && Y_ANY_GROUP=1 y_wait_at SCHED_IDLE idle && test -e '$(pfs_gen 1)/index'"
check "  ... cairn stop" bash -c "'$C' stop >/dev/null"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 1 restored from the PFS, bit-exact" \
  run_grep 'restoring generation 1 from the PFS' scripts/mpirun.sh 4 "$T" restore 1

# A burst ends with its savings: begun on savings far smaller than the flush
# costs (daemon.share 2: each of 4 daemons on a 2-core host earns 1% of a
# core, some ms of CPU by the time the generation comes; daemon.burst 3600,
# so that the balance could go 18 s deep), beside 4 CPU hogs, the work goes
# back to idle priority where the balance reaches zero, before the flush is
# done, rather than going on on credit: a burst on credit took the ranks'
# CPU beyond daemon.share (bench async). Daemon 0's log says the order and
# the balance: "burst ends" between "burst begins" and "generation 1
# flushed", with at most 1 s of CPU owed (the socket thread looks every 100
# ms; on credit the flush of 2 x 64 MiB a daemon ran to its end first).
# The flush then goes on at the share's weight, and boosted after
# daemon.boost_after (5 s here). (On a host loaded beyond the hogs the
# daemons may spend what they earn before the generation comes: then no
# burst begins, which the check says.)
# 8 ranks, 2 per node: the 512 MiB set the cost, not the launch (4 x 128
# MiB cost the ranks as much, and daemon 0, aggregating ranks 0-2 with
# pfs.group 3, twice the work).
fresh_pfs yield-credit
export CAIRN_RANKS_PER_NODE=2
y_hog 4
check "yield: a burst ends with its savings: daemon.share 2, daemon.burst 3600, 4 CPU hogs, 8 x 64 MiB at level 4: in daemon 0's log 'burst ends' (at most 1 s of CPU owed) between 'burst begins' and 'generation 1 flushed'; generation 1 on the PFS" \
  bash -c "CAIRN_LOG_LEVEL=debug CAIRN_DAEMON_SHARE=2 CAIRN_DAEMON_BURST=3600 CAIRN_DAEMON_BOOST_AFTER=5 '$C' start --nodes 4 >/dev/null && T_VARS=none:67108864 scripts/mpirun.sh 8 $T save 1 4 && y_wait_file '$(pfs_gen 1)/index' && daemons_idle && log=\$(grep -E 'node0\\] (debug: (burst|work at)|info: generation 1 flushed)' '$CAIRN_BASE'/cairn-*/'$CAIRN_JOB'/cairnd.log) && echo \"\$log\" && awk '/generation 1 flushed/ {f = 1} /burst begins/ && !f {b = 1} b && !f && /burst ends/ {e = 1; left = \$(NF - 4) + 0; if (left < -1) deep = 1} END {if (!b) print \"(no burst began: the savings never rose above zero on this loaded host)\"; exit !(f && (!b || (e && !deep)))}' <<<\"\$log\""
y_unhog
check "  ... cairn stop" bash -c "'$C' stop >/dev/null"
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 1 restored from the PFS, bit-exact" \
  run_grep 'restoring generation 1 from the PFS' env T_VARS=none:67108864 scripts/mpirun.sh 8 "$T" restore 1

# daemon.share sets the weight of the daemons' session while idle: 0 the
# least the kernel gives (nice 19), 25 a quarter (nice 5); an out-of-range
# share is refused before any daemon starts.
fresh_pfs yield-share
export CAIRN_RANKS_PER_NODE=1
check "yield: daemon.share 0: the daemons' autogroup at nice 19; 25: at nice 5; 51 refused (exit 1, naming the key, no daemon started)" \
  bash -c "rc=0; CAIRN_DAEMON_SHARE=0 '$C' start --nodes 4 >/dev/null && Y_IDLE_NICE=19 y_wait_at SCHED_IDLE idle || rc=1; '$C' stop >/dev/null || rc=1
           CAIRN_DAEMON_SHARE=25 '$C' start --nodes 4 >/dev/null && Y_IDLE_NICE=5 y_wait_at SCHED_IDLE idle || rc=1; '$C' stop >/dev/null || rc=1
           out=\$(CAIRN_DAEMON_SHARE=51 '$C' start --nodes 4 2>&1); s=\$?; echo \"\$out\"; test \$s = 1 && grep -q CAIRN_DAEMON_SHARE <<<\"\$out\" && test -z \"\$(y_pids 2>/dev/null)\" || rc=1; exit \$rc"

# Daemons launched straight by the launcher, in the session that runs the
# ranks too (as a job script might, without cairn start): their autogroup is
# the application's, so they leave its nice alone (at 19 it would slow the
# ranks); their threads are still at idle priority.
fresh_pfs yield-session
export CAIRN_RANKS_PER_NODE=1
check "yield: 4 daemons launched by mpirun in this test's session: at idle priority, and this session's autogroup (the application's) left at its nice; cairn stop ends them" \
  bash -c "export Y_ANY_GROUP=1; g0=\$(y_group \$\$); (scripts/mpirun.sh 4 '$BUILD/cairnd' --job \$CAIRN_JOB --emulated >'$CAIRN_BASE/direct.log' 2>&1 &); for _ in \$(seq 1200); do [ \$(y_pids 2>/dev/null | wc -l) = 4 ] && y_all_at SCHED_IDLE idle && break; sleep 0.1; done; rc=0; y_all_at SCHED_IDLE idle || { y_wait_at SCHED_IDLE idle; rc=1; }; g=\$(y_group \$\$); echo \"this session's autogroup: nice \$g (was \$g0)\"; test \"\$g\" = \"\$g0\" || rc=1; '$C' stop >/dev/null || rc=1; exit \$rc"

# Beside 4 CPU hogs: the daemons at idle priority would wait for a free core
# forever; a drain boosts them, and so does a queue older than boost_after.
fresh_pfs yield-hog
export CAIRN_RANKS_PER_NODE=1
y_hog 4
check "yield beside 4 CPU hogs: 3 generations at level 4, then cairn drain finishes (exit 0, generation 3 on the PFS)" \
  bash -c "'$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 4 $T save 3 4 && out=\$('$C' drain --timeout 600) && grep -q 'generation 3 ' <<<\"\$out\" && test -e '$(pfs_gen 3)/index'"
check "  ... with daemon.boost_after 2, no burst and no drain, the daemons still empty their queue: generation 4 at level 3" \
  bash -c "'$C' stop >/dev/null && CAIRN_DAEMON_BOOST_AFTER=2 CAIRN_DAEMON_BURST=0 '$C' start --nodes 4 >/dev/null && T_FIRST=4 scripts/mpirun.sh 4 $T save 1 3 && daemons_idle && test \"\$(level_of 4)\" = 3"
y_unhog
wipe_nodes 1 2
check "  ... 2 nodes wiped: generation 4 decoded, bit-exact" run_grep PASS scripts/mpirun.sh 4 "$T" restore-id 4
stop

# One rank on one node, on a host with more cores: the work thread goes to
# the cores the rank does not use (the highest ones of the daemon's set).
if [ "$(nproc)" -ge 2 ]; then
  fresh_pfs yield-pin
  cpus=$(nproc)
  check "yield: 1 rank on this $cpus-core host: the daemon's work thread is pinned to the $((cpus - 1)) spare core(s)" \
    bash -c "CAIRN_RANKS_PER_NODE=1 '$C' start --nodes 1 >/dev/null && CAIRN_RANKS_PER_NODE=1 scripts/mpirun.sh 1 $T save 1 4 && daemons_idle && p=\$(y_pids) && n=\$(taskset -pc \$p | sed 's/.*: //' | awk -F, '{for (i = 1; i <= NF; i++) {split(\$i, r, \"-\"); c += (r[2] == \"\" ? 1 : r[2] - r[1] + 1)}} END {print c}') && test \"\$n\" = $((cpus - 1))"
  "$C" stop >/dev/null
else
  skip "yield: pinning to spare cores needs a host with 2 cores or more"
fi

# cairn flush, twice before the daemons get to it (each generation held until
# both are asked: a file, Y_GO2): the second is a flush too (counted, its wait
# timed for boost_after), not a stop.
fresh_pfs yield-flush
export CAIRN_RANKS_PER_NODE=1
Y_GO2=$(mktemp -u /dev/shm/cairn-yield-go.XXXXXX); SCRATCH_DIRS+=("$Y_GO2")
check "cairn flush twice while the daemons work: the newest generation reaches the PFS, the 4 daemons still serve" \
  bash -c "CAIRN_FAULT='cairnd.gen:until=$Y_GO2' '$C' start --nodes 4 >/dev/null && scripts/mpirun.sh 4 $T save 1 3 && '$C' flush >/dev/null && '$C' flush >/dev/null; rc=\$?; touch '$Y_GO2'; test \$rc = 0 && y_wait_file '$(pfs_gen 1)/index' && daemons_idle && test \$('$C' status | grep -c idle) = 4"
stop

# Behind, the newest full generation goes first: with 1-4 queued (the
# daemons held before they agree on anything until the application has handed
# over all four: a condition, not a time), the daemons pass over 1 and 2 (a
# fault as they take either never fires), take 3 for its flush owed to the PFS
# (pfs.every 3; its raise is wasted, skipped), and raise 4. Nothing owed is
# lost.
fresh_pfs yield-newest
export CAIRN_RANKS_PER_NODE=1
Y_GO=$(mktemp -u /dev/shm/cairn-yield-go.XXXXXX); SCRATCH_DIRS+=("$Y_GO")
check "newest first: 4 generations at level 3, pfs.every 3: the daemons never take 1 or 2, flush 3 and raise 4, and still serve" \
  bash -c "CAIRN_PFS_EVERY=3 CAIRN_FAULT='cairnd.offer:until=$Y_GO;cairnd.gen:gen=1:rank=0;cairnd.gen:gen=2:rank=0' '$C' start --nodes 4 >/dev/null && CAIRN_PFS_EVERY=3 scripts/mpirun.sh 4 $T save 4 3 && touch '$Y_GO' && daemons_idle && test \$('$C' status | grep -c idle) = 4 && test \"\$(level_of 4)\" = 3 && test -e '$(pfs_gen 3)/index'"
stop
wipe_nodes 0 3
check "  ... 2 nodes wiped: generation 4 decoded, bit-exact" run_grep PASS scripts/mpirun.sh 4 "$T" restore-id 4
wipe_nodes 0 1 2 3
check "  ... every node wiped: generation 3 restored from the PFS, bit-exact" \
  run_grep 'restoring generation 3 from the PFS' scripts/mpirun.sh 4 "$T" restore 3
