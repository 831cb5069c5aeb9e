# bench/run_async.sh: the async section of bench/run.sh: node daemons (cairnd) against
# synchronous checkpoints and none, with the readers of async_bench's output lines.
# Sourced by run.sh, which owns the knobs, run_mpi, median_of, div and add.

# ---- async: time blocked per checkpoint and compute slowdown, node daemons (cairnd) vs none ----
# ASYNC_NP ranks, each its own emulated node, one encoding set (set_size = ASYNC_NP, m = 1). Each
# rank runs ASYNC_ITERS iterations of ASYNC_PASSES passes of a 1-D stencil over ASYNC_SIZE MiB of
# doubles (~0.2 s per iteration for 4 ranks on 2 cores) and checkpoints after each. Per
# repetition, each run its own job (async-r<rep>-<run>) on a fresh base and PFS directory:
#   nockpt  no cairn at all: the baseline of slowdown and total, run first and again last
#           (nockpt2): the baseline is the mean of the two, since on a shared host the same
#           run moves by 10% from one launch to the next (async.nockpt.again says by how much);
#   l1      level 1, synchronous (CAIRN_DAEMON_USE=off), no PFS: the baseline of block;
#   sync    level 3 + pfs.every = ASYNC_PFS_EVERY, synchronous (CAIRN_DAEMON_USE=off);
#   async   the same with one cairnd per node (`cairn start`), then `cairn drain` (until the
#           newest generation is on the PFS) and `cairn stop`; pfs.direct off, so that every
#           checkpoint goes to the daemons (with it on, the default, where the PFS is on the
#           node directories' file system as here, every pfs.every-th would go straight to
#           the PFS: bench l4sync's l4.async.flush).
# block: time in cairn_checkpoint per checkpoint, the run's total over its checkpoints (the
# flushing ones count), slowest rank; slowdown: the stencil's time (outside cairn_checkpoint)
# vs nockpt's; total: the async run's wall (loop + cairn_finalize) plus its drain vs the sync
# run's wall (which includes every level). The work is counted, so that a faster figure
# cannot come from doing less unsaid: l3 and l4 are the generations of the run that reached
# level 3 and the PFS (async: raised and flushed by the daemons, run and drain together, from
# their log; sync: every checkpoint, and every ASYNC_PFS_EVERY-th); lag.l3 and lag.l4, when
# the run's loop ends, how many generations (vs the run's checkpoints) and seconds (vs the
# run's wall) the newest generation at level 3 (and on the PFS) is behind the newest at level
# 1 (async_bench's `lag` line). Medians over ASYNC_REPS; a ratio is the median of the
# per-repetition ratios. The section fails if the async run did not hand every checkpoint to
# the daemons (or a synchronous one did), if the daemons flushed fewer generations than the
# run owed the PFS (every pfs.every-th: none may be lost), or a run's final array differs
# from nockpt's. Waiting ranks yield their core (as in l3); the daemons' work runs at idle
# priority unless the drain waits for it (daemon.boost_after, default 30 s).

# result_field FILE KEY: KEY=VALUE of async_bench's `result` line; lag_field: of its `lag` line.
result_field() { sed -n "s/^result .*\<$2=\([^ ]*\).*/\1/p" "$1"; }
lag_field() { sed -n "s/^lag .*\<$2=\([^ ]*\).*/\1/p" "$1"; }
# mean2 A B: the mean of two decimals.
mean2() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", (a + b) / 2}'; }

bench_async() {
  local bin=$BUILD/bench/async_bench cli=$BUILD/cairn
  if [ ! -x "$bin" ] || [ ! -x "$cli" ] || [ ! -x "$BUILD/cairnd" ]; then
    echo "# FAILED: $bin, $cli or $BUILD/cairnd not built (run make first)"
    failed=1
    return
  fi
  local np=${ASYNC_NP:-4} size=${ASYNC_SIZE:-32} iters=${ASYNC_ITERS:-12}
  local passes=${ASYNC_PASSES:-48} every=${ASYNC_PFS_EVERY:-4} reps=${ASYNC_REPS:-3}
  # Per rank: the array, and what the daemon holds of it while it encodes and aggregates; on
  # the RAM disk: 2 generations and parity per node, 2 on the PFS, one being written.
  if ! mem_ok $((np * size * 4 + 512)) $((np * size * 6 + 256)); then
    echo "# skipped: async: not enough free memory for $np x $((size * 6)) MiB"
    return
  fi
  local dir=$tmp/async
  mkdir -m 700 "$dir" "$dir/base" "$dir/pfs" || { failed=1; return; }
  local env=(env CAIRN_BASE="$dir/base" CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE="$np" CAIRN_EC_M=1
             CAIRN_LOG_LEVEL=info OMPI_MCA_mpi_yield_when_idle=1
             CAIRN_DAEMON_LAUNCHER="bash scripts/mpirun.sh")
  local pfs=(CAIRN_PFS_DIR="$dir/pfs" CAIRN_PFS_EVERY="$every")
  local args=("$iters" "$size" "$passes") want=$iters live="" drain=0
  local pids i run job rc n p t0
  local -a mode extra c_no w_no b_l1 c_sync b_sync c_async b_async total r_b r_sb r_s r_ss r_t
  local -a c_no2 r_no2 w_sync r_st n3 n4 r_n3 r_n4 lg3 lg4 ls3 ls4 r_lg3 r_lg4 r_ls3 r_ls4
  local owed=$((iters / every)) log raised flushed
  echo "# async: $np ranks on $np emulated nodes sharing $(nproc) core(s) with $np daemons;" \
    "$size MiB per rank, $iters iterations of $passes stencil passes, a checkpoint after each;" \
    "level 3 (set of $np, m = 1) + PFS every $every; medians of $reps repetitions"
  echo "# block = time in cairn_checkpoint per checkpoint (mean over the run's checkpoints, PFS" \
    "flushes included), slowest rank; slowdown = stencil time outside it; total = wall + drain"
  # An interrupted run must not leave daemons behind (stopped by job, never by name).
  trap '[ -n "$live" ] && "${env[@]}" "$cli" stop --job "$live" --timeout 30 >/dev/null 2>&1
        exit 130' INT TERM
  for ((i = 1; i <= reps; i++)); do
    for run in nockpt l1 sync async nockpt2; do
      job=async-r$i-$run
      rc=0
      case $run in
        nockpt | nockpt2) mode=(nockpt 1) extra=() ;;
        l1) mode=(ckpt 1) extra=(CAIRN_DAEMON_USE=off CAIRN_PFS_EVERY=0) ;;
        sync) mode=(ckpt 3) extra=("${pfs[@]}" CAIRN_DAEMON_USE=off) ;;
        async) mode=(ckpt 3) extra=("${pfs[@]}" CAIRN_PFS_DIRECT=off) ;;
      esac
      if [ "$run" = async ]; then
        if "${env[@]}" "${extra[@]}" CAIRN_JOB="$job" "$cli" start --nodes "$np" \
           >"$dir/start.out" 2>&1; then
          live=$job
          pids=$("${env[@]}" CAIRN_JOB="$job" "$cli" status | awk 'NR > 1 {print $2}')
        else
          rc=1
          sed 's/^/# cairn start: /' "$dir/start.out"
          "${env[@]}" CAIRN_JOB="$job" "$cli" stop --timeout 30 >/dev/null 2>&1 # any it started
        fi
      fi
      if [ "$rc" -eq 0 ]; then
        "${env[@]}" "${extra[@]}" CAIRN_JOB="$job" bash scripts/mpirun.sh "$np" "$bin" \
          "${mode[@]}" "${args[@]}" >"$dir/$run.out" 2>"$dir/$run.err" || rc=$?
      fi
      if [ -n "$live" ]; then # the async run: wait for the daemons, then stop them
        t0=$EPOCHREALTIME
        "${env[@]}" "${extra[@]}" CAIRN_JOB="$job" "$cli" drain --timeout 600 \
          >"$dir/drain.out" 2>&1 || { rc=$?; sed 's/^/# cairn drain: /' "$dir/drain.out"; }
        drain=$(add "$EPOCHREALTIME" "-$t0")
        "${env[@]}" CAIRN_JOB="$job" "$cli" stop --timeout 120 >/dev/null 2>&1 || rc=$?
        log=$dir/base/cairn-$(id -u)/$job/cairnd.log
        raised=$(grep -o 'generation [0-9]* raised to level 3' "$log" | sort -u | wc -l)
        flushed=$(grep -Eo 'generation [0-9]* flushed( to the PFS)?' "$log" |
                  awk '{print $2}' | sort -u | wc -l) # every daemon logs its drain
        if [ "$flushed" -lt "$owed" ]; then
          echo "# FAILED: the daemons flushed $flushed generation(s) to the PFS, the run owed $owed"
          rc=1
        fi
        for p in $pids; do # gone, or going (a failed daemon takes the others down)
          for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
          if kill -0 "$p" 2>/dev/null; then
            echo "# cairnd $p of $job still running 5 s after cairn stop: killed"
            kill "$p" 2>/dev/null
            rc=1
          fi
        done
        live=""
      fi
      if [ "$rc" -eq 0 ] && [ -z "$(result_field "$dir/$run.out" compute)" ]; then
        rc=1
      fi
      if [ "$rc" -eq 0 ] && [ "$run" = nockpt2 ] &&
         [ "$(result_field "$dir/nockpt2.out" sum)" != "$(result_field "$dir/nockpt.out" sum)" ]
      then
        echo "# FAILED: nockpt computed another array the second time (checksum differs)"
        rc=1
      fi
      if [ "$rc" -eq 0 ] && [ "${run#nockpt}" = "$run" ]; then
        n=$(grep -c 'cairnd takes it' "$dir/$run.err")
        if [ "$run" = async ] && [ "$n" -ne "$want" ]; then
          echo "# FAILED: the async run handed $n of $want checkpoints to cairnd (rank 0 logs each)"
          rc=1
        elif [ "$run" != async ] && [ "$n" -ne 0 ]; then
          echo "# FAILED: the $run run (CAIRN_DAEMON_USE=off) handed $n checkpoints to cairnd"
          rc=1
        fi
        if [ "$(result_field "$dir/$run.out" sum)" != "$(result_field "$dir/nockpt.out" sum)" ]
        then
          echo "# FAILED: the $run run computed another array than nockpt (checksum differs)"
          rc=1
        fi
      fi
      if [ "$rc" -ne 0 ]; then
        echo "# FAILED (exit $rc): async: $run, repetition $i; its warnings, and its stderr's end:"
        grep -E ' (warn|error): ' "$dir/$run.err" 2>/dev/null | head -n 3 | sed 's/^/#   /'
        tail -n 3 "$dir/$run.err" 2>/dev/null | sed 's/^/#   /'
        tail -n 5 "$dir/base/cairn-$(id -u)/$job/cairnd.log" 2>/dev/null |
          sed 's/^/#   cairnd.log: /'
        failed=1
        trap 'exit 130' INT TERM
        rm -rf "$dir"
        return
      fi
    done
    c_no+=("$(mean2 "$(result_field "$dir/nockpt.out" compute)" "$(result_field "$dir/nockpt2.out" compute)")")
    w_no+=("$(mean2 "$(result_field "$dir/nockpt.out" wall)" "$(result_field "$dir/nockpt2.out" wall)")")
    c_no2+=("$(result_field "$dir/nockpt2.out" compute)")
    r_no2+=("$(div "$(result_field "$dir/nockpt2.out" compute)" "$(result_field "$dir/nockpt.out" compute)")")
    b_l1+=("$(result_field "$dir/l1.out" blocked_mean)")
    c_sync+=("$(result_field "$dir/sync.out" compute)")
    b_sync+=("$(result_field "$dir/sync.out" blocked_mean)")
    c_async+=("$(result_field "$dir/async.out" compute)")
    b_async+=("$(result_field "$dir/async.out" blocked_mean)")
    total+=("$(add "$(result_field "$dir/async.out" wall)" "$drain")")
    w_sync+=("$(result_field "$dir/sync.out" wall)")
    r_st+=("$(div "${w_sync[-1]}" "${w_no[-1]}")")
    n3+=("$raised") n4+=("$flushed")
    r_n3+=("$(div "$raised" "$iters")") r_n4+=("$(div "$flushed" "$owed")")
    lg3+=("$(lag_field "$dir/async.out" lag3_gens)") lg4+=("$(lag_field "$dir/async.out" lag4_gens)")
    ls3+=("$(lag_field "$dir/async.out" lag3_s)") ls4+=("$(lag_field "$dir/async.out" lag4_s)")
    r_lg3+=("$(div "${lg3[-1]}" "$iters")") r_lg4+=("$(div "${lg4[-1]}" "$iters")")
    r_ls3+=("$(div "${ls3[-1]}" "$(result_field "$dir/async.out" wall)")")
    r_ls4+=("$(div "${ls4[-1]}" "$(result_field "$dir/async.out" wall)")")
    r_b+=("$(div "${b_async[-1]}" "${b_l1[-1]}")")
    r_sb+=("$(div "${b_sync[-1]}" "${b_l1[-1]}")")
    r_s+=("$(div "${c_async[-1]}" "${c_no[-1]}")")
    r_ss+=("$(div "${c_sync[-1]}" "${c_no[-1]}")")
    r_t+=("$(div "${total[-1]}" "${w_sync[-1]}")")
    echo "# rep $i: compute nockpt ${c_no[-1]} s (mean of $(result_field "$dir/nockpt.out" compute) and ${c_no2[-1]}), sync ${c_sync[-1]} s, async ${c_async[-1]} s;" \
      "blocked per checkpoint l1 ${b_l1[-1]} s, sync ${b_sync[-1]} s, async ${b_async[-1]} s" \
      "(median checkpoint: $(result_field "$dir/l1.out" blocked_median)," \
      "$(result_field "$dir/sync.out" blocked_median)," \
      "$(result_field "$dir/async.out" blocked_median) s)"
    echo "#        wall nockpt ${w_no[-1]} s, l1 $(result_field "$dir/l1.out" wall) s," \
      "sync $(result_field "$dir/sync.out" wall) s, async $(result_field "$dir/async.out" wall) s" \
      "+ drain $drain s"
    echo "#        work: async raised $raised of $iters generations to level 3 and flushed" \
      "$flushed (owed $owed; sync: $iters and $owed); at the loop's end the newest at level 3" \
      "was $(lag_field "$dir/async.out" newest_l3), on the PFS $(lag_field "$dir/async.out" newest_l4)," \
      "at level 1 $iters: lag ${lg3[-1]} and ${lg4[-1]} generation(s), ${ls3[-1]} and ${ls4[-1]} s"
    if [ "$i" -eq "$reps" ]; then
      for run in l1 sync async; do
        sed -n "s/^# blocked per checkpoint:/#   $run blocked per checkpoint (s):/p" "$dir/$run.out"
      done
      sed 's/^/#   /' "$dir/drain.out"
    fi
    rm -rf "${dir:?}/base/"* "${dir:?}/pfs/"*
  done
  trap 'exit 130' INT TERM
  rm -rf "$dir"
  printf 'bench: async.block %.4f s ratio=%.2f vs l1\n' \
    "$(median_of "${b_async[@]}")" "$(median_of "${r_b[@]}")"
  printf 'bench: async.slowdown %.4f s ratio=%.2f vs nockpt\n' \
    "$(median_of "${c_async[@]}")" "$(median_of "${r_s[@]}")"
  printf 'bench: async.nockpt.again %.4f s ratio=%.2f vs nockpt\n' \
    "$(median_of "${c_no2[@]}")" "$(median_of "${r_no2[@]}")"
  printf 'bench: async.sync.block %.4f s ratio=%.2f vs l1\n' \
    "$(median_of "${b_sync[@]}")" "$(median_of "${r_sb[@]}")"
  printf 'bench: async.sync.slowdown %.4f s ratio=%.2f vs nockpt\n' \
    "$(median_of "${c_sync[@]}")" "$(median_of "${r_ss[@]}")"
  printf 'bench: async.total %.4f s ratio=%.2f vs sync\n' \
    "$(median_of "${total[@]}")" "$(median_of "${r_t[@]}")"
  printf 'bench: async.sync.total %.4f s ratio=%.2f vs nockpt\n' \
    "$(median_of "${w_sync[@]}")" "$(median_of "${r_st[@]}")"
  printf 'bench: async.l3 %s gen ratio=%.2f vs sync\n' "$(median_of "${n3[@]}")" \
    "$(median_of "${r_n3[@]}")"
  printf 'bench: async.l4 %s gen ratio=%.2f vs sync\n' "$(median_of "${n4[@]}")" \
    "$(median_of "${r_n4[@]}")"
  printf 'bench: async.lag.l3 %s gen ratio=%.2f vs ckpts\n' "$(median_of "${lg3[@]}")" \
    "$(median_of "${r_lg3[@]}")"
  printf 'bench: async.lag.l3.time %.4f s ratio=%.2f vs wall\n' "$(median_of "${ls3[@]}")" \
    "$(median_of "${r_ls3[@]}")"
  printf 'bench: async.lag.l4 %s gen ratio=%.2f vs ckpts\n' "$(median_of "${lg4[@]}")" \
    "$(median_of "${r_lg4[@]}")"
  printf 'bench: async.lag.l4.time %.4f s ratio=%.2f vs wall\n' "$(median_of "${ls4[@]}")" \
    "$(median_of "${r_ls4[@]}")"
}
