"""setup.py - the build step of `pip install .` for the Python package cairn
(bindings/python/cairn; pyproject.toml holds the rest). Besides the package's
own files the wheel gets two generated modules, as `make install` writes them:

  cairn/_consts.py   the constants of include/cairn.h, printed by
                     bindings/gen_consts.c compiled with $CC (default cc)
  cairn/_install.py  LIBDIR, the lib directory libcairn is loaded from first
                     (cairn/_lib.py): $CAIRN_PREFIX/lib when CAIRN_PREFIX is set
                     (it must hold libcairn.so.MAJOR, else the build fails
                     saying so), else the libdir `pkg-config cairn` gives when it
                     finds cairn.pc (PKG_CONFIG_PATH), else none is written and
                     the package relies on CAIRN_LIBRARY or the dynamic linker.

The version is CAIRN_VERSION_STRING of include/cairn.h. Setuptools' scratch
directories go to a temporary directory: the source tree is left as it was.
"""
import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile

from setuptools import setup
from setuptools.command.build_py import build_py

TREE = os.path.dirname(os.path.abspath(__file__))
HEADER = os.path.join(TREE, "include", "cairn.h")


def header_define(name, pattern):
    with open(HEADER, encoding="utf-8") as f:
        m = re.search(r"^#define %s %s$" % (name, pattern), f.read(), re.M)
    if not m:
        sys.exit("setup.py: %s defines no %s" % (HEADER, name))
    return m.group(1)


VERSION = header_define("CAIRN_VERSION_STRING", r'"([0-9]+\.[0-9]+\.[0-9]+)"')
MAJOR = header_define("CAIRN_VERSION_MAJOR", r"([0-9]+)")


def consts_py(scratch):
    """The text of cairn/_consts.py: bindings/gen_consts.c compiled and run."""
    exe = os.path.join(scratch, "gen_consts")
    cc = os.environ.get("CC") or "cc"
    cmd = [cc, "-std=c11", "-D_GNU_SOURCE", "-I" + os.path.join(TREE, "include"),
           os.path.join(TREE, "bindings", "gen_consts.c"), "-o", exe]
    try:
        subprocess.run(cmd, check=True)
        return subprocess.run([exe, "python"], check=True, stdout=subprocess.PIPE).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("setup.py: cannot build bindings/gen_consts.c with %s (set CC to a C compiler): %s" % (cc, e))


def libdir():
    """Where libcairn is installed, or None (see the module's docstring)."""
    lib = "libcairn.so." + MAJOR
    prefix = os.environ.get("CAIRN_PREFIX")
    if prefix:
        d = os.path.join(os.path.normpath(prefix), "lib")
        if not os.path.isabs(prefix) or not os.path.isfile(os.path.join(d, lib)):
            sys.exit("setup.py: CAIRN_PREFIX=%s: no %s in %s; give the absolute PREFIX cairn was "
                     "installed with (make install PREFIX=...)" % (prefix, lib, d))
        return d
    try:
        out = subprocess.run(["pkg-config", "--variable=libdir", "cairn"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=True).stdout.decode().strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return out if out and os.path.isfile(os.path.join(out, lib)) else None


class BuildPy(build_py):
    """build_py, then the generated modules beside the package's files."""

    def run(self):
        super().run()
        pkg = os.path.join(self.build_lib, "cairn")
        scratch = tempfile.mkdtemp(prefix="cairn-gen.")
        try:
            text = consts_py(scratch)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        with open(os.path.join(pkg, "_consts.py"), "wb") as f:
            f.write(text)
        d = libdir()
        install = os.path.join(pkg, "_install.py")
        if d is None:
            if os.path.exists(install):
                os.remove(install)
            print("setup.py: no CAIRN_PREFIX and no cairn.pc: the package will find libcairn by "
                  "CAIRN_LIBRARY or the dynamic linker's search")
            return
        if '"' in d or "\\" in d:
            sys.exit("setup.py: cannot record the lib directory %r" % d)
        with open(install, "w", encoding="utf-8") as f:
            f.write('"""Written by pip install (setup.py): where libcairn was installed."""\n'
                    'LIBDIR = "%s"\n' % d)
        print("setup.py: the package loads libcairn from %s" % d)


SCRATCH = tempfile.mkdtemp(prefix="cairn-setup.")
atexit.register(shutil.rmtree, SCRATCH, True)
setup(version=VERSION, cmdclass={"build_py": BuildPy},
      options={"build": {"build_base": os.path.join(SCRATCH, "build")},
               "egg_info": {"egg_base": SCRATCH}})
