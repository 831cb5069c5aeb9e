"""test_heat.py - a numpy heat stencil that checkpoints with the Python
binding of cairn, crashes and restores bit for bit (tests/python/run_python.sh
runs it under mpirun: 4 ranks on 2 emulated nodes).

State per rank: its block of grid rows (a C-contiguous view of the array
with halo rows, protected in place), the step (a 0-d int64 array) and arrays
of other dtypes and shapes rewritten every step from (rank, step) alone:
int8 3-D, uint16, int32 2-D, uint64 2-D, float32 and float64 full of NaNs
with payloads (a signalling one too), -0.0, infinities and subnormals, bool
and complex128 (stored as bytes), and a 4-D int16 array (stored flat).
Floats are written through integer views, never by arithmetic, so every bit
is the one chosen.

  --steps N --every K --level L   run N steps, checkpoint every K at level L
  --restart                       restore the newest generation first, into
                                  fresh arrays; the extras must equal their
                                  recomputed values for the restored step
  --crash-at S --crash-rank R     rank R SIGKILLs itself after step S
  --out PREFIX                    each rank writes its final state's bytes to
                                  PREFIX.<rank> (the script compares runs)
Exit status 0 ok, 2 a cairn call failed, 3 a check failed.
"""
import argparse
import os
import signal
import sys

import numpy as np
from mpi4py import MPI

import cairn

comm = MPI.COMM_WORLD
rank, nranks = comm.Get_rank(), comm.Get_size()


def extras_for(step):
    """The extra arrays' contents at STEP, from (rank, step) alone."""
    rng = np.random.default_rng([rank, int(step), 7])
    raw = lambda n: rng.integers(0, 2**63, (n + 7) // 8, dtype=np.uint64).view(np.uint8)[:n]  # noqa: E731
    e = {
        "i8": raw(60).view(np.int8).reshape(3, 4, 5),
        "u16": raw(34).view(np.uint16),
        "i32": raw(24).view(np.int32).reshape(2, 3),
        "u64": raw(128).view(np.uint64).reshape(4, 4),
        "f32": raw(132).view(np.float32),
        "f64": raw(280).view(np.float64).reshape(5, 7),
        "flags": (raw(10) & 1) == 1,
        "z": raw(48).view(np.complex128),
        "i16x4": raw(48).view(np.int16).reshape(2, 2, 2, 3),
    }
    f32 = e["f32"].view(np.uint32)
    f32[:5] = [0x7FC00000 | (step & 0x3FFFFF), 0x7F800001, 0xFFC0BEEF, 0x80000000, 0x00000001]
    f64 = e["f64"].reshape(-1).view(np.uint64)
    f64[:6] = [0x7FF8000000000000 | step, 0x7FF0000000000001, 0xFFF8DEADBEEF0000,
               0x8000000000000000, 0x7FF0000000000000, 0x0000000000000001]
    return {k: np.ascontiguousarray(v).copy() for k, v in e.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nx", type=int, default=48)
    ap.add_argument("--ny", type=int, default=40)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--every", type=int, default=8)
    ap.add_argument("--level", type=int, default=cairn.LEVEL_LOCAL)
    ap.add_argument("--restart", action="store_true")
    ap.add_argument("--crash-at", type=int, default=-1)
    ap.add_argument("--crash-rank", type=int, default=0)
    ap.add_argument("--out")
    o = ap.parse_args()

    rows = o.ny // nranks + (rank < o.ny % nranks)
    row0 = rank * (o.ny // nranks) + min(rank, o.ny % nranks)
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank < nranks - 1 else MPI.PROC_NULL
    grid = np.zeros((rows + 2, o.nx))  # halo row, rows, halo row
    gi = np.arange(row0, row0 + rows)[:, None]
    j = np.arange(o.nx)[None, :]
    edge = (gi == 0) | (gi == o.ny - 1) | (j == 0) | (j == o.nx - 1)
    disc = (gi - 2 * o.ny // 3) ** 2 + (j - o.nx // 2) ** 2 <= (min(o.nx, o.ny) // 8) ** 2
    fixed = edge | disc  # top edge 1.0, other edges 0.0, a hot disc 2.0
    fixed_val = np.where(gi == 0, 1.0, np.where(edge, 0.0, 2.0))
    inner = grid[1:-1]
    inner[fixed] = fixed_val[fixed]
    step = np.zeros((), np.int64)
    extras = {k: np.zeros_like(v) for k, v in extras_for(0).items()}

    try:
        ctx = cairn.Context(comm)
    except cairn.Error as e:
        print("test_heat: init: %s" % e, file=sys.stderr)
        return 2
    with ctx:
        ctx.protect("grid", inner)
        ctx.protect("step", step)
        for k, v in extras.items():
            ctx.protect(k, v)
        if o.restart:
            try:
                gid = ctx.restart()
            except cairn.Error as e:
                if rank == 0:
                    print("test_heat: restart: %s" % e, file=sys.stderr)
                return 2
            want = extras_for(int(step))
            bad = [k for k in extras if extras[k].tobytes() != want[k].tobytes()]
            if gid != int(step) or bad:
                print("test_heat: rank %d: generation %d, step %d; extras differ: %s"
                      % (rank, gid, int(step), bad), file=sys.stderr)
            if comm.allreduce(int(gid != int(step) or bool(bad))):
                return 3
            if rank == 0:
                print("test_heat: restarted from generation %d, extras bit-exact" % gid)
        else:
            for k, v in extras_for(0).items():
                extras[k][...] = v
        while step < o.steps:
            comm.Sendrecv(grid[1], dest=up, recvbuf=grid[-1], source=down)
            comm.Sendrecv(grid[-2], dest=down, recvbuf=grid[0], source=up)
            new = 0.25 * ((grid[:-2, 1:-1] + grid[2:, 1:-1]) + (grid[1:-1, :-2] + grid[1:-1, 2:]))
            inner[:, 1:-1] = new
            inner[fixed] = fixed_val[fixed]
            step[...] = step + 1
            for k, v in extras_for(int(step)).items():
                extras[k][...] = v
            if step % o.every == 0:
                try:
                    ctx.checkpoint(int(step), o.level)
                except cairn.Error as e:
                    if rank == 0:
                        print("test_heat: checkpoint %d: %s" % (step, e), file=sys.stderr)
                    return 2
                if rank == 0:
                    print("test_heat: checkpoint %d level %d" % (step, o.level), flush=True)
            if step == o.crash_at and rank == o.crash_rank:
                print("test_heat: rank %d crashing after step %d" % (rank, step), flush=True)
                os.kill(os.getpid(), signal.SIGKILL)
        if o.out:
            with open("%s.%d" % (o.out, rank), "wb") as f:
                f.write(inner.tobytes() + step.tobytes())
                for k in sorted(extras):
                    f.write(extras[k].tobytes())
        total = comm.allreduce(float(inner.sum()))
        if rank == 0:
            print("test_heat: done at step %d sum %.17g" % (step, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
