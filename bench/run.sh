#!/usr/bin/env bash
# bench/run.sh: run the benchmarks (built by `make`; this script builds nothing).
#   BUILD=build bash bench/run.sh [SECTION...]     SECTION: all (default), l1, ec, ring, l3, z, lossy,
#                                                  incr, agg, l4, async, remap
# Every figure is printed as a line
#   bench: NAME VALUE UNIT ratio=R vs BASELINE
# with the baseline measured in the same run; lines starting with '#' are
# details and notes. Exits non-zero if any benchmark failed.
#
# Each section is a function bench_SECTION; a new benchmark adds one and
# lists it in SECTIONS. Checkpoints go to a fresh directory under /dev/shm,
# removed on exit; each invocation gets its own CAIRN_JOB.
#
# Knobs (environment), for quick runs:
#   L1_RANKS="1 2"  L1_SIZES="64 256 1024" (MiB per rank)  L1_IOS="write pmem"
#   L1_REPS=5 (L1_REPS_LARGE=3 for sizes >= 1024 MiB)
#   EC_SHARD=1024 (KiB per shard)  EC_REPS=21  EC_KS="4 8 16"  EC_MS="1 2 3 4"
#   RING_SIZE=64 (MiB per member)  RING_MEMBERS=2,4,8,16,32  RING_REPS=5  RING_BLOCK=65536
#   L3_SIZE=16 (MiB per rank)  L3_REPS=5
#   Z_SIZE=64 (MiB: heat and random)  Z_REPS=5  Z_WARMUP=1  Z_HEAT_STEPS=1600
#   Z_SCALE_SIZE=16 (MiB of heat for the buffer/thread table)  Z_EGM96=/usr/share/proj/egm96_15.gtx
#   LOSSY_REPS=3  LOSSY_WARMUP=1  LOSSY_HEAT3D_STEPS=400  LOSSY_HEAT2D_STEPS=400
#   LOSSY_PAPER=heat3d,egm96,heat2d (data sets of the paper's tables, or none)
#   LOSSY_EGM96=/usr/share/proj/egm96_15.gtx  LOSSY_CKPT_REPS=5 (lossy.ckpt: checkpoints per bound)
#   INCR_NP=8 (ranks = emulated nodes, one encoding set, m = 2)  INCR_REPS=5 (intervals per
#   series)  INCR_MAT_N=2400  INCR_MAT_ROWS=3 (rows of C per interval)  INCR_LU_N=72 (points per
#   rank per edge)  INCR_LU_ITERS=1  INCR_LU_MAX_CHANGED=100  INCR_BLOCKS=1,2,4,8,16,64,256,1024
#   (KiB)  INCR_SWEEP_REPS=3  INCR_HASH_MIB=256  INCR_HASH_REPS=5  INCR_XDELTA_REPS=3  INCR_AUTO=1
#   AGG_NP=32 (ranks = emulated nodes)  AGG_HEAT_N=1536  AGG_HEAT_STEPS=600  AGG_MAT_N=512
#   AGG_LU_N=20  AGG_GROUPS=1,2,4,8,16,32  AGG_REPS=3  AGG_BLOCK=0 (the library's default)
#   AGG_H5_GROUP=32 (ranks per aggregated file of HDF5 checkpoints)
#   L4_NP=4 (ranks = emulated nodes)  L4_SIZE=64 (MiB of doubles per rank)  L4_REPS=5
#   ASYNC_NP=4 (ranks = emulated nodes = daemons, one encoding set, m = 1)  ASYNC_SIZE=32 (MiB
#   per rank)  ASYNC_ITERS=12  ASYNC_PASSES=48 (stencil passes per iteration)  ASYNC_PFS_EVERY=4
#   ASYNC_REPS=3
#   REMAP_SIZE=16 (MiB per saving rank)  REMAP_REPS=5
#
# QUICK=1 (make bench-quick): every section, so every headline figure, from
# smaller data and fewer repetitions (a knob set in the environment still wins);
# the figures are noisier, the names and baselines the same.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
SECTIONS=(l1 ec ring l3 z lossy incr agg l4 async remap)
if [ "${QUICK:-0}" = 1 ]; then
  : "${L1_RANKS:=2}" "${L1_SIZES:=64}" "${L1_IOS:=write}" "${L1_REPS:=3}"
  : "${EC_REPS:=5}" "${EC_KS:=8}" "${EC_MS:=2}"
  : "${RING_SIZE:=16}" "${RING_MEMBERS:=2,4,8}" "${RING_REPS:=3}"
  : "${L3_SIZE:=8}" "${L3_REPS:=3}"
  : "${Z_SIZE:=16}" "${Z_REPS:=3}" "${Z_HEAT_STEPS:=400}" "${Z_SCALE_SIZE:=8}"
  : "${LOSSY_REPS:=1}" "${LOSSY_PAPER:=none}" "${LOSSY_CKPT_REPS:=3}"
  : "${INCR_REPS:=3}" "${INCR_MAT_N:=1200}" "${INCR_LU_N:=48}" "${INCR_BLOCKS:=4,64,1024}"
  : "${INCR_SWEEP_REPS:=1}" "${INCR_HASH_MIB:=64}" "${INCR_HASH_REPS:=3}" "${INCR_XDELTA_REPS:=1}"
  : "${AGG_HEAT_N:=768}" "${AGG_HEAT_STEPS:=200}" "${AGG_MAT_N:=256}" "${AGG_GROUPS:=1,8,32}"
  : "${AGG_REPS:=1}" "${L4_SIZE:=16}" "${L4_REPS:=3}"
  : "${ASYNC_ITERS:=8}" "${ASYNC_REPS:=3}" "${REMAP_SIZE:=8}" "${REMAP_REPS:=3}"
  export L1_RANKS L1_SIZES L1_IOS L1_REPS EC_REPS EC_KS EC_MS RING_SIZE RING_MEMBERS RING_REPS \
    L3_SIZE L3_REPS Z_SIZE Z_REPS Z_HEAT_STEPS Z_SCALE_SIZE LOSSY_REPS LOSSY_PAPER LOSSY_CKPT_REPS INCR_REPS \
    INCR_MAT_N INCR_LU_N INCR_BLOCKS INCR_SWEEP_REPS INCR_HASH_MIB INCR_HASH_REPS \
    INCR_XDELTA_REPS AGG_HEAT_N AGG_HEAT_STEPS AGG_MAT_N AGG_GROUPS AGG_REPS L4_SIZE L4_REPS ASYNC_ITERS ASYNC_REPS \
    REMAP_SIZE REMAP_REPS
fi

tmp=$(mktemp -d /dev/shm/cairn-bench.XXXXXX) || { echo "run.sh: mktemp failed" >&2; exit 1; }
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
export CAIRN_BASE=$tmp
unset CAIRN_IO CAIRN_KEEP CAIRN_NODE

failed=0
invocation=0

# run_mpi NP PROGRAM ARGS...: one MPI invocation with a job id of its own;
# the checkpoints it leaves are removed afterwards to free the RAM disk.
run_mpi() {
  local np=$1; shift
  invocation=$((invocation + 1))
  local rc=0
  CAIRN_JOB="bench-$$-$invocation" CAIRN_RANKS_PER_NODE=$np \
    bash scripts/mpirun.sh "$np" "$@" || rc=$?
  rm -rf "${tmp:?}"/* "${tmp:?}"/.[!.]* 2>/dev/null
  if [ "$rc" -ne 0 ]; then
    echo "# FAILED (exit $rc): $np rank(s): $*"
    failed=1
  fi
  return 0
}

# mem_ok NEED_RAM_MIB NEED_SHM_MIB: enough available memory and RAM-disk space?
mem_ok() {
  local avail_ram avail_shm
  avail_ram=$(awk '/^MemAvailable:/ {print int($2 / 1024)}' /proc/meminfo)
  avail_shm=$(df -Pm "$tmp" | awk 'NR == 2 {print $4}')
  [ -n "$avail_ram" ] && [ -n "$avail_shm" ] || return 0
  [ "$avail_ram" -ge "$1" ] && [ "$avail_shm" -ge "$2" ]
}

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

# ---- z: codecs vs zlib -6, the write pipeline vs its slowest stage, auto vs the best codec ----
# One rank with a pool of 2 compressor threads (the machine's cores), three
# in-memory data sets: examples/heat's field, proj-data's EGM96 geoid grid
# (skipped with a note if absent) and random bytes. Files go to the RAM disk.
bench_z() {
  local bin=$BUILD/bench/z_bench
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  local size=${Z_SIZE:-64}
  # Data sets, heat's second buffer, decode target, frames and a file read
  # back in RAM; one file at a time on the RAM disk.
  if ! mem_ok $((size * 8 + 512)) $((size * 2 + 256)); then
    echo "# skipped: z: not enough free memory for $((size * 8)) MiB"
    return
  fi
  run_mpi 1 "$bin" --size "$size" --reps "${Z_REPS:-5}" --warmup "${Z_WARMUP:-1}" \
    --heat-steps "${Z_HEAT_STEPS:-1600}" --scale-size "${Z_SCALE_SIZE:-16}" \
    --egm96 "${Z_EGM96:-/usr/share/proj/egm96_15.gtx}"
}

# ---- lossy: the wavelet method as published, then cairn's error-bounded modes vs ZFP ----
# One rank, one thread, in memory: a 3-D heat stencil's field of the paper's
# shape (1156 x 82 x 2), examples/heat's field and the EGM96 geoid grid
# (skipped with a note if absent). The paper's tables (n = 1..128, both
# quantizers, with and without encoding) against gzip alone; then wavelet and
# predict at bounds 1e-2..1e-4 of each field's range against ZFP's fixed-
# accuracy mode at the same tolerance (payloads alone: '#' lines). Then the
# headline, at the checkpoint (lossy_ckpt_bench): EGM96 through a real level-1
# checkpoint and restart, every byte of the generation's files counted,
# `bench: lossy.ckpt.{ratio,comp,decomp}.E.egm96` against ZFP in the same run.
# Every decoded array is checked.
bench_lossy() {
  local bin=$BUILD/bench/lossy_bench
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  # Data sets (14 MiB), the heat stencils' second buffers, payload, reconstruction, decode.
  if ! mem_ok 256 0; then
    echo "# skipped: lossy: not enough free memory for 256 MiB"
    return
  fi
  run_mpi 1 "$bin" --reps "${LOSSY_REPS:-3}" --warmup "${LOSSY_WARMUP:-1}" \
    --heat3d-steps "${LOSSY_HEAT3D_STEPS:-400}" --heat2d-steps "${LOSSY_HEAT2D_STEPS:-400}" \
    --paper "${LOSSY_PAPER:-heat3d,egm96,heat2d}" --egm96 "${LOSSY_EGM96:-/usr/share/proj/egm96_15.gtx}"
  # At the checkpoint: EGM96 through a real level-1 cairn_checkpoint into /dev/shm, every byte
  # of the generation's files counted, and restarted (every element checked), against ZFP.
  local ckbin=$BUILD/bench/lossy_ckpt_bench
  if [ ! -x "$ckbin" ]; then
    echo "# FAILED: $ckbin not built (run make first)"
    failed=1
    return
  fi
  run_mpi 1 "$ckbin" --reps "${LOSSY_CKPT_REPS:-5}" --warmup "${LOSSY_WARMUP:-1}" --dir "$tmp" \
    --egm96 "${LOSSY_EGM96:-/usr/share/proj/egm96_15.gtx}"
}

# ---- incr: incremental vs full checkpoints (the paper's Tables 3, 4), block size, xdelta3 ----
# One job of INCR_NP ranks, each its own emulated node (CAIRN_RANKS_PER_NODE=1), one encoding
# set (set_size = INCR_NP, m = 2). Two MPI programs, a blocked matrix multiply that fills a few
# rows of C per interval (~0.1 % of memory changes) and an SSOR solver in the manner of NPB LU
# (~60 % changes), each checkpointed at level 3 after every interval with incr.mode off and on,
# compress.codec = none (set by the program); then a sweep of incr.block_size on mat, incr_hash
# against memcpy, and xdelta3 on two consecutive generations of rank 0's memory. The restart of
# each incremental chain is checked bit-exact. Waiting ranks yield their core (as in l3).
bench_incr() {
  local bin=$BUILD/bench/incr_bench
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  if ! command -v xdelta3 >/dev/null; then
    echo "# FAILED: xdelta3 not installed (bash scripts/setup.sh)"
    failed=1
    return
  fi
  local np=${INCR_NP:-8} n=${INCR_MAT_N:-2400} lun=${INCR_LU_N:-72}
  # Per rank: mat (A and C rows, all of B) or lu, each twice (the copy the
  # changed bytes are counted against); on the RAM disk three full
  # generations and their parity (2/(np-2)); rank 0: 2 x INCR_HASH_MIB and two dumps.
  local mat_mib=$(( (2 * n / np + n) * n * 8 / 1048576 + 1 )) lu_mib=$(( lun * lun * lun * 128 / 1048576 + 1 ))
  local per=$(( mat_mib > lu_mib ? mat_mib : lu_mib ))
  local hash=$(( 2 * ${INCR_HASH_MIB:-256} ))
  if ! mem_ok $((np * per * 2 + hash + 1024)) $((np * per * 4 + 3 * per + 256)); then
    echo "# skipped: incr: not enough free memory for $np x $((per * 6)) MiB"
    return
  fi
  # incr.*, compress.codec and compress.threads are set by the program for each series.
  CAIRN_KEEP=2 CAIRN_SET_SIZE=$np CAIRN_EC_M=2 OMPI_MCA_mpi_yield_when_idle=1 \
    run_mpi "$np" env CAIRN_RANKS_PER_NODE=1 "$bin" --reps "${INCR_REPS:-5}" \
    --mat-n "$n" --mat-rows "${INCR_MAT_ROWS:-3}" --lu-n "$lun" --lu-iters "${INCR_LU_ITERS:-1}" \
    --lu-max-changed "${INCR_LU_MAX_CHANGED:-100}" --blocks "${INCR_BLOCKS:-1,2,4,8,16,64,256,1024}" \
    --sweep-reps "${INCR_SWEEP_REPS:-3}" --hash-mib "${INCR_HASH_MIB:-256}" \
    --hash-reps "${INCR_HASH_REPS:-5}" --xdelta-reps "${INCR_XDELTA_REPS:-3}" --auto "${INCR_AUTO:-1}"
}

# ---- agg: data-aware vs data-agnostic N->M aggregation (level 4's file) on real checkpoints ----
# AGG_NP ranks, each its own emulated node, take one level-1 checkpoint (codec none) of three
# real programs: examples/heat (AGG_HEAT_N^2 doubles, AGG_HEAT_STEPS steps), and incr_bench's
# mat (each rank holds rows of A and C and all of B) and lu (SSOR, AGG_LU_N^3 points per rank),
# two intervals each. Then agg_bench alone (no MPI) decodes every rank file and aggregates
# groups of N consecutive ranks with every scheme (mcrEngine's agnostic, agnostic-block, aware,
# aware-block, and auto), reading every file back bit-exact; ratios are raw/stored summed over
# the groups and the programs, times the median of AGG_REPS flushes of all groups of 8.
# Then h5_bench writes each rank's state as that rank's HDF5 checkpoint (a contiguous dataset
# per variable) and aggregates groups of AGG_H5_GROUP (32) ranks' files both ways: aware (split
# by dataset, merged by path and type) against agnostic (the files' bytes concatenated), every
# file rebuilt byte for byte: agg.h5.aware.g32, agg.h5.ckpt_time.g32, agg.h5.restart_time.g32.
bench_agg() {
  local bin=$BUILD/bench/agg_bench heat=$BUILD/examples/heat
  if [ ! -x "$bin" ] || [ ! -x "$heat" ] || [ ! -x "$BUILD/bench/h5_bench" ]; then
    echo "# FAILED: $bin or $heat not built (run make first)"
    failed=1
    return
  fi
  local np=${AGG_NP:-32} hn=${AGG_HEAT_N:-1536} mn=${AGG_MAT_N:-512} ln=${AGG_LU_N:-20}
  # mat's B on every rank, lu's grids, heat's field: decoded in RAM, files on the RAM disk.
  local mib=$(( np * (mn * mn * 8 + ln * ln * (ln + 2) * 96) / 1048576 + hn * hn * 8 / 1048576 ))
  if ! mem_ok $((mib * 4 + 512)) $((mib + 256)); then
    echo "# skipped: agg: not enough free memory for $((mib * 4)) MiB"
    return
  fi
  local base=$tmp/agg rc=0
  mkdir -m 700 "$base"
  local env=(env CAIRN_BASE="$base" CAIRN_RANKS_PER_NODE=1 CAIRN_CODEC=none CAIRN_INCR=off
             CAIRN_LOG_LEVEL=error OMPI_MCA_mpi_yield_when_idle=1)
  "${env[@]}" CAIRN_JOB=heat bash scripts/mpirun.sh "$np" "$heat" --nx "$hn" --ny "$hn" \
    --steps "${AGG_HEAT_STEPS:-600}" --ckpt-every "${AGG_HEAT_STEPS:-600}" >/dev/null || rc=$?
  "${env[@]}" CAIRN_JOB=mat bash scripts/mpirun.sh "$np" "$bin" --run mat --mat-n "$mn" || rc=$?
  "${env[@]}" CAIRN_JOB=lu bash scripts/mpirun.sh "$np" "$bin" --run lu --lu-n "$ln" || rc=$?
  if [ "$rc" -eq 0 ]; then
    "$bin" --analyze "$base" --groups "${AGG_GROUPS:-1,2,4,8,16,32}" --reps "${AGG_REPS:-3}" \
      --block "${AGG_BLOCK:-0}" || rc=$?
  fi
  # The same ranks' state as per-rank HDF5 checkpoints (routed files): aware against agnostic.
  if [ "$rc" -eq 0 ]; then
    "$BUILD/bench/h5_bench" --analyze "$base" --group "${AGG_H5_GROUP:-32}" \
      --reps "${AGG_REPS:-3}" || rc=$?
  fi
  rm -rf "$base"
  if [ "$rc" -ne 0 ]; then
    echo "# FAILED (exit $rc): agg"
    failed=1
  fi
}

# ---- l4: level 4 (flush, restore from the PFS alone) vs a plain copy of the files ----
# L4_NP ranks, each its own emulated node, L4_SIZE MiB of doubles each (bench/l4_bench.c):
# the flush of a level-1 generation against copying its files to the same PFS directory with
# read()/write() (l4.ckpt; l4.ckpt.checked against the same copy hashing what it reads), and
# the restart from the PFS alone (every node-local directory wiped)
# against reading those copies back; then, with incremental checkpoints, the flush of a
# generation with 1% of its blocks changed as an increment (l4.incr) against the same
# generation flushed full; medians of L4_REPS, stored bytes beside each figure.
bench_l4() {
  local bin=$BUILD/bench/l4_bench np=${L4_NP:-4} size=${L4_SIZE:-64}
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  # Per rank: the array, its reference, level 1, the PFS copy and the two plain copies.
  if ! mem_ok $((np * size * 6 + 512)) $((np * size * 6 + 256)); then
    echo "# skipped: l4: not enough free memory for $((np * size * 6)) MiB"
    return
  fi
  mkdir -m 700 "$tmp/l4pfs"
  # Waiting ranks yield their core (as on separate nodes; this host runs every node).
  CAIRN_PFS_DIR=$tmp/l4pfs CAIRN_LOG_LEVEL=error OMPI_MCA_mpi_yield_when_idle=1 \
    run_mpi "$np" env CAIRN_RANKS_PER_NODE=1 \
    "$bin" --size "$size" --reps "${L4_REPS:-5}"
}

# ---- remap: restart onto another rank count vs onto the same one ----
# 8 ranks save one generation (REMAP_SIZE MiB each, a 2-D array in blocks of
# rows and a replicated step) at level 1 on one emulated node; then, in
# turn, REMAP_REPS restarts onto 8 ranks (the same layout: the plain
# restart) and onto 6 (the remap, every element moved to another rank's
# block), each timed by cairn_restart on the slowest rank. ratio: the
# median 8 -> 6 restart over the median 8 -> 8 one (target: at most 2).
bench_remap() {
  local bin=$BUILD/bench/remap_bench size=${REMAP_SIZE:-16} reps=${REMAP_REPS:-5}
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  if ! mem_ok $((size * 8 * 4)) $((size * 8 * 2)); then
    echo "# skipped: remap: not enough free memory for 8 x $size MiB"
    return
  fi
  local job="bench-$$-remap" same=() remap=() t
  if ! CAIRN_JOB=$job CAIRN_RANKS_PER_NODE=8 bash scripts/mpirun.sh 8 "$bin" save "$size" 8; then
    echo "# FAILED: remap: save on 8 ranks"
    failed=1
    return
  fi
  for ((i = 1; i <= reps; i++)); do
    for np in 8 6; do
      t=$(CAIRN_JOB=$job CAIRN_RANKS_PER_NODE=$np bash scripts/mpirun.sh $np "$bin" restore "$size" 8 |
          sed -n 's/^result restart=//p')
      if [ -z "$t" ]; then
        echo "# FAILED: remap: restore on $np ranks, repetition $i"
        failed=1
        rm -rf "${tmp:?}"/* 2>/dev/null
        return
      fi
      if [ $np = 8 ]; then same+=("$t"); else remap+=("$t"); fi
    done
    echo "# rep $i: restart 8 -> 8 ${same[-1]} s, 8 -> 6 ${remap[-1]} s"
  done
  rm -rf "${tmp:?}"/* 2>/dev/null
  local m6 m8
  m6=$(median_of "${remap[@]}") m8=$(median_of "${same[@]}")
  printf 'bench: remap.8to6 %.4f s ratio=%.2f vs same\n' "$m6" "$(div "$m6" "$m8")"
}

# ---- async: time blocked per checkpoint and compute slowdown, node daemons (cairnd) vs none ----
# ASYNC_NP ranks, each its own emulated node, one encoding set (set_size = ASYNC_NP, m = 1). Each
# rank runs ASYNC_ITERS iterations of ASYNC_PASSES passes of a 1-D stencil over ASYNC_SIZE MiB of
# doubles (~0.2 s per iteration for 4 ranks on 2 cores) and checkpoints after each. Per
# repetition, each run its own job (async-r<rep>-<run>) on a fresh base and PFS directory:
#   nockpt  no cairn at all: the baseline of slowdown and total;
#   l1      level 1, synchronous (CAIRN_DAEMON_USE=off), no PFS: the baseline of block;
#   sync    level 3 + pfs.every = ASYNC_PFS_EVERY, synchronous (CAIRN_DAEMON_USE=off);
#   async   the same with one cairnd per node (`cairn start`), then `cairn drain` (until the
#           newest generation is on the PFS) and `cairn stop`.
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

# median_of X...: the median of numbers.
median_of() {
  printf '%s\n' "$@" | sort -g |
    awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
# result_field FILE KEY: KEY=VALUE of async_bench's `result` line; lag_field: of its `lag` line.
result_field() { sed -n "s/^result .*\<$2=\([^ ]*\).*/\1/p" "$1"; }
lag_field() { sed -n "s/^lag .*\<$2=\([^ ]*\).*/\1/p" "$1"; }
# div A B, add A B: arithmetic on decimals.
div() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }
add() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", a + b}'; }

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
  local -a w_sync r_st n3 n4 r_n3 r_n4 lg3 lg4 ls3 ls4 r_lg3 r_lg4 r_ls3 r_ls4
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
    for run in nockpt l1 sync async; do
      job=async-r$i-$run
      rc=0
      case $run in
        nockpt) mode=(nockpt 1) extra=() ;;
        l1) mode=(ckpt 1) extra=(CAIRN_DAEMON_USE=off CAIRN_PFS_EVERY=0) ;;
        sync) mode=(ckpt 3) extra=("${pfs[@]}" CAIRN_DAEMON_USE=off) ;;
        async) mode=(ckpt 3) extra=("${pfs[@]}") ;;
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
      if [ "$rc" -eq 0 ] && [ "$run" != nockpt ]; then
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
    c_no+=("$(result_field "$dir/nockpt.out" compute)")
    w_no+=("$(result_field "$dir/nockpt.out" wall)")
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
    echo "# rep $i: compute nockpt ${c_no[-1]} s, sync ${c_sync[-1]} s, async ${c_async[-1]} s;" \
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

# ---- main ----
want=("$@")
[ ${#want[@]} -eq 0 ] && want=(all)
run=()
for s in "${want[@]}"; do
  if [ "$s" = all ]; then
    run+=("${SECTIONS[@]}")
  elif declare -F "bench_$s" >/dev/null; then
    run+=("$s")
  else
    echo "run.sh: unknown section '$s' (sections: all ${SECTIONS[*]})" >&2
    exit 2
  fi
done

start=$SECONDS
for s in "${run[@]}"; do
  echo "# section $s"
  "bench_$s"
done
echo "# benchmarks done in $((SECONDS - start)) s"
exit "$failed"
