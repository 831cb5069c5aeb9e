#!/usr/bin/env bash
# run_need.sh - when to checkpoint: cairn_need_checkpoint with intervals in
# iterations and in time, a checkpoint restarting the clocks of the levels
# below it, levels the job cannot do never returned, ckpt.auto (Young/Daly
# from the measured cost) against `cairn config --intervals`, bad values
# refused, and the config file named by CAIRN_CONFIG_FILE.
#
# 4 ranks on 2 emulated nodes, each scenario in its own base directory. Every
# run of tests/mpi/t_need.c checks that all ranks got the same answer at every
# call and that the newest generation restores bit for bit; the script
# checks its exit status and what it printed together (run_grep). Sourced by
# tests/run.sh, which provides `check` and the counters.
: "${BUILD:=build}"
export CAIRN_RANKS_PER_NODE=2 CAIRN_LOG_LEVEL=warn
unset CAIRN_FAULT CAIRN_CONFIG_FILE CAIRN_PFS_DIR
NEED=(scripts/mpirun.sh "$NP" "$BUILD/tests/t_need")

fresh need-iters
check "every_1 = 3, every_2 = 6: levels 1, 2, 1, 2 at iterations 3, 6, 9, 12 on every rank; restored bit-exact" \
  run_grep '^PASS iters' env CAIRN_CKPT_EVERY_1=3 CAIRN_CKPT_EVERY_2=6 T_EXPECT="3:1 6:2 9:1 12:2" "${NEED[@]}" iters 12
fresh need-reset
check "a checkpoint at level 2 (iteration 2, unasked) restarts level 1's clock: 6:1 8:2 12:1, not 4:1" \
  run_grep '^PASS iters' env CAIRN_CKPT_EVERY_1=4 CAIRN_CKPT_EVERY_2=6 T_EXTRA="2:2" T_EXPECT="6:1 8:2 12:1" "${NEED[@]}" iters 12
fresh need-skip
check "an answer not acted on stays due: level 1 at 3 (skipped), 4 and 7" \
  run_grep '^PASS iters' env CAIRN_CKPT_EVERY_1=3 T_SKIP=3 T_EXPECT="3:1 4:1 7:1" "${NEED[@]}" iters 8
fresh need-nopfs
check "level 4 without pfs.dir is never returned, and that is warned" \
  run_grep 'ckpt.every_4 is set, but level 4 is never due in this job: .*needs a PFS directory' \
  env CAIRN_CKPT_EVERY_1=3 CAIRN_CKPT_EVERY_4=2 T_EXPECT="3:1 6:1" "${NEED[@]}" iters 7
fresh_pfs need-pfs
check "  ... with pfs.dir, every_4 = 2: level 4 at 2, 4, 6 (and level 1 never, its clock restarted each time)" \
  run_grep '^PASS iters' env CAIRN_CKPT_EVERY_1=3 CAIRN_CKPT_EVERY_4=2 T_EXPECT="2:4 4:4 6:4" "${NEED[@]}" iters 7
unset CAIRN_PFS_DIR
fresh need-onenode
check "level 2 on one node is never returned, and that is warned" \
  run_grep 'ckpt.every_2 is set, but level 2 is never due in this job: level 2 needs at least 2 nodes' \
  env CAIRN_RANKS_PER_NODE=4 CAIRN_CKPT_EVERY_1=3 CAIRN_CKPT_EVERY_2=2 T_EXPECT="3:1 6:1" "${NEED[@]}" iters 6

fresh need-time
check "every_1 = 1s: the first non-zero answer comes 1 s or more after the start, and is 1" \
  run_grep '^PASS time' env CAIRN_CKPT_EVERY_1=1s "${NEED[@]}" time 1
fresh need-time-reset
check "  ... a level-2 checkpoint at 0.5 s restarts it: due 1 s or more after that checkpoint" \
  run_grep '^PASS time' env CAIRN_CKPT_EVERY_1=1s T_RESET_AFTER=0.5 "${NEED[@]}" time 1

fresh need-auto
out=$(mktemp); SCRATCH_DIRS+=("$out")
check "ckpt.auto = on, fail.mtbf_1 = 20s: level 1 at once (no cost yet), then after Daly's interval, twice" \
  bash -c "env CAIRN_LOG_LEVEL=info CAIRN_CKPT_AUTO=on CAIRN_FAIL_MTBF_1=20s ${NEED[*]} auto 2 >'$out' 2>&1; rc=\$?; grep -E 'ckpt.auto|^auto|PASS|FAIL' '$out'; [ \$rc -eq 0 ] && grep -q '^PASS auto' '$out'"
# The library's first interval and the cost it came from (rank 0's log), the
# program's wait for it, and the CLI's interval for the same cost.
line=$(grep -m1 -E 'ckpt.auto: level 1 every [0-9.]+ s \(Daly: cost [0-9.e+-]+ s measured in this run, fail.mtbf_1 = 20 s\)' "$out")
t1=$(sed -E 's/.*level 1 every ([0-9.]+) s.*/\1/' <<<"$line")
c1=$(sed -E 's/.*Daly: cost ([0-9.e+-]+) s.*/\1/' <<<"$line")
e1=$(sed -nE 's/^auto round 1: level 1 due ([0-9.]+) s after.*/\1/p' "$out")
check "  ... the library logged its interval and the measured cost it came from" test -n "$t1" -a -n "$c1" -a -n "$e1"
check "  ... round 1 waited at least that interval ($e1 s >= $t1 s)" awk -v e="$e1" -v t="$t1" 'BEGIN { exit !(e != "" && t != "" && e + 0 >= t + 0) }'
check "  ... cairn config --intervals --cost 1=$c1 prints the same interval (Daly's formula, one implementation)" \
  run_grep "^ +1 +every $t1 s .*Young/Daly: cost .* fail.mtbf_1 = 20 s" \
  env CAIRN_CKPT_AUTO=on CAIRN_FAIL_MTBF_1=20s "$BUILD/cairn" config --intervals --cost "1=$c1"
# cairn ls --job shows each level's interval from the seconds recorded with
# the newest generation at that level (the SECONDS column, to the millisecond; the
# cost, in full, may be under half a millisecond on a fast machine), by the same formula.
ls_costs() {
  local ls sec cost want
  ls=$("$BUILD/cairn" ls --job "$CAIRN_JOB" 2>/dev/null) || return 1
  # GEN LEVEL KIND NODES RANKS BYTES(2 words) SECONDS: the newest level-1 row
  sec=$(awk '$1 ~ /^[0-9]+$/ && $2 == 1 && $3 == "full" { print $8; exit }' <<<"$ls")
  cost=$(sed -nE 's/^ +1 +every .*Young\/Daly: cost ([0-9.e+-]+) s, fail.mtbf_1 = 20 s$/\1/p' <<<"$ls")
  [ -n "$sec" ] && [ -n "$cost" ] || { echo "$ls"; return 1; }
  awk -v a="$sec" -v b="$cost" 'BEGIN { d = a - b; exit !(b + 0 > 0 && d <= 0.0006 && -d <= 0.0006) }' ||
    { echo "SECONDS $sec, cost $cost"; return 1; }
  want=$(env CAIRN_CKPT_AUTO=on CAIRN_FAIL_MTBF_1=20s "$BUILD/cairn" config --intervals --cost "1=$cost" |
         awk '$1 == 1') || return 1
  # ls computes from the cost in full, the CLI from its six printed decimals: the
  # intervals agree to about 1e-5 s (Daly's slope is under 100 here), not to the digit.
  local got_t want_t
  got_t=$(sed -nE 's/^ +1 +every ([0-9.]+) s .*/\1/p' <<<"$ls")
  want_t=$(sed -nE 's/^ +1 +every ([0-9.]+) s .*/\1/p' <<<"$want")
  awk -v a="$got_t" -v b="$want_t" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d <= 5e-5 && -d <= 5e-5) }' &&
    grep -qF -- "${want#*s)}" <<<"$ls" || { echo "$ls"; echo "want: $want"; return 1; }
  # without ckpt settings, ls prints no interval table
  ! env -u CAIRN_CKPT_AUTO "$BUILD/cairn" ls --job "$CAIRN_JOB" 2>/dev/null | grep -q 'when to checkpoint'
}
check "  ... cairn ls --job prints the interval for the SECONDS of its newest level-1 generation" \
  env CAIRN_CKPT_AUTO=on CAIRN_FAIL_MTBF_1=20s bash -c "$(declare -f ls_costs); ls_costs"
check "  ... and that interval is Daly's T for C = $c1 s, M = 20 s (awk)" \
  awk -v c="$c1" -v t="$t1" 'BEGIN { m = 20; r = c / (2 * m); d = sqrt(2 * c * m) * (1 + sqrt(r) / 3 + r / 9) - c;
                                     exit !(c + 0 > 0 && (d - t < 1e-6 && t - d < 1e-6)) }'

fresh need-null
check "a NULL level on rank 1: CAIRN_EINVAL on every rank, with rank 1's message; the next call works" \
  run_grep '^null: invalid argument: rank 1: need_checkpoint: level is NULL' "${NEED[@]}" null

fresh need-bad
check "bad ckpt.every_1 from the environment: cairn_init fails, CAIRN_ECONFIG naming the variable" \
  run_grep "CAIRN_CKPT_EVERY_1: '3x' is not an interval" env CAIRN_CKPT_EVERY_1=3x "${NEED[@]}" init-fail CAIRN_ECONFIG
check "fail.mtbf_2 without a unit: CAIRN_ECONFIG, 'needs a unit'" \
  run_grep "CAIRN_FAIL_MTBF_2: '3600' needs a unit" env CAIRN_FAIL_MTBF_2=3600 "${NEED[@]}" init-fail CAIRN_ECONFIG
check "ckpt.auto = on without any fail.mtbf_<L>: CAIRN_ECONFIG saying so" \
  run_grep 'ckpt.auto = on needs fail.mtbf_<L> for at least one level' env CAIRN_CKPT_AUTO=on "${NEED[@]}" init-fail CAIRN_ECONFIG

fresh need-file
cfgdir=$(mktemp -d); SCRATCH_DIRS+=("$cfgdir")
printf '[ckpt]\nevery_1 = 2\n' >"$cfgdir/named.ini"
printf '[ckpt]\nevery_1 = 5\n' >"$cfgdir/given.ini"
printf '[store]\nkeep = 2\n[ckpt]\nevery_1 = often\n' >"$cfgdir/bad.ini"
check "CAIRN_CONFIG_FILE names the file cairn_init reads when it is given none (every_1 = 2)" \
  run_grep '^PASS iters' env CAIRN_CONFIG_FILE="$cfgdir/named.ini" T_EXPECT="2:1 4:1" "${NEED[@]}" iters 5
fresh need-file-given
check "  ... a file given to cairn_init wins over it (every_1 = 5)" \
  run_grep '^PASS iters' env CAIRN_CONFIG_FILE="$cfgdir/named.ini" T_CONFIG="$cfgdir/given.ini" T_EXPECT="5:1" "${NEED[@]}" iters 5
check "  ... a bad value in it: CAIRN_ECONFIG naming CAIRN_CONFIG_FILE, the file, line and key" \
  run_grep "CAIRN_CONFIG_FILE: config $cfgdir/bad.ini:4: ckpt.every_1: 'often' is not an interval" \
  env CAIRN_CONFIG_FILE="$cfgdir/bad.ini" "${NEED[@]}" init-fail CAIRN_ECONFIG
check "  ... a file that does not exist: CAIRN_ECONFIG naming it" \
  run_grep "CAIRN_CONFIG_FILE: config $cfgdir/none.ini: cannot open" \
  env CAIRN_CONFIG_FILE="$cfgdir/none.ini" "${NEED[@]}" init-fail CAIRN_ECONFIG
