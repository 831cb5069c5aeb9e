"""test_api.py - every method of cairn.Context against the real library
(tests/python/run_python.sh runs it under mpirun: 4 ranks on 2 emulated
nodes, CAIRN_CKPT_EVERY_1=3), and what the binding refuses.

  (no option)  the API: protect/restart round trips of several dtypes and
               shapes from two generations, bit for bit; refusals (a
               non-contiguous, read-only, Fortran-ordered, non-native or
               object array, a non-array, bad names and ids) raise
               InvalidArgument with a clear message and change nothing; the
               library's own errors raise the subclass of their code; routed
               files, labels, generations, restart_query, var_query (into
               fresh arrays), restart_var, need_checkpoint, finalize.
  --layout     print the ctypes structs' layout as `gen_consts layout` does
  --uninit     init before MPI is initialized raises OutOfOrder (no mpirun)
Prints "not ok - ..." per failed check and "test_api: N checks, F failed"
on rank 0; exit status 0 only if every check passed on every rank.
"""
import gc
import os
import sys

import numpy as np

if sys.argv[1:] == ["--uninit"]:
    import mpi4py
    mpi4py.rc.initialize = False
    mpi4py.rc.finalize = False
    import cairn
    ok = 0
    for comm in (None, 0):  # mpi4py's COMM_WORLD; a Fortran handle (C checks)
        try:
            cairn.Context(comm)
        except cairn.OutOfOrder as e:
            ok += e.code == cairn.ESTATE and "not initialized" in e.errmsg
            print("test_api: init(%r) before MPI_Init: %s" % (comm, e))
    sys.exit(0 if ok == 2 else "test_api: init before MPI_Init did not fail as it should")

import cairn  # noqa: E402
from cairn import _lib  # noqa: E402

if sys.argv[1:] == ["--layout"]:
    for name, s in (("cairn_gen_info", _lib.GenInfo_C), ("cairn_restart_plan", _lib.RestartPlan_C),
                    ("cairn_var_info", _lib.VarInfo_C)):
        print("struct %s %d" % (name, __import__("ctypes").sizeof(s)))
        for f, _ in s._fields_:
            print("field %s.%s %d" % (name, f, getattr(s, f).offset))
    sys.exit(0)

from mpi4py import MPI  # noqa: E402

comm = MPI.COMM_WORLD
rank = comm.Get_rank()
checks = fails = 0


def check(cond, what):
    global checks, fails
    checks += 1
    if not cond:
        fails += 1
        print("not ok - rank %d: %s" % (rank, what), flush=True)


def raises(cls, substr, fn, what, ours=True):
    """FN() must raise CLS (a cairn.Error if OURS) with SUBSTR in its
    message; returns the error."""
    try:
        fn()
    except cls as e:
        check(substr in str(e) and (isinstance(e, cairn.Error) or not ours),
              "%s (message: %s)" % (what, e))
        return e
    except Exception as e:  # noqa: BLE001
        check(False, "%s: raised %r" % (what, e))
        return None
    check(False, what + ": nothing raised")
    return None


def pattern(gen):
    """Arrays of generation GEN: several dtypes, shapes, NaN payloads."""
    rng = np.random.default_rng([rank, gen])
    a = {
        "f64": rng.integers(0, 2**63, 24, dtype=np.uint64).view(np.float64).reshape(2, 3, 4),
        "f32": rng.integers(0, 2**31, 10, dtype=np.uint32).view(np.float32),
        "i16": rng.integers(-2**15, 2**15, (5, 6), dtype=np.int16),
        "u8": rng.integers(0, 256, 7, dtype=np.uint8),
        "b": rng.integers(0, 2, 9).astype(np.bool_),
        "s": np.array(rng.integers(0, 2**62), dtype=np.int64),
    }
    a["f64"].reshape(-1).view(np.uint64)[:2] = [0x7FF0000000000001, 0x7FF8000000000000 | gen]
    a["f32"].view(np.uint32)[:2] = [0x7F800001, 0xFFC00000 | gen]
    return a


def same(arrs, gen):
    want = pattern(gen)
    return all(arrs[k].tobytes() == want[k].tobytes() for k in want)


def main():
    ctx = cairn.init(comm)
    arrs = {k: v.copy() for k, v in pattern(1).items()}
    for k, v in arrs.items():
        ctx.protect(k, v)
    check(ctx.errmsg() == "", "errmsg is empty after a success")

    # Refusals change nothing: "f64" stays protected as arrs["f64"].
    big = np.zeros((4, 6))
    raises(cairn.InvalidArgument, "not C-contiguous", lambda: ctx.protect("f64", big[:, ::2]),
           "a non-contiguous view is refused")
    check("not C-contiguous" in ctx.errmsg(), "errmsg tells the refusal too")
    raises(ValueError, "not C-contiguous", lambda: ctx.protect("f64", np.asfortranarray(big)),
           "a Fortran-ordered array is refused (InvalidArgument is a ValueError)")
    ro = np.zeros(4)
    ro.setflags(write=False)
    raises(cairn.InvalidArgument, "read-only", lambda: ctx.protect("f64", ro), "read-only refused")
    raises(cairn.InvalidArgument, "not a numpy array", lambda: ctx.protect("f64", [1.0, 2.0]),
           "a list is refused")
    raises(cairn.InvalidArgument, "Python objects",
           lambda: ctx.protect("o", np.array([None, 1], dtype=object)), "object dtype refused")
    raises(cairn.InvalidArgument, "byte order",
           lambda: ctx.protect("f64", np.zeros(3, dtype=">f8" if sys.byteorder == "little"
                                               else "<f8")), "non-native byte order refused")
    raises(cairn.InvalidArgument, "without NUL", lambda: ctx.protect("a\0b", big), "NUL in a name")
    raises(cairn.InvalidArgument, "without NUL", lambda: ctx.protect(7, big), "a non-str name")
    e = raises(cairn.InvalidArgument, "bad name", lambda: ctx.protect("a/b", big),
               "the library refuses a bad name with its message")
    check(e is not None and e.code == cairn.EINVAL and e.strerror == "invalid argument"
          and "bad name" in e.errmsg, "Error carries code, strerror and errmsg")
    raises(cairn.InvalidArgument, "integer", lambda: ctx.checkpoint(1.5), "a float id is refused")
    raises(cairn.InvalidArgument, "out of range", lambda: ctx.checkpoint(2**70), "a huge id")
    raises(cairn.InvalidArgument, "", lambda: ctx.protect_codec("i16", "no-such-codec"),
           "an unknown codec is refused")
    raises(cairn.InvalidArgument, "", lambda: ctx.protect_bound("i16", 0.1),
           "a bound on an integer variable is refused")
    ctx.protect_codec("i16", "zstd")
    ctx.protect_codec("i16")
    ctx.protect_bound_rel("f32", 0.0)  # 0: lossless
    ctx.protect_hint("u8", cairn.CHANGED)
    # The context holds protected arrays: numpy cannot resize one under it.
    raises(ValueError, "", lambda: arrs["u8"].resize(100), "a protected array cannot be resized",
           ours=False)
    # The context holds a reference to each protected array, and drops it.
    held = np.zeros(5)
    n0 = sys.getrefcount(held)
    ctx.protect("held", held)
    n1 = sys.getrefcount(held)
    ctx.unprotect("held")
    check(n1 == n0 + 1 and sys.getrefcount(held) == n0, "protect holds one reference, unprotect "
          "drops it (%d, %d, %d)" % (n0, n1, sys.getrefcount(held)))
    # A temporary protected without a reference of the caller's stays alive.
    ctx.protect("tmp", np.full(1000, 3.25))
    gc.collect()

    # Routed files.
    path = ctx.route_file("notes.txt")
    check("/files/rank-" in path and path.endswith("/notes.txt"), "route_file gives a path")
    with open(path, "w") as f:
        f.write("rank %d\n" % rank)
    raises(cairn.InvalidArgument, "", lambda: ctx.unroute_file("never-routed"), "unroute refused")

    # Two generations; restores of each, bit for bit.
    ctx.label("first")
    ctx.checkpoint(1)
    for k, v in pattern(2).items():
        arrs[k][...] = v
    ctx.label(None)
    ctx.checkpoint(2, cairn.LEVEL_PARTNER)
    gens = ctx.generations()
    check([g.id for g in gens] == [2, 1] and gens[0].level == 2 and gens[0].nranks == 4,
          "generations: 2 (level 2), 1: %s" % (gens,))
    check([g.label for g in gens] == ["", "first"], "generations carry labels")
    for v in arrs.values():
        v[...] = 0
    check(ctx.restart() == 2 and same(arrs, 2), "restart LATEST: generation 2, bit for bit")
    check(not big.any() and not ro.any(), "the arrays refused were never written")
    check(ctx.restart(1) == 1 and same(arrs, 1), "restart 1: bit for bit")
    with open(ctx.route_file("notes.txt")) as f:
        check(f.read() == "rank %d\n" % rank, "the routed file is restored")
    check(ctx.rebuild() == 2, "rebuild: generation 2")
    raises(cairn.InvalidArgument, "", lambda: ctx.checkpoint(3, 9), "level 9 refused by the library")

    # Queries, and restoring into fresh arrays.
    plan = ctx.restart_query()
    check(plan.status == cairn.RESTART_READY and plan.id == 2 and plan.code == 0
          and plan.rebuild == 0 and plan.nodes_lost == 0 and plan.raw > 0, "restart_query: %s" % (plan,))
    check(ctx.restart_query(1).label == "first", "restart_query(1): labelled")
    info = ctx.var_query("f64")
    check(info.type == cairn.DOUBLE and info.shape == (2, 3, 4) and info.dtype == np.float64
          and info.bytes == 192, "var_query f64: %s" % (info,))
    check(ctx.var_query("b").shape == (9,), "var_query: a bool array is 9 bytes")
    raises(cairn.NoCheckpoint, "", lambda: ctx.var_query("absent"), "var_query: absent name")
    fresh = {}
    for k in ("f64", "i16", "s"):
        i = ctx.var_query(k, 1)
        fresh[k] = np.empty(i.shape, i.dtype)
        ctx.protect(k, fresh[k])
    check(ctx.restart_var("f64", 1) == 1, "restart_var f64 from generation 1")
    want = pattern(1)
    check(fresh["f64"].tobytes() == want["f64"].tobytes(), "restart_var: f64 bit for bit")
    check(ctx.restart(1) == 1 and all(fresh[k].tobytes() == want[k].tobytes() for k in fresh),
          "fresh arrays allocated from var_query restore bit for bit")
    due = 0
    for it in range(6):
        lvl = ctx.need_checkpoint()
        if lvl:
            due += 1
            ctx.checkpoint(10 + it, lvl)
    check(due == 2, "need_checkpoint: due every 3 iterations (CAIRN_CKPT_EVERY_1=3), got %d" % due)

    with cairn.Context(comm) as c2:  # a second context, finalized by the with block
        c2.protect("x", np.zeros(3))
    raises(cairn.InvalidArgument, "finalized", lambda: c2.checkpoint(1), "a finalized context")
    ctx.finalize()
    ctx.finalize()  # twice is harmless
    raises(cairn.InvalidArgument, "finalized", lambda: ctx.restart(), "finalize: later calls refused")


if __name__ == "__main__":
    try:
        main()
    except cairn.Error as e:
        check(False, "unexpected %s" % e)
    nfail = comm.allreduce(fails)
    if rank == 0:
        print("test_api: %d checks, %d failed" % (checks, nfail))
    sys.exit(1 if nfail else 0)
