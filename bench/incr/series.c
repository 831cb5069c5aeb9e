/*
 * series.c - incr_bench's series of checkpoints: one workload checkpointed
 * after each interval under one configuration (incr.mode, codec, block size,
 * level), each generation's stored and parity bytes checked against the
 * files, an optional bit-exact restart of the last one; then the statistics
 * over the records. Owned by incr_bench (bench/incr_bench.c).
 */
#include "incr_bench.h"

/* ---- a series of checkpoints ------------------------------------------- */

void job_dir(char *buf, size_t len, const char *job)
{
    int n = snprintf(buf, len, "%s/cairn-%u/%s", g_base, (unsigned)geteuid(), job);
    if (n < 0 || (size_t)n >= len)
        die("CAIRN_BASE path too long");
}

/* Stored bytes, parity bytes of generation ID in JOB, summed over the ranks. */
static void gen_files(const char *job, long id, uint64_t *files, uint64_t *parity)
{
    char dir[4352], path[4608];
    job_dir(dir, sizeof dir, job);
    snprintf(path, sizeof path, "%s/node%d/gen-%ld/rank-%d.ckpt", dir, g_rank / g_rpn, id, g_rank);
    uint64_t mine = file_size(path), par = 0;
    if (mine == 0)
        die("%s: missing after the checkpoint", path);
    if (g_rank % g_rpn == 0) { /* node leader */
        snprintf(path, sizeof path, "%s/node%d/gen-%ld/parity.ec", dir, g_rank / g_rpn, id);
        par = file_size(path);
    }
    *files = sum_u64(mine);
    *parity = sum_u64(par);
}

void configure(const series *s, const char *job)
{
    set_env("CAIRN_JOB", job);
    set_env("CAIRN_INCR", s->incr ? "on" : "off");
    set_env("CAIRN_CODEC", s->codec);
    set_env("CAIRN_INCR_FULL_EVERY", NULL);
    set_env("CAIRN_COMPRESS_THREADS", NULL);
    if (s->block)
        set_env_long("CAIRN_INCR_BLOCK", s->block);
    else
        set_env("CAIRN_INCR_BLOCK", NULL);
    if (s->max_changed >= 0)
        set_env_long("CAIRN_INCR_MAX_CHANGED", s->max_changed);
    else
        set_env("CAIRN_INCR_MAX_CHANGED", NULL);
}

/* Run W from its initial state through S, one record per checkpoint into R
 * (1 + S->intervals of them). */
void run_series(work *w, const series *s, rec *r)
{
    char job[64];
    snprintf(job, sizeof job, "%.40s-%s", g_job, s->tag);
    configure(s, job);
    w->reset(w);
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_WORLD, NULL, &ctx), NULL, "cairn_init");
    protect_all(ctx, w);
    for (int i = 0; i <= s->intervals; i++) {
        rec *x = &r[i];
        memset(x, 0, sizeof *x);
        x->id = i;
        if (i > 0) {
            w->interval(w);
            change c = count_changed(w, s->block ? (uint32_t)s->block : g_def_block);
            x->changed = sum_u64(c.bytes);
            x->cblocks = sum_u64(c.blocks);
            x->nblocks = sum_u64(c.nblocks);
            x->cbytes = sum_u64(c.block_bytes);
        }
        barrier();
        double t0 = now();
        int rc = cairn_checkpoint(ctx, x->id, s->level);
        double t = now() - t0;
        check_cairn(rc, ctx, "cairn_checkpoint");
        x->time = max_double(t);
        cairn_gen_info info[4];
        int n = 0;
        check_cairn(cairn_generations(ctx, info, 4, &n), ctx, "cairn_generations");
        if (n < 1 || info[0].id != x->id || info[0].level < s->level)
            die("%s: generation %ld is not the newest complete one at level %d", job, x->id,
                s->level);
        x->parent = info[0].parent;
        x->bytes = info[0].bytes;
        x->raw = info[0].raw;
        x->delta = info[0].delta;
        uint64_t files = 0;
        gen_files(job, x->id, &files, &x->parity);
        if (files != x->bytes)
            die("%s: generation %ld: cairn_generations says %llu stored bytes, the rank files "
                "hold %llu",
                job, x->id, (unsigned long long)x->bytes, (unsigned long long)files);
        if (x->raw != sum_u64(w->bytes))
            die("%s: generation %ld restores %llu bytes, the ranks protect %llu", job, x->id,
                (unsigned long long)x->raw, (unsigned long long)sum_u64(w->bytes));
        if (s->level >= CAIRN_LEVEL_ERASURE && x->parity == 0)
            die("%s: generation %ld: no parity.ec at level %d", job, x->id, s->level);
        if (!s->incr && x->parent != -1)
            die("%s: generation %ld has parent %ld with incr.mode = off", job, x->id, x->parent);
        /* An increment holds exactly the blocks that changed since its parent. */
        if (x->parent >= 0 && x->parent != x->id - 1)
            die("%s: generation %ld diffs against %ld, not the previous checkpoint", job, x->id,
                x->parent);
        if (x->parent >= 0 && x->delta != x->cbytes)
            die("%s: generation %ld stores %llu bytes of blocks, the blocks that changed since "
                "generation %ld hold %llu",
                job, x->id, (unsigned long long)x->delta, x->parent,
                (unsigned long long)x->cbytes);
        snap(w);
        settle();
    }
    w->check(w);
    if (s->verify) {
        long last = r[s->intervals].id, got = -1;
        if (r[s->intervals].parent < 0)
            die("%s: the last generation (%ld) was written full: no chain to verify", job, last);
        scramble(w);
        check_cairn(cairn_restart(ctx, last, &got), ctx, "cairn_restart");
        if (got != last)
            die("%s: cairn_restart restored generation %ld, asked for %ld", job, got, last);
        const char *name = "";
        long long off = first_diff(w, &name);
        if (off >= 0)
            fprintf(stderr, "incr_bench: rank %d: %s: restored %s differs at byte %lld\n", g_rank,
                    job, name, off);
        app_agree(off >= 0, "restart of the incremental chain is not bit-exact");
    }
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    barrier();
    if (g_rank == 0) {
        char dir[4352];
        job_dir(dir, sizeof dir, job);
        wipe(dir);
    }
    barrier();
}

/* ---- statistics over records -------------------------------------------- */

/* Records 1..N of R: all (INCR 0) or the incremental ones (INCR 1). */
stats stats_of(const rec *r, int n, int incr)
{
    stats s = {0};
    double t[MAX_REPS + 1], sd = 0, sc = 0;
    for (int i = 1; i <= n; i++) {
        if (incr && r[i].parent < 0)
            continue;
        s.bytes += (double)r[i].bytes;
        s.parity += (double)r[i].parity;
        s.delta += (double)r[i].delta;
        s.changed += (double)r[i].changed;
        sd += (double)r[i].delta;
        sc += (double)r[i].changed;
        double q = r[i].changed ? (double)r[i].delta / (double)r[i].changed : 0;
        s.worst = q > s.worst ? q : s.worst;
        t[s.n++] = r[i].time;
    }
    if (s.n) {
        s.bytes /= s.n, s.parity /= s.n, s.delta /= s.n, s.changed /= s.n;
        s.time = median(t, s.n);
        s.ratio = sc > 0 ? sd / sc : 0;
    }
    return s;
}

void print_recs(const char *what, const rec *r, int n)
{
    printf("#   %-4s %3s %6s %12s %12s %12s %12s %8s %7s\n", what, "id", "parent", "stored MB",
           "own MB", "parity MB", "changed MB", "chg blk", "time s");
    for (int i = 0; i <= n; i++) {
        char cb[16] = "-", ch[16] = "-";
        if (i > 0) {
            snprintf(cb, sizeof cb, "%.1f%%", 100.0 * (double)r[i].cblocks / (double)r[i].nblocks);
            snprintf(ch, sizeof ch, "%.4f", (double)r[i].changed / MB);
        }
        printf("#   %-4s %3ld %6ld %12.4f %12.4f %12.4f %12s %8s %7.4f\n", "", r[i].id,
               r[i].parent, (double)r[i].bytes / MB, (double)r[i].delta / MB,
               (double)r[i].parity / MB, ch, cb, r[i].time);
    }
}
