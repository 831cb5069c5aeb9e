"""cairn - Python binding of libcairn, the node-local multi-level checkpoint
store for MPI applications (include/cairn.h; ctypes, numpy, mpi4py).

    import numpy as np, cairn
    from mpi4py import MPI
    with cairn.Context(MPI.COMM_WORLD) as ctx:          # or cairn.init(comm, config)
        grid = np.zeros((rows, cols)); step = np.zeros(1, np.int64)
        ctx.protect("grid", grid); ctx.protect("step", step)
        try:
            ctx.restart()                                # restores grid and step in place
        except cairn.NoCheckpoint:                       # CAIRN_ENOENT: start fresh
            pass
        ...
        ctx.checkpoint(int(step[0]), cairn.LEVEL_PARTNER)

Arrays are protected in place: cairn keeps the address of the array's data
and writes restored values into it. protect() therefore takes only numpy
arrays that are C-contiguous and writeable, with a native byte order (anything
else raises InvalidArgument and changes nothing), and the context keeps a
reference to each protected array until it is unprotected, protected anew or
the context finalized, so the memory cannot be freed (nor resized) under cairn.
dtypes int8..uint64, float32 and float64 map to cairn's types, with the shape
as dims (C order; more than 3 dimensions are stored flat); any other dtype
without Python objects (bool, complex, float16, structured) is stored as
CAIRN_BYTE, nbytes long.

Every failing call raises a subclass of cairn.Error carrying .code (cairn.h's
negative code), .strerror and .errmsg (cairn_errmsg's detail). Collective
calls (init, checkpoint, restart, rebuild, generations, restart_query,
var_query, restart_var, need_checkpoint, finalize) must be made by every rank
of the communicator, in the same order. finalize() is collective too, so a
Context is never finalized behind the program's back: call it, or use the
Context as a context manager. Constants drop the CAIRN_ prefix (cairn.LATEST,
cairn.LEVEL_LOCAL, cairn.DOUBLE, cairn.EINVAL, ...).
"""
import collections
import ctypes
import operator
import os

import numpy as np

from . import _consts, _lib
from ._consts import *  # noqa: F401,F403 (the constants of cairn.h)

_C = _lib.Functions(*_lib.load())
LIBRARY = _C.path  # the libcairn in use

# cairn's own codes -> exception class names (an unlisted code raises Error)
_CLASS_NAMES = {
    "EINVAL": "InvalidArgument", "ENOMEM": "OutOfMemory", "ECONFIG": "ConfigError",
    "ENOTSUP": "NotSupported", "ENOENT": "NoCheckpoint", "ECORRUPT": "Corrupt",
    "EIO": "IOFailure", "ENOSPC": "NoSpace", "EMPI": "MPIFailure", "EUNSAFE": "UnsafePath",
    "EMISMATCH": "Mismatch", "ESTATE": "OutOfOrder", "EFORMAT": "FormatError", "ELOST": "Lost",
}


def strerror(code):
    """Name of error code CODE (cairn's own or -errno)."""
    return _C.cairn_strerror(int(code)).decode(errors="replace")


class Error(Exception):
    """A cairn call failed: .code (negative), .strerror, .errmsg."""

    def __init__(self, code, errmsg=""):
        self.code, self.strerror, self.errmsg = code, strerror(code), errmsg
        super().__init__("%s: %s" % (self.strerror, errmsg) if errmsg else self.strerror)


class SystemCallError(Error):
    """A system call failed: .code is -errno, .errno its errno."""

    def __init__(self, code, errmsg=""):
        super().__init__(code, errmsg)
        self.errno = -code


_BY_CODE = {}
for _name, _code, _msg in _consts.ERRORS:
    _bases = (Error, ValueError) if _name == "EINVAL" else (Error,)
    _cls = type(_CLASS_NAMES.get(_name, "Error" + _name), _bases,
                {"__doc__": "CAIRN_%s (%d): %s." % (_name, _code, _msg)})
    globals()[_cls.__name__] = _BY_CODE[_code] = _cls


def _error(code, errmsg=""):
    if code in _BY_CODE:
        return _BY_CODE[code](code, errmsg)
    return SystemCallError(code, errmsg) if -1000 < code < 0 else Error(code, errmsg)


def type_size(t):
    """Size in bytes of one element of cairn type T, 0 if unknown."""
    return int(_C.cairn_type_size(int(t)))


GenInfo = collections.namedtuple(
    "GenInfo", "id level nranks bytes parent base raw delta seconds label")
RestartPlan = collections.namedtuple(
    "RestartPlan", "status code id level rebuild nodes_lost raw label")


class VarInfo(collections.namedtuple(
        "VarInfo", "type count ndims dims bytes stored error_bound")):
    """A stored variable (var_query): allocate numpy.empty(info.shape, info.dtype)."""

    @property
    def dtype(self):
        return _DTYPE_OF.get(self.type, np.dtype(np.uint8))

    @property
    def shape(self):
        if self.type not in _DTYPE_OF:
            return (self.bytes,)
        return tuple(self.dims) if self.ndims > 0 else (self.count,)


_TYPE_OF = {np.dtype(t): c for t, c in (
    (np.int8, INT8), (np.uint8, UINT8), (np.int16, INT16), (np.uint16, UINT16),  # noqa: F405
    (np.int32, INT32), (np.uint32, UINT32), (np.int64, INT64), (np.uint64, UINT64),  # noqa: F405
    (np.float32, FLOAT), (np.float64, DOUBLE))}  # noqa: F405
_DTYPE_OF = {c: t for t, c in _TYPE_OF.items()}


def init(comm=None, config=None):
    """Collective. A Context over COMM (mpi4py's MPI.COMM_WORLD by default)."""
    return Context(comm, config)


class Context:
    """A cairn context (cairn_ctx) over an mpi4py communicator."""

    def __init__(self, comm=None, config=None):
        self._ptr, self._vars, self._msg = None, {}, ""
        if comm is None:
            from mpi4py import MPI
            comm = MPI.COMM_WORLD
        if isinstance(comm, int):
            handle = comm  # a Fortran handle already
        elif hasattr(comm, "py2f"):
            from mpi4py import MPI
            if not MPI.Is_initialized() or MPI.Is_finalized():  # py2f would abort
                raise _error(ESTATE, "init: MPI is not initialized")  # noqa: F405
            handle = comm.py2f()
        else:
            raise InvalidArgument(EINVAL, "init: comm must be an mpi4py communicator, "  # noqa: F405
                                  "not %s" % type(comm).__name__)
        cfg = None if config is None else os.fsencode(config)
        if cfg is not None and b"\0" in cfg:
            raise InvalidArgument(EINVAL, "init: the config path holds a NUL")  # noqa: F405
        ptr = ctypes.c_void_p()
        rc = _C.cairn_init_f(handle, cfg, ctypes.byref(ptr))
        if rc:
            raise _error(rc, _C.cairn_errmsg(None).decode(errors="replace"))
        self._ptr = ptr

    # ---- plumbing ----
    def _refuse(self, msg):
        self._msg = msg
        return _BY_CODE[EINVAL](EINVAL, msg)  # noqa: F405

    def _begin(self, what):
        self._msg = ""
        if self._ptr is None:
            raise self._refuse("%s: the context was finalized" % what)

    def _name(self, what, name):
        b = os.fsencode(name) if isinstance(name, (str, bytes)) else None
        if b is None or b"\0" in b:
            raise self._refuse("%s: the name must be a str or bytes without NUL, not %r"
                               % (what, name))
        return b

    def _id(self, what, x):
        try:
            v = operator.index(x)
        except TypeError:
            raise self._refuse("%s: the id must be an integer, not %r" % (what, x)) from None
        if not -2**63 <= v < 2**63:
            raise self._refuse("%s: id %d out of range" % (what, v))
        return v

    def _call(self, fname, *args):
        self._begin(fname[6:])
        f = getattr(_C, fname)
        if f is None:
            raise self._refuse_code(ENOTSUP, "%s: %s has no %s (an older libcairn)"  # noqa: F405
                                    % (fname[6:], _C.path, fname))
        rc = f(self._ptr, *args)
        if rc:
            raise _error(rc, self.errmsg())

    def _refuse_code(self, code, msg):
        self._msg = msg
        return _error(code, msg)

    def errmsg(self):
        """The last call's message ('' if it succeeded)."""
        if self._msg:
            return self._msg
        if self._ptr is None:
            return ""
        return _C.cairn_errmsg(self._ptr).decode(errors="replace")

    # ---- protected variables (local) ----
    def protect(self, name, array):
        """Protect numpy ARRAY in place under NAME (see the module's doc)."""
        self._begin("protect")
        nm = self._name("protect", name)
        where = "protect %r: " % name
        if not isinstance(array, np.ndarray):
            raise self._refuse(where + "not a numpy array (%s); cairn protects arrays in place"
                               % type(array).__name__)
        if not array.flags.c_contiguous:
            raise self._refuse(where + "the array is not C-contiguous (cairn keeps its address, "
                               "it never copies): protect numpy.ascontiguousarray(a) and keep it")
        if not array.flags.writeable:
            raise self._refuse(where + "the array is read-only (a restart writes into it)")
        dt = array.dtype
        if dt.hasobject:
            raise self._refuse(where + "dtype %s holds Python objects" % dt)
        if not dt.isnative:
            raise self._refuse(where + "dtype %s is not in the machine's byte order" % dt)
        ctype = _TYPE_OF.get(dt)
        if ctype is None:
            ctype, count, dims = BYTE, array.nbytes, ()  # noqa: F405
        else:
            count = array.size
            dims = array.shape if 1 <= array.ndim <= MAX_DIMS else ()  # noqa: F405
        cdims = (ctypes.c_size_t * MAX_DIMS)(*dims)  # noqa: F405
        self._call("cairn_protect", nm, ctypes.c_void_p(array.ctypes.data), ctype, count,
                   len(dims), cdims)
        self._vars[nm] = array

    def unprotect(self, name):
        nm = self._name("unprotect", name)
        self._call("cairn_unprotect", nm)
        self._vars.pop(nm, None)

    def protect_bound(self, name, bound):
        self._call("cairn_protect_bound", self._name("protect_bound", name), float(bound))

    def protect_bound_rel(self, name, rel_bound):
        self._call("cairn_protect_bound_rel", self._name("protect_bound_rel", name),
                   float(rel_bound))

    def protect_codec(self, name, codec=None):
        """CODEC None: back to the configured default."""
        c = None if codec is None else self._name("protect_codec", codec)
        self._call("cairn_protect_codec", self._name("protect_codec", name), c)

    def protect_hint(self, name, what):
        self._call("cairn_protect_hint", self._name("protect_hint", name), int(what))

    def protect_block(self, name, global_shape=(), start=(), count=()):
        """Declare NAME distributed: this rank holds the block START .. START +
        COUNT - 1 (per dimension, 0-based, C order as numpy's default) of a
        global array of shape GLOBAL_SHAPE, the block's elements in C order.
        Empty tuples make NAME not distributed again. A restart on another
        rank count (or node layout) then fills each rank's new block."""
        what = "protect_block"
        nm = self._name(what, name)
        self._begin(what)
        try:
            g, s, c = ([operator.index(x) for x in t] for t in (global_shape, start, count))
        except TypeError:
            raise self._refuse("%s %r: global_shape, start and count must be sequences of "
                               "integers" % (what, name)) from None
        nd = len(g)
        if len(s) != nd or len(c) != nd or nd > MAX_DIMS:  # noqa: F405
            raise self._refuse("%s %r: global_shape, start and count must have the same "
                               "length, at most %d (have %d, %d, %d)"
                               % (what, name, MAX_DIMS, nd, len(s), len(c)))  # noqa: F405
        if any(x < 0 or x >= 2**63 for x in g + s + c):
            raise self._refuse("%s %r: a negative or too large extent" % (what, name))
        arr = [(ctypes.c_size_t * MAX_DIMS)(*t) for t in (g, s, c)]  # noqa: F405
        self._call("cairn_protect_block", nm, nd, *arr)

    def protect_replicated(self, name):
        """Declare NAME replicated: a restart on another rank count gives every
        rank the copy rank 0 stored."""
        self._call("cairn_protect_replicated", self._name("protect_replicated", name))

    # ---- routed files (local) ----
    def route_file(self, name):
        """Route file NAME for the next checkpoint; returns its node-local path."""
        buf = ctypes.create_string_buffer(8192)
        self._call("cairn_route_file", self._name("route_file", name), buf, len(buf))
        return os.fsdecode(buf.value)

    def unroute_file(self, name):
        self._call("cairn_unroute_file", self._name("unroute_file", name))

    # ---- generations (collective) ----
    def checkpoint(self, id, level=LEVEL_LOCAL):  # noqa: F405
        self._call("cairn_checkpoint", self._id("checkpoint", id), int(level))

    def restart(self, id=LATEST):  # noqa: F405
        """Restore every protected array from generation ID; returns its id."""
        out = ctypes.c_long(-1)
        self._call("cairn_restart", self._id("restart", id), ctypes.byref(out))
        return out.value

    def rebuild(self, id=LATEST):  # noqa: F405
        out = ctypes.c_long(-1)
        self._call("cairn_rebuild", self._id("rebuild", id), ctypes.byref(out))
        return out.value

    def generations(self):
        """The complete generations, newest first, as GenInfo tuples."""
        n, count = 64, ctypes.c_int(0)
        while True:
            arr = (_lib.GenInfo_C * n)()
            self._call("cairn_generations", arr, n, ctypes.byref(count))
            if count.value <= n:
                break
            n = count.value  # every rank saw the same count: the retry is collective too
        return [GenInfo(g.id, g.level, g.nranks, g.bytes, g.parent, g.base, g.raw, g.delta,
                        g.seconds, g.label.decode(errors="replace")) for g in arr[:count.value]]

    def restart_query(self, max_id=LATEST):  # noqa: F405
        p = _lib.RestartPlan_C()
        self._call("cairn_restart_query", self._id("restart_query", max_id), ctypes.byref(p))
        return RestartPlan(p.status, p.code, p.id, p.level, p.rebuild, p.nodes_lost, p.raw,
                           p.label.decode(errors="replace"))

    def var_query(self, name, id=LATEST):  # noqa: F405
        v = _lib.VarInfo_C()
        self._call("cairn_var_query", self._id("var_query", id), self._name("var_query", name),
                   ctypes.byref(v))
        return VarInfo(v.type, v.count, v.ndims, tuple(v.dims[:max(v.ndims, 0)]), v.bytes,
                       v.stored, v.error_bound)

    def restart_var(self, name, id=LATEST):  # noqa: F405
        out = ctypes.c_long(-1)
        self._call("cairn_restart_var", self._id("restart_var", id),
                   self._name("restart_var", name), ctypes.byref(out))
        return out.value

    def label(self, text=None):
        """Local. Label the next checkpoint; None clears the label."""
        b = None if text is None else self._name("label", text)
        self._call("cairn_label", b)

    def need_checkpoint(self):
        """Count an iteration; the level of the checkpoint now due, 0 none."""
        level = ctypes.c_int(0)
        self._call("cairn_need_checkpoint", ctypes.byref(level))
        return level.value

    def finalize(self):
        """Collective. Free the context; protected arrays are released."""
        if self._ptr is None:
            return
        ptr, self._ptr, self._msg = self._ptr, None, ""
        self._vars.clear()
        rc = _C.cairn_finalize(ptr)
        if rc:
            raise _error(rc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.finalize()
        return False
