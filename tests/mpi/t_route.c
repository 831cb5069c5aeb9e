/*
 * t_route.c - the MPI test application for routed files (cairn_route_file),
 * run by tests/mpi/run_mpi.sh. Every mode is a real job; a restart is a new
 * job that names the old one's directory (CAIRN_JOB).
 *
 *   save          gen 1: route A and B, write both; gen 2: route B and E,
 *                 write both, unroute E: gen 2 must hold only B. After each
 *                 checkpoint the staging directory must be empty. Bad names
 *                 ('a/b', '', '.', '..', too long) and unrouting a name that
 *                 is not routed must give CAIRN_EINVAL and change nothing;
 *                 rank 0 prints each refusal's message.
 *   restore GEN   restart, expect GEN; each name of T_HOLDS (comma list) must
 *                 route to its restored copy, bit-exact, and each of T_LACKS
 *                 to a path with no file; with T_OUT set the copies are also
 *                 written to T_OUT/<name>.rank-<r> (for cmp by the script).
 *   after GEN     restart GEN; route C (not in GEN: no file there), write it,
 *                 checkpoint GEN+1; route D and never write it, route and
 *                 write C: checkpoint GEN+2 must fail naming D and leave C's
 *                 file in place; route C again, write it, checkpoint GEN+3
 *                 and GEN+4 must succeed.
 * File contents are a function of (rank, generation, name) and of varying
 * length; with T_REF set, save and after also write each file's contents to
 * T_REF/<name>.<gen>.rank-<r>. Ranks agree on pass/fail; rank 0 prints
 * "PASS mode" or "FAIL mode: reason" and the exit status is 0 only on PASS.
 */
#include "cairn.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int rank;
static char why[2048];

/* Record a failure (the first one is the verdict); every one goes to stderr. */
static int fail(const char *fmt, const char *a, const char *b)
{
    char msg[sizeof why];
    snprintf(msg, sizeof msg, fmt, a, b);
    fprintf(stderr, "rank %d: %s\n", rank, msg);
    if (!why[0])
        snprintf(why, sizeof why, "%s", msg);
    return 0;
}

static size_t content(long gen, const char *name, uint8_t *buf)
{
    size_t n = 3000 + (size_t)rank * 131 + (size_t)gen * 17 + (size_t)(unsigned char)name[0];
    uint64_t x = (uint64_t)rank * 0x9E3779B97F4A7C15ull ^ (uint64_t)gen << 32 ^ (uint64_t)name[0];
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        buf[i] = (uint8_t)(x >> 24);
    }
    return n;
}

static int put(const char *path, const uint8_t *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(buf, 1, n, f) == n;
    return (f && fclose(f) == 0 && ok) ? 1 : fail("cannot write %s%s", path, "");
}

/* Route NAME and write its contents of generation GEN there (and to T_REF). */
static int route_write(cairn_ctx *ctx, const char *name, long gen, char *dir, size_t dirlen)
{
    char path[4096], ref[4096];
    uint8_t buf[8192];
    int rc = cairn_route_file(ctx, name, path, sizeof path);
    if (rc != 0)
        return fail("route_file %s: %s", name, cairn_errmsg(ctx));
    if (dir) {
        snprintf(dir, dirlen, "%s", path);
        *strrchr(dir, '/') = '\0';
    }
    size_t n = content(gen, name, buf);
    if (getenv("T_REF")) {
        snprintf(ref, sizeof ref, "%s/%s.%ld.rank-%d", getenv("T_REF"), name, gen, rank);
        if (!put(ref, buf, n))
            return 0;
    }
    return put(path, buf, n);
}

/* The staging directory DIR must hold no file. */
static int staging_empty(const char *dir, const char *when)
{
    DIR *d = opendir(dir);
    if (!d)
        return fail("cannot list %s%s", dir, "");
    struct dirent *de;
    char left[300] = "";
    while ((de = readdir(d)) != NULL)
        if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 && !left[0])
            snprintf(left, sizeof left, "%s", de->d_name);
    closedir(d);
    return left[0] ? fail("staging directory still holds '%s' %s", left, when) : 1;
}

/* NAME must be refused with CAIRN_EINVAL and a message containing WANT. */
static int refused(cairn_ctx *ctx, const char *name, const char *want)
{
    char path[4096];
    int rc = cairn_route_file(ctx, name, path, sizeof path);
    if (rank == 0)
        printf("refused: %s\n", cairn_errmsg(ctx));
    if (rc != CAIRN_EINVAL || !strstr(cairn_errmsg(ctx), want))
        return fail("bad name not refused as it should be: %s (want '%s')", cairn_errmsg(ctx),
                    want);
    return 1;
}

static int checkpoint(cairn_ctx *ctx, long gen)
{
    int rc = cairn_checkpoint(ctx, gen, CAIRN_LEVEL_LOCAL);
    if (rc != 0) {
        char g[32];
        snprintf(g, sizeof g, "%ld", gen);
        return fail("checkpoint %s: %s", g, cairn_errmsg(ctx));
    }
    return 1;
}

/* Every step runs even after a failure, so one run reports every failure. */
static int save(cairn_ctx *ctx)
{
    char dir[4096] = "", path[4096], longname[300];
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    int ok = route_write(ctx, "A", 1, dir, sizeof dir);
    ok &= route_write(ctx, "B", 1, NULL, 0);
    if (!checkpoint(ctx, 1))
        return 0;
    ok &= staging_empty(dir, "after checkpoint 1");
    ok &= route_write(ctx, "B", 2, NULL, 0);
    ok &= route_write(ctx, "E", 2, NULL, 0);
    if (cairn_unroute_file(ctx, "E") != 0)
        ok = fail("unroute E: %s%s", cairn_errmsg(ctx), "");
    if (cairn_unroute_file(ctx, "Z") != CAIRN_EINVAL)
        ok = fail("unrouting Z, never routed, was not refused%s%s", "", "");
    else if (rank == 0)
        printf("refused: %s\n", cairn_errmsg(ctx));
    ok &= refused(ctx, "a/b", "routed file names are flat: 'a/b' contains '/'");
    ok &= refused(ctx, "", "empty");
    ok &= refused(ctx, ".", "'.'");
    ok &= refused(ctx, "..", "'..'");
    ok &= refused(ctx, longname, "longer than");
    if (cairn_route_file(ctx, "B", path, 16) != CAIRN_EINVAL) /* buffer too small */
        ok = fail("a 16-byte path buffer was accepted%s%s", "", "");
    if (!checkpoint(ctx, 2))
        return 0;
    return staging_empty(dir, "after checkpoint 2") && ok;
}

/* Restored NAME of GEN must be at its routed path, bit-exact (copied to T_OUT). */
static int holds(cairn_ctx *ctx, const char *name, long gen)
{
    char path[4096];
    static uint8_t want[8192], got[8192 + 1];
    if (cairn_route_file(ctx, name, path, sizeof path) != 0)
        return fail("route_file %s: %s", name, cairn_errmsg(ctx));
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail("restored copy of '%s' is missing at %s", name, path);
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    if (n != content(gen, name, want) || memcmp(got, want, n) != 0)
        return fail("restored '%s' differs from what was written (%s)", name, path);
    if (getenv("T_OUT")) {
        char out[4096];
        snprintf(out, sizeof out, "%s/%s.rank-%d", getenv("T_OUT"), name, rank);
        return put(out, got, n);
    }
    return 1;
}

static int lacks(cairn_ctx *ctx, const char *name)
{
    char path[4096];
    struct stat st;
    if (cairn_route_file(ctx, name, path, sizeof path) != 0)
        return fail("route_file %s: %s", name, cairn_errmsg(ctx));
    if (lstat(path, &st) == 0 || errno != ENOENT)
        return fail("'%s' is not in the restored generation, yet %s exists", name, path);
    return 1;
}

/* Each comma-separated name of list ENV through FN. */
static int each(cairn_ctx *ctx, const char *env, long gen, int holding)
{
    char list[256];
    snprintf(list, sizeof list, "%s", getenv(env) ? getenv(env) : "");
    for (char *s = NULL, *t = strtok_r(list, ",", &s); t; t = strtok_r(NULL, ",", &s))
        if (!(holding ? holds(ctx, t, gen) : lacks(ctx, t)))
            return 0;
    return 1;
}

static int restart(cairn_ctx *ctx, long gen)
{
    long got = -2;
    int rc = cairn_restart(ctx, gen, &got);
    if (rc != 0)
        return fail("restart: %s%s", cairn_errmsg(ctx), "");
    return got == gen ? 1 : fail("restored another generation%s%s", "", "");
}

static int after(cairn_ctx *ctx, long gen)
{
    char path[4096], dir[4096] = "";
    if (!restart(ctx, gen))
        return 0;
    int ok = lacks(ctx, "C");
    if (!route_write(ctx, "C", gen + 1, dir, sizeof dir) || !checkpoint(ctx, gen + 1))
        return 0;
    ok &= staging_empty(dir, "after the first checkpoint");
    if (cairn_route_file(ctx, "D", path, sizeof path) != 0) /* routed, never written */
        return fail("route_file D: %s%s", cairn_errmsg(ctx), "");
    if (!route_write(ctx, "C", gen + 2, NULL, 0))
        return 0;
    int rc = cairn_checkpoint(ctx, gen + 2, CAIRN_LEVEL_LOCAL);
    if (rank == 0)
        printf("unwritten: %s\n", cairn_errmsg(ctx));
    if (rc == 0 || !strstr(cairn_errmsg(ctx), "routed file 'D'") ||
        !strstr(cairn_errmsg(ctx), "never written"))
        ok = fail("checkpoint with D routed and never written: %s%s",
                  rc == 0 ? "succeeded" : cairn_errmsg(ctx), "");
    ok &= holds(ctx, "C", gen + 2); /* the failed checkpoint left what was written in place */
    for (long g = gen + 3; g <= gen + 4; g++) /* and later checkpoints work again */
        if (!route_write(ctx, "C", g, NULL, 0) || !checkpoint(ctx, g))
            return 0;
    return staging_empty(dir, "after the last checkpoint") && ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "";
    long gen = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    int64_t step = 0; /* one variable beside the files */
    cairn_ctx *ctx = NULL;
    int ok = 0;
    if (cairn_init(MPI_COMM_WORLD, NULL, &ctx) != 0)
        fail("init: %s%s", cairn_errmsg(NULL), "");
    else if (cairn_protect(ctx, "step", &step, CAIRN_INT64, 1, 0, NULL) != 0)
        fail("protect: %s%s", cairn_errmsg(ctx), "");
    else if (strcmp(mode, "save") == 0)
        ok = save(ctx);
    else if (strcmp(mode, "restore") == 0)
        ok = restart(ctx, gen) && each(ctx, "T_HOLDS", gen, 1) && each(ctx, "T_LACKS", gen, 0);
    else if (strcmp(mode, "after") == 0)
        ok = after(ctx, gen);
    else
        fail("usage: t_route save | restore GEN | after GEN (got '%s')%s", mode, "");
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "PASS %s\n" : "FAIL %s: %s\n", mode, why);
    if (!ok)
        fprintf(stderr, "rank %d: FAIL %s: %s\n", rank, mode, why);
    cairn_finalize(ctx);
    MPI_Finalize();
    return all ? 0 : 1;
}
