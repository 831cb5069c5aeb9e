#!/usr/bin/env bash
# run_install.sh - `make install` seen from outside the tree. Installs what
# $BUILD holds into a temporary prefix, checks the layout (libcairn.so.X.Y.Z,
# its SONAME link libcairn.so.X, libcairn.so, cairn.pc written with that
# prefix), then, in a directory of its own with nothing but pkg-config pointing
# at the prefix, builds tests/install/prog.c against the shared library and
# against libcairn.a, and runs each on 4 ranks over 2 emulated nodes: a
# checkpoint, then a second run that restarts and compares every byte (the
# program exits 1 on any difference). Also a DESTDIR install (the staging
# directory appears in no installed file), a refused PREFIX, and uninstall.
# The CMake package is tested by tests/install/run_cmake.sh, sourced from here.
# Sourced by tests/run.sh as section `install` (check, fresh, SCRATCH_DIRS).

inst=$(mktemp -d /tmp/cairn-install.XXXXXX); SCRATCH_DIRS+=("$inst")
P=$inst/prefix
tree=$PWD
version=$(sed -n 's/^#define CAIRN_VERSION_STRING "\(.*\)"/\1/p' include/cairn.h)
major=${version%%.*}
san=(); [ -n "${CAIRN_SANITIZE:-}" ] && san=(-fsanitize=address,undefined) # the installed library is instrumented
mk() { make -s --no-print-directory BUILD="$BUILD" "$@"; }
pc() { env -u PKG_CONFIG_LIBDIR PKG_CONFIG_PATH="$P/lib/pkgconfig" pkg-config "$@"; }
# app ARGS...: run with no CAIRN_* setting of the other sections, as a user would
app() {
  ( for v in $(compgen -e | grep '^CAIRN_' | grep -v '^CAIRN_LAUNCHER$'); do unset "$v"; done
    export CAIRN_BASE="$base" CAIRN_JOB="$job" CAIRN_RANKS_PER_NODE=2
    "$@" )
}

check "make install PREFIX=<tmp>/prefix" mk install PREFIX="$P"

install_layout() {
  local lib=$P/lib
  test -f "$lib/libcairn.so.$version" && ! test -L "$lib/libcairn.so.$version" || { echo "no file libcairn.so.$version"; ls -l "$lib"; return 1; }
  test "$(readlink "$lib/libcairn.so.$major")" = "libcairn.so.$version" || { echo "libcairn.so.$major is not a link to libcairn.so.$version"; ls -l "$lib"; return 1; }
  test "$(readlink -f "$lib/libcairn.so")" = "$(readlink -f "$lib/libcairn.so.$version")" || { echo "libcairn.so does not lead to libcairn.so.$version"; ls -l "$lib"; return 1; }
  readelf -d "$lib/libcairn.so.$version" | grep -q "SONAME.*\[libcairn.so.$major\]" || { echo "SONAME is not libcairn.so.$major"; return 1; }
  test -f "$lib/libcairn.a" && test -f "$P/include/cairn.h" && test -x "$P/bin/cairn" && test -f "$P/share/man/man1/cairn.1"
}
check "  ... libcairn.so.$version, its SONAME link libcairn.so.$major and libcairn.so; libcairn.a, cairn.h, cairn, man page" install_layout

pc_fields() {
  grep -qx "prefix=$P" "$P/lib/pkgconfig/cairn.pc" || { echo "cairn.pc:"; cat "$P/lib/pkgconfig/cairn.pc"; return 1; }
  test "$(pc --modversion cairn)" = "$version" || return 1
  test "$(pc --cflags cairn | xargs)" = "-I$P/include" || { echo "cflags: $(pc --cflags cairn)"; return 1; }
  test "$(pc --libs cairn | xargs)" = "-L$P/lib -lcairn" || { echo "libs: $(pc --libs cairn)"; return 1; }
  local s l; s=" $(pc --static --libs cairn | xargs) "
  for l in -lcairn -lxxhash -linih -lpmem -lJerasure -lgf_complete -lisal -lz -lzstd -llz4 -lfpzip -lpthread -lm; do
    case $s in *" $l "*) ;; *) echo "pkg-config --static --libs cairn lacks $l: $s"; return 1 ;; esac
  done
  # A module in Requires.private brings its own flags: its libraries are not in Libs.private too.
  local priv r; priv=" $(sed -n 's/^Libs.private://p' "$P/lib/pkgconfig/cairn.pc") "
  for r in $(pc --print-requires-private cairn | awk '{print $1}'); do
    for l in $(pkg-config --libs-only-l "$r"); do
      case $priv in *" $l "*) echo "$l is in Libs.private and in Requires.private ($r)"; return 1 ;; esac
    done
  done
}
check "  ... cairn.pc says prefix=<tmp>/prefix; --cflags, --libs, --static --libs name everything libcairn.a needs, once" pc_fields

# The application, out of the tree: its own directory, only pkg-config's flags.
a=$inst/app; mkdir -p "$a"; cp tests/install/prog.c "$a/"
build_app() { # build_app OUT LINK-FLAGS...: compile $a/prog.c there
  local out=$1; shift
  local cf; cf=$(pc --cflags cairn) || return 1
  case "$cf $*" in *"$tree"*) echo "flags point into the source tree: $cf $*"; return 1 ;; esac
  ( cd "$a" && env -u CPATH -u C_INCLUDE_PATH -u LIBRARY_PATH mpicc "${san[@]}" $cf prog.c -o "$out" "$@" )
}
shared_ldd() { # the shared program names libcairn.so.MAJOR, found in the prefix
  LD_LIBRARY_PATH=$P/lib ldd "$a/prog_shared" | grep "libcairn.so.$major => $P/lib/libcairn.so.$major " >/dev/null ||
    { LD_LIBRARY_PATH=$P/lib ldd "$a/prog_shared"; return 1; }
}
check "shared: mpicc \$(pkg-config --cflags cairn) prog.c \$(pkg-config --libs cairn), outside the tree" \
  build_app prog_shared $(pc --libs cairn)
check "  ... ldd: libcairn.so.$major => <tmp>/prefix/lib/libcairn.so.$major (LD_LIBRARY_PATH=<prefix>/lib)" shared_ldd

two_runs() { # two_runs PROGRAM [ENV...]: checkpoint on 4 ranks / 2 nodes, then restart and compare
  local prog=$1; shift
  app env "$@" scripts/mpirun.sh 4 "$prog" write || return 1
  test -d "$(gen_dir 0 1)" && test -d "$(gen_dir 1 1)" || { echo "generation 1 is not on node0 and node1"; return 1; }
  app env "$@" scripts/mpirun.sh 4 "$prog" read
}
fresh install-shared; base=$CAIRN_BASE job=$CAIRN_JOB
check "  ... 4 ranks on 2 nodes checkpoint at level 1; a second run restarts, every byte equal" \
  two_runs "$a/prog_shared" LD_LIBRARY_PATH="$P/lib"

# libcairn.a into an otherwise dynamic program (Debian's MPI ships no libmpi.a,
# so -static cannot be): -Bstatic picks the archive for the first -lcairn;
# pkg-config's own -lcairn then has nothing left to resolve and --as-needed
# keeps libcairn.so out of the program.
check "static: mpicc ... -Wl,--as-needed -Wl,-Bstatic -lcairn -Wl,-Bdynamic \$(pkg-config --static --libs cairn)" \
  build_app prog_static -Wl,--as-needed -Wl,-Bstatic -lcairn -Wl,-Bdynamic $(pc --static --libs cairn)
static_ldd() {
  ldd "$a/prog_static" >"$a/ldd.txt" || return 1
  ! grep -q libcairn "$a/ldd.txt" || { cat "$a/ldd.txt"; return 1; }
}
check "  ... ldd names no libcairn" static_ldd
check "  ... every object of libcairn.a links with only what pkg-config --static names" \
  build_app prog_whole -Wl,--whole-archive "$P/lib/libcairn.a" -Wl,--no-whole-archive $(pc --static --libs cairn)
fresh install-static; base=$CAIRN_BASE job=$CAIRN_JOB
check "  ... 4 ranks on 2 nodes checkpoint at level 1; a second run restarts, every byte equal" \
  two_runs "$a/prog_static" -u LD_LIBRARY_PATH

# The CMake package, from a CMake project outside the tree.
source tests/install/run_cmake.sh

# DESTDIR: files land under the staging directory, which no installed file names.
stage=$inst/stage dest=/opt/cairn-install-test-$$
destdir_install() {
  mk install DESTDIR="$stage" PREFIX="$dest" || return 1
  test -f "$stage$dest/lib/libcairn.so.$version" && test -L "$stage$dest/lib/libcairn.so.$major" || { echo "not staged"; return 1; }
  grep -qx "prefix=$dest" "$stage$dest/lib/pkgconfig/cairn.pc" || { cat "$stage$dest/lib/pkgconfig/cairn.pc"; return 1; }
  grep -qF "set(_cairn_prefix \"$dest\")" "$stage$dest/lib/cmake/cairn/cairnConfig.cmake" ||
    { cat "$stage$dest/lib/cmake/cairn/cairnConfig.cmake"; return 1; }
  ! test -e "$dest" || { echo "$dest was written outside DESTDIR"; return 1; }
  local hits; hits=$(grep -rlF "$stage" "$stage")
  [ -z "$hits" ] || { echo "these installed files name the staging directory: $hits"; return 1; }
}
check "make install DESTDIR=<tmp>/stage PREFIX=/opt/...: staged, cairn.pc and cairnConfig.cmake say /opt/..., no file names the stage" destdir_install

refused() { # refused PREFIX WHERE: a PREFIX that would write a broken cairn.pc; WHERE stays absent
  local out rc
  SCRATCH_DIRS+=("$2") # should an old Makefile write there after all
  out=$(cd "$inst" && make -s --no-print-directory -C "$tree" BUILD="$BUILD" install PREFIX="$1" 2>&1); rc=$?
  [ "$rc" -ne 0 ] || { echo "install with PREFIX='$1' succeeded"; return 1; }
  grep -q "PREFIX must be an absolute path" <<<"$out" || { echo "$out"; return 1; }
  ! test -e "$2" || { echo "$2 was written"; return 1; }
}
check "make install PREFIX=rel/dir: refused, says why, writes nothing" refused "rel-$$/dir" "$tree/rel-$$"
check "make install PREFIX='/x /y' (a space): refused, says why, writes nothing" refused "$inst/x $inst/y" "$inst/x"

uninstalled() {
  mk uninstall PREFIX="$P" || return 1
  local left; left=$(find "$P" ! -type d)
  [ -z "$left" ] || { echo "left behind: $left"; return 1; }
}
check "make uninstall PREFIX=<tmp>/prefix removes every installed file" uninstalled
