"""test_remap.py - a restart onto another rank count through the Python
binding (Context.protect_block, Context.protect_replicated); run by
tests/python/run_python.sh under mpirun.

  save LEVEL     generations 1 and 2 at LEVEL: "u", a 2-D float64 global array
                 of 37 x 23 in uneven row blocks; "k", int32, a 1-D global
                 array of 101 in uneven blocks the other way round; "step",
                 a replicated int64 (rank r stores 10 G + r)
  restore        on this run's rank count: restart must restore generation 2,
                 every element of the new blocks equal to its global
                 definition bit for bit, "step" rank 0's (20)
  refuse         protect_block with shapes of different lengths, a block past
                 the global array, an unprotected name: InvalidArgument, and a
                 restart then still restores the blocks declared before
Values are a function of the global index and the generation alone. Ranks
agree on the outcome; rank 0 prints "test_remap: ok MODE" or exits 3.
"""
import sys

import numpy as np
from mpi4py import MPI

import cairn

comm = MPI.COMM_WORLD
rank, nranks = comm.Get_rank(), comm.Get_size()
ROWS, COLS, NK = 37, 23, 101


def split(n, parts, i, weight):
    """Part I of N cut into PARTS pieces of weights weight(0..PARTS-1)."""
    w = [weight(p) for p in range(parts)]
    edges = [n * sum(w[:p]) // sum(w) for p in range(parts + 1)]
    return edges[i], edges[i + 1] - edges[i]


def u_at(r0, nr, gen):
    i = np.arange(r0, r0 + nr, dtype=np.float64)[:, None]
    j = np.arange(COLS, dtype=np.float64)[None, :]
    return i * 1000.0 + j + gen / 7.0


def k_at(k0, nk, gen):
    return (np.arange(k0, k0 + nk, dtype=np.int64) * 31 + gen).astype(np.int32)


def declare(ctx):
    r0, nr = split(ROWS, nranks, rank, lambda p: p + 1)
    k0, nk = split(NK, nranks, rank, lambda p: nranks - p)
    u = np.full((nr, COLS), np.nan)
    k = np.full(nk, -1, np.int32)
    step = np.zeros(1, np.int64)
    ctx.protect("u", u)
    ctx.protect_block("u", (ROWS, COLS), (r0, 0), (nr, COLS))
    ctx.protect("k", k)
    ctx.protect_block("k", (NK,), (k0,), (nk,))
    ctx.protect("step", step)
    ctx.protect_replicated("step")
    return (r0, nr, u), (k0, nk, k), step


def same_bits(a, b):
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def main():
    mode = sys.argv[1]
    ok = True
    with cairn.Context(comm) as ctx:
        (r0, nr, u), (k0, nk, k), step = declare(ctx)
        if mode == "save":
            level = int(sys.argv[2])
            for gen in (1, 2):
                u[...] = u_at(r0, nr, gen)
                k[...] = k_at(k0, nk, gen)
                step[0] = 10 * gen + rank
                ctx.checkpoint(gen, level)
        elif mode in ("restore", "refuse"):
            if mode == "refuse":
                for args in (("u", (ROWS, COLS), (0,), (nr, COLS)),
                             ("u", (ROWS, COLS), (ROWS, 0), (nr, COLS)),
                             ("nothing", (4,), (0,), (4,))):
                    try:
                        ctx.protect_block(*args)
                        ok = False
                        print("rank %d: protect_block%r was accepted" % (rank, args))
                    except cairn.InvalidArgument:
                        pass
            got = ctx.restart()
            if got != 2:
                ok = False
                print("rank %d: restored generation %d, want 2" % (rank, got))
            if not same_bits(u, u_at(r0, nr, 2)):
                ok = False
                print("rank %d: u rows %d..%d differ" % (rank, r0, r0 + nr - 1))
            if not same_bits(k, k_at(k0, nk, 2)):
                ok = False
                print("rank %d: k %d..%d differs" % (rank, k0, k0 + nk - 1))
            if step[0] != 20:
                ok = False
                print("rank %d: step %d, want rank 0's 20" % (rank, step[0]))
        else:
            print("usage: test_remap.py save LEVEL | restore | refuse")
            return 1
    ok = comm.allreduce(ok, op=MPI.LAND)
    if rank == 0:
        print("test_remap: ok %s" % mode if ok else "test_remap: FAILED %s" % mode)
    return 0 if ok else 3


if __name__ == "__main__":
    sys.exit(main())
