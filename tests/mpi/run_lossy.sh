#!/usr/bin/env bash
# run_lossy.sh - restart from a lossy checkpoint and keep going (the paper's
# Fig. 11 question): examples/heat on 4 ranks / 2 emulated nodes stores its
# field within a relative bound REL of each rank's value range, crashes,
# restarts from the lossy generation and runs on. Snapshots of the field are
# compared with an uninterrupted run: the error right after the restart must
# be within the bound (and not zero: the checkpoint really was lossy), and in
# the steps that follow it must stay near the bound, not grow. Once per
# lossy mode. Sourced by tests/run.sh (check, PASSED/FAILED, SCRATCH_DIRS).
: "${BUILD:=build}"
heat=$BUILD/examples/heat
diff_tool=$BUILD/tests/fielddiff
REL=1e-3
hargs=(--nx 256 --ny 256 --steps 400 --snap 50)

lossy_work=$(mktemp -d /dev/shm/cairn-lossy.XXXXXX)
SCRATCH_DIRS+=("$lossy_work")
export CAIRN_RANKS_PER_NODE=2 CAIRN_BASE=$lossy_work/local
mkdir -p "$CAIRN_BASE"

# errors_ok DIR: every snapshot's error after the restart, as a table; fails
# if the first exceeds REL * range, is zero, or a later one exceeds twice it.
errors_ok() {
  local dir=$1 first="" line err range s
  for s in 200 250 300 350 400; do
    line=$("$diff_tool" "$lossy_work/ref.$s" "$dir/run.$s") || return 1
    read -r err range <<<"$line"
    echo "step $s: max |error| $err, field range $range, bound $REL x range"
    if [ -z "$first" ]; then
      first=$err
      awk -v e="$err" -v r="$range" -v b="$REL" 'BEGIN { exit !(e > 0 && e <= b * r) }' || return 1
    else
      awk -v e="$err" -v f="$first" 'BEGIN { exit !(e <= 2 * f) }' || return 1
    fi
  done
}

CAIRN_JOB=lossy-ref scripts/mpirun.sh 4 "$heat" "${hargs[@]}" --ckpt-every 0 --out "$lossy_work/ref" \
  >/dev/null 2>&1
for mode in wavelet predict; do
  mkdir -p "$lossy_work/$mode"
  out=$lossy_work/$mode/run
  export CAIRN_JOB=lossy-$mode CAIRN_LOSSY=$mode
  scripts/mpirun.sh 4 "$heat" "${hargs[@]}" --ckpt-every 100 --bound $REL --crash-at 250 \
    --crash-rank 1 --out "$out" >/dev/null 2>&1
  check "lossy ($mode, $REL of the range): the crashed run's generation 200 is lossy" \
    run_grep "^field +var +double +64x256 .* $mode " "$BUILD/cairn" inspect "$CAIRN_BASE/cairn-$(id -u)/$CAIRN_JOB/node0/gen-200/rank-0.ckpt"
  check "  ... restart from it and run on to step 400" \
    scripts/mpirun.sh 4 "$heat" "${hargs[@]}" --ckpt-every 100 --bound $REL --restart --out "$out"
  check "  ... error after restart within the bound, not growing over 200 steps" \
    errors_ok "$lossy_work/$mode"
done
unset CAIRN_JOB CAIRN_LOSSY CAIRN_BASE
