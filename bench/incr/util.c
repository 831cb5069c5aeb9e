/*
 * util.c - incr_bench's small helpers (MPI reductions and barriers, the
 * environment, removing and sizing files) and the protected memory of a
 * workload: protecting it, the snapshot of the previous checkpoint, what
 * changed since (counted by the benchmark, never by asking cairn), and
 * scrambling it before a restart. Owned by incr_bench (bench/incr_bench.c).
 */
#include "incr_bench.h"

long env_long(const char *name, long def)
{
    const char *s = getenv(name);
    if (s == NULL || s[0] == '\0')
        return def;
    return parse_long(s, name, 0, 1L << 30);
}

void barrier(void) { check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

/* A barrier that sleeps while it waits, so that rank 0 can measure alone
 * while the other ranks take no CPU time (blocking MPI calls spin). */
void quiet_barrier(void)
{
    MPI_Request req;
    check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &req), "MPI_Ibarrier");
    for (;;) {
        int done = 0;
        check_mpi(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (done)
            return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

void settle(void)
{
    usleep((useconds_t)g_settle_us);
    barrier();
}

uint64_t sum_u64(uint64_t v)
{
    uint64_t all = 0;
    check_mpi(MPI_Allreduce(&v, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    return all;
}

double max_double(double v)
{
    double all = 0;
    check_mpi(MPI_Allreduce(&v, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return all;
}

void set_env(const char *name, const char *value)
{
    int rc = value ? setenv(name, value, 1) : unsetenv(name);
    if (rc != 0)
        die("setenv %s: %s", name, strerror(errno));
}

void set_env_long(const char *name, long v)
{
    char s[32];
    snprintf(s, sizeof s, "%ld", v);
    set_env(name, s);
}

static int rm_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)ftw;
    int rc = type == FTW_DP ? rmdir(path) : unlink(path);
    if (rc != 0 && errno != ENOENT) /* a pruning thread may race us: gone is wiped */
        return errno;
    return 0;
}

/* rm -rf PATH: depth first, never following a symlink. */
void wipe(const char *path)
{
    for (int tries = 0; tries < 10; tries++) {
        struct stat st;
        if (lstat(path, &st) != 0) {
            if (errno == ENOENT)
                return;
            die("lstat %s: %s", path, strerror(errno));
        }
        int rc = nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS);
        if (rc == 0 || (rc < 0 && errno == ENOENT))
            continue;
        die("removing %s: %s", path, strerror(rc > 0 ? rc : errno));
    }
    die("removing %s: still there after 10 attempts", path);
}

/* Size of a regular file, or 0 if it does not exist. */
uint64_t file_size(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        die("lstat %s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode))
        die("%s is not a regular file", path);
    return (uint64_t)st.st_size;
}

double pct_less(double a, double b) { return b > 0 ? 100.0 * (1.0 - a / b) : 0.0; }

/* ---- the protected memory of a workload ------------------------------- */

void protect_all(cairn_ctx *ctx, const work *w)
{
    for (int i = 0; i < w->nv; i++) {
        const var *v = &w->v[i];
        check_cairn(cairn_protect(ctx, v->name, v->p, v->type, v->count, v->ndims,
                                  v->ndims ? v->dims : NULL),
                    ctx, "cairn_protect");
    }
}

/* PREV := the protected memory. */
void snap(work *w)
{
    uint8_t *q = w->prev;
    for (int i = 0; i < w->nv; i++) {
        memcpy(q, w->v[i].p, var_bytes(&w->v[i]));
        q += var_bytes(&w->v[i]);
    }
}

/* Swap the protected memory with PREV. */
void swap_prev(work *w)
{
    uint8_t tmp[65536];
    uint8_t *q = w->prev;
    for (int i = 0; i < w->nv; i++) {
        uint8_t *p = w->v[i].p;
        for (uint64_t off = 0, n = var_bytes(&w->v[i]); off < n; off += sizeof tmp) {
            size_t len = n - off < sizeof tmp ? (size_t)(n - off) : sizeof tmp;
            memcpy(tmp, p + off, len);
            memcpy(p + off, q + off, len);
            memcpy(q + off, tmp, len);
        }
        q += var_bytes(&w->v[i]);
    }
}

change count_changed(const work *w, uint32_t block)
{
    const uint8_t *q = w->prev;
    change c = {0};
    for (int i = 0; i < w->nv; i++) {
        const uint8_t *p = w->v[i].p;
        uint64_t n = var_bytes(&w->v[i]);
        for (uint64_t b = 0; b * block < n; b++) {
            uint64_t lo = b * block, hi = lo + block < n ? lo + block : n, in = 0, k = lo;
            for (; k + 8 <= hi; k += 8) {
                uint64_t x, y;
                memcpy(&x, p + k, 8);
                memcpy(&y, q + k, 8);
                if ((x ^= y) == 0)
                    continue;
                for (int j = 0; j < 8; j++)
                    in += ((x >> (8 * j)) & 0xff) != 0;
            }
            for (; k < hi; k++)
                in += p[k] != q[k];
            c.bytes += in;
            c.blocks += in != 0;
            c.block_bytes += in ? hi - lo : 0;
            c.nblocks++;
        }
        q += n;
    }
    return c;
}

/* Offset of the first byte of the protected memory that differs from PREV, or -1. */
long long first_diff(const work *w, const char **name)
{
    const uint8_t *q = w->prev;
    for (int i = 0; i < w->nv; i++) {
        uint64_t n = var_bytes(&w->v[i]);
        if (memcmp(w->v[i].p, q, n) != 0) {
            const uint8_t *p = w->v[i].p;
            uint64_t k = 0;
            while (p[k] == q[k])
                k++;
            *name = w->v[i].name;
            return (long long)k;
        }
        q += n;
    }
    return -1;
}

void scramble(work *w)
{
    for (int i = 0; i < w->nv; i++)
        memset(w->v[i].p, 0x5A, var_bytes(&w->v[i]));
}
