/*
 * recovervar.c - FTI's per-variable recovery, in the manner of FTI's own
 * tests: protect variables of rank-dependent sizes (a user type made with
 * FTI_InitType among them), checkpoint, leave; on the restart ask each one's
 * size (FTI_GetStoredSize), allocate it, protect it (one through FTI_Realloc)
 * and recover it alone (FTI_RecoverVar), in a shuffled order, then compare
 * every byte. Only FTI's API and MPI are used (tests/compat/fti/run_fti.sh).
 *
 * Usage: recovervar <FTI config file> <level> crash|finish [anyorder]
 *   FTI_Status() == 0: write the variables, checkpoint twice at <level> (the
 *     second with other values), then "crash": leave without FTI_Finalize,
 *     as FTI's tests do, or "finish": FTI_Finalize.
 *   FTI_Status() != 0: recover as above; exit 0 only if every rank holds the
 *     second checkpoint's values exactly. With "anyorder" each rank asks the
 *     sizes and recovers in an order of its own (as FTI's recoverVar test
 *     lets it: these calls are local), and every third rank recovers all but
 *     one variable, whose memory must stay as it was (no collective call
 *     between FTI_Init and the final check).
 * Prints "FTI_Init = <code>" and "FTI_Status = <n>"; exits 2 if FTI_Init
 * fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fti.h>

#define NVARS 5

typedef struct pair { /* no padding: every byte is data */
    double b;
    long a;
} pair;

static FTIT_type PAIR;
static int rank;

/* Elements of variable v on this rank, and their size. */
static long count_of(int v) { return v == 4 ? 1 : 1000 + 37L * rank + 101L * v; }

static int size_of(int v)
{
    static const int sizes[NVARS] = {sizeof(int), sizeof(double), sizeof(pair), 1, sizeof(long)};
    return sizes[v];
}

static FTIT_type type_of(int v)
{
    FTIT_type t[NVARS] = {FTI_INTG, FTI_DBLE, PAIR, FTI_CHAR, FTI_LONG};
    return t[v];
}

/* The value pattern of checkpoint ROUND (1 or 2) for variable v. */
static void fill(int v, void *p, int round)
{
    long n = count_of(v);
    for (long k = 0; k < n; k++) {
        long x = (rank + 1) * 1000003L + v * 7919L + k * round;
        switch (v) {
        case 0: ((int *)p)[k] = (int)x; break;
        case 1: ((double *)p)[k] = x / 7.0; break;
        case 2: ((pair *)p)[k] = (pair){x * 0.5, -x}; break;
        case 3: ((char *)p)[k] = (char)(x % 251); break;
        default: ((long *)p)[k] = x * 1000000007L; break;
        }
    }
}

static int all_ok(int ok)
{
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, FTI_COMM_WORLD);
    return ok;
}

int main(int argc, char *argv[])
{
    MPI_Init(&argc, &argv);
    if (argc < 4) {
        fprintf(stderr, "usage: recovervar <config> <level> crash|finish\n");
        return 2;
    }
    int rc = FTI_Init(argv[1], MPI_COMM_WORLD);
    MPI_Comm_rank(FTI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("FTI_Init = %d\n", rc);
    if (rc != FTI_SCES && rc != FTI_NREC) {
        MPI_Finalize();
        return 2;
    }
    FTI_InitType(&PAIR, sizeof(pair));
    int level = atoi(argv[2]), status = FTI_Status(), ok = 1;
    if (rank == 0)
        printf("FTI_Status = %d\n", status);
    void *var[NVARS];

    if (status == 0) {
        for (int v = 0; v < NVARS; v++) {
            var[v] = malloc((size_t)count_of(v) * size_of(v));
            fill(v, var[v], 1);
            ok &= FTI_Protect(v, var[v], count_of(v), type_of(v)) == FTI_SCES;
        }
        ok &= FTI_Checkpoint(1, level) == FTI_DONE;
        for (int v = 0; v < NVARS; v++)
            fill(v, var[v], 2);
        ok &= FTI_Checkpoint(2, level) == FTI_DONE;
        for (int v = 0; v < NVARS; v++) /* this run's newest checkpoint */
            ok &= FTI_GetStoredSize(v) == count_of(v) * size_of(v);
        ok = all_ok(ok);
        if (rank == 0)
            printf("%s: 2 checkpoints at level %d\n", ok ? "PASS" : "FAIL", level);
        if (strcmp(argv[3], "finish") == 0)
            FTI_Finalize();
        MPI_Finalize(); /* "crash": FTI_Finalize is never called */
        return ok ? 0 : 1;
    }

    int order[NVARS] = {3, 0, 4, 2, 1}, n = NVARS, skip = -1;
    if (argc > 4 && strcmp(argv[4], "anyorder") == 0) {
        for (int j = 0; j < NVARS; j++) /* a rotation and a reversal of its own */
            order[j] = (rank % 2 ? NVARS - 1 - j : j + rank) % NVARS;
        if (rank % 3 == 1)
            skip = order[--n]; /* never recovered: must keep its sentinel */
    }
    if (skip >= 0) {
        var[skip] = malloc((size_t)count_of(skip) * size_of(skip));
        memset(var[skip], 0xA5, (size_t)count_of(skip) * size_of(skip));
        FTI_Protect(skip, var[skip], count_of(skip), type_of(skip));
    }
    for (int j = 0; j < n; j++) {
        int v = order[j];
        long bytes = FTI_GetStoredSize(v);
        if (bytes != count_of(v) * size_of(v)) {
            printf("rank %d: variable %d: stored size %ld, expected %ld\n", rank, v, bytes,
                   count_of(v) * size_of(v));
            ok = 0;
            var[v] = NULL;
            continue;
        }
        if (v == 1) { /* protected small, then resized to the stored size */
            var[v] = malloc(sizeof(double));
            FTI_Protect(v, var[v], 1, type_of(v));
            var[v] = FTI_Realloc(v, var[v]);
        } else {
            var[v] = malloc((size_t)bytes);
            FTI_Protect(v, var[v], bytes / size_of(v), type_of(v));
        }
        if (FTI_RecoverVar(v) != FTI_SCES)
            ok = 0;
    }
    ok &= FTI_GetStoredSize(99) == 0;
    if (skip >= 0) {
        unsigned char *p = var[skip];
        for (long k = 0; k < count_of(skip) * size_of(skip); k++)
            if (p[k] != 0xA5) {
                printf("rank %d: variable %d was not recovered, yet it changed\n", rank, skip);
                ok = 0;
                break;
            }
    }
    FTI_RecoverVarFinalize();
    for (int v = 0; v < NVARS; v++) {
        if (!var[v] || v == skip)
            continue;
        void *want = malloc((size_t)count_of(v) * size_of(v));
        fill(v, want, 2);
        if (memcmp(want, var[v], (size_t)count_of(v) * size_of(v)) != 0) {
            printf("rank %d: variable %d differs from the checkpoint\n", rank, v);
            ok = 0;
        }
        free(want);
    }
    ok = all_ok(ok);
    if (rank == 0)
        printf("%s: %d variables recovered one by one, bit-exact on every rank%s\n",
               ok ? "PASS" : "FAIL", NVARS, skip >= 0 || argc > 4 ? " (each rank its own order, "
               "some a subset)" : "");
    FTI_Finalize();
    MPI_Finalize();
    return ok ? 0 : 1;
}
