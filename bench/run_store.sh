# bench/run_store.sh: the sections of bench/run.sh on what a checkpoint stores and how it
# comes back: incr (incremental vs full), agg (N->M aggregation), l4 (the PFS level) and
# remap (restart onto another rank count). Sourced by run.sh, which owns the knobs, run_mpi,
# mem_ok, median_of and div.

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

# ---- l4sync: a synchronous level-4 checkpoint vs every rank writing straight to the PFS ----
# (bench/l4sync_bench.c, issue 31) cairn_checkpoint(id, 4) from call to return against every
# rank writing its array straight to its own file in the same PFS directory and hashing it
# (FTI's level 4), interleaved and each first in every other repetition, medians of
# L4SYNC_REPS (default 20, 8 at 256 MiB a rank; with --async 9: at 4 x 64 on a tmpfs, medians of 6
# ranged 0.97-1.23 from run to run, of 30 1.01-1.16); 4 ranks x 64 MiB and 8 x 256 MiB
# (L4SYNC_SHAPES) on 4 emulated nodes, with the default codec and with compression off
# (.nocomp), straight from memory (pfs.direct on, the default) and through level 1
# (.level1: pfs.direct off), on two PFS directories: a tmpfs (.tmpfs) and a disk file system (.ext4: ext4
# on a loop device over a file under /var/tmp when root; else .disk, a directory there;
# L4SYNC_FS: either alone; L4SYNC_RUNS: some of on:auto on:none off:auto off:none, pfs.direct
# and the codec).
# l4.async.flush: 4 ranks x 64 MiB on 4 nodes with one cairnd per node: from the level-4
# checkpoint's return until its PFS index exists, the ranks computing meanwhile, against the
# same direct write (l4sync_bench --async; the daemons started and stopped here). The ranks
# compute L4ASYNC_GAP seconds (default 5) before each checkpoint, as an application does
# between two: the daemons' share of the host over that time (daemon.share) is what their
# burst spends on the flush (daemon.burst). l4.async.flush is the default (pfs.direct on: where
# the PFS writes as fast as node-local storage, as a tmpfs beside the RAM disk does, the ranks
# write it straight and its index is there at the return; the time the call blocked is
# printed beside); l4.async.flush.daemons is the daemons' flush from level 1 (pfs.direct off)
# on the same file system; .nogap: checkpoints back to back, the daemons at their share alone.
l4async() { # DIR FS NAME GAP DIRECT
  local dir=$1 fs=$2 job=bench-$$-l4async-$2-$4-$5 rc=0
  local env=(env CAIRN_PFS_DIR="$dir" CAIRN_RANKS_PER_NODE=1 CAIRN_JOB="$job" CAIRN_LOG_LEVEL=error
             CAIRN_DAEMON_LAUNCHER="bash scripts/mpirun.sh" OMPI_MCA_mpi_yield_when_idle=1
             CAIRN_PFS_DIRECT="$5")
  if ! "${env[@]}" "$BUILD/cairn" start --nodes 4 >"$tmp/l4async.out" 2>&1; then
    sed 's/^/# cairn start: /' "$tmp/l4async.out"; failed=1
    "${env[@]}" "$BUILD/cairn" stop --timeout 30 >/dev/null 2>&1
    return
  fi
  "${env[@]}" bash scripts/mpirun.sh 4 "$BUILD/bench/l4sync_bench" --async --size 64 \
    --gap "$4" --name "$3.$fs" --reps "${L4SYNC_REPS:-9}" || rc=$?
  "${env[@]}" "$BUILD/cairn" stop --timeout 120 >/dev/null 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { echo "# FAILED (exit $rc): $3.$fs"; failed=1; }
  rm -rf "${dir:?}"/* "${tmp:?}"/cairn-*
}

bench_l4sync() {
  local bin=$BUILD/bench/l4sync_bench fs dir shape np size run direct codec name img= dev= mnt=
  if [ ! -x "$bin" ]; then
    echo "# FAILED: $bin not built (run make first)"
    failed=1
    return
  fi
  for fs in ${L4SYNC_FS:-tmpfs ext4}; do
    mnt=$(mktemp -d /dev/shm/cairn-bench-pfs.XXXXXX) dir=$mnt/pfs # (run_mpi empties $tmp)
    if [ $fs = ext4 ] && [ "$(id -u)" -eq 0 ] && command -v mkfs.ext4 >/dev/null; then
      rmdir "$mnt"
      img=$(mktemp /var/tmp/cairn-bench-ext4.XXXXXX) mnt=$(mktemp -d /var/tmp/cairn-bench-mnt.XXXXXX)
      truncate -s 12G "$img" && dev=$(losetup -f --show "$img") && mkfs.ext4 -q -F "$dev" &&
        mount -t ext4 "$dev" "$mnt" && dir=$mnt/pfs ||
        { echo "# FAILED: could not make ext4 on a loop device"; failed=1; rm -f "$img"; continue; }
    elif [ $fs = ext4 ]; then
      rmdir "$mnt"
      fs=disk mnt=$(mktemp -d /var/tmp/cairn-bench-disk.XXXXXX) dir=$mnt/pfs
    fi
    mkdir -m 700 "$dir"
    for shape in ${L4SYNC_SHAPES:-4x64 8x256}; do
      np=${shape%x*} size=${shape#*x}
      # Per rank: the array and its check copy, level 1, and on the PFS two generations and the direct file.
      if ! mem_ok $((np * size * 4 + 512)) $((np * size * 4 + 256)); then
        echo "# skipped: l4sync $shape: not enough free memory for $((np * size * 4)) MiB"
        continue
      fi
      for run in ${L4SYNC_RUNS:-on:auto on:none off:auto off:none}; do
        direct=${run%:*} codec=${run#*:}
        name=l4.sync; [ "$direct" = off ] && name+=.level1
        [ "$shape" = 4x64 ] || name+=.$shape
        [ "$codec" = none ] && name+=.nocomp
        CAIRN_PFS_DIR=$dir CAIRN_LOG_LEVEL=error OMPI_MCA_mpi_yield_when_idle=1 \
          run_mpi "$np" env CAIRN_RANKS_PER_NODE=$((np / 4)) CAIRN_CODEC=$codec \
          CAIRN_PFS_DIRECT=$direct "$bin" --name "$name.$fs" --size "$size" \
          --reps "${L4SYNC_REPS:-$(( size >= 256 ? 8 : 20 ))}"
        rm -rf "${dir:?}"/*
      done
    done
    l4async "$dir" "$fs" l4.async.flush "${L4ASYNC_GAP:-5}" on
    l4async "$dir" "$fs" l4.async.flush.daemons "${L4ASYNC_GAP:-5}" off
    l4async "$dir" "$fs" l4.async.flush.daemons.nogap 0 off
    [ -n "$dev" ] && { umount "$mnt"; losetup -d "$dev"; rm -f "$img"; }
    rm -rf "$mnt"; img= dev= mnt=
  done
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
