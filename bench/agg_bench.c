/*
 * agg_bench.c - data-aware against data-agnostic N->M aggregation (level 4's
 * file, src/levels/pfs/agg*.c) on real checkpoints, after mcrEngine (Islam et
 * al.), section 6.2: compression ratio by group size, for every merging scheme.
 *
 *   scripts/mpirun.sh 32 build/bench/agg_bench --run mat|lu [--mat-n N] [--lu-n N]
 *       [--intervals K]
 *   build/bench/agg_bench --analyze BASE [--groups 1,2,..] [--reps N] [--block B]
 *
 * --run: one of incr_bench's applications (incr_apps.h: mat, a row-parallel
 *   matrix multiply whose ranks each hold all of B; lu, an SSOR solver in the
 *   manner of NPB LU) computes K intervals and takes one level-1 checkpoint
 *   (the environment sets CAIRN_BASE, CAIRN_JOB, the emulated nodes, the codec).
 *   examples/heat is run by bench/run.sh itself.
 * --analyze: no MPI. Every job under BASE (BASE/cairn-<uid>/<job>/<node>/
 *   gen-<id>/rank-<r>.ckpt) is one application; its newest generation's rank
 *   files are verified and decoded (cn_ckpt_*, cz_decode_ckpt; routed files
 *   taken as they are), giving each rank's variables as a restart would see
 *   them. For each group size N (--groups, default 1,2,4,8,16,32), ranks
 *   0..N-1, N..2N-1, ... are aggregated into one file per group with each
 *   scheme into memory (a sink that copies into a buffer, as a staging buffer
 *   before the PFS), and every file is read back and compared bit for bit.
 *
 * Output (V = raw / stored over every group of that size and every
 * application; R = V / agnostic's V; times are medians of --reps runs of all
 * groups of size 8 of every application, cz_agg_write only):
 *   bench: agg.{aware,aware_block,agnostic_block,auto}.gN V x ratio=R vs agnostic
 *   bench: agg.APP.{aware,aware_block}.gN V x ratio=R vs agnostic   (N = 1, 8, 32)
 *   bench: agg.time.g8 V s ratio=R vs agnostic          (aware's flush time)
 *   bench: agg.time_auto.g8 V s ratio=R vs agnostic     (sampling included)
 *   bench: agg.time_memcpy.g8 V s ratio=R vs memcpy     (aware against copying the bytes)
 * Lines starting with '#' are details. A file that does not read back
 * bit-exact aborts the run.
 */
#include <mpi.h>
#include <sys/stat.h>

#include "bench.h"
#include "incr_apps.h"
#include "rankfiles.h"
#include "levels/pfs/pfs.h"

/* ---- --run: an application's checkpoint -------------------------------- */

static int run_app(const char *which, long mat_n, long lu_n, long intervals)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    bench_rank = rank;
    work w;
    if (!strcmp(which, "mat"))
        mat_setup(&w, rank, size, (size_t)mat_n, 3);
    else if (!strcmp(which, "lu"))
        lu_setup(&w, rank, size, (int)lu_n, 1);
    else
        die("--run: unknown application '%s' (mat, lu)", which);
    w.reset(&w);
    for (long i = 0; i < intervals; i++)
        w.interval(&w);
    w.check(&w);
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), NULL, "cairn_init");
    for (int i = 0; i < w.nv; i++) {
        const var *v = &w.v[i];
        check_cairn(cairn_protect(ctx, v->name, v->p, v->type, v->count, v->ndims,
                                  v->ndims ? v->dims : NULL),
                    ctx, "cairn_protect");
    }
    check_cairn(cairn_checkpoint(ctx, intervals, CAIRN_LEVEL_LOCAL), ctx, "cairn_checkpoint");
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    if (!strcmp(which, "mat"))
        mat_free();
    else
        lu_free();
    return 0;
}

/* ---- --analyze: the checkpoints found under BASE (rankfiles.h) ---------- */

typedef struct vcheck {
    const cz_agg_var *v;
    size_t n, calls;
} vcheck;

static int verify_cb(void *arg, const cz_agg_var *got)
{
    vcheck *c = arg;
    for (size_t i = 0; i < c->n; i++) {
        const cz_agg_var *w = &c->v[i];
        if (w->rank == got->rank && w->kind == got->kind && !strcmp(w->name, got->name)) {
            if (w->size != got->size || w->type != got->type || w->count != got->count ||
                memcmp(w->data, got->data, w->size))
                die("'%s' of rank %u does not read back bit-exact", w->name, w->rank);
            c->calls++;
            return 0;
        }
    }
    die("'%s' of rank %u read back but never written", got->name, got->rank);
}

enum { S_AGN, S_AGN_BLOCK, S_AWARE, S_AWARE_BLOCK, S_AUTO, NSCHEMES };
static const char *const label[NSCHEMES] = {"agnostic", "agnostic_block", "aware", "aware_block",
                                            "auto"};

typedef struct result {
    uint64_t raw, stored;
    double seconds;
    int picks[4];   /* AUTO: groups that picked each scheme */
} result;

/* Aggregate every group of N consecutive ranks of A with SCHEME; VERIFY reads back. */
static result aggregate(const app *a, uint32_t n, int scheme, uint32_t block, bool verify,
                        stage *st, cz_agg_var *buf)
{
    result res = {0};
    for (uint32_t g0 = 0; g0 < a->nranks; g0 += n) {
        size_t nv = 0;
        for (uint32_t r = g0; r < g0 + n && r < a->nranks; r++)
            for (size_t i = 0; i < a->r[r].n; i++)
                buf[nv++] = a->r[r].v[i];
        cz_agg_opts o = {.scheme = scheme, .block = block};
        cz_agg_stats s;
        cn_err err = {0};
        st->len = 0;
        double t0 = now();
        if (cz_agg_write(buf, nv, &o, stage_sink, st, &s, &err))
            die("cz_agg_write: %s", err.msg);
        res.seconds += now() - t0;
        res.raw += s.raw;
        res.stored += s.stored;
        res.picks[s.scheme]++;
        if (verify) {
            cz_agg_file *f = NULL;
            vcheck c = {.v = buf, .n = nv};
            if (cz_agg_open(st->p, st->len, &f, &err) || cz_agg_read(f, verify_cb, &c, &err))
                die("%s: group of ranks %u..: %s", a->job, g0, err.msg);
            if (c.calls != nv)
                die("%s: %zu of %zu variables read back", a->job, c.calls, nv);
            cz_agg_close(f);
        }
    }
    return res;
}

static double memcpy_time(const app *a, uint32_t n, stage *st)
{
    double t = 0;
    for (uint32_t g0 = 0; g0 < a->nranks; g0 += n) {
        st->len = 0;
        double t0 = now();
        for (uint32_t r = g0; r < g0 + n && r < a->nranks; r++)
            for (size_t i = 0; i < a->r[r].n; i++)
                stage_sink(st, a->r[r].v[i].data, a->r[r].v[i].size, NULL);
        t += now() - t0;
    }
    return t;
}

static double ratio(uint64_t raw, uint64_t stored) { return stored ? (double)raw / stored : 0; }

static int analyze(const char *base, const char *groups, int reps, uint32_t block)
{
    load_apps(base);
    size_t most = 0;
    for (int k = 0; k < napps; k++) {
        size_t nv = 0;
        for (uint32_t r = 0; r < apps[k]->nranks; r++)
            nv += apps[k]->r[r].n;
        if (nv > most)
            most = nv;
    }
    cz_agg_var *buf = malloc(most * sizeof *buf);
    stage st = {0};
    if (!buf)
        die("out of memory");
    char list[256];
    snprintf(list, sizeof list, "%s", groups);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        uint32_t n = (uint32_t)parse_long(tok, "--groups", 1, MAX_RANKS);
        result tot[NSCHEMES] = {{0}};
        result per[MAX_APPS][NSCHEMES];
        for (int k = 0; k < napps; k++) {
            for (int s = 0; s < NSCHEMES; s++) {
                per[k][s] = aggregate(apps[k], n, s, block, true, &st, buf);
                tot[s].raw += per[k][s].raw;
                tot[s].stored += per[k][s].stored;
                for (int p = 0; p < 4; p++)
                    tot[s].picks[p] += per[k][s].picks[p];
            }
        }
        double agn = ratio(tot[S_AGN].raw, tot[S_AGN].stored);
        printf("# g%u: agnostic %.3f x over %.1f MB\n", n, agn, tot[S_AGN].raw / 1e6);
        for (int s = S_AGN_BLOCK; s < NSCHEMES; s++) {
            double v = ratio(tot[s].raw, tot[s].stored);
            printf("bench: agg.%s.g%u %.3f x ratio=%.3f vs agnostic\n", label[s], n, v, v / agn);
        }
        printf("# g%u: auto picked agnostic %d, agnostic-block %d, aware %d, aware-block %d "
               "groups\n", n, tot[S_AUTO].picks[0], tot[S_AUTO].picks[1], tot[S_AUTO].picks[2],
               tot[S_AUTO].picks[3]);
        for (int k = 0; k < napps; k++) {
            double pa = ratio(per[k][S_AGN].raw, per[k][S_AGN].stored);
            if (n == 1 || n == 8 || n == 32) {
                for (int s = S_AWARE; s <= S_AWARE_BLOCK; s++) {
                    double v = ratio(per[k][s].raw, per[k][s].stored);
                    printf("bench: agg.%s.%s.g%u %.3f x ratio=%.3f vs agnostic\n", apps[k]->job,
                           label[s], n, v, v / pa);
                }
            }
            printf("# g%u %s: agnostic %.3f, agnostic-block %.3f, aware %.3f, aware-block "
                   "%.3f, auto %.3f x\n", n, apps[k]->job, pa,
                   ratio(per[k][1].raw, per[k][1].stored), ratio(per[k][2].raw, per[k][2].stored),
                   ratio(per[k][3].raw, per[k][3].stored), ratio(per[k][4].raw, per[k][4].stored));
        }
        if (n != 8)
            continue;
        double t[NSCHEMES][64], tm[64];
        for (int rep = 0; rep < reps; rep++) {
            tm[rep] = 0;
            for (int s = 0; s < NSCHEMES; s++)
                t[s][rep] = 0;
            for (int k = 0; k < napps; k++) {
                tm[rep] += memcpy_time(apps[k], n, &st);
                for (int s = 0; s < NSCHEMES; s++)
                    t[s][rep] += aggregate(apps[k], n, s, block, false, &st, buf).seconds;
            }
        }
        double ta = median(t[S_AGN], reps), tw = median(t[S_AWARE], reps);
        double tu = median(t[S_AUTO], reps), tc = median(tm, reps);
        printf("bench: agg.time.g8 %.4f s ratio=%.3f vs agnostic\n", tw, tw / ta);
        printf("bench: agg.time_auto.g8 %.4f s ratio=%.3f vs agnostic\n", tu, tu / ta);
        printf("bench: agg.time_memcpy.g8 %.4f s ratio=%.3f vs memcpy\n", tw, tw / tc);
        printf("# g8 times (median of %d): agnostic %.4f, agnostic-block %.4f, aware %.4f, "
               "aware-block %.4f, auto %.4f, memcpy %.4f s; aware %.0f MB/s\n", reps, ta,
               median(t[S_AGN_BLOCK], reps), tw, median(t[S_AWARE_BLOCK], reps), tu, tc,
               tot[S_AWARE].raw / 1e6 / tw);
    }
    free(buf);
    free(st.p);
    return 0;
}

int main(int argc, char **argv)
{
    bench_prog = "agg_bench";
    const char *run = NULL, *base = NULL, *groups = "1,2,4,8,16,32";
    long mat_n = 512, lu_n = 20, intervals = 2, reps = 3, block = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && !strcmp(a, "--run"))
            run = argv[++i];
        else if (i + 1 < argc && !strcmp(a, "--analyze"))
            base = argv[++i];
        else if (i + 1 < argc && !strcmp(a, "--groups"))
            groups = argv[++i];
        else if (i + 1 < argc && !strcmp(a, "--mat-n"))
            mat_n = parse_long(argv[++i], a, 64, 8192);
        else if (i + 1 < argc && !strcmp(a, "--lu-n"))
            lu_n = parse_long(argv[++i], a, 4, 256);
        else if (i + 1 < argc && !strcmp(a, "--intervals"))
            intervals = parse_long(argv[++i], a, 0, 1000);
        else if (i + 1 < argc && !strcmp(a, "--reps"))
            reps = parse_long(argv[++i], a, 1, 64);
        else if (i + 1 < argc && !strcmp(a, "--block"))
            block = parse_long(argv[++i], a, 0, 1L << 30);
        else
            die("usage: agg_bench --run mat|lu [--mat-n N] [--lu-n N] [--intervals K] | "
                "--analyze BASE [--groups 1,2,..] [--reps N] [--block B]");
    }
    if (run) {
        MPI_Init(&argc, &argv);
        int rc = run_app(run, mat_n, lu_n, intervals);
        MPI_Finalize();
        return rc;
    }
    if (!base)
        die("--run APP or --analyze BASE");
    return analyze(base, groups, (int)reps, (uint32_t)block);
}
