#!/usr/bin/env bash
# bench/run.sh: run the benchmarks (built by `make`; this script builds nothing).
#   BUILD=build bash bench/run.sh [SECTION...]     SECTION: all (default), l1, ec, ring, l3, z, lossy,
#                                                  incr, agg, l4, l4sync, async, remap
# Every figure is printed as a line
#   bench: NAME VALUE UNIT ratio=R vs BASELINE
# with the baseline measured in the same run; lines starting with '#' are
# details and notes. Exits non-zero if any benchmark failed.
#
# Each section is a function bench_SECTION in one of the files this script
# sources (run_levels.sh: l1 ec ring l3; run_codecs.sh: z lossy; run_store.sh:
# incr agg l4 l4sync remap; run_async.sh: async); a new benchmark adds one there and
# lists it in SECTIONS. This file owns the knobs, the helpers the sections
# share (run_mpi, mem_ok, median_of, div, add) and the main loop.
# Checkpoints go to a fresh directory under /dev/shm, removed on exit; each
# invocation gets its own CAIRN_JOB.
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
#   L4SYNC_SHAPES="4x64 8x256" (ranks x MiB per rank, on 4 nodes)  L4SYNC_REPS=20 (8 at 256 MiB
#   a rank, 9 for l4.async.flush)  L4SYNC_FS="tmpfs ext4"  L4SYNC_RUNS="on:auto on:none off:auto off:none"
#   (pfs.direct:codec)
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
SECTIONS=(l1 ec ring l3 z lossy incr agg l4 l4sync async remap)
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
  : "${AGG_REPS:=1}" "${L4_SIZE:=16}" "${L4_REPS:=3}" "${L4SYNC_SHAPES:=4x64}" "${L4SYNC_REPS:=4}"
  : "${ASYNC_ITERS:=8}" "${ASYNC_REPS:=3}" "${REMAP_SIZE:=8}" "${REMAP_REPS:=3}"
  export L1_RANKS L1_SIZES L1_IOS L1_REPS EC_REPS EC_KS EC_MS RING_SIZE RING_MEMBERS RING_REPS \
    L3_SIZE L3_REPS Z_SIZE Z_REPS Z_HEAT_STEPS Z_SCALE_SIZE LOSSY_REPS LOSSY_PAPER LOSSY_CKPT_REPS INCR_REPS \
    INCR_MAT_N INCR_LU_N INCR_BLOCKS INCR_SWEEP_REPS INCR_HASH_MIB INCR_HASH_REPS \
    INCR_XDELTA_REPS AGG_HEAT_N AGG_HEAT_STEPS AGG_MAT_N AGG_GROUPS AGG_REPS L4_SIZE L4_REPS L4SYNC_SHAPES L4SYNC_REPS ASYNC_ITERS ASYNC_REPS \
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

# median_of X...: the median of numbers.
median_of() {
  printf '%s\n' "$@" | sort -g |
    awk '{v[NR] = $1} END {print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
# div A B, add A B: arithmetic on decimals.
div() { awk -v a="$1" -v b="$2" 'BEGIN {print a / b}'; }
add() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", a + b}'; }

# The sections: one function bench_SECTION each, in the files of their group.
for group in bench/run_levels.sh bench/run_codecs.sh bench/run_store.sh bench/run_async.sh; do
  source "$group"
done
unset group

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
