/*
 * t_auto.c - the MPI test application behind tests/mpi/run_auto.sh: what
 * compress.codec = auto picks, and that every pick restores.
 *
 *   save LEVEL ID     protect the variables below, checkpoint generation ID
 *                     at LEVEL; then check (cairn_var_query) that geo, an
 *                     fpzip array stored with its 2-D shape, takes fewer bytes
 *                     than the same values protected as a plain array (geo1d)
 *   restore ID        restart (CAIRN_LATEST) must give ID; every lossless
 *                     variable bit for bit, the lossy one within its bound
 * Every rank holds the same kinds of data (similar, not equal: each rank's
 * values are shifted and phased by its rank):
 *   field   2-D double 256 x 512, smooth, values on a 2^-20 grid (shuffled
 *           codecs reach about 3x)
 *   sparse  double 131072, 90% zeros
 *   noise   1 MiB of uint8 noise: incompressible
 *   geo     2-D float 360 x 720, a smooth surface (fpzip, named), and geo1d
 *           the same values as a plain array of 259200 (fpzip)
 *   bounded 2-D double 256 x 256 with a relative bound of 1e-3 (lossy auto)
 *   spiky   float 65536 of range 1e-3 with a NaN, +Inf and -Inf among them,
 *           relative bound 1e-3: of the finite values' range (1e-6), not of
 *           one that counts the infinities; these restored as they were
 *   mixed   1 MiB of uint8: runs of equal bytes on ranks 0 and 1, noise on the
 *           others (alone, each rank would pick otherwise: the job agrees one)
 *   solo    double 131072, a ramp, on odd ranks only (not in rank 0's list:
 *           each rank that has it picks alone)
 * Ranks agree on pass/fail; rank 0 prints "PASS mode" or "FAIL mode: why"
 * (and the stored sizes of geo and geo1d); exit status 0 only on PASS.
 */
#include "cairn.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FX 256
#define FY 512
#define NSPARSE 131072
#define NNOISE (1 << 20)
#define GX 360
#define GY 720
#define BX 256
#define BY 256
#define REL 1e-3
#define NMIXED (1 << 20)
#define NSOLO 131072
#define NSPIKY 65536

static int rank;
static double *field, *sparse, *bounded, *solo;
static uint8_t *noise, *mixed;
static float *geo, *geo1d, *spiky;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}

static void fill(void)
{
    double ph = 0.1 * rank;
    for (int i = 0; i < FX; i++)
        for (int j = 0; j < FY; j++) /* on a grid of 2^-20: the low mantissa bits are zero */
            field[i * FY + j] = ldexp(round(ldexp(100.0 + rank + 20.0 * sin(i * 0.02 + ph) *
                                                            cos(j * 0.015), 20)), -20);
    for (int i = 0; i < NSPARSE; i++)
        sparse[i] = (i % 100) < 90 ? 0.0 : 1.0 + 0.25 * sin(i * 0.001 + ph);
    for (int i = 0; i < NNOISE; i++)
        noise[i] = (uint8_t)mix((uint64_t)i * 977 + (uint64_t)rank);
    for (int i = 0; i < GX; i++)
        for (int j = 0; j < GY; j++) /* smooth in both directions, full precision */
            geo[i * GY + j] = geo1d[i * GY + j] =
                (float)(50.0 * sin(i * 0.031 + ph) * cos(j * 0.017) + 10.0 * sin((i + j) * 0.05) +
                        (double)rank);
    for (int i = 0; i < NMIXED; i++)
        mixed[i] = rank < 2 ? (uint8_t)(i / 4096 + rank) : (uint8_t)mix((uint64_t)i + 7u * rank);
    for (int i = 0; i < NSOLO; i++)
        solo[i] = 0.5 * i;
    for (int i = 0; i < BX; i++)
        for (int j = 0; j < BY; j++)
            bounded[i * BY + j] = exp(-((i - 100.0) * (i - 100.0) + (j - 90.0 - rank) *
                                        (j - 90.0 - rank)) / 2000.0) + 0.5 * sin(i * 0.01);
    for (int i = 0; i < NSPIKY; i++)
        spiky[i] = (float)(5e-4 * (1.0 + sin(i * 0.003 + ph)));
    spiky[100] = NAN, spiky[NSPIKY / 2] = INFINITY, spiky[NSPIKY - 7] = -INFINITY;
}

static void alloc(void)
{
    field = malloc(sizeof *field * FX * FY), sparse = malloc(sizeof *sparse * NSPARSE);
    bounded = malloc(sizeof *bounded * BX * BY), noise = malloc(NNOISE);
    geo = malloc(sizeof *geo * GX * GY), geo1d = malloc(sizeof *geo1d * GX * GY);
    mixed = malloc(NMIXED), solo = malloc(sizeof *solo * NSOLO);
    spiky = malloc(sizeof *spiky * NSPIKY);
    if (!field || !sparse || !bounded || !noise || !geo || !geo1d || !mixed || !solo || !spiky) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static int protect(cairn_ctx *ctx)
{
    int rc = 0;
    rc |= cairn_protect(ctx, "field", field, CAIRN_DOUBLE, FX * FY, 2, (size_t[]){FX, FY});
    rc |= cairn_protect(ctx, "sparse", sparse, CAIRN_DOUBLE, NSPARSE, 0, NULL);
    rc |= cairn_protect(ctx, "noise", noise, CAIRN_UINT8, NNOISE, 0, NULL);
    rc |= cairn_protect(ctx, "geo", geo, CAIRN_FLOAT, GX * GY, 2, (size_t[]){GX, GY});
    rc |= cairn_protect_codec(ctx, "geo", "fpzip");
    rc |= cairn_protect(ctx, "geo1d", geo1d, CAIRN_FLOAT, GX * GY, 0, NULL);
    rc |= cairn_protect_codec(ctx, "geo1d", "fpzip");
    rc |= cairn_protect(ctx, "bounded", bounded, CAIRN_DOUBLE, BX * BY, 2, (size_t[]){BX, BY});
    rc |= cairn_protect_bound_rel(ctx, "bounded", REL);
    rc |= cairn_protect(ctx, "spiky", spiky, CAIRN_FLOAT, NSPIKY, 0, NULL);
    rc |= cairn_protect_bound_rel(ctx, "spiky", REL);
    rc |= cairn_protect(ctx, "mixed", mixed, CAIRN_UINT8, NMIXED, 0, NULL);
    if (rank % 2)
        rc |= cairn_protect(ctx, "solo", solo, CAIRN_DOUBLE, NSOLO, 0, NULL);
    return rc;
}

/* The restored variables against freshly computed values. */
static const char *compare(void)
{
    double *f = field, *s = sparse, *b = bounded, *so = solo;
    uint8_t *n = noise, *mx = mixed;
    float *g = geo, *g1 = geo1d, *sp = spiky;
    alloc();
    fill();
    const char *why = NULL;
    if (memcmp(f, field, sizeof *field * FX * FY) != 0)
        why = "field differs";
    else if (memcmp(s, sparse, sizeof *sparse * NSPARSE) != 0)
        why = "sparse differs";
    else if (memcmp(n, noise, NNOISE) != 0)
        why = "noise differs";
    else if (memcmp(g, geo, sizeof *geo * GX * GY) != 0)
        why = "geo differs";
    else if (memcmp(g1, geo1d, sizeof *geo1d * GX * GY) != 0)
        why = "geo1d differs";
    else if (memcmp(mx, mixed, NMIXED) != 0)
        why = "mixed differs";
    else if (rank % 2 && memcmp(so, solo, sizeof *solo * NSOLO) != 0)
        why = "solo differs";
    double lo = bounded[0], hi = bounded[0];
    for (int i = 0; i < BX * BY; i++)
        lo = bounded[i] < lo ? bounded[i] : lo, hi = bounded[i] > hi ? bounded[i] : hi;
    for (int i = 0; !why && i < BX * BY; i++)
        if (!(fabs(b[i] - bounded[i]) <= REL * (hi - lo)))
            why = "bounded is outside its bound";
    float flo = INFINITY, fhi = -INFINITY; /* spiky: the finite values' range */
    for (int i = 0; i < NSPIKY; i++)
        if (isfinite(spiky[i]))
            flo = spiky[i] < flo ? spiky[i] : flo, fhi = spiky[i] > fhi ? spiky[i] : fhi;
    for (int i = 0; !why && i < NSPIKY; i++)
        if (isfinite(spiky[i]) ? !(fabs((double)sp[i] - spiky[i]) <= REL * ((double)fhi - flo))
                               : isnan(spiky[i]) ? !isnan(sp[i]) : sp[i] != spiky[i])
            why = "spiky is outside its bound (of its finite range), or a NaN or infinity lost";
    free(f), free(s), free(b), free(n), free(g), free(g1), free(mx), free(so), free(sp);
    return why;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *mode = argc > 1 ? argv[1] : "";
    alloc();
    cairn_ctx *ctx = NULL;
    char why[512] = "";
    int rc = cairn_init(MPI_COMM_WORLD, NULL, &ctx);
    if (rc == 0)
        rc = protect(ctx);
    if (rc != 0) {
        snprintf(why, sizeof why, "init/protect: %s", cairn_errmsg(ctx));
    } else if (strcmp(mode, "save") == 0 && argc > 3) {
        fill();
        long id = atol(argv[3]);
        rc = cairn_checkpoint(ctx, id, atoi(argv[2]));
        cairn_var_info g2 = {0}, g1 = {0};
        if (rc == 0)
            rc = cairn_var_query(ctx, id, "geo", &g2);
        if (rc == 0)
            rc = cairn_var_query(ctx, id, "geo1d", &g1);
        if (rc != 0)
            snprintf(why, sizeof why, "checkpoint/query: %s", cairn_errmsg(ctx));
        else if (!(g2.stored < g1.stored))
            snprintf(why, sizeof why, "geo (2-D) stored %llu bytes, not fewer than geo1d's %llu",
                     (unsigned long long)g2.stored, (unsigned long long)g1.stored);
        if (rank == 0 && rc == 0)
            printf("geo: %llu raw, 2-D %llu stored (%.3fx), 1-D %llu stored (%.3fx)\n",
                   (unsigned long long)g2.bytes, (unsigned long long)g2.stored,
                   (double)g2.bytes / (double)g2.stored, (unsigned long long)g1.stored,
                   (double)g1.bytes / (double)g1.stored);
    } else if (strcmp(mode, "restore") == 0 && argc > 2) {
        memset(field, 0xa5, sizeof *field * FX * FY);
        memset(sparse, 0xa5, sizeof *sparse * NSPARSE);
        memset(noise, 0xa5, NNOISE), memset(geo, 0xa5, sizeof *geo * GX * GY);
        memset(geo1d, 0xa5, sizeof *geo1d * GX * GY), memset(bounded, 0, sizeof *bounded * BX * BY);
        memset(mixed, 0xa5, NMIXED), memset(solo, 0xa5, sizeof *solo * NSOLO);
        memset(spiky, 0, sizeof *spiky * NSPIKY);
        long got = -1;
        rc = cairn_restart(ctx, CAIRN_LATEST, &got);
        const char *bad = rc == 0 ? compare() : NULL;
        if (rc != 0)
            snprintf(why, sizeof why, "restart: %s", cairn_errmsg(ctx));
        else if (got != atol(argv[2]))
            snprintf(why, sizeof why, "restored generation %ld, expected %s", got, argv[2]);
        else if (bad)
            snprintf(why, sizeof why, "rank %d: %s", rank, bad);
    } else {
        snprintf(why, sizeof why, "usage: t_auto save LEVEL ID | restore ID");
    }
    int mine = why[0] != '\0', any = 0;
    MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    if (mine)
        fprintf(stderr, "rank %d: %s\n", rank, why);
    if (rank == 0)
        printf(any ? "FAIL %s\n" : "PASS %s\n", mode);
    cairn_finalize(ctx);
    free(field), free(sparse), free(bounded), free(noise), free(geo), free(geo1d), free(mixed);
    free(solo), free(spiky);
    MPI_Finalize();
    return any ? 1 : 0;
}
