/*
 * t_h5.c - the MPI test application for routed HDF5 files at level 4
 * (issue 19 part 2), run by tests/mpi/run_h5.sh. Every mode is a real job; a
 * restart is a new job that names the old one's directory (CAIRN_JOB).
 *
 *   save GEN      each rank writes two HDF5 checkpoints, state.h5 and aux.h5
 *                 (below), a text file notes.txt and fake.h5 (the HDF5
 *                 signature, then text: libhdf5 cannot open it), routes all and
 *                 checkpoints GEN at level 4. With T_REF set, a copy of each
 *                 file goes to T_REF/<name>.rank-<r> first.
 *   restore GEN   restart, expect GEN; each routed file must be back at its
 *                 routed path, byte-identical to T_REF's copy (read here, and
 *                 copied to T_OUT/<name>.rank-<r> for cmp by the script).
 *   has-hdf5      (no MPI) exit 0 if built with libhdf5, else 77.
 *   expect-fail CODE GEN
 *                 restart must fail with CODE (a name: CAIRN_ECORRUPT...);
 *                 rank 0 prints "refused: <message>"; no routed file may be
 *                 at its path afterwards (nothing wrong was written).
 *
 * state.h5: groups /fields, /fields/sub, /meta with attributes (a scalar
 * int, a double array, a fixed string) on the root, groups and datasets;
 * contiguous datasets /fields/T (double 48x40, a smooth field of rank and
 * generation), /fields/rho (float 2000), /fields/sub/ids (int32 600),
 * /fields/sub/count (int64 300), /meta/names (fixed strings of 24 bytes, 40
 * of them), /meta/particles (a compound {int id; double x; float m}, 100),
 * /meta/tiny (int32 4: below the size that is taken out); chunked
 * /fields/chunked (double 40x40 in 10x10 chunks), and /fields/deflated
 * (chunked, deflate) when the deflate filter is there. aux.h5: one group and
 * a double dataset. Ranks agree on pass/fail; rank 0 prints "PASS mode" or
 * "FAIL mode: reason"; the exit status is 0 only on PASS.
 */
#include "cairn.h"

#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef CAIRN_HAVE_HDF5
#include <hdf5.h>
#endif

static int rank;
static char why[2048];
static const char *const names[] = {"state.h5", "aux.h5", "notes.txt", "fake.h5"};
#define NFILES 4

static int fail(const char *fmt, const char *a, const char *b)
{
    char msg[sizeof why];
    snprintf(msg, sizeof msg, fmt, a, b);
    fprintf(stderr, "rank %d: %s\n", rank, msg);
    if (!why[0])
        snprintf(why, sizeof why, "%s", msg);
    return 0;
}

#ifdef CAIRN_HAVE_HDF5
static int h5ok(herr_t rc, const char *what) { return rc < 0 ? fail("HDF5: %s failed%s", what, "") : 1; }

static void attr_int(hid_t obj, const char *name, int v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
    H5Sclose(sp);
}

static void attr_str(hid_t obj, const char *name, const char *s)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(s) + 1);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, t, s);
    H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
}

static void attr_doubles(hid_t obj, const char *name, const double *v, hsize_t n)
{
    hid_t sp = H5Screate_simple(1, &n, NULL);
    hid_t a = H5Acreate2(obj, name, H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_DOUBLE, v);
    H5Aclose(a);
    H5Sclose(sp);
}

/* Write dataset NAME under LOC: file type FT, memory type MT, RANKN dims, DCPL. */
static int dset(hid_t loc, const char *name, hid_t ft, hid_t mt, int rankn, const hsize_t *dims,
                hid_t dcpl, const void *data)
{
    hid_t sp = H5Screate_simple(rankn, dims, NULL);
    hid_t d = H5Dcreate2(loc, name, ft, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    int ok = d >= 0 && h5ok(H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), name);
    if (d >= 0) {
        attr_int(d, "version", 3);
        attr_str(d, "units", rankn == 2 ? "kelvin" : "none");
        H5Dclose(d);
    } else {
        ok = fail("HDF5: cannot create %s%s", name, "");
    }
    H5Sclose(sp);
    return ok;
}

typedef struct particle {
    int id;
    double x;
    float m;
} particle;

static int write_state(const char *path, long gen)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return fail("HDF5: cannot create %s%s", path, "");
    int ok = 1;
    attr_int(f, "step", (int)gen * 10);
    attr_str(f, "code", "t_h5 heat");
    hid_t g = H5Gcreate2(f, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sub = H5Gcreate2(g, "sub", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t meta = H5Gcreate2(f, "meta", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    double box[6] = {0, 0, 0, 1, 1, 0.5 + rank};
    attr_doubles(g, "box", box, 6);
    attr_str(meta, "who", "rank");

    enum { NX = 48, NY = 40, NR = 2000, NI = 600, NC = 300, NS = 40, NP = 100, CH = 40 };
    static double T[NX][NY], C[CH][CH];
    static float rho[NR];
    static int32_t ids[NI];
    static int64_t cnt[NC];
    static char str[NS][24];
    static particle pt[NP];
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            T[i][j] = 300.0 + 10.0 * sin(0.1 * (i + 48 * rank) + 0.01 * gen) * cos(0.07 * j);
    for (int i = 0; i < NR; i++)
        rho[i] = (float)(1.0 + 0.001 * i + 0.01 * rank + 0.0001 * gen);
    for (int i = 0; i < NI; i++)
        ids[i] = rank * NI + i;
    for (int i = 0; i < NC; i++)
        cnt[i] = (int64_t)i * i + gen;
    for (int i = 0; i < NS; i++)
        snprintf(str[i], sizeof str[i], "species-%02d-r%d", i, rank);
    for (int i = 0; i < NP; i++)
        pt[i] = (particle){rank * NP + i, 0.5 * i + rank, (float)(1.0 + 0.1 * i)};
    for (int i = 0; i < CH; i++)
        for (int j = 0; j < CH; j++)
            C[i][j] = (double)(i * CH + j) * 0.25 + rank;

    hsize_t d2[2] = {NX, NY}, d1;
    ok &= dset(g, "T", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, d2, H5P_DEFAULT, T);
    d1 = NR;
    ok &= dset(g, "rho", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 1, &d1, H5P_DEFAULT, rho);
    d1 = NI;
    ok &= dset(sub, "ids", H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &d1, H5P_DEFAULT, ids);
    d1 = NC;
    ok &= dset(sub, "count", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &d1, H5P_DEFAULT, cnt);
    hid_t st = H5Tcopy(H5T_C_S1);
    H5Tset_size(st, 24);
    d1 = NS;
    ok &= dset(meta, "names", st, st, 1, &d1, H5P_DEFAULT, str);
    H5Tclose(st);
    hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(particle));
    H5Tinsert(ct, "id", HOFFSET(particle, id), H5T_NATIVE_INT);
    H5Tinsert(ct, "x", HOFFSET(particle, x), H5T_NATIVE_DOUBLE);
    H5Tinsert(ct, "m", HOFFSET(particle, m), H5T_NATIVE_FLOAT);
    d1 = NP;
    ok &= dset(meta, "particles", ct, ct, 1, &d1, H5P_DEFAULT, pt);
    H5Tclose(ct);
    d1 = 4;
    ok &= dset(meta, "tiny", H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &d1, H5P_DEFAULT, ids);
    hsize_t dc[2] = {CH, CH}, chunk[2] = {10, 10};
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    ok &= dset(g, "chunked", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, dc, dcpl, C);
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
        H5Pset_deflate(dcpl, 4);
        ok &= dset(g, "deflated", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, dc, dcpl, C);
    }
    H5Pclose(dcpl);
    H5Gclose(meta);
    H5Gclose(sub);
    H5Gclose(g);
    return h5ok(H5Fclose(f), "closing state.h5") && ok;
}

static int write_aux(const char *path, long gen)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return fail("HDF5: cannot create %s%s", path, "");
    hid_t g = H5Gcreate2(f, "fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    static double T[1000];
    for (int i = 0; i < 1000; i++)
        T[i] = 1.0 / (1.0 + i + rank + gen);
    hsize_t n = 1000;
    int ok = dset(g, "T", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &n, H5P_DEFAULT, T);
    H5Gclose(g);
    return h5ok(H5Fclose(f), "closing aux.h5") && ok;
}
#endif

static int write_notes(const char *path, long gen, bool fake)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return fail("cannot write %s%s", path, "");
    if (fake)
        fwrite("\x89HDF\r\n\x1a\n", 1, 8, f);
    for (int i = 0; i < 200; i++)
        fprintf(f, "rank %d generation %ld line %d: not an HDF5 file\n", rank, gen, i);
    return fclose(f) == 0 ? 1 : fail("cannot write %s%s", path, "");
}

/* Whole file PATH into *BUF (malloc'd), *N bytes. */
static int slurp(const char *path, uint8_t **buf, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail("cannot open %s%s", path, "");
    struct stat st;
    fstat(fileno(f), &st);
    *n = (size_t)st.st_size;
    *buf = malloc(*n + 1);
    size_t got = *buf ? fread(*buf, 1, *n, f) : 0;
    fclose(f);
    return got == *n ? 1 : fail("cannot read %s%s", path, "");
}

static int put(const char *path, const uint8_t *buf, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(buf, 1, n, f) == n;
    return (f && fclose(f) == 0 && ok) ? 1 : fail("cannot write %s%s", path, "");
}

static int copy_to(const char *env, const char *from, const char *name)
{
    if (!getenv(env))
        return 1;
    char to[4096];
    snprintf(to, sizeof to, "%s/%s.rank-%d", getenv(env), name, rank);
    uint8_t *b = NULL;
    size_t n = 0;
    int ok = slurp(from, &b, &n) && put(to, b, n);
    free(b);
    return ok;
}

static int save(cairn_ctx *ctx, long gen)
{
    int ok = 1;
    for (int i = 0; i < NFILES; i++) {
        char path[4096];
        if (cairn_route_file(ctx, names[i], path, sizeof path) != 0)
            return fail("route_file %s: %s", names[i], cairn_errmsg(ctx));
#ifdef CAIRN_HAVE_HDF5
        ok &= i == 0 ? write_state(path, gen) : i == 1 ? write_aux(path, gen)
                                                        : write_notes(path, gen, i == 3);
#else
        ok &= write_notes(path, gen, i == 3);
#endif
        ok &= copy_to("T_REF", path, names[i]);
    }
    if (!ok)
        return 0;
    if (cairn_checkpoint(ctx, gen, CAIRN_LEVEL_PFS) != 0)
        return fail("checkpoint: %s%s", cairn_errmsg(ctx), "");
    return 1;
}

static int restore(cairn_ctx *ctx, long gen)
{
    long got = -2;
    if (cairn_restart(ctx, gen, &got) != 0)
        return fail("restart: %s%s", cairn_errmsg(ctx), "");
    if (got != gen)
        return fail("restored another generation%s%s", "", "");
    int ok = 1;
    for (int i = 0; i < NFILES; i++) {
        char path[4096], ref[4096];
        if (cairn_route_file(ctx, names[i], path, sizeof path) != 0)
            return fail("route_file %s: %s", names[i], cairn_errmsg(ctx));
        uint8_t *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        if (getenv("T_REF")) {
            snprintf(ref, sizeof ref, "%s/%s.rank-%d", getenv("T_REF"), names[i], rank);
            if (slurp(path, &a, &na) && slurp(ref, &b, &nb) &&
                (na != nb || memcmp(a, b, na) != 0))
                ok = fail("restored %s differs from the copy kept at %s", names[i], ref);
            else if (!a || !b)
                ok = 0;
        }
        free(a);
        free(b);
        ok &= copy_to("T_OUT", path, names[i]);
    }
    return ok;
}

static int expect_fail(cairn_ctx *ctx, const char *code, long gen)
{
    long got = -2;
    int rc = cairn_restart(ctx, gen, &got);
    if (rank == 0)
        printf("refused: %s\n", cairn_errmsg(ctx));
    const char *name = rc ? cairn_strerror(rc) : "success";
    int want = strcmp(code, "CAIRN_ECORRUPT") == 0 ? CAIRN_ECORRUPT
               : strcmp(code, "CAIRN_ELOST") == 0  ? CAIRN_ELOST
               : strcmp(code, "CAIRN_ENOENT") == 0 ? CAIRN_ENOENT
                                                   : 1;
    if (rc != want)
        return fail("restart returned '%s', expected %s", name, code);
    int ok = 1;
    for (int i = 0; i < NFILES; i++) {
        char path[4096];
        struct stat st;
        if (cairn_route_file(ctx, names[i], path, sizeof path) != 0)
            return fail("route_file %s: %s", names[i], cairn_errmsg(ctx));
        if (lstat(path, &st) == 0 || errno != ENOENT)
            ok = fail("the failed restart left a file at %s%s", path, "");
    }
    return ok;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "has-hdf5") == 0) { /* no MPI: for the script */
#ifdef CAIRN_HAVE_HDF5
        return 0;
#else
        return 77;
#endif
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "";
    long gen = argc > 2 ? strtol(argv[argc - 1], NULL, 10) : 0;
    int64_t step = gen; /* one variable beside the files */
    cairn_ctx *ctx = NULL;
    int ok = 0;
    if (cairn_init(MPI_COMM_WORLD, NULL, &ctx) != 0)
        fail("init: %s%s", cairn_errmsg(NULL), "");
    else if (cairn_protect(ctx, "step", &step, CAIRN_INT64, 1, 0, NULL) != 0)
        fail("protect: %s%s", cairn_errmsg(ctx), "");
    else if (strcmp(mode, "save") == 0 && argc == 3)
        ok = save(ctx, gen);
    else if (strcmp(mode, "restore") == 0 && argc == 3)
        ok = restore(ctx, gen);
    else if (strcmp(mode, "expect-fail") == 0 && argc == 4)
        ok = expect_fail(ctx, argv[2], gen);
    else
        fail("usage: t_h5 save GEN | restore GEN | expect-fail CODE GEN (got '%s')%s", mode, "");
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
