"""cairn._lib - libcairn through ctypes: where the library is found, the C
structs of cairn.h and the prototype of every function. Internal to the
package cairn, which owns the only handle to the loaded library.

The library is the first of these that loads:
  1. $CAIRN_LIBRARY, a path (then nothing else is tried);
  2. libcairn.so.0, then libcairn.so, in the lib directory recorded in
     cairn/_install.py: by `make install` (its PREFIX), or by `pip install`
     (CAIRN_PREFIX, else pkg-config's cairn.pc; setup.py);
  3. libcairn.so.0 by the dynamic linker's search (LD_LIBRARY_PATH, ldconfig);
  4. ctypes.util.find_library("cairn").
A function the loaded library lacks (an older libcairn) raises
cairn.NotSupported naming it when called; the others work.
"""
import ctypes
import ctypes.util
import os
from ctypes import POINTER, c_char, c_char_p, c_double, c_int, c_long, c_size_t, c_uint64, c_void_p

from . import _consts


class GenInfo_C(ctypes.Structure):
    _fields_ = [("id", c_long), ("level", c_int), ("nranks", c_int), ("bytes", c_uint64),
                ("parent", c_long), ("base", c_long), ("raw", c_uint64), ("delta", c_uint64),
                ("seconds", c_double), ("label", c_char * (_consts.LABEL_MAX + 1))]


class RestartPlan_C(ctypes.Structure):
    _fields_ = [("status", c_int), ("code", c_int), ("id", c_long), ("level", c_int),
                ("rebuild", c_int), ("nodes_lost", c_int), ("raw", c_uint64),
                ("label", c_char * (_consts.LABEL_MAX + 1))]


class VarInfo_C(ctypes.Structure):
    _fields_ = [("type", c_int), ("count", c_size_t), ("ndims", c_int),
                ("dims", c_size_t * _consts.MAX_DIMS), ("bytes", c_size_t), ("stored", c_uint64),
                ("error_bound", c_double)]


# name: (restype, argtypes). MPI_Fint is a C int in Open MPI and MPICH alike.
PROTOTYPES = {
    "cairn_type_size": (c_size_t, [c_int]),
    "cairn_init_f": (c_int, [c_int, c_char_p, POINTER(c_void_p)]),
    "cairn_protect": (c_int, [c_void_p, c_char_p, c_void_p, c_int, c_size_t, c_int,
                              POINTER(c_size_t)]),
    "cairn_unprotect": (c_int, [c_void_p, c_char_p]),
    "cairn_protect_bound": (c_int, [c_void_p, c_char_p, c_double]),
    "cairn_protect_bound_rel": (c_int, [c_void_p, c_char_p, c_double]),
    "cairn_protect_codec": (c_int, [c_void_p, c_char_p, c_char_p]),
    "cairn_protect_hint": (c_int, [c_void_p, c_char_p, c_int]),
    "cairn_protect_block": (c_int, [c_void_p, c_char_p, c_int, POINTER(c_size_t),
                                    POINTER(c_size_t), POINTER(c_size_t)]),
    "cairn_protect_replicated": (c_int, [c_void_p, c_char_p]),
    "cairn_route_file": (c_int, [c_void_p, c_char_p, POINTER(c_char), c_size_t]),
    "cairn_unroute_file": (c_int, [c_void_p, c_char_p]),
    "cairn_checkpoint": (c_int, [c_void_p, c_long, c_int]),
    "cairn_restart": (c_int, [c_void_p, c_long, POINTER(c_long)]),
    "cairn_rebuild": (c_int, [c_void_p, c_long, POINTER(c_long)]),
    "cairn_generations": (c_int, [c_void_p, POINTER(GenInfo_C), c_int, POINTER(c_int)]),
    "cairn_restart_query": (c_int, [c_void_p, c_long, POINTER(RestartPlan_C)]),
    "cairn_var_query": (c_int, [c_void_p, c_long, c_char_p, POINTER(VarInfo_C)]),
    "cairn_restart_var": (c_int, [c_void_p, c_long, c_char_p, POINTER(c_long)]),
    "cairn_label": (c_int, [c_void_p, c_char_p]),
    "cairn_need_checkpoint": (c_int, [c_void_p, POINTER(c_int)]),
    "cairn_finalize": (c_int, [c_void_p]),
    "cairn_strerror": (c_char_p, [c_int]),
    "cairn_errmsg": (c_char_p, [c_void_p]),
}


def _candidates():
    explicit = os.environ.get("CAIRN_LIBRARY")
    if explicit:
        yield explicit
        return
    try:
        from . import _install  # written by `make install`
        for name in ("libcairn.so.0", "libcairn.so"):
            path = os.path.join(_install.LIBDIR, name)
            if os.path.exists(path):
                yield path
    except ImportError:
        pass
    yield "libcairn.so.0"
    found = ctypes.util.find_library("cairn")
    if found:
        yield found


def load():
    """(CDLL, path) of the first libcairn that loads; ImportError saying
    what was tried otherwise."""
    tried = []
    for cand in _candidates():
        try:
            return ctypes.CDLL(cand), cand
        except OSError as e:
            tried.append(str(e))
    raise ImportError("cairn: cannot load libcairn (tried: %s); set CAIRN_LIBRARY to its path "
                      "or LD_LIBRARY_PATH to its directory, or install this package again "
                      "with CAIRN_PREFIX set to the prefix cairn was installed with"
                      % "; ".join(tried))


class Functions:
    """The C functions of cairn.h, prototyped; a missing one is None."""

    def __init__(self, lib, path):
        self.path = path
        for name, (restype, argtypes) in PROTOTYPES.items():
            try:
                f = getattr(lib, name)
            except AttributeError:
                setattr(self, name, None)
                continue
            f.restype, f.argtypes = restype, argtypes
            setattr(self, name, f)
