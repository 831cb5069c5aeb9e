#!/usr/bin/env bash
# run_cmake.sh - the CMake package `make install` writes
# (PREFIX/lib/cmake/cairn/cairnConfig.cmake and cairnConfigVersion.cmake), seen
# from an application project outside the tree (tests/install/cmake/, copied
# to a directory of its own with tests/install/prog.c): configured with only
# -DCMAKE_PREFIX_PATH=<prefix>, it finds cairn with find_package(cairn CONFIG
# REQUIRED COMPONENTS fti scr veloc [fortran]) and builds every program
# against the shared targets (cairn::cairn, cairn::fti, ...) and the static
# ones (cairn::cairn_static, ...). Each program runs on 4 ranks over 2
# emulated nodes: a checkpoint, then a second run that restarts and compares
# every byte (exit status 0 only if all equal). A request for the next major
# version is refused at configure time.
# Sourced by tests/run.sh's section `install` from tests/install/run_install.sh,
# after `make install PREFIX=$P` and before `make uninstall` (uses P, inst,
# tree, version, major, check, skip, fresh, gen_dir, app, two_runs).

cm=$inst/cmake-app; mkdir -p "$cm"
cp tests/install/cmake/* tests/install/prog.c "$cm/"
cm_fortran=OFF; command -v gfortran >/dev/null && cm_fortran=ON
# The programs are built as the installed library was: with its MPI (FindMPI would pick
# the default mpicc, Open MPI's; make check-mpich builds libcairn with MPICH), and under
# CAIRN_SANITIZE instrumented too (the library is).
cm_flags=()
if ldd "$BUILD/libcairn.so" 2>/dev/null | grep -q libmpich; then
  cm_flags+=(-DMPI_C_COMPILER=mpicc.mpich -DMPI_Fortran_COMPILER=mpif90.mpich)
fi
if [ -n "${CAIRN_SANITIZE:-}" ]; then
  cm_flags+=("-DCMAKE_C_FLAGS=-fsanitize=address,undefined" "-DCMAKE_Fortran_FLAGS=-fsanitize=address,undefined"
             "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined")
fi
# cmake_app ARGS...: cmake with nothing of the tree or of pkg-config in the environment
cmake_app() {
  ( cd "$cm" && env -u CPATH -u C_INCLUDE_PATH -u LIBRARY_PATH -u PKG_CONFIG_PATH -u CMAKE_PREFIX_PATH \
      -u LD_LIBRARY_PATH cmake "$@" )
}

cmake_files() {
  local d=$P/lib/cmake/cairn
  test -f "$d/cairnConfig.cmake" && test -f "$d/cairnConfigVersion.cmake" || { echo "not installed:"; ls -lR "$P/lib"; return 1; }
  grep -qF "\"$P\"" "$d/cairnConfig.cmake" || { echo "cairnConfig.cmake does not name $P:"; cat "$d/cairnConfig.cmake"; return 1; }
  grep -qF "\"$version\"" "$d/cairnConfigVersion.cmake" || { cat "$d/cairnConfigVersion.cmake"; return 1; }
}
check "cmake: make install wrote lib/cmake/cairn/cairnConfig.cmake (prefix <tmp>/prefix) and cairnConfigVersion.cmake ($version)" cmake_files

cm_configure() {
  cmake_app -S . -B build -DCMAKE_PREFIX_PATH="$P" -DCAIRN_WANT="$version" -DWITH_FORTRAN=$cm_fortran \
    -DCMAKE_BUILD_TYPE=Release "${cm_flags[@]}" >"$cm/configure.log" 2>&1 || { tail -n 30 "$cm/configure.log"; return 1; }
  # The targets' paths come from the installed package, none from the source tree.
  ! grep -rlF "$tree" "$cm/build" --include='*.make' --include='*.txt' --include='*.cmake' ||
    { echo "the build names the source tree"; return 1; }
}
check "cmake: an application project outside the tree, -DCMAKE_PREFIX_PATH=<prefix>, finds cairn $version (COMPONENTS fti scr veloc, fortran: $cm_fortran)" cm_configure
check "  ... builds prog.c and an FTI, SCR and VeloC program against cairn::<target> and cairn::<target>_static" \
  cmake_app --build build -j 2
cm_ldd() {
  local b=$cm/build p
  for p in prog fti scr veloc; do
    ldd "$b/${p}_shared" >"$cm/ldd.txt" || return 1
    grep -q "libcairn.so.$major => $P/lib/libcairn.so.$major " "$cm/ldd.txt" || { echo "${p}_shared:"; cat "$cm/ldd.txt"; return 1; }
    [ "$p" = prog ] || grep -q "libcairn-$p.so.$major => $P/lib/libcairn-$p.so.$major " "$cm/ldd.txt" ||
      { echo "${p}_shared:"; cat "$cm/ldd.txt"; return 1; }
  done
  for p in prog fti scr veloc; do
    ldd "$b/${p}_static" >"$cm/ldd.txt" || return 1
    ! grep libcairn "$cm/ldd.txt" || { echo "${p}_static loads a libcairn"; return 1; }
  done
}
check "  ... ldd: the shared programs load libcairn(-LAYER).so.$major from <prefix>/lib (no LD_LIBRARY_PATH), the static ones no libcairn" cm_ldd

fresh cmake-shared; base=$CAIRN_BASE job=$CAIRN_JOB
check "  ... cairn::cairn: 4 ranks on 2 nodes checkpoint at level 1; a second run restarts, every byte equal" \
  two_runs "$cm/build/prog_shared"
fresh cmake-static; base=$CAIRN_BASE job=$CAIRN_JOB
check "  ... cairn::cairn_static: the same" two_runs "$cm/build/prog_static"

# layer_runs LAYER KIND: the layer's program writes a checkpoint on 4 ranks
# over 2 emulated nodes, then a second run restores and compares every byte.
# The layer's own configuration says everything (no CAIRN_* variable).
layer_runs() {
  local layer=$1 kind=$2 d prog args=()
  d=$(mktemp -d /dev/shm/cairn-cmake.XXXXXX); SCRATCH_DIRS+=("$d")
  prog=$cm/build/${layer}_$kind
  mkdir -p "$d/local" # the node-local directory, made by the site (SCR and VeloC make none)
  case $layer in
    fti)
      printf '[Basic]\nHead = 0\nNode_size = 2\nCkpt_dir = %s\nGlbl_dir = %s/global\nMeta_dir = %s/meta\n' "$d/local" "$d" "$d" >"$d/config.fti"
      printf 'Ckpt_L1 = 0\nCkpt_L2 = 0\nCkpt_L3 = 0\nCkpt_L4 = 0\nInline_L2 = 1\nInline_L3 = 1\nInline_L4 = 1\n' >>"$d/config.fti"
      printf 'Keep_last_ckpt = 1\nGroup_size = 4\nVerbosity = 3\n[Restart]\nFailure = 0\nExec_ID = XXXX\n[Advanced]\nLocal_test = 1\n' >>"$d/config.fti"
      args=("$d/config.fti") ;;
    veloc)
      printf 'scratch = %s\nec_interval = -1\njob.ranks_per_node = 2\n' "$d/local" >"$d/v.cfg"
      args=("$d/v.cfg") ;;
    scr) prog="env SCR_CACHE_BASE=$d/local SCR_PREFIX=$d SCR_COPY_TYPE=SINGLE SCR_FLUSH=0 CAIRN_RANKS_PER_NODE=2 $prog" ;;
  esac
  # shellcheck disable=SC2086 # prog is a command line
  ( cd "$d" && for v in $(compgen -e | grep '^CAIRN_' | grep -v '^CAIRN_LAUNCHER$'); do unset "$v"; done
    "$tree/scripts/mpirun.sh" 4 $prog write "${args[@]}" ) || { echo "$layer write failed"; return 1; }
  local n; for n in 0 1; do
    compgen -G "$d/local/cairn-*/*/node$n/gen-*" >/dev/null || { echo "no generation on node$n:"; find "$d" | head -n 30; return 1; }
  done
  # shellcheck disable=SC2086
  ( cd "$d" && for v in $(compgen -e | grep '^CAIRN_' | grep -v '^CAIRN_LAUNCHER$'); do unset "$v"; done
    "$tree/scripts/mpirun.sh" 4 $prog read "${args[@]}" ) || { echo "$layer read failed"; return 1; }
}
for l in fti scr veloc; do
  check "  ... cairn::$l: its program checkpoints on 4 ranks / 2 nodes, a second run restores every byte" layer_runs $l shared
  check "  ... cairn::${l}_static: the same" layer_runs $l static
done

if [ "$cm_fortran" = ON ]; then
  fresh cmake-fortran; base=$CAIRN_BASE job=$CAIRN_JOB
  check "  ... cairn::fortran (use cairn): 4 ranks on 2 nodes checkpoint, a second run restores every bit" \
    two_runs "$cm/build/fortran_shared"
  fresh cmake-fortran-static; base=$CAIRN_BASE job=$CAIRN_JOB
  check "  ... cairn::fortran_static: the same" two_runs "$cm/build/fortran_static"
else
  skip "cmake: cairn::fortran (no gfortran)"
fi

cm_refused() { # find_package(cairn <next major>) fails at configure time, saying why
  local out rc next=$((major + 1)).0
  out=$(cmake_app -S . -B build-next -DCMAKE_PREFIX_PATH="$P" -DCAIRN_WANT="$next" 2>&1); rc=$?
  [ "$rc" -ne 0 ] || { echo "configure asking for cairn $next succeeded"; return 1; }
  grep -q "$version" <<<"$out" || { echo "$out" | tail -n 20; return 1; }
}
check "cmake: find_package(cairn $((major + 1)).0) is refused: the installed $version is another major version" cm_refused

# cm_bad WANT PROJECT-LANGUAGES FIND-ARGS: a project that find_package cannot satisfy fails
# at configure time with a message matching WANT.
cm_bad() {
  local want=$1 d out rc; d=$(mktemp -d "$cm/bad.XXXXXX")
  printf 'cmake_minimum_required(VERSION 3.13)\nproject(bad %s)\nfind_package(cairn CONFIG REQUIRED %s)\n' "$2" "$3" >"$d/CMakeLists.txt"
  out=$(cmake_app -S "$d" -B "$d/build" -DCMAKE_PREFIX_PATH="$P" 2>&1); rc=$?
  [ "$rc" -ne 0 ] || { echo "configure succeeded"; return 1; }
  grep -q -- "$want" <<<"$out" || { echo "$out" | tail -n 20; return 1; }
}
check "cmake: COMPONENTS nosuch is refused, naming the components there are" \
  cm_bad "has no component 'nosuch' (it has: fti;scr;veloc;fortran)" C "COMPONENTS nosuch"
check "cmake: a project without C is refused, saying why (cairn.h includes <mpi.h>)" \
  cm_bad "need the C language enabled" NONE ""
