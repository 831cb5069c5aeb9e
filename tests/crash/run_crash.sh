#!/usr/bin/env bash
# run_crash.sh - cairn on a real disk file system, and the crash states of its
# commit protocol (tests/crash/README.md). Sourced by tests/run.sh (section
# `crash`; uses its check/skip and MOUNTS/LOOPS/SCRATCH_DIRS, which its EXIT
# trap unmounts, detaches and removes).
#   1. ext4, and XFS where the kernel has it and mkfs.xfs is installed, each on
#      a loop device made here (root only): a level-1 checkpoint and a level-4
#      flush with node directory and PFS directory on it, restarted bit-exact.
#   2. On ext4: the file-system operations of a level-1 checkpoint, of a
#      level-4 flush and of the epilog's flush without MPI (cairn flush
#      --node-only) are recorded (tests/crash/trace.c, LD_PRELOAD) and every
#      crash state the model allows is built from them (crashstates.py) and
#      restarted: the old generation or the new one, bit-exact, nothing else.
# CAIRN_CRASH_ALL=1 (make crash) tries every distinct state, and adds a trace
# of the level-4 flush whose node-local directory crashes too; otherwise an
# even sample of CAIRN_CRASH_SAMPLE (default 24) per trace.

CRASH_SO=$BUILD/tests/crash/libtrace.so
CRASH_SAMPLE=${CAIRN_CRASH_SAMPLE:-24}
[ -n "${CAIRN_CRASH_ALL:-}" ] && CRASH_SAMPLE=0
# A restart per crash state: one rank, an Open MPI singleton without a daemon
# (ignored by MPICH), so that a state costs a fraction of a second.
CRASH_MPI_ENV=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
               OMPI_MCA_ess_singleton_isolated=1 OMPI_MCA_btl=self CAIRN_RANKS_PER_NODE=1
               T_RAW=1 CAIRN_LOG_LEVEL=warn)

# crash_clean CMD...: CMD without the CAIRN_* and T_* settings earlier sections
# exported (codecs, set sizes, jobs), but with the launcher and this run's tag.
crash_clean() {
  local v unset=()
  for v in $(compgen -e); do
    case $v in
      CAIRN_TEST_TAG | CAIRN_LAUNCHER | CAIRN_LOG_LEVEL) ;;
      CAIRN_* | T_*) unset+=(-u "$v") ;;
    esac
  done
  env "${unset[@]}" "$@"
}

# crash_mount FSTYPE: a fresh FSTYPE on a loop device, mounted at $CRASH_MNT
# (empty on failure). Not in a subshell: the trap's lists must see the names.
crash_mount() {
  local fs=$1 img dev mnt
  CRASH_MNT=
  img=$(mktemp /var/tmp/cairn-crash-$fs.XXXXXX.img) || return 1
  SCRATCH_DIRS+=("$img")
  truncate -s 320M "$img" || return 1 # XFS wants 300 MB at least
  dev=$(losetup -f --show "$img") || { CRASH_NOLOOP="losetup -f found no loop device"; return 1; }
  LOOPS+=("$dev")
  case $fs in
    ext4) mkfs.ext4 -q -F "$dev" >/dev/null ;;
    xfs) mkfs.xfs -q -f "$dev" >/dev/null ;;
  esac || { echo "mkfs.$fs failed" >&2; return 1; }
  mnt=$(mktemp -d /var/tmp/cairn-crash-$fs.XXXXXX) || return 1
  mount -t "$fs" "$dev" "$mnt" || { echo "mount $dev failed" >&2; return 1; }
  MOUNTS+=("$mnt"); SCRATCH_DIRS+=("$mnt")
  [ "$(findmnt -n -o FSTYPE --target "$mnt")" = "$fs" ] || { echo "$mnt is not $fs" >&2; return 1; }
  CRASH_MNT=$mnt
}

# crash_unmount MNT: unmount MNT and detach its loop device now (the trap does it otherwise).
crash_unmount() {
  local dev m l keep=(); dev=$(findmnt -n -o SOURCE --target "$1")
  umount "$1" && losetup -d "$dev" || return 1
  for m in "${MOUNTS[@]}"; do [ "$m" = "$1" ] || keep+=("$m"); done
  MOUNTS=("${keep[@]}"); keep=() # the trap must not detach a number another user got since
  for l in "${LOOPS[@]}"; do [ "$l" = "$dev" ] || keep+=("$l"); done
  LOOPS=("${keep[@]}")
}

# crash_roundtrip FS MNT: levels 1 and 4 on FS, 4 ranks on 2 nodes, bit-exact.
crash_roundtrip() {
  local fs=$1 mnt=$2
  local -a on=(CAIRN_BASE="$mnt/node" CAIRN_PFS_DIR="$mnt/pfs" CAIRN_JOB="t$CAIRN_TEST_TAG-crash-$fs"
               CAIRN_RANKS_PER_NODE=2 T_RAW=1)
  mkdir -m 700 "$mnt/node" "$mnt/pfs"
  check "$fs: level 1: 4 ranks on 2 nodes checkpoint 2 generations on $fs" \
    crash_clean "${on[@]}" scripts/mpirun.sh 4 "$T" save 2 1
  check "  ... a new job restarts generation 2 from $fs, bit-exact" \
    crash_clean "${on[@]}" scripts/mpirun.sh 4 "$T" restore 2
  check "$fs: level 4: generations 3 and 4 flushed to a PFS directory on $fs" \
    crash_clean "${on[@]}" T_FIRST=3 scripts/mpirun.sh 4 "$T" save 2 4
  rm -rf "${mnt:?}/node/"*
  check "  ... node-local storage wiped: restart reads generation 4 from the PFS on $fs, bit-exact" \
    run_grep 'from the PFS' crash_clean "${on[@]}" scripts/mpirun.sh 4 "$T" restore 4
}

# crash_states LABEL LEVEL DIR [VAR=VALUE...] [-- CRASHSTATES-ARGS]: trace
# generation 2 at LEVEL over a durable generation 1 in DIR/top (the variables
# in the environment of every run), then try the crash states (restart: 1 or 2).
crash_states() {
  local label=$1 level=$2 dir=$3; shift 3
  local top=$dir/top job="t$CAIRN_TEST_TAG-crash-$label" what=${CRASH_SAMPLE/#0/all}
  mkdir -p "$top" && mkdir -m 700 "$top/node" "$top/pfs"
  local -a env=("${CRASH_MPI_ENV[@]}" CAIRN_JOB="$job" CAIRN_KEEP=1 CAIRN_PFS_KEEP=1)
  while [ $# -gt 0 ] && [ "$1" != -- ]; do env+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  check "crash $label: generation 1 at level $level (the old one, durable before the trace)" \
    crash_clean "${env[@]}" CAIRN_BASE="$top/node" CAIRN_PFS_DIR="$top/pfs" "$T" save 1 "$level"
  sync -f "$top" && cp -a "$top" "$dir/pre"
  check "crash $label: generation 2 at level $level, traced (tests/crash/trace.c)" \
    crash_clean "${env[@]}" CAIRN_BASE="$top/node" CAIRN_PFS_DIR="$top/pfs" T_FIRST=2 \
        CRASH_TRACE="$dir/trace" CRASH_ROOTS="$top" LD_PRELOAD="$PWD/$CRASH_SO" \
        ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" "$T" save 1 "$level"
  local restart="env ${env[*]} CAIRN_BASE=\$CRASH_STATE/node CAIRN_PFS_DIR=\$CRASH_STATE/pfs $PWD/$T"
  check "crash $label: every crash state restarts generation 1 or 2, bit-exact (states: $what)" \
    crash_clean python3 tests/crash/crashstates.py --label "$label" --top "$top" --pre "$dir/pre" \
      --trace "$dir/trace" --out "$dir/state" --max "$CRASH_SAMPLE" --keep-failed "$dir/failed" \
      --check "$restart restore-either 1 2" --old-check "$restart restore 1" \
      --new-check "$restart restore 2" --report "$dir/report" "$@"
  cat "$dir/report" 2>/dev/null # the state count and failures: "crash: LABEL states=N failures=F"
}

# crash_flushnode DIR: the epilog's flush without MPI (cairn flush --node-only:
# a part, the node's record, the commit, the rename to gen-2, the prune of
# gen-1) of a level-1 generation 2, traced over generation 1 durable on the
# PFS; every crash state of the PFS (the node lost) restarts 1 or 2, bit-exact.
crash_flushnode() {
  local dir=$1 label=level4-epilog
  local top=$dir/top job="t$CAIRN_TEST_TAG-crash-$label" what=${CRASH_SAMPLE/#0/all}
  mkdir -p "$top" && mkdir -m 700 "$top/node" "$top/pfs"
  local -a env=("${CRASH_MPI_ENV[@]}" CAIRN_JOB="$job" CAIRN_KEEP=1 CAIRN_PFS_KEEP=1
                CAIRN_BASE="$top/node" CAIRN_PFS_DIR="$top/pfs")
  check "crash $label: generation 1 at level 4, then generation 2 at level 1 only (durable before the trace)" \
    crash_clean "${env[@]}" bash -c '"$1" save 1 4 && T_FIRST=2 "$1" save 1 1' _ "$T"
  sync -f "$top" && cp -a "$top" "$dir/pre"
  check "crash $label: the epilog's flush of generation 2 (cairn flush --node-only), traced" \
    crash_clean "${env[@]}" CRASH_TRACE="$dir/trace" CRASH_ROOTS="$top" LD_PRELOAD="$PWD/$CRASH_SO" \
        ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0" \
        "$BUILD/cairn" flush --node-only --gen 2 --node node0
  local restart="env ${env[*]} CAIRN_BASE=\$CRASH_STATE/node CAIRN_PFS_DIR=\$CRASH_STATE/pfs $PWD/$T"
  check "crash $label: every crash state of the PFS restarts generation 1 or 2, bit-exact (states: $what)" \
    crash_clean python3 tests/crash/crashstates.py --label "$label" --top "$top" --pre "$dir/pre" \
      --trace "$dir/trace" --out "$dir/state" --max "$CRASH_SAMPLE" --keep-failed "$dir/failed" \
      --check "$restart restore-either 1 2" --old-check "$restart restore 1" \
      --new-check "$restart restore 2" --report "$dir/report" --only pfs
  cat "$dir/report" 2>/dev/null
}

# crash_model: the checker itself, on a textbook atomic replacement of a file
# (tests/crash/replace.py): with its fsyncs no crash state holds anything but
# the old or the new bytes; without them the model must find states that do.
crash_model() {
  local d want=$1 rc=0
  d=$(mktemp -d /dev/shm/cairn-crash-model.XXXXXX); SCRATCH_DIRS+=("$d")
  mkdir -p "$d/top/d" && printf old >"$d/top/d/data" && cp -a "$d/top" "$d/pre" &&
    CRASH_TRACE="$d/trace" CRASH_ROOTS="$d/top" LD_PRELOAD="$PWD/$CRASH_SO" \
      python3 tests/crash/replace.py "$d/top/d" "$want" || return 1
  python3 tests/crash/crashstates.py --label "model-$want" --top "$d/top" --pre "$d/pre" \
    --trace "$d/trace" --out "$d/state" --report "$d/report" \
    --check 'c=$(cat "$CRASH_STATE/d/data") && { [ "$c" = old ] || [ "$c" = new ]; }' \
    --old-check '[ "$(cat "$CRASH_STATE/d/data")" = old ]' \
    --new-check '[ "$(cat "$CRASH_STATE/d/data")" = new ]' || rc=$?
  cat "$d/report"
  if [ "$want" = sync ]; then
    [ "$rc" -eq 0 ]
  else # failures, and only for the reason planted: exit 1 and a count above 0
    [ "$rc" -eq 1 ] && grep -Eq 'failures=[1-9]' "$d/report"
  fi
}

if [ -f "$CRASH_SO" ]; then
  check "crash model: an atomic replacement with its fsyncs: every crash state holds the old or the new bytes" \
    crash_model sync
  check "crash model: the same without the fsyncs: the model finds the states that hold neither" \
    crash_model nosync
fi

if [ "$(id -u)" -ne 0 ]; then
  skip "crash: a loop device and mount need root; the crash states are not tried either"
elif ! command -v mkfs.ext4 >/dev/null || ! command -v losetup >/dev/null; then
  skip "crash: mkfs.ext4 or losetup is missing (scripts/setup.sh installs e2fsprogs)"
elif [ ! -f "$CRASH_SO" ]; then
  check "crash: the tracer $CRASH_SO was built" test -f "$CRASH_SO"
else
  CRASH_NOLOOP=
  crash_mount ext4; CRASH_EXT4=$CRASH_MNT
  if [ -n "$CRASH_NOLOOP" ]; then
    skip "crash: $CRASH_NOLOOP (no loop devices here, e.g. a container): no real file system to try"
  elif [ -z "$CRASH_EXT4" ]; then
    check "crash: an ext4 file system on a loop device" false
  else
    echo "# ext4 on a loop device at $CRASH_EXT4; crash states are written out and restarted there"
    crash_roundtrip ext4 "$CRASH_EXT4"
    crash_states level1 1 "$CRASH_EXT4/l1"
    crash_states level1-pmem 1 "$CRASH_EXT4/l1p" CAIRN_IO=pmem # libpmem's path: map, copy, msync
    crash_states level4 4 "$CRASH_EXT4/l4" -- --only pfs # the node is lost: the PFS alone
    crash_flushnode "$CRASH_EXT4/l4e" # the epilog's flush without MPI
    if [ -n "${CAIRN_CRASH_ALL:-}" ]; then # and with the node's own crash state too (~400 states)
      crash_states level4-node 4 "$CRASH_EXT4/l4n"
    fi
    crash_unmount "$CRASH_EXT4"
  fi
  if [ -n "$CRASH_NOLOOP" ]; then
    :
  elif ! grep -qw xfs /proc/filesystems && ! modprobe -q xfs 2>/dev/null; then
    skip "crash: XFS (the kernel has no xfs)"
  elif ! command -v mkfs.xfs >/dev/null; then
    skip "crash: XFS (mkfs.xfs is missing: scripts/setup.sh installs xfsprogs)"
  else
    crash_mount xfs; CRASH_XFS=$CRASH_MNT
    if [ -z "$CRASH_XFS" ]; then
      check "crash: an XFS file system on a loop device" false
    else
      crash_roundtrip xfs "$CRASH_XFS"
      crash_unmount "$CRASH_XFS"
    fi
  fi
fi
