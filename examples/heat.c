/*
 * heat.c - 2-D heat diffusion (5-point Jacobi stencil) that survives a crash.
 *
 * The NY x NX grid of doubles is cut into blocks of rows, one per rank; each
 * step swaps a halo row with each neighbour (MPI_Sendrecv) and updates every
 * free cell from its old neighbours in a fixed order (fixed cells: top edge
 * 1.0, other edges 0.0, a hot disc 2.0), so the final field is the same bit
 * for bit however often the run is stopped and restarted.
 *
 * cairn protects the rank's rows, the step counter and a metadata array (the
 * layout), and takes the routed file stats.txt (step, local sum) into every
 * generation, whose id is the step. --restart restores the newest complete
 * generation and checks layout and stats.txt against it. --crash-at S makes
 * rank --crash-rank raise SIGKILL right after step S, before its checkpoint.
 * --l3-every K also protects every K-th checkpoint (by step) with level-3
 * parity across the nodes, so the run survives losing nodes too; --levels
 * L1,L2,... instead gives the checkpoints these levels in turn (1 local,
 * 2 partner copy, 3 parity, 4 the PFS too).
 * --bound REL lets cairn store the field lossily within REL of each rank's
 * value range (cairn_protect_bound_rel); --snap K writes the whole field to
 * OUT.<step> every K steps and right after a restart (to follow the error a
 * lossy restart brings in against an uninterrupted run).
 * The field is declared distributed (cairn_protect_block: this rank's rows of
 * the NY x NX grid), the step and the grid's shape replicated, so
 * --restart-ranks restarts on any rank count or node layout: cairn remaps
 * the rows onto the new ranks; the layout array and stats.txt (one rank's
 * own) are then not checked. The stencil gives every cell the same value
 * whatever the decomposition, so the final field is the same bit for bit.
 */
#include <math.h>
#include <cairn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META_N 7 /* format version, rank, ranks, nx, ny, first row, rows */

struct opts {
    long nx, ny, steps, ckpt_every, crash_at, crash_rank, l3_every, snap;
    double bound;
    int restart, restart_ranks;
    const char *out;
    int levels[16], nlevels;      /* --levels: the checkpoints' levels in turn */
};

struct run {
    struct opts o;
    int rank, nranks, up, down;
    long rows, row0;          /* this rank's rows of the global grid */
    double *u, *v;            /* (rows + 2) x nx: halo row, rows, halo row; u is current */
    int64_t step, first_step; /* step is protected; first_step: where this run began */
    int32_t meta[META_N];     /* protected (not with --restart-ranks) */
    int32_t shape[3];         /* protected, replicated: version, nx, ny */
    cairn_ctx *ctx;
    int ckpts;
    double t_compute, t_ckpt;
};

/* Every rank passes its own verdict; returns 1 only if every rank is ok. */
static int all_ok(int ok)
{
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return ok;
}

/* 1 if cairn call WHAT returned 0; else reports RC (from rank 0 only if ALL ranks share it). */
static int cairn_ok(const struct run *r, int all, const char *what, int rc)
{
    if (rc != 0 && (!all || r->rank == 0))
        fprintf(stderr, "heat: rank %d: %s: %s: %s\n", r->rank, what, cairn_strerror(rc),
                cairn_errmsg(r->ctx));
    return rc == 0;
}

static int parse_nonneg(const char *s, long *out)
{
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return !errno && end != s && !*end && *out >= 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
    *o = (struct opts){.nx = 1024, .ny = 1024, .steps = 400, .ckpt_every = 50, .crash_at = -1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        long *num = !strcmp(a, "--nx") ? &o->nx : !strcmp(a, "--ny") ? &o->ny
                  : !strcmp(a, "--steps") ? &o->steps : !strcmp(a, "--ckpt-every") ? &o->ckpt_every
                  : !strcmp(a, "--crash-at") ? &o->crash_at
                  : !strcmp(a, "--crash-rank") ? &o->crash_rank
                  : !strcmp(a, "--l3-every") ? &o->l3_every
                  : !strcmp(a, "--snap") ? &o->snap : NULL;
        char *end = NULL;
        if (!strcmp(a, "--restart"))
            o->restart = 1;
        else if (!strcmp(a, "--restart-ranks"))
            o->restart = o->restart_ranks = 1;
        else if (!strcmp(a, "--bound") && i + 1 < argc) {
            o->bound = strtod(argv[++i], &end);
            if (*end || !(o->bound >= 0 && o->bound < 1))
                return 0;
        }
        else if (!strcmp(a, "--out") && i + 1 < argc)
            o->out = argv[++i];
        else if (!strcmp(a, "--levels") && i + 1 < argc) {
            for (const char *p = argv[++i]; *p && o->nlevels < 16; p += *p == ',') {
                long l = strtol(p, &end, 10);
                if (end == p || l < 1 || l > 4 || (*end && *end != ','))
                    return 0;
                o->levels[o->nlevels++] = (int)l;
                p = end;
            }
            if (!o->nlevels)
                return 0;
        }
        else if (!num || i + 1 == argc || !parse_nonneg(argv[++i], num))
            return 0;
    }
    return 1;
}

/* Rows owned by rank R of N: NY/N each, the first NY%N ranks one more. */
static long rows_of(long ny, int n, int r) { return ny / n + (r < ny % n); }
static long row0_of(long ny, int n, int r) { return r * (ny / n) + (r < ny % n ? r : ny % n); }

/* Fixed (Dirichlet) cells: 1 and the value in *VAL; 0 for a free cell. */
static int fixed_cell(const struct opts *o, long gi, long j, double *val)
{
    long di = gi - 2 * o->ny / 3, dj = j - o->nx / 2, rad = (o->nx < o->ny ? o->nx : o->ny) / 10;
    if (gi == 0)
        *val = 1.0;
    else if (gi == o->ny - 1 || j == 0 || j == o->nx - 1)
        *val = 0.0;
    else if (di * di + dj * dj <= rad * rad)
        *val = 2.0;
    else
        return 0;
    return 1;
}

static int setup_grid(struct run *r)
{
    const struct opts *o = &r->o;
    if (o->nx < 3 || o->ny < 3 || o->ny < r->nranks || o->nx > INT_MAX / o->ny ||
        o->crash_rank >= r->nranks) {
        if (r->rank == 0)
            fprintf(stderr, "heat: need nx, ny >= 3, ny >= ranks, crash rank < ranks\n");
        return 0;
    }
    r->rows = rows_of(o->ny, r->nranks, r->rank);
    r->row0 = row0_of(o->ny, r->nranks, r->rank);
    r->up = r->rank > 0 ? r->rank - 1 : MPI_PROC_NULL;
    r->down = r->rank < r->nranks - 1 ? r->rank + 1 : MPI_PROC_NULL;
    r->u = calloc((size_t)(r->rows + 2) * o->nx, sizeof(double));
    r->v = calloc((size_t)(r->rows + 2) * o->nx, sizeof(double));
    if (!r->u || !r->v)
        fprintf(stderr, "heat: rank %d: out of memory\n", r->rank);
    if (!all_ok(r->u && r->v))
        return 0;
    double val;
    for (long i = 1; i <= r->rows; i++)
        for (long j = 0; j < o->nx; j++)
            if (fixed_cell(o, r->row0 + i - 1, j, &val))
                r->u[i * o->nx + j] = r->v[i * o->nx + j] = val;
    memcpy(r->meta, (int32_t[META_N]){1, r->rank, r->nranks, (int32_t)o->nx, (int32_t)o->ny,
                                      (int32_t)r->row0, (int32_t)r->rows}, sizeof r->meta);
    memcpy(r->shape, (int32_t[3]){1, (int32_t)o->nx, (int32_t)o->ny}, sizeof r->shape);
    return 1;
}

/* The field's protected rows live in whichever buffer is current: re-protect on swap. */
static int protect_field(struct run *r)
{
    size_t dims[2] = {(size_t)r->rows, (size_t)r->o.nx};
    return cairn_protect(r->ctx, "field", r->u + r->o.nx, CAIRN_DOUBLE, dims[0] * dims[1], 2, dims);
}

static int protect_all(struct run *r)
{
    size_t global[2] = {(size_t)r->o.ny, (size_t)r->o.nx}, start[2] = {(size_t)r->row0, 0};
    size_t count[2] = {(size_t)r->rows, (size_t)r->o.nx};
    int rc = protect_field(r);
    rc = rc ? rc : cairn_protect_block(r->ctx, "field", 2, global, start, count);
    if (!rc && r->o.bound > 0)
        rc = cairn_protect_bound_rel(r->ctx, "field", r->o.bound);
    rc = rc ? rc : cairn_protect(r->ctx, "step", &r->step, CAIRN_INT64, 1, 0, NULL);
    rc = rc ? rc : cairn_protect_replicated(r->ctx, "step");
    rc = rc ? rc : cairn_protect(r->ctx, "shape", r->shape, CAIRN_INT32, 3, 0, NULL);
    rc = rc ? rc : cairn_protect_replicated(r->ctx, "shape");
    if (!r->o.restart_ranks) /* a layout of its own: restores only on the same layout */
        rc = rc ? rc : cairn_protect(r->ctx, "meta", r->meta, CAIRN_INT32, META_N, 0, NULL);
    return all_ok(cairn_ok(r, 0, "cairn_protect", rc));
}

static void exchange_halos(struct run *r)
{
    int nx = (int)r->o.nx;
    double *u = r->u;
    /* first row up, bottom halo from below; last row down, top halo from above */
    MPI_Sendrecv(u + nx, nx, MPI_DOUBLE, r->up, 0, u + (r->rows + 1) * nx, nx, MPI_DOUBLE,
                 r->down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(u + r->rows * nx, nx, MPI_DOUBLE, r->down, 1, u, nx, MPI_DOUBLE, r->up, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void jacobi_step(struct run *r)
{
    long nx = r->o.nx;
    for (long i = 1; i <= r->rows; i++) {
        const double *n = r->u + (i - 1) * nx, *c = r->u + i * nx, *s = r->u + (i + 1) * nx;
        double *out = r->v + i * nx, val;
        for (long j = 0; j < nx; j++)
            out[j] = fixed_cell(&r->o, r->row0 + i - 1, j, &val)
                         ? val : 0.25 * (n[j] + s[j] + c[j - 1] + c[j + 1]);
    }
    double *t = r->u; /* the new field becomes current */
    r->u = r->v, r->v = t;
}

static double local_sum(const struct run *r)
{
    double sum = 0.0;
    for (long k = r->o.nx; k < (r->rows + 1) * r->o.nx; k++)
        sum += r->u[k];
    return sum;
}

static int write_stats(const struct run *r, const char *path)
{
    FILE *f = fopen(path, "w");
    int ok = f && fprintf(f, "step %" PRId64 "\nsum %a\n", r->step, local_sum(r)) > 0;
    ok = f && fclose(f) == 0 && ok;
    if (!ok)
        fprintf(stderr, "heat: rank %d: %s: %s\n", r->rank, path, strerror(errno));
    return ok;
}

static int checkpoint(struct run *r)
{
    char path[4096];
    double t0 = MPI_Wtime();
    if (!cairn_ok(r, 0, "cairn_protect", protect_field(r)) ||
        !cairn_ok(r, 0, "cairn_route_file",
                  cairn_route_file(r->ctx, "stats.txt", path, sizeof path)) ||
        !write_stats(r, path))
        MPI_Abort(MPI_COMM_WORLD, 1); /* one rank alone: no clean way to stop the others */
    /* Every checkpoint at level 1; every --l3-every'th also protected by parity. */
    long nth = r->step / r->o.ckpt_every; /* 1 for the first checkpoint */
    int level = r->o.nlevels ? r->o.levels[(nth - 1) % r->o.nlevels]
                : r->o.l3_every > 0 && nth % r->o.l3_every == 0 ? CAIRN_LEVEL_ERASURE
                                                               : CAIRN_LEVEL_LOCAL;
    if (!cairn_ok(r, 1, "cairn_checkpoint", cairn_checkpoint(r->ctx, r->step, level)))
        return 0;
    r->ckpts++;
    r->t_ckpt += MPI_Wtime() - t0;
    return 1;
}

/* After a restart: stats.txt must name the restored step and this rank's sum. */
static int check_stats(const struct run *r, const char *path)
{
    long long step = -1;
    double sum = 0.0;
    FILE *f = fopen(path, "r");
    int n = f ? fscanf(f, "step %lld sum %la", &step, &sum) : 0;
    /* lossy: each of rows * nx values within bound * range, and values lie in [0, 2] */
    double tol = r->o.bound * 2.0 * (double)(r->rows * r->o.nx);
    if (f && fclose(f) == 0 && n == 2 && step == r->step && fabs(sum - local_sum(r)) <= tol)
        return 1;
    fprintf(stderr, "heat: rank %d: %s: %s (step %lld, restored step %" PRId64 ")\n", r->rank,
            path, !f ? strerror(errno) : n != 2 ? "unreadable" : "does not match the field",
            step, r->step);
    return 0;
}

static int restore(struct run *r)
{
    int32_t want[META_N], want_shape[3];
    long id = -1;
    char path[4096];
    memcpy(want, r->meta, sizeof want);
    memcpy(want_shape, r->shape, sizeof want_shape);
    if (!cairn_ok(r, 1, "cairn_restart", cairn_restart(r->ctx, CAIRN_LATEST, &id)))
        return 0;
    int ok = cairn_ok(r, 0, "cairn_route_file",
                      cairn_route_file(r->ctx, "stats.txt", path, sizeof path));
    if (ok && (id != r->step || memcmp(want, r->meta, sizeof want) != 0 ||
               memcmp(want_shape, r->shape, sizeof want_shape) != 0)) {
        fprintf(stderr, "heat: rank %d: generation %ld (step %" PRId64 ") is from another "
                "layout or another program\n", r->rank, id, r->step);
        ok = 0;
    }
    if (!all_ok(ok && (r->o.restart_ranks || check_stats(r, path))))
        return 0;
    r->first_step = r->step;
    if (r->rank == 0)
        printf("heat: restored generation %ld (step %" PRId64 " of %ld)\n", id, r->step,
               r->o.steps);
    return 1;
}

static int write_output(const struct run *r, const char *path);

/* --snap: the field at this step, to OUT.<step>. */
static int snapshot(const struct run *r)
{
    char path[4096];
    snprintf(path, sizeof path, "%s.%" PRId64, r->o.out, r->step);
    return write_output(r, path);
}

static int run_steps(struct run *r)
{
    while (r->step < r->o.steps) {
        double t0 = MPI_Wtime();
        exchange_halos(r);
        jacobi_step(r);
        r->step++;
        r->t_compute += MPI_Wtime() - t0;
        if (r->step == r->o.crash_at && r->rank == r->o.crash_rank) {
            fprintf(stderr, "heat: rank %d: crashing after step %" PRId64 "\n", r->rank, r->step);
            raise(SIGKILL);
        }
        if (r->o.snap > 0 && r->o.out && r->step % r->o.snap == 0 && !snapshot(r))
            return 0;
        if (r->o.ckpt_every > 0 && r->step % r->o.ckpt_every == 0 && !checkpoint(r))
            return 0;
    }
    return 1;
}

/* Gather the field on rank 0 and write it to PATH as raw doubles, row after row. */
static int write_output(const struct run *r, const char *path)
{
    const struct opts *o = &r->o;
    size_t n = (size_t)o->nx * o->ny;
    int *counts = NULL, *displs = NULL, ok = 1;
    double *all = NULL;
    if (r->rank == 0) {
        counts = malloc(2 * r->nranks * sizeof *counts);
        all = malloc(n * sizeof *all);
        if (!counts || !all)
            MPI_Abort(MPI_COMM_WORLD, 1); /* out of memory */
        displs = counts + r->nranks;
        for (int k = 0; k < r->nranks; k++) {
            counts[k] = (int)(rows_of(o->ny, r->nranks, k) * o->nx);
            displs[k] = (int)(row0_of(o->ny, r->nranks, k) * o->nx);
        }
    }
    MPI_Gatherv(r->u + o->nx, (int)(r->rows * o->nx), MPI_DOUBLE, all, counts, displs,
                MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (r->rank == 0) {
        FILE *f = fopen(path, "wb");
        ok = f && fwrite(all, sizeof *all, n, f) == n;
        ok = f && fclose(f) == 0 && ok;
        if (!ok)
            fprintf(stderr, "heat: %s: %s\n", path, strerror(errno));
    }
    free(counts);
    free(all);
    return all_ok(ok);
}

static int summary(struct run *r)
{
    double t[2] = {r->t_compute, r->t_ckpt}, tmax[2];
    cairn_gen_info gen = {0};
    int ngen = 0;
    MPI_Reduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (!cairn_ok(r, 1, "cairn_generations", cairn_generations(r->ctx, &gen, 1, &ngen)))
        return 0;
    if (r->rank != 0)
        return 1;
    double bytes = (double)r->o.nx * r->o.ny * sizeof(double) +
                   (double)r->nranks * (sizeof r->step + sizeof r->meta);
    printf("heat: grid %ld x %ld on %d ranks, steps %" PRId64 " -> %" PRId64 "\n", r->o.nx,
           r->o.ny, r->nranks, r->first_step, r->step);
    printf("heat: %d checkpoints of %.2f MiB protected", r->ckpts, bytes / 1048576.0);
    if (ngen > 0)
        printf("; newest generation %ld: %.2f MiB stored", gen.id, gen.bytes / 1048576.0);
    printf("\nheat: time compute %.3f s, checkpoint %.3f s (%.1f%% of the run)\n", tmax[0],
           tmax[1], 100.0 * tmax[1] / (tmax[0] + tmax[1] > 0 ? tmax[0] + tmax[1] : 1));
    return 1;
}

int main(int argc, char **argv)
{
    struct run r = {0};
    int status = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &r.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &r.nranks);
    if (!parse_args(argc, argv, &r.o)) {
        if (r.rank == 0)
            fprintf(stderr, "usage: heat [--nx N] [--ny N] [--steps N] [--ckpt-every N] "
                            "[--l3-every K | --levels L1,L2,...] [--restart | --restart-ranks] "
                            "[--crash-at STEP --crash-rank R] "
                            "[--out FILE] [--bound REL] [--snap K]\n");
    } else if (setup_grid(&r)) {
        int rc = cairn_init(MPI_COMM_WORLD, NULL, &r.ctx);
        if (rc != 0 && r.rank == 0)
            fprintf(stderr, "heat: cairn_init: %s: %s\n", cairn_strerror(rc), cairn_errmsg(NULL));
        if (rc == 0 && protect_all(&r) && (!r.o.restart || restore(&r)) &&
            (!r.o.restart || !r.o.snap || !r.o.out || snapshot(&r)) && run_steps(&r) &&
            (!r.o.out || write_output(&r, r.o.out)) && summary(&r))
            status = 0;
        rc = cairn_finalize(r.ctx); /* ctx is gone now: no errmsg */
        if (rc != 0 && r.rank == 0)
            fprintf(stderr, "heat: cairn_finalize: %s\n", cairn_strerror(rc));
        status = rc != 0 ? 1 : status;
    }
    free(r.u);
    free(r.v);
    MPI_Finalize();
    return status;
}
