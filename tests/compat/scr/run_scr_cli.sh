#!/usr/bin/env bash
# run_scr_cli.sh - `cairn ls/verify/report/inspect --scr PREFIX` find a
# cairn-scr program's checkpoints from its SCR prefix alone: the cache base
# from <prefix>/.scrconf, the job id by SCR's rules (none set: the prefix's
# own), as SCR_Init found them. Sourced by run_scr.sh (section scr), after
# it: uses its helpers (scr_fresh, scr_env, scr_run) and run.sh's check.

scr_fresh cli
SCR_CLI_CACHE=$SCR_W/cache
printf 'SCR_CACHE_BASE=%s\n' "$SCR_CLI_CACHE" >"$SCR_W/.scrconf"
scr_cli_clean() { # scr_cli_clean CMD...: CMD without any job id or base but the prefix's
  env -u CAIRN_JOB -u CAIRN_BASE -u SCR_JOB_ID -u SCR_CACHE_BASE -u SLURM_JOB_ID -u SLURM_JOBID \
    -u LSB_JOBID -u PBS_JOBID -u FLUX_JOB_ID -u COBALT_JOBID "$@"
}
scr_cli() {
  local c log=$SCR_W/run.log job
  c=$(cd "$BUILD" && pwd)/cairn
  (cd "$SCR_W" && scr_cli_clean env CAIRN_RANKS_PER_NODE=1 SCR_COPY_TYPE=SINGLE \
    "$SCR_MPIRUN" 2 "$SCR_H" -x 48 -y 24 -t 20 -c 5) >"$log" 2>&1 || { tail -n 20 "$log"; return 1; }
  job=$(sed -n 's/^cairn-scr: job id \([^ ]*\) (.*/\1/p' "$log")
  [ -n "$job" ] || { echo "the program did not say its job id:"; tail -n 20 "$log"; return 1; }
  scr_cli_clean "$c" ls --base "$SCR_CLI_CACHE" --pfs "$SCR_W" --job "$job" --json >"$SCR_W/want.json" &&
    (cd / && scr_cli_clean "$c" ls --scr "$SCR_W" --json) >"$SCR_W/ls.json" || { echo "cairn ls: exit $?"; return 1; }
  python3 - "$SCR_W/want.json" "$SCR_W/ls.json" "$job" "$SCR_CLI_CACHE/cairn-$(id -u)" <<'PY' || return 1
import json, sys
want, got = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert got == want, (got, want)
assert got["job"] == sys.argv[3] and got["store"] == sys.argv[4], got
assert got["generations"] and all(g["level"] == 1 and g["status"] == "complete" for g in got["generations"]), got
assert got["generations"][0]["gen"] == 4, got["generations"]
PY
  scr_cli_clean "$c" verify --scr "$SCR_W" --json >"$SCR_W/v.json" || { echo "cairn verify --scr: exit $?"; return 1; }
  python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["summary"]; assert s["jobs"]==1 and s["ok"]>0 and s["corrupt"]==s["missing"]==0, s' "$SCR_W/v.json" || return 1
  scr_cli_clean "$c" report --scr "$SCR_W" --svg "$SCR_W/r.svg" && test -s "$SCR_W/r.svg" || { echo "cairn report --scr: exit $?"; return 1; }
  scr_cli_clean "$c" inspect --scr "$SCR_W" >"$SCR_W/where" || { echo "cairn inspect --scr: exit $?"; return 1; }
  grep -qx "job: *$job" "$SCR_W/where" && grep -qx "base: *$SCR_CLI_CACHE" "$SCR_W/where" &&
    grep -qx "pfs: *$SCR_W" "$SCR_W/where" || { cat "$SCR_W/where"; return 1; }
  # SCR_JOB_ID names another job: the CLI follows it, as SCR_Init would (none there: exit 3)
  scr_cli_clean env SCR_JOB_ID=other "$c" ls --scr "$SCR_W" >"$SCR_W/out" 2>&1
  [ $? = 3 ] && grep -q "no such job 'other'" "$SCR_W/out" || { cat "$SCR_W/out"; return 1; }
}
check "scr: cairn ls/verify/report/inspect --scr PREFIX: the job id SCR's rules gave the program, its cache base from PREFIX/.scrconf (ls --json as with --base/--pfs/--job)" scr_cli
