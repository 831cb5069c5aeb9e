# bench/run_levels.sh: the sections of bench/run.sh on levels 1 to 3: l1 (level-1
# bandwidth), ec (erasure codec kernels), ring (pipelined ring encode), l3 (level 3 and
# rebuild). Sourced by run.sh, which owns the knobs, run_mpi, mem_ok and the other helpers.

# ---- l1: level-1 checkpoint bandwidth vs plain write() and memcpy ----
bench_l1() {
  local bin=$BUILD/bench/l1_bench
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  local ranks=${L1_RANKS:-1 2} sizes=${L1_SIZES:-64 256 1024} ios=${L1_IOS:-write pmem}
  local reps=${L1_REPS:-5} reps_large=${L1_REPS_LARGE:-3}
  # Headline first: the default configuration (io=auto), 1 rank, 256 MiB.
  run_mpi 1 "$bin" --size 256 --reps "$reps" --io auto --headline
  local np size io r total
  for np in $ranks; do
    for size in $sizes; do
      r=$reps
      [ "$size" -ge 1024 ] && r=$reps_large
      # Peak use: data + memcpy target in RAM, and two generations on the
      # RAM disk while the newer one commits, plus headroom.
      total=$((np * size))
      if ! mem_ok $((4 * total + 512)) $((2 * total + 256)); then
        echo "# skipped: l1 np$np.${size}M: not enough free memory for $((4 * total)) MiB"
        continue
      fi
      for io in $ios; do
        run_mpi "$np" "$bin" --size "$size" --reps "$r" --io "$io"
      done
    done
  done
}

# ---- ec: erasure codec throughput, each kernel vs ISA-L and memcpy ----
# One process, no MPI: encode of k data shards into m parity shards for every
# kernel, ISA-L's ec_encode_data (same Cauchy matrix) and memcpy side by side;
# then decode of two lost data shards (k=8, m=2) vs encode.
bench_ec() {
  local bin=$BUILD/bench/ec_bench
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  local rc=0
  "$bin" --shard "${EC_SHARD:-1024}" --reps "${EC_REPS:-21}" --ks "${EC_KS:-4 8 16}" \
    --ms "${EC_MS:-1 2 3 4}" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "# FAILED (exit $rc): $bin"
    failed=1
  fi
}

# ---- ring: pipelined ring encode as the set grows, and a model to 1024 nodes ----
# One job of as many ranks as the largest set: sets of 2 (a core each) to 32
# members (emulated, sharing the cores) encode RING_SIZE MiB each, m=1; the
# ratio is time per byte of total work vs 2 members. Then the per-block
# compute and transfer times feed a replay of the ring's schedule for 8..1024
# nodes with a core each (m=2). Waiting ranks yield their core
# (mpi_yield_when_idle, Open MPI), as the emulated members must share it.
bench_ring() {
  local bin=$BUILD/bench/ring_bench
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  local size=${RING_SIZE:-64} members=${RING_MEMBERS:-2,4,8,16,32}
  local np=${members##*,}
  # Every rank: payload + parity + a scratch copy for the model, plus headroom.
  if ! mem_ok $((np * size * 3 + 512)) 0; then
    echo "# skipped: ring: not enough free memory for $np x $((size * 3)) MiB"
    return
  fi
  OMPI_MCA_mpi_yield_when_idle=1 run_mpi "$np" "$bin" --size "$size" --members "$members" \
    --reps "${RING_REPS:-5}" --block "${RING_BLOCK:-65536}"
}

# ---- l3: level-3 checkpoint vs level 1, rebuild of 2 lost nodes vs encode ----
# One job of 10 ranks, each its own emulated node (CAIRN_RANKS_PER_NODE=1, set
# through env as the program run_mpi launches), one encoding set k=8, m=2.
# Per rep: a level-1 and a level-3 checkpoint of L3_SIZE MiB per rank; then
# node1 and node2 are wiped and cairn_rebuild decodes them back (the restart
# after it is checked bit-exact every few reps). Encode time is l3 - l1. The
# nodes share the machine's cores, so waiting ranks yield theirs (as in ring);
# the expected "rebuilt ... by decoding" warnings are silenced.
bench_l3() {
  local bin=$BUILD/bench/l3_bench
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  local np=10 size=${L3_SIZE:-16}
  # Every rank: data + a reference copy; on the RAM disk two generations of
  # every rank's file plus 2/8 parity, and a generation being written.
  if ! mem_ok $((np * size * 3 + 512)) $((np * size * 4 + 256)); then
    echo "# skipped: l3: not enough free memory for $np x $((size * 7)) MiB"
    return
  fi
  CAIRN_KEEP=2 CAIRN_SET_SIZE=$np CAIRN_EC_M=2 CAIRN_LOG_LEVEL=error \
    OMPI_MCA_mpi_yield_when_idle=1 \
    run_mpi "$np" env CAIRN_RANKS_PER_NODE=1 "$bin" --size "$size" --reps "${L3_REPS:-5}"
}
