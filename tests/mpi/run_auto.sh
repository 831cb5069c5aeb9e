#!/usr/bin/env bash
# run_auto.sh - compress.codec = auto: one pick per variable for the whole
# job, the same pick for the same data and settings (run after run, and
# beside a CPU hog), the levels the job uses weighed (compressible fields are
# stored raw at level 1 but not at level 3; at level 4, what pays for its
# decode by the flush), fpzip given a variable's 2-D shape; every pick
# restores bit-exact (the lossy one within its bound).
#
# 4 ranks on 4 emulated nodes (one encoding set, m = 1), one compressor
# thread each (the pick depends on the threads, not on the machine). The
# program is tests/mpi/t_auto.c; the codec of every variable of every rank
# is read with `cairn inspect`. Sourced by tests/run.sh (check, fresh, ...).
: "${BUILD:=build}"
export CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=4 CAIRN_EC_M=1 CAIRN_COMPRESS_THREADS=1 \
  CAIRN_LOG_LEVEL=warn
unset CAIRN_FAULT CAIRN_CONFIG_FILE CAIRN_PFS_DIR CAIRN_CODEC CAIRN_LOSSY \
  CAIRN_COMPRESS_BANDWIDTH CAIRN_COMPRESS_LEVEL CAIRN_PFS_EVERY
AUTO=(scripts/mpirun.sh "$NP" "$BUILD/tests/t_auto")
AUTO_OUT=$(mktemp -d /dev/shm/cairn-auto.XXXXXX)
SCRATCH_DIRS+=("$AUTO_OUT")

# auto_codecs GEN: "name=codec ..." of rank 0's file of generation GEN, after
# checking that every rank's file says the same; fails (and says which rank
# differs) otherwise. Odd ranks' solo (not on rank 0) comes last, from rank 1,
# and must be the same on every odd rank.
auto_codecs() {
  local gen=$1 first="" line r solo="" s
  for ((r = 0; r < NP; r++)); do
    line=$("$BUILD/cairn" inspect "$(gen_dir "$r" "$gen")/rank-$r.ckpt" |
      awk '$2 == "var" && $1 != "solo" { printf "%s=%s ", $1, ($7 == "in" ? $9 : $8) }') ||
      return 1
    s=$("$BUILD/cairn" inspect "$(gen_dir "$r" "$gen")/rank-$r.ckpt" |
      awk '$2 == "var" && $1 == "solo" { printf "%s=%s ", $1, ($7 == "in" ? $9 : $8) }')
    if [ $((r % 2)) -eq 1 ]; then
      [ -n "$s" ] || { echo "rank $r: no solo"; return 1; }
      [ -z "$solo" ] && solo=$s
      [ "$s" = "$solo" ] || { echo "rank $r picked $s; rank 1 $solo"; return 1; }
    fi
    [ -n "$line" ] || { echo "rank $r: no variables in generation $gen"; return 1; }
    if [ -z "$first" ]; then
      first=$line
    elif [ "$line" != "$first" ]; then
      echo "rank $r picked $line; rank 0 $first"
      return 1
    fi
  done
  echo " $first$solo"
}
# auto_save NAME LEVEL: a fresh job saves generation 1 at LEVEL; its codecs
# (the same on every rank) go to $AUTO_OUT/NAME.
auto_save() {
  local out
  out=$("${AUTO[@]}" save "$2" 1 2>&1) || { echo "$out"; return 1; }
  grep -q '^PASS save' <<<"$out" || { echo "$out"; return 1; }
  grep '^geo:' <<<"$out"
  auto_codecs 1 >"$AUTO_OUT/$1" || { cat "$AUTO_OUT/$1"; return 1; }
  cat "$AUTO_OUT/$1"
}
# auto_has NAME PATTERN...: the codecs of run NAME match every extended regexp.
auto_has() {
  local f=$AUTO_OUT/$1 p; shift
  for p in "$@"; do
    grep -Eq -- "$p" "$f" || { echo "no '$p' in:$(cat "$f")"; return 1; }
  done
}
# auto_not_raw NAME VAR...: run NAME stored none of VAR raw.
auto_not_raw() {
  local f=$AUTO_OUT/$1 v; shift
  for v in "$@"; do
    grep -q " $v=" "$f" || { echo "no $v in:$(cat "$f")"; return 1; }
    ! grep -q " $v=raw " "$f" || { echo "$v stored raw:$(cat "$f")"; return 1; }
  done
}
# auto_again NAME LEVEL [hog]: auto_save (beside a CPU hog: a busy loop
# started here and killed by its pid) must pick as run l1 did.
auto_again() {
  local hog="" rc=0
  if [ "${3:-}" = hog ]; then
    bash -c 'while :; do :; done' &
    hog=$!
  fi
  auto_save "$1" "$2" || rc=$?
  if [ -n "$hog" ]; then
    kill "$hog"
    wait "$hog" 2>/dev/null
  fi
  [ "$rc" -eq 0 ] && diff "$AUTO_OUT/l1" "$AUTO_OUT/$1"
}

fresh auto-l1
check "auto at level 1: every rank picks the same codec per variable; geo (fpzip, 2-D shape) stores less than geo1d" \
  auto_save l1 1
check "  ... noise raw, geo and geo1d fpzip as named, the bounded one lossy; mixed (runs on 2 ranks, noise on 2) one codec for all, solo alike on its ranks" \
  auto_has l1 ' noise=raw ' ' geo=fpzip ' ' geo1d=fpzip ' ' bounded=(wavelet|predict) ' ' mixed=' ' solo='
check "  ... field (3x compressible) raw: at level 1 alone, one thread, raw is the faster write" \
  auto_has l1 ' field=raw '
check "  ... a new job restores every variable bit-exact (bounded within 1e-3 of its range)" \
  run_grep '^PASS restore' "${AUTO[@]}" restore 1
fresh auto-l1-again
check "  ... the same data in a new job: the same picks" auto_again again 1
fresh auto-l1-hog
check "  ... and beside a CPU hog: the same picks" auto_again hog 1 hog

fresh auto-l3
check "auto at level 3 (4 nodes, m = 1): the same codec per variable on every rank" auto_save l3 3
check "  ... field and sparse (about 3x and 9x compressible) are not stored raw" \
  auto_not_raw l3 field sparse
check "  ... a new job restores every variable bit-exact" run_grep '^PASS restore' "${AUTO[@]}" restore 1

fresh_pfs auto-l4
check "auto at level 4 (the PFS too): the same codec per variable on every rank" auto_save l4 4
check "  ... sparse is not stored raw (field, 3x, is with one thread: the flush decodes what level 1 compressed, and recompresses the raw state for the PFS)" \
  auto_not_raw l4 sparse
check "  ... a new job restores every variable bit-exact" run_grep '^PASS restore' "${AUTO[@]}" restore 1
unset CAIRN_PFS_DIR CAIRN_COMPRESS_THREADS
