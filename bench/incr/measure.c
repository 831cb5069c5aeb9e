/*
 * measure.c - incr_bench's measurements of one workload (CP vs ICP, the
 * default codec, xdelta3), the block-size sweep, incr_hash against memcpy,
 * the incr.max_changed policy, and the summary: the `bench:` lines. Owned by
 * incr_bench (bench/incr_bench.c).
 */
#include "incr_bench.h"

/* ---- the measurements ----------------------------------------------------- */


/* CP and ICP at level 3, the default codec (optional), xdelta3: one workload. */
wres measure(work *w, const opts *o, long max_changed, rec *cp, rec *icp)
{
    wres res = {0};
    char tag[32];
    snprintf(tag, sizeof tag, "%s-cp", w->name);
    series s = {.tag = tag, .incr = 0, .codec = "none", .max_changed = -1,
                .level = CAIRN_LEVEL_ERASURE, .intervals = o->reps};
    run_series(w, &s, cp);
    snprintf(tag, sizeof tag, "%s-icp", w->name);
    s = (series){.tag = tag, .incr = 1, .codec = "none", .max_changed = max_changed,
                 .level = CAIRN_LEVEL_ERASURE, .intervals = o->reps, .verify = 1};
    run_series(w, &s, icp);
    res.cp = stats_of(cp, o->reps, 0);
    res.icp = stats_of(icp, o->reps, 1);
    if (res.icp.n == 0)
        die("%s: no generation of the incremental series was written incremental", w->name);

    if (g_rank == 0) {
        printf("# %s: checkpoints at level 3, compress.codec = none; CP = incr.mode off, "
               "ICP = on (incr.max_changed %s)\n",
               w->name, max_changed >= 0 ? "set by --lu-max-changed" : "default");
        print_recs("CP", cp, o->reps);
        print_recs("ICP", icp, o->reps);
        printf("#   ICP: %d of %d generations after the first incremental; restart of generation "
               "%ld (its chain) verified bit-exact\n",
               res.icp.n, o->reps, icp[o->reps].id);
        fflush(stdout);
    }

    if (o->auto_codec) { /* the same, 2 intervals, with the default codec */
        rec a[3], b[3];
        snprintf(tag, sizeof tag, "%s-cp-auto", w->name);
        s = (series){.tag = tag, .incr = 0, .codec = NULL, .max_changed = -1,
                     .level = CAIRN_LEVEL_ERASURE, .intervals = 2};
        run_series(w, &s, a);
        snprintf(tag, sizeof tag, "%s-icp-auto", w->name);
        s = (series){.tag = tag, .incr = 1, .codec = NULL, .max_changed = max_changed,
                     .level = CAIRN_LEVEL_ERASURE, .intervals = 2};
        run_series(w, &s, b);
        stats sa = stats_of(a, 2, 0), sb = stats_of(b, 2, 1);
        if (g_rank == 0 && sb.n == 0)
            printf("#   with the default codec: no incremental generation (parents %ld %ld)\n",
                   b[1].parent, b[2].parent);
        else if (g_rank == 0)
            printf("#   with the default codec (compress.codec auto), 2 intervals: CP %.4f MB, "
                   "ICP %.4f MB (ratio %.6f; raw %.4f MB); parity CP %.4f MB, ICP %.4f MB "
                   "(ratio %.6f); time CP %.4f s, ICP %.4f s\n",
                   sa.bytes / MB, sb.bytes / MB, sb.bytes / sa.bytes, (double)a[1].raw / MB,
                   sa.parity / MB, sb.parity / MB, sb.parity / sa.parity, sa.time, sb.time);
    }

    /* xdelta3: two consecutive generations of rank 0 (after the first interval). */
    w->reset(w);
    w->interval(w);
    snap(w);
    w->interval(w);
    snprintf(tag, sizeof tag, "%s-xd", w->name);
    if (g_rank == 0)
        res.x = xdelta_vs_cairn(w, o->xdelta, o->xdelta_reps, tag);
    quiet_barrier();
    if (g_rank == 0) {
        printf("#   xdelta3 vs cairn, rank 0 alone, one interval of %s (%.4f MB dumped, %.4f MB "
               "changed): xdelta3 -e %.4f MB in %.4f s; cairn increment %.4f MB (blocks %.4f MB) "
               "in %.4f s (level 1, compress.threads 1); medians of %d\n",
               w->name, res.x.dump / MB, res.x.changed / MB, res.x.x_size / MB, res.x.x_time,
               res.x.c_bytes / MB, res.x.c_delta / MB, res.x.c_time, o->xdelta_reps);
        fflush(stdout);
    }
    return res;
}

static void paper_table(const char *what, const wres *r)
{
    printf("# %s in the form of the paper's table (per generation, all ranks; MB = 10^6 B)\n",
           what);
    printf("#   %-18s %14s %14s %10s\n", "", "CP", "ICP", "reduction");
    printf("#   %-18s %11.4f MB %11.4f MB %9.2f%%\n", "checkpoint size", r->cp.bytes / MB,
           r->icp.bytes / MB, pct_less(r->icp.bytes, r->cp.bytes));
    printf("#   %-18s %11.4f MB %11.4f MB %9.2f%%\n", "parity size", r->cp.parity / MB,
           r->icp.parity / MB, pct_less(r->icp.parity, r->cp.parity));
    printf("#   %-18s %12.4f s %12.4f s %9.2f%%\n", "checkpoint time", r->cp.time, r->icp.time,
           pct_less(r->icp.time, r->cp.time));
}
void hash_vs_memcpy(const opts *o, double *hash_gbs, double *memcpy_gbs)
{
    size_t n = (size_t)o->hash_mib * MIB;
    uint8_t *src = app_alloc(n), *dst = app_alloc(n);
    cn_h128 *out = app_alloc(sizeof(cn_h128) * cn_incr_nblocks(n, g_def_block));
    fill(src, n, 7);
    double th[MAX_REPS], tc[MAX_REPS];
    incr_hash(src, n, g_def_block, 1, out); /* warm */
    memcpy(dst, src, n);
    for (int r = 0; r < o->hash_reps; r++) {
        double t0 = now();
        incr_hash(src, n, g_def_block, 1, out);
        th[r] = now() - t0;
        t0 = now();
        memcpy(dst, src, n);
        tc[r] = now() - t0;
        if (memcmp(dst + n / 2, src + n / 2, 64) != 0 || (out[0].lo == 0 && out[0].hi == 0))
            die("hash or memcpy produced nothing");
    }
    *hash_gbs = (double)n / 1e9 / median(th, o->hash_reps);
    *memcpy_gbs = (double)n / 1e9 / median(tc, o->hash_reps);
    printf("# hash: incr_hash (XXH3-128, %u KiB blocks, 1 thread) over %ld MiB: median %.4f s; "
           "memcpy of the same buffer: median %.4f s (%d reps, rank 0 alone)\n",
           g_def_block >> 10, o->hash_mib, median(th, o->hash_reps), median(tc, o->hash_reps),
           o->hash_reps);
    fflush(stdout);
    free(src), free(dst), free(out);
}

/* incr.block_size on mat at level 1: stored / changed, hashing, table. The
 * largest size with a ratio <= GOOD_RATIO into *BEST (or the smallest, if
 * none), its ratio into *BEST_RATIO; returns whether one qualified. */
int block_sweep(work *w, const opts *o, long *best, double *best_ratio)
{
    /* mat changes one run of L bytes of C per rank and interval, starting where
     * the last one ended: it touches L / b + 1 blocks of b on average. */
    double run_len = (double)o->mat_rows * (double)o->mat_n * 8;
    if (g_rank == 0)
        printf("# block size (mat, level 1, codec none, %d incremental checkpoints each; ratio = "
               "blocks stored / bytes changed, over all ranks; model = 1 + b / L, L = %.0f bytes "
               "changed per rank per interval in one run; hash = incr_hash over one rank's %.1f "
               "MB, 1 thread, rank 0 alone; ckpt = level-1 increment; table = 16 B per block "
               "per rank)\n"
               "#   %8s %8s %8s %8s %9s %10s %8s %9s\n",
               o->sweep_reps, run_len, (double)w->bytes / MB, "block", "ratio", "worst", "model",
               "hash s", "hash GB/s", "ckpt s", "table MB");
    int found = 0;
    *best = -1;
    for (int b = 0; b < o->nblocks; b++) {
        long bs = o->blocks[b];
        rec r[MAX_REPS + 1];
        char tag[32];
        snprintf(tag, sizeof tag, "mat-b%ld", bs >> 10);
        series s = {.tag = tag, .incr = 1, .codec = "none", .block = bs, .max_changed = -1,
                    .level = CAIRN_LEVEL_LOCAL, .intervals = o->sweep_reps};
        run_series(w, &s, r);
        stats st = stats_of(r, o->sweep_reps, 1);
        if (st.n == 0)
            die("block %ld: no incremental generation", bs);
        double ht = 0;
        if (g_rank == 0)
            ht = hash_time(w, (uint32_t)bs, o->hash_reps);
        quiet_barrier();
        uint64_t nb = 0;
        for (int i = 0; i < w->nv; i++)
            nb += cn_incr_nblocks(var_bytes(&w->v[i]), (uint32_t)bs);
        if (st.ratio <= GOOD_RATIO && bs > *best) {
            *best = bs;
            *best_ratio = st.ratio;
            found = 1;
        } else if (!found && (*best < 0 || bs < *best)) {
            *best = bs;
            *best_ratio = st.ratio;
        }
        if (g_rank == 0) {
            printf("#   %4ld KiB %8.4f %8.4f %8.4f %9.5f %10.2f %8.4f %9.4f%s\n", bs >> 10,
                   st.ratio, st.worst, 1.0 + (double)bs / run_len, ht,
                   (double)w->bytes / 1e9 / ht, st.time, (double)nb * 16 / MB,
                   (uint32_t)bs == g_def_block ? "  (default)" : "");
            fflush(stdout);
        }
    }
    if (g_rank == 0)
        printf("#   stored / changed ~ 1 + b / L: each run of changed bytes costs about one block "
               "more than it holds, so b <= L / 10 keeps it <= 1.1 (here b <= %.0f bytes); "
               "hashing costs the same at every size, smaller blocks only a larger table\n",
               run_len / 10);
    return found;
}

/* lu once more with the default incr.max_changed: what cairn decides. */
void lu_policy(work *w, int max_changed)
{
    rec r[2];
    series s = {.tag = "lu-policy", .incr = 1, .codec = "none", .max_changed = -1,
                .level = CAIRN_LEVEL_LOCAL, .intervals = 1};
    run_series(w, &s, r);
    if (g_rank == 0)
        printf("#   lu with the default incr.max_changed = %d%%: %.1f%% of the %u KiB blocks "
               "changed in the interval, so generation 1 was written %s (parent %ld, %.4f MB "
               "stored of %.4f MB)\n",
               max_changed, 100.0 * (double)r[1].cblocks / (double)r[1].nblocks,
               g_def_block >> 10, r[1].parent < 0 ? "full" : "incremental", r[1].parent,
               (double)r[1].bytes / MB, (double)r[1].raw / MB);
}

void summary(const wres *mat, const wres *lu, int found, long best, double best_ratio,
             double hash_gbs, double memcpy_gbs)
{
    paper_table("mat (Table 3)", mat);
    paper_table("lu (Table 4)", lu);
    const char *name[2] = {"mat", "lu"};
    const wres *ws[2] = {mat, lu};
    for (int i = 0; i < 2; i++)
        printf("bench: incr.%s.size %.4f MB ratio=%.6f vs full\n", name[i], ws[i]->icp.bytes / MB,
               ws[i]->icp.bytes / ws[i]->cp.bytes);
    for (int i = 0; i < 2; i++)
        printf("bench: incr.%s.parity %.4f MB ratio=%.6f vs full\n", name[i],
               ws[i]->icp.parity / MB, ws[i]->icp.parity / ws[i]->cp.parity);
    for (int i = 0; i < 2; i++)
        printf("bench: incr.%s.time %.4f s ratio=%.4f vs full\n", name[i], ws[i]->icp.time,
               ws[i]->icp.time / ws[i]->cp.time);
    printf("bench: incr.mat.bytes %.4f MB ratio=%.4f vs changed\n", mat->icp.delta / MB,
           mat->icp.ratio);
    if (!found)
        printf("# no block size keeps stored / changed <= %.2f for mat: the smallest comes "
               "closest; the overhead is about one block per run of changed bytes (see the "
               "model column), so smaller blocks cost only hash-table memory\n",
               GOOD_RATIO);
    printf("bench: incr.block.best %ld KiB ratio=%.4f vs changed\n", best >> 10, best_ratio);
    printf("bench: incr.hash %.4f GB/s ratio=%.4f vs memcpy\n", hash_gbs, hash_gbs / memcpy_gbs);
    for (int i = 0; i < 2; i++) {
        const xd *x = &ws[i]->x;
        printf("bench: incr.xdelta.%s.size %.4f MB ratio=%.4f vs cairn\n", name[i],
               x->x_size / MB, x->x_size / x->c_bytes);
        printf("bench: incr.xdelta.%s.time %.4f s ratio=%.4f vs cairn\n", name[i], x->x_time,
               x->x_time / x->c_time);
    }
    fflush(stdout);
}
