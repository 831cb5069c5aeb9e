/*
 * alone.c - incr_bench's measurements on rank 0 alone: incr_hash over the
 * protected memory, and xdelta3 on two consecutive states dumped to files
 * against cairn over MPI_COMM_SELF on the same states. Owned by incr_bench
 * (bench/incr_bench.c).
 */
#include "incr_bench.h"

/* ---- rank 0 alone: hashing, xdelta3, cairn over MPI_COMM_SELF ------------ */

static double hash_vars(const work *w, uint32_t block, cn_h128 *out)
{
    double t0 = now();
    for (int i = 0; i < w->nv; i++)
        incr_hash(w->v[i].p, var_bytes(&w->v[i]), block, 1, out);
    return now() - t0;
}

/* Median time of incr_hash over W's memory in blocks of BLOCK, 1 thread (rank 0). */
double hash_time(const work *w, uint32_t block, int reps)
{
    uint64_t most = 0;
    for (int i = 0; i < w->nv; i++) {
        uint64_t nb = cn_incr_nblocks(var_bytes(&w->v[i]), block);
        most = nb > most ? nb : most;
    }
    cn_h128 *out = app_alloc(sizeof(cn_h128) * most);
    double t[MAX_REPS];
    hash_vars(w, block, out); /* warm */
    for (int r = 0; r < reps; r++)
        t[r] = hash_vars(w, block, out);
    free(out);
    return median(t, reps);
}

static void write_file(const char *path, const void *p, uint64_t n, int append)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0600);
    if (fd < 0)
        die("open %s: %s", path, strerror(errno));
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t k = write(fd, b, n > (1u << 30) ? (1u << 30) : (size_t)n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            die("write %s: %s", path, k < 0 ? strerror(errno) : "short write");
        b += k;
        n -= (uint64_t)k;
    }
    if (close(fd) != 0)
        die("close %s: %s", path, strerror(errno));
}

static uint8_t *read_file(const char *path, uint64_t *n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0)
        die("open %s: %s", path, strerror(errno));
    uint8_t *b = malloc((size_t)st.st_size + 1);
    if (!b)
        die("out of memory");
    uint64_t got = 0;
    while (got < (uint64_t)st.st_size) {
        ssize_t k = read(fd, b + got, (size_t)st.st_size - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            die("read %s: %s", path, k < 0 ? strerror(errno) : "short read");
        got += (uint64_t)k;
    }
    close(fd);
    *n = got;
    return b;
}

/* Run ARGV (searched in PATH), wait, and die unless it exits 0; its wall time. */
static double run_prog(char *const argv[])
{
    pid_t pid;
    double t0 = now();
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0)
        die("cannot run %s: %s", argv[0], strerror(rc));
    int st = 0;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            die("waitpid %s: %s", argv[0], strerror(errno));
    double t = now() - t0;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("%s %s failed (%s %d)", argv[0], argv[1], WIFEXITED(st) ? "exit" : "signal",
            WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    return t;
}


/* Rank 0: the memory holds NEW, PREV holds OLD. xdelta3 on the dumps, then
 * cairn alone on the same two states. */
xd xdelta_vs_cairn(work *w, const char *prog, int reps, const char *tag)
{
    xd res = {0};
    change ch = count_changed(w, g_def_block);
    res.changed = (double)ch.bytes;
    res.dump = (double)w->bytes;

    char dir[4200], oldp[4300], newp[4300], dp[4300], outp[4300];
    snprintf(dir, sizeof dir, "%s/incr-xdelta.XXXXXX", g_base);
    if (!mkdtemp(dir))
        die("mkdtemp %s: %s", dir, strerror(errno));
    snprintf(oldp, sizeof oldp, "%s/old", dir);
    snprintf(newp, sizeof newp, "%s/new", dir);
    snprintf(dp, sizeof dp, "%s/delta", dir);
    snprintf(outp, sizeof outp, "%s/out", dir);
    write_file(oldp, w->prev, w->bytes, 0);
    write_file(newp, "", 0, 0);
    for (int i = 0; i < w->nv; i++)
        write_file(newp, w->v[i].p, var_bytes(&w->v[i]), 1);

    char *enc[] = {(char *)prog, "-e", "-s", oldp, newp, dp, NULL};
    double t[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        unlink(dp);
        t[r] = run_prog(enc);
    }
    res.x_time = median(t, reps);
    res.x_size = (double)file_size(dp);
    /* The delta must be real: it decodes to NEW. */
    char *dec[] = {(char *)prog, "-d", "-s", oldp, dp, outp, NULL};
    run_prog(dec);
    uint64_t n = 0;
    uint8_t *out = read_file(outp, &n);
    const uint8_t *q = out;
    int same = n == w->bytes;
    for (int i = 0; same && i < w->nv; i++) {
        same = memcmp(q, w->v[i].p, var_bytes(&w->v[i])) == 0;
        q += var_bytes(&w->v[i]);
    }
    free(out);
    if (!same)
        die("xdelta3 -d of its own delta does not give back NEW (%s)", dir);
    wipe(dir);

    /* cairn on the same rank alone: OLD full, then NEW, OLD, ... incremental. */
    char job[64];
    snprintf(job, sizeof job, "%.40s-%s", g_job, tag);
    series s = {.tag = tag, .incr = 1, .codec = "none", .max_changed = 100};
    configure(&s, job);
    set_env("CAIRN_INCR_FULL_EVERY", "1000000");
    set_env("CAIRN_COMPRESS_THREADS", "1");
    cairn_ctx *ctx = NULL;
    check_cairn(cairn_init(MPI_COMM_SELF, NULL, &ctx), NULL, "cairn_init (MPI_COMM_SELF)");
    protect_all(ctx, w);
    swap_prev(w); /* memory: OLD */
    check_cairn(cairn_checkpoint(ctx, 0, CAIRN_LEVEL_LOCAL), ctx, "cairn_checkpoint");
    double ct[MAX_REPS], cbytes[MAX_REPS], cdelta[MAX_REPS];
    for (int r = 0; r < reps; r++) {
        swap_prev(w); /* NEW, OLD, NEW, ... */
        usleep((useconds_t)g_settle_us);
        double t0 = now();
        int rc = cairn_checkpoint(ctx, r + 1, CAIRN_LEVEL_LOCAL);
        ct[r] = now() - t0;
        check_cairn(rc, ctx, "cairn_checkpoint");
        cairn_gen_info info[2];
        int k = 0;
        check_cairn(cairn_generations(ctx, info, 2, &k), ctx, "cairn_generations");
        if (k < 1 || info[0].id != r + 1 || info[0].parent != r)
            die("%s: generation %d is not an increment over %d", job, r + 1, r);
        if (info[0].delta != ch.block_bytes)
            die("%s: generation %d stores %llu bytes of blocks, the changed blocks hold %llu",
                job, r + 1, (unsigned long long)info[0].delta,
                (unsigned long long)ch.block_bytes);
        cbytes[r] = (double)info[0].bytes;
        cdelta[r] = (double)info[0].delta;
    }
    if (reps % 2 == 0)
        swap_prev(w); /* back to NEW in memory, OLD in PREV */
    check_cairn(cairn_finalize(ctx), NULL, "cairn_finalize");
    set_env("CAIRN_INCR_FULL_EVERY", NULL);
    set_env("CAIRN_COMPRESS_THREADS", NULL);
    char jd[4352];
    job_dir(jd, sizeof jd, job);
    wipe(jd);
    res.c_time = median(ct, reps);
    res.c_bytes = median(cbytes, reps);
    res.c_delta = median(cdelta, reps);
    return res;
}
