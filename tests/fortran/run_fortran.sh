#!/usr/bin/env bash
# run_fortran.sh - the Fortran binding (module cairn, bindings/fortran):
# its bind(C) types against the C structs, every wrapper against the library
# (t_api), an mpi_f08 communicator (t_f08), and the Fortran heat example
# (examples/fortran/heat.f90) crashed (rank kills itself with SIGKILL right
# after a checkpoint returned, so the generation is complete), nodes wiped for
# levels 2 and 3, restarted, its final grid compared byte for byte with an
# uninterrupted run's; then built against an installed cairn via pkg-config.
# Sourced by tests/run.sh (section fortran; uses check, fresh, run_grep).

FH=$BUILD/examples/fortran/heat
F_OUT=$(mktemp -d /dev/shm/cairn-fortran.XXXXXX); SCRATCH_DIRS+=("$F_OUT")

# f_crashed PATTERN CMD...: CMD must fail (a rank was killed) and print PATTERN.
f_crashed() {
  local pat=$1 out rc; shift; out=$(mktemp)
  "$@" >"$out" 2>&1; rc=$?
  if [ "$rc" -eq 0 ] || ! grep -Eq -- "$pat" "$out"; then
    echo "f_crashed: exit status $rc (want non-zero), pattern '$pat', from: $*"; tail -n 20 "$out"
    rm -f "$out"; return 1
  fi
  rm -f "$out"
}
# f_scenario NAME LEVEL CRASH_AT WIPE RESTORED [HEAT OPTIONS...]: run heat on 4 ranks
# crashing after step CRASH_AT, wipe the nodes in WIPE ("1 2" or ""), restart; the
# restart must say it restored generation RESTORED and end with the reference grid.
f_scenario() {
  local name=$1 level=$2 at=$3 wipe=$4 restored=$5; shift 5
  fresh "f-$name"
  f_crashed "rank 1 crashing after step $at" \
    scripts/mpirun.sh 4 "$FH" --level "$level" --crash-at "$at" --crash-rank 1 "$@" || return 1
  # shellcheck disable=SC2086
  [ -z "$wipe" ] || wipe_nodes $wipe
  run_grep "restarted from generation $restored\$" \
    scripts/mpirun.sh 4 "$FH" --level "$level" --restart --out "$F_OUT/$name" "$@" || return 1
  cmp "$F_OUT/ref" "$F_OUT/$name"
}

# f_query: level 3 on 4 nodes, crash after step 25, nodes 0 and 3 wiped; the
# restart with --query must print the plan (ready, generation 20 from level 3
# after decoding 2 lost nodes, its label), check the stored grid's shape,
# restore the step alone, then restore all and end bit-exact.
f_query() {
  local out=$F_OUT/query.log
  fresh f-query
  f_crashed 'crashing after step 25' \
    scripts/mpirun.sh 4 "$FH" --level 3 --crash-at 25 --crash-rank 1 || return 1
  wipe_nodes 0 3
  scripts/mpirun.sh 4 "$FH" --level 3 --restart --query --out "$F_OUT/query" >"$out" 2>&1 ||
    { echo "f_query: exit status $?"; tail -n 20 "$out"; return 1; }
  grep -q "plan status/code/id/level/rebuild/lost 1 0 20 3 3 2 label 'heat step 20'" "$out" &&
    grep -q 'stored grid 64 16 bytes 8192' "$out" && grep -q 'step restored alone: 20' "$out" &&
    grep -q 'restarted from generation 20$' "$out" ||
    { echo "f_query: the plan, the grid's shape or the restores are not as expected:"; cat "$out"; return 1; }
  cmp "$F_OUT/ref" "$F_OUT/query"
}

# f_temporary: cairn_protect of a variable compiles, of an expression (whose
# temporary would be gone when cairn writes it) does not.
f_temporary() {
  local src=$F_OUT/temporary.f90
  printf '%s\n' 'program p' '  use, intrinsic :: iso_c_binding' '  use cairn' \
    '  type(cairn_ctx) :: c' '  integer :: rc' '  real(c_double), target :: x(2)' \
    "  rc = cairn_protect(c, 'x', x)" '  !EXPR' 'end program' >"$src"
  gfortran -fsyntax-only -I"$BUILD/bindings/fortran" "$src" || return 1
  sed -i "s|!EXPR|rc = cairn_protect(c, 'y', [1.0_c_double, 2.0_c_double])|" "$src"
  ! gfortran -fsyntax-only -I"$BUILD/bindings/fortran" "$src" 2>"$F_OUT/temporary.err" &&
    grep -q 'no specific function for the generic .*cairn_protect' "$F_OUT/temporary.err"
}

check "fortran: bind(C) types match the C structs (sizes, every field's offset)" \
  bash -c "set -o pipefail; '$BUILD/gen_consts' layout > '$F_OUT/layout.c' &&
           '$BUILD/tests/fortran/t_layout' > '$F_OUT/layout.f' && diff '$F_OUT/layout.c' '$F_OUT/layout.f'"

check "fortran: cairn_protect takes variables; an expression (a temporary) does not compile" f_temporary

export CAIRN_RANKS_PER_NODE=2
fresh f-api
check "fortran: every wrapper against the library, refusals change nothing (t_api, 4 ranks, 2 nodes)" \
  run_grep '^t_api: [0-9]+ checks, 0 failed' env CAIRN_CKPT_EVERY_1=3 scripts/mpirun.sh 4 "$BUILD/tests/fortran/t_api"
fresh f-f08
check "fortran: mpi_f08 (comm%MPI_VAL of a split communicator) and MPI_COMM_NULL refused (t_f08)" \
  run_grep '^t_f08: ok' scripts/mpirun.sh 4 "$BUILD/tests/fortran/t_f08"

fresh f-ref
check "fortran heat: an uninterrupted run, 4 ranks (the reference grid)" \
  run_grep '^heat: done at step 60' scripts/mpirun.sh 4 "$FH" --out "$F_OUT/ref"
check "fortran heat: bad options exit 1 with the usage" \
  run_grep_rc 1 'usage: heat' scripts/mpirun.sh 4 "$FH" --level 7
check "fortran heat level 1: rank 1 killed after step 35, restart from generation 30, grid bit-exact" \
  f_scenario l1 1 35 "" 30
check "fortran heat level 2: crash, node 1 wiped, restart from the partner copy, grid bit-exact" \
  f_scenario l2 2 35 "1" 30
check "  ... a restart with another layout (2 ranks) exits 2, naming both layouts" \
  run_grep_rc 2 'written by 4 ranks' scripts/mpirun.sh 2 "$FH" --level 2 --restart

export CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=4 CAIRN_EC_M=2
check "fortran heat level 3: 4 nodes, crash, nodes 1 and 2 wiped, rebuilt by decoding, grid bit-exact" \
  f_scenario l3 3 45 "1 2" 40
check "fortran heat --query: restart_query's plan (2 nodes lost, decode), var_query's grid, restart_var of the step" \
  f_query
unset CAIRN_SET_SIZE CAIRN_EC_M
export CAIRN_RANKS_PER_NODE=2 CAIRN_CKPT_EVERY_2=7
check "fortran heat --auto: cairn_need_checkpoint says level 2 every 7 steps (CAIRN_CKPT_EVERY_2=7), crash, bit-exact" \
  f_scenario auto 1 25 1 21 --auto
unset CAIRN_CKPT_EVERY_2

# Restart on another rank count (cairn_protect_block, cairn_protect_replicated).
FR=$BUILD/tests/fortran/t_remap
export CAIRN_RANKS_PER_NODE=2
fresh f-remap
check "fortran remap: 4 ranks on 2 nodes save 2 generations at level 1 (uneven column and 1-D blocks, a replicated step)" \
  run_grep '^t_remap: ok save' scripts/mpirun.sh 4 "$FR" save 1
check "  ... refused declarations are CAIRN_EINVAL and keep the blocks; 4 -> 3 ranks, bit-exact" \
  run_grep '^t_remap: ok refuse' scripts/mpirun.sh 3 "$FR" refuse
f_remap4() {
  run_grep '^t_remap: ok save' scripts/mpirun.sh 4 "$FR" save 4 &&
    wipe_nodes 0 1 && run_grep '^t_remap: ok restore' scripts/mpirun.sh 6 "$FR" restore
}
fresh_pfs f-remap4
check "fortran remap: 4 ranks save at level 4; every node wiped; 4 -> 6 ranks from the PFS, bit-exact" f_remap4
unset CAIRN_RANKS_PER_NODE CAIRN_PFS_DIR

# Built against an installed cairn: module and library found through pkg-config.
F_PREFIX=$(mktemp -d /dev/shm/cairn-fprefix.XXXXXX); SCRATCH_DIRS+=("$F_PREFIX")
check "fortran: make install puts cairn.mod, libcairn-fortran and cairn-fortran.pc under the prefix" \
  bash -c "make -s install PREFIX='$F_PREFIX' BUILD='$BUILD' >/dev/null &&
           test -f '$F_PREFIX/include/cairn/fortran/cairn.mod' &&
           readelf -d '$F_PREFIX/lib/libcairn-fortran.so' | grep -q 'SONAME.*libcairn-fortran.so.0'"
if [ -e "$F_PREFIX/lib/libcairn.so.0" ]; then
  fresh f-installed
  check "fortran heat built with mpif90 \$(pkg-config --cflags --libs cairn-fortran) runs bit-exact" \
    bash -c "export PKG_CONFIG_PATH='$F_PREFIX/lib/pkgconfig' LD_LIBRARY_PATH='$F_PREFIX/lib' &&
      mpif90 ${CAIRN_SANITIZE:+-fsanitize=address,undefined} -o '$F_OUT/heat-installed' examples/fortran/heat.f90 \$(pkg-config --cflags --libs cairn-fortran) &&
      run_grep '^heat: done' scripts/mpirun.sh 4 '$F_OUT/heat-installed' --out '$F_OUT/installed' &&
      cmp '$F_OUT/ref' '$F_OUT/installed'"
else
  skip "fortran heat against the installed library: make install did not install libcairn.so.0"
fi
unset CAIRN_RANKS_PER_NODE
