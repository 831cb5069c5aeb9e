#!/usr/bin/env bash
# run_python.sh - the Python binding (package cairn, bindings/python), as
# installed: `make install` into a scratch prefix, PYTHONPATH set to the
# directory bindings/python/sitedir.py names for it. Debian's python3 with
# python3-numpy and python3-mpi4py (CAIRN_PYTHON overrides). The ctypes
# layouts against the C structs; init before MPI; every method and refusal
# (test_api.py); the numpy heat stencil (test_heat.py) on 4 ranks over 2 and
# 4 emulated nodes crashed (a rank SIGKILLs itself after a checkpoint returned,
# so that generation is complete), nodes wiped, restored into fresh arrays and
# compared byte for byte with an uninterrupted run, every rank's state.
# Under CAIRN_SANITIZE the library is ASan-built: libasan is preloaded.
# Sourced by tests/run.sh (section python; uses check, fresh, run_grep).

PY=${CAIRN_PYTHON:-/usr/bin/python3}
P_OUT=$(mktemp -d /dev/shm/cairn-python.XXXXXX); SCRATCH_DIRS+=("$P_OUT")
P_PREFIX=$(mktemp -d /dev/shm/cairn-pyprefix.XXXXXX); SCRATCH_DIRS+=("$P_PREFIX")

if ldd "$BUILD/libcairn.so" 2>/dev/null | grep libmpich >/dev/null; then
  # Debian's python3-mpi4py is built for Open MPI, the default MPI: it cannot
  # share a process with a libcairn built with MPICH (make check-mpich).
  skip "the Python binding: python3-mpi4py is built for Open MPI, this libcairn for MPICH"
  return 0
fi
check "python: make install puts the package cairn under the prefix, recording the lib directory" \
  bash -c "make -s install PREFIX='$P_PREFIX' BUILD='$BUILD' >/dev/null &&
           site=\$('$PY' bindings/python/sitedir.py '$P_PREFIX') &&
           test -f \"\$site/cairn/__init__.py\" && test -f \"\$site/cairn/_consts.py\" &&
           grep -q 'LIBDIR = \"$P_PREFIX/lib\"' \"\$site/cairn/_install.py\""
PYTHONPATH=$("$PY" bindings/python/sitedir.py "$P_PREFIX")
export PYTHONPATH
p_env=()
if [ -n "${CAIRN_SANITIZE:-}" ]; then
  p_env=(LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)")
fi
py() { env "${p_env[@]}" "$PY" "$@"; }
pympi() { env "${p_env[@]}" scripts/mpirun.sh "$@"; }

# p_crashed PATTERN CMD...: CMD must fail (a rank was killed) and print PATTERN.
p_crashed() {
  local pat=$1 out rc; shift; out=$(mktemp)
  "$@" >"$out" 2>&1; rc=$?
  if [ "$rc" -eq 0 ] || ! grep -Eq -- "$pat" "$out"; then
    echo "p_crashed: exit status $rc (want non-zero), pattern '$pat', from: $*"; tail -n 20 "$out"
    rm -f "$out"; return 1
  fi
  rm -f "$out"
}
# p_same NAME: every rank's final state equals the reference's, byte for byte.
p_same() { local r; for r in 0 1 2 3; do cmp "$P_OUT/ref.$r" "$P_OUT/$1.$r" || return 1; done; }
# p_scenario NAME LEVEL CRASH_AT WIPE RESTORED: crash rank 2 after step CRASH_AT,
# wipe the nodes in WIPE, restart (fresh arrays), expect generation RESTORED.
p_scenario() {
  local name=$1 level=$2 at=$3 wipe=$4 restored=$5
  fresh "p-$name"
  p_crashed "rank 2 crashing after step $at" pympi 4 "$PY" tests/python/test_heat.py \
    --level "$level" --crash-at "$at" --crash-rank 2 || return 1
  # shellcheck disable=SC2086
  [ -z "$wipe" ] || wipe_nodes $wipe
  run_grep "restarted from generation $restored, extras bit-exact" \
    pympi 4 "$PY" tests/python/test_heat.py --level "$level" --restart --out "$P_OUT/$name" || return 1
  p_same "$name"
}

p_layout() {
  "$BUILD/gen_consts" layout >"$P_OUT/layout.c" && py tests/python/test_api.py --layout >"$P_OUT/layout.py" &&
    diff "$P_OUT/layout.c" "$P_OUT/layout.py"
}
check "python: ctypes structs match the C structs (sizes, every field's offset)" p_layout
check "python: a library that cannot be loaded is an ImportError naming what was tried" \
  run_grep_rc 1 'cannot load libcairn .*/nonexistent/libcairn.so' \
  env CAIRN_LIBRARY=/nonexistent/libcairn.so "$PY" -c 'import cairn'
check "python: init before MPI is initialized raises OutOfOrder (mpi4py comm and Fortran handle)" \
  py tests/python/test_api.py --uninit

export CAIRN_RANKS_PER_NODE=2
fresh p-api
check "python: every method against the library; refusals raise InvalidArgument, change nothing" \
  run_grep '^test_api: [0-9]+ checks, 0 failed' \
  env CAIRN_CKPT_EVERY_1=3 "${p_env[@]}" scripts/mpirun.sh 4 "$PY" tests/python/test_api.py

fresh p-ref
check "python heat: an uninterrupted run, 4 ranks (the reference state)" \
  run_grep '^test_heat: done at step 40' pympi 4 "$PY" tests/python/test_heat.py --out "$P_OUT/ref"
check "python heat level 1: rank 2 killed after step 20, restored from 16 into fresh arrays, bit-exact" \
  p_scenario l1 1 20 "" 16
check "python heat level 2: crash, node 1 wiped, restored from the partner copy, bit-exact" \
  p_scenario l2 2 27 "1" 24
export CAIRN_RANKS_PER_NODE=1 CAIRN_SET_SIZE=4 CAIRN_EC_M=2
check "python heat level 3: 4 nodes, crash, nodes 0 and 2 wiped, rebuilt by decoding, bit-exact" \
  p_scenario l3 3 33 "0 2" 32
unset CAIRN_SET_SIZE CAIRN_EC_M CAIRN_RANKS_PER_NODE

# Restart on another rank count (protect_block, protect_replicated).
export CAIRN_RANKS_PER_NODE=2
fresh p-remap
check "python remap: 4 ranks on 2 nodes save 2 generations at level 1 (2-D and 1-D blocks, a replicated step)" \
  run_grep '^test_remap: ok save' pympi 4 "$PY" tests/python/test_remap.py save 1
check "  ... protect_block refusals raise InvalidArgument and keep the blocks declared; 4 -> 3 ranks, bit-exact" \
  run_grep '^test_remap: ok refuse' pympi 3 "$PY" tests/python/test_remap.py refuse
p_remap4() {
  run_grep '^test_remap: ok save' pympi 4 "$PY" tests/python/test_remap.py save 4 &&
    wipe_nodes 0 1 && run_grep '^test_remap: ok restore' pympi 6 "$PY" tests/python/test_remap.py restore
}
fresh_pfs p-remap4
check "python remap: 4 ranks save at level 4; every node wiped; 4 -> 6 ranks from the PFS, bit-exact" p_remap4
unset CAIRN_RANKS_PER_NODE CAIRN_PFS_DIR

# pip: the package installed from the source tree (pyproject.toml at the top) into a
# virtual environment that sees Debian's numpy and mpi4py (--system-site-packages),
# offline (--no-index, --no-build-isolation: setuptools from Debian). CAIRN_PREFIX
# names the cairn install whose lib directory the package records; nothing else
# (no PYTHONPATH, LD_LIBRARY_PATH or CAIRN_LIBRARY) points at cairn afterwards.
V=$(mktemp -d /tmp/cairn-venv.XXXXXX); SCRATCH_DIRS+=("$V")
p_tree=$PWD
vpy() { env -u PYTHONPATH -u LD_LIBRARY_PATH -u CAIRN_LIBRARY "${p_env[@]}" "$V/bin/python" "$@"; }
pip_in() { # pip_in [ENV...]: pip install this tree into the venv, in place of an earlier install
  ( cd "$V" && export -n PYTHONPATH PKG_CONFIG_PATH && "$V/bin/python" -m pip uninstall -y -q cairn >/dev/null 2>&1
    env "$@" "$V/bin/python" -m pip install --no-index --no-build-isolation --no-cache-dir \
      --disable-pip-version-check "$p_tree" )
}
check "pip: python3 -m venv --system-site-packages (offline)" "$PY" -m venv --system-site-packages "$V"
pip_refused() { # a CAIRN_PREFIX without libcairn: pip fails naming it, nothing installed
  local out rc
  out=$(pip_in CAIRN_PREFIX="$V/no-cairn" 2>&1); rc=$?
  [ "$rc" -ne 0 ] || { echo "pip install with CAIRN_PREFIX=$V/no-cairn succeeded"; return 1; }
  grep -q "CAIRN_PREFIX=$V/no-cairn: no libcairn.so" <<<"$out" || { echo "$out" | tail -n 20; return 1; }
  ! vpy -c 'import cairn' 2>/dev/null || { echo "cairn is importable in the venv"; return 1; }
}
check "pip: CAIRN_PREFIX naming no cairn install is refused, saying why; nothing installed" pip_refused
check "pip: CAIRN_PREFIX=<prefix> pip install --no-index --no-build-isolation <tree>" pip_in CAIRN_PREFIX="$P_PREFIX"
pip_where() { # the venv's python imports the venv's package, over the prefix's libcairn
  local out; out=$(cd "$V" && vpy -c 'import cairn, cairn._lib as l; print(cairn.__file__); print(l.load()[1]); print(cairn.VERSION_STRING)') || return 1
  grep -qx "$V/lib/python3[.0-9]*/site-packages/cairn/__init__.py" <<<"$out" &&
    grep -qx "$P_PREFIX/lib/libcairn.so.0" <<<"$out" &&
    grep -qx "$(sed -n 's/^#define CAIRN_VERSION_STRING "\(.*\)"/\1/p' include/cairn.h)" <<<"$out" || { echo "$out"; return 1; }
}
check "  ... import cairn: the venv's package, libcairn.so.0 from <prefix>/lib, the version of cairn.h" pip_where
export CAIRN_RANKS_PER_NODE=2
pip_heat() { # the heat stencil of the checks above, from the venv: crash, restore, same bytes
  local PY=$V/bin/python p_env=(-u PYTHONPATH -u LD_LIBRARY_PATH "${p_env[@]}")
  p_scenario pip 1 20 "" 16
}
check "  ... the venv's python under mpirun, 4 ranks on 2 nodes: heat killed after step 20, restored from 16, bit-exact" pip_heat
unset CAIRN_RANKS_PER_NODE
pip_unfound() { # installed with no prefix known: import fails saying how to point at libcairn
  pip_in PKG_CONFIG_LIBDIR="$V/none" >/dev/null 2>&1 || { echo "pip install without CAIRN_PREFIX failed"; return 1; }
  run_grep_rc 1 'cannot load libcairn .*CAIRN_LIBRARY.*CAIRN_PREFIX' vpy -c 'import cairn' &&
    env -u PYTHONPATH -u LD_LIBRARY_PATH CAIRN_LIBRARY="$P_PREFIX/lib/libcairn.so.0" "${p_env[@]}" "$V/bin/python" -c 'import cairn'
}
if /sbin/ldconfig -p | grep -q 'libcairn\.so\.0 '; then
  skip "pip: a package that cannot find libcairn (the loader finds one here: $(/sbin/ldconfig -p | grep -m1 'libcairn\.so\.0 '))"
else
  check "  ... installed without CAIRN_PREFIX (no cairn.pc found): import says how to find libcairn; CAIRN_LIBRARY does" pip_unfound
fi
pip_pc() { pip_in PKG_CONFIG_PATH="$P_PREFIX/lib/pkgconfig" >/dev/null && pip_where; }
check "  ... installed with PKG_CONFIG_PATH=<prefix>/lib/pkgconfig instead of CAIRN_PREFIX: cairn.pc's libdir recorded" pip_pc
