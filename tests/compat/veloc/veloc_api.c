/*
 * veloc_api.c - VeloC's API, call by call, on 2-4 ranks: what a VeloC
 * application may count on beyond the heat examples. Only veloc.h and MPI.
 *
 *   veloc_api <cfg_file> save    checkpoints "api" 10 and 20, "other" 25,
 *                                "sel" 40 (region 7 only), "mix" 45 (the
 *                                regions and a routed file), and refusals
 *   veloc_api <cfg_file> check   a new run: Restart_test's versions and names,
 *                                Recover_size, Recover_selective SOME / REST,
 *                                regions larger or smaller than stored,
 *                                success = 0, the routed file of "mix" read
 *                                before its memory, a full restart, then 50
 *
 * Every region holds a pattern of (version, rank, index); every check is
 * counted, the ranks agree, and the exit status is 0 only if all passed.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "veloc.h"

#define NB 64
static int rank, failed, checks;
static int step;                /* region 0 */
static double *A;               /* region 1: NA doubles, NA differs by rank */
static int32_t B[NB];           /* region 7 */
static unsigned char C[5 * 24]; /* region 3: 5 elements of 24 bytes */
static int NA;

#define CHECK(cond)                                                                        \
    do {                                                                                   \
        checks++;                                                                          \
        if (!(cond)) {                                                                     \
            failed++;                                                                      \
            fprintf(stderr, "veloc_api: rank %d: line %d: failed: %s\n", rank, __LINE__, #cond); \
        }                                                                                  \
    } while (0)

static double pa(int v, int k) { return v * 1000.0 + rank * 0.5 + k / 7.0; }
static int32_t pb(int v, int k) { return v * 100000 + rank * 1000 + k; }
static unsigned char pc(int v, int k) { return (unsigned char)(v * 3 + rank * 5 + k); }

static void fill(int v)
{
    step = v;
    for (int k = 0; k < NA; k++)
        A[k] = pa(v, k);
    for (int k = 0; k < NB; k++)
        B[k] = pb(v, k);
    for (int k = 0; k < (int)sizeof C; k++)
        C[k] = pc(v, k);
}

static void smear(void)
{
    step = -1;
    memset(A, 0xee, (size_t)NA * sizeof *A);
    memset(B, 0xee, sizeof B);
    memset(C, 0xee, sizeof C);
}

/* Does region ID hold version V (1) or the smear (0)? */
static int holds(int id, int v, const double *a, int na)
{
    for (int k = 0; id == 1 && k < na; k++)
        if (a[k] != pa(v, k))
            return 0;
    for (int k = 0; id == 7 && k < NB; k++)
        if (B[k] != pb(v, k))
            return 0;
    for (int k = 0; id == 3 && k < (int)sizeof C; k++)
        if (C[k] != pc(v, k))
            return 0;
    return id != 0 || step == v;
}

static int smeared(int id, const double *a, int na)
{
    unsigned char e[sizeof(double)];
    memset(e, 0xee, sizeof e);
    for (int k = 0; id == 1 && k < na; k++)
        if (memcmp(&a[k], e, sizeof e) != 0)
            return 0;
    for (int k = 0; id == 7 && k < NB; k++)
        if (memcmp(&B[k], e, sizeof B[k]) != 0)
            return 0;
    for (int k = 0; id == 3 && k < (int)sizeof C; k++)
        if (C[k] != 0xee)
            return 0;
    return id != 0 || step == -1;
}

static void save(void)
{
    CHECK(VELOC_Restart_test("api", 0) == VELOC_FAILURE); /* nothing yet */
    fill(10);
    CHECK(VELOC_Checkpoint("api", 10) == VELOC_SUCCESS);
    fill(20);
    CHECK(VELOC_Checkpoint("api", 20) == VELOC_SUCCESS);
    fill(25);
    CHECK(VELOC_Checkpoint("other", 25) == VELOC_SUCCESS);
    /* one rank ends with success = 0: nothing is written, every rank fails */
    CHECK(VELOC_Checkpoint_begin("api", 30) == VELOC_SUCCESS);
    CHECK(VELOC_Checkpoint_mem() == VELOC_SUCCESS);
    CHECK(VELOC_Checkpoint_end(rank != 1) == VELOC_FAILURE);
    CHECK(VELOC_Restart_test("api", 0) == 20);
    /* refusals, none of which changes anything */
    CHECK(VELOC_Checkpoint_begin("bad name", 40) == VELOC_FAILURE);
    CHECK(VELOC_Checkpoint_begin("api", -1) == VELOC_FAILURE);
    CHECK(VELOC_Checkpoint("api", 20) == VELOC_FAILURE); /* not above 25 */
    CHECK(VELOC_Mem_protect(5, NULL, 3, 8) == VELOC_FAILURE);
    CHECK(VELOC_Mem_protect(5, B, 3, 0) == VELOC_FAILURE);
    CHECK(VELOC_Mem_unprotect(99) == VELOC_FAILURE);
    char path[VELOC_MAX_NAME];
    CHECK(VELOC_Route_file("x.dat", path) == VELOC_FAILURE); /* no phase */
    CHECK(VELOC_Checkpoint_end(1) == VELOC_FAILURE);           /* no phase */
    CHECK(VELOC_Recover_mem() == VELOC_FAILURE);               /* no phase */
    CHECK(VELOC_Checkpoint_selective(VELOC_CKPT_ALL, NULL, 0) == VELOC_FAILURE);
    /* "sel" 40 holds region 7 only */
    fill(40);
    int seven = 7;
    CHECK(VELOC_Checkpoint_begin("sel", 40) == VELOC_SUCCESS);
    CHECK(VELOC_Checkpoint_selective(9, &seven, 1) == VELOC_FAILURE); /* no such mode */
    CHECK(VELOC_Checkpoint_selective(VELOC_CKPT_SOME, &seven, 1) == VELOC_SUCCESS);
    CHECK(VELOC_Checkpoint_end(1) == VELOC_SUCCESS);
    /* "mix" 45: every region and this rank's routed file */
    fill(45);
    CHECK(VELOC_Checkpoint_begin("mix", 45) == VELOC_SUCCESS);
    CHECK(VELOC_Checkpoint_mem() == VELOC_SUCCESS);
    CHECK(VELOC_Route_file("mix.dat", path) == VELOC_SUCCESS);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(B, sizeof B, 1, f) == 1 && fclose(f) == 0);
    CHECK(VELOC_Checkpoint_end(1) == VELOC_SUCCESS);
}

static void check(void)
{
    int one = 1;
    CHECK(VELOC_Restart_test("api", 0) == 20); /* "sel" 40 and "other" 25 are newer */
    CHECK(VELOC_Restart_test("api", 20) == 20);
    CHECK(VELOC_Restart_test("api", 15) == 10);
    CHECK(VELOC_Restart_test("api", 9) == VELOC_FAILURE);
    CHECK(VELOC_Restart_test("other", 0) == 25);
    CHECK(VELOC_Restart_test("sel", 0) == 40);
    CHECK(VELOC_Restart_test("nope", 0) == VELOC_FAILURE);
    CHECK(VELOC_Restart_test("api", -3) == VELOC_FAILURE);
    CHECK(VELOC_Restart_test("a/b", 0) == VELOC_FAILURE);
    CHECK(VELOC_Restart_begin("api", 15) == VELOC_FAILURE);  /* no version 15 */
    CHECK(VELOC_Restart_begin("other", 20) == VELOC_FAILURE); /* 20 is "api"'s */

    /* Recover_size, then region 1 alone into memory allocated for it */
    smear();
    CHECK(VELOC_Restart_begin("api", 10) == VELOC_SUCCESS);
    int size = VELOC_Recover_size(1);
    CHECK(size == NA * (int)sizeof(double));
    CHECK(VELOC_Recover_size(99) == VELOC_FAILURE);
    double *a2 = malloc(size > 0 ? (size_t)size : 1);
    memset(a2, 0xee, size > 0 ? (size_t)size : 1);
    CHECK(VELOC_Mem_protect(1, a2, (size_t)size / sizeof(double), sizeof(double)) == VELOC_SUCCESS);
    CHECK(VELOC_Recover_selective(VELOC_RECOVER_SOME, &one, 1) == VELOC_SUCCESS);
    CHECK(VELOC_Restart_end(1) == VELOC_SUCCESS);
    CHECK(holds(1, 10, a2, NA));
    CHECK(smeared(0, A, NA) && smeared(7, A, NA) && smeared(3, A, NA));

    /* every region but 1 */
    memset(a2, 0xee, (size_t)NA * sizeof *a2);
    CHECK(VELOC_Restart_begin("api", 20) == VELOC_SUCCESS);
    CHECK(VELOC_Recover_selective(VELOC_RECOVER_REST, &one, 1) == VELOC_SUCCESS);
    CHECK(VELOC_Restart_end(1) == VELOC_SUCCESS);
    CHECK(holds(0, 20, A, NA) && holds(7, 20, A, NA) && holds(3, 20, A, NA));
    CHECK(smeared(1, a2, NA));

    /* a larger region takes the stored bytes and keeps its tail */
    double *a3 = malloc((size_t)(NA + 10) * sizeof *a3);
    memset(a3, 0xee, (size_t)(NA + 10) * sizeof *a3);
    CHECK(VELOC_Mem_protect(1, a3, (size_t)NA + 10, sizeof(double)) == VELOC_SUCCESS);
    smear();
    CHECK(VELOC_Restart("api", 20) == VELOC_SUCCESS);
    CHECK(holds(1, 20, a3, NA) && smeared(1, a3 + NA, 10));
    CHECK(holds(0, 20, A, NA) && holds(7, 20, A, NA) && holds(3, 20, A, NA));

    /* a smaller one is refused, memory untouched; success = 0 fails every rank */
    CHECK(VELOC_Mem_protect(1, a2, (size_t)NA - 1, sizeof(double)) == VELOC_SUCCESS);
    memset(a2, 0xee, (size_t)NA * sizeof *a2);
    smear();
    CHECK(VELOC_Restart_begin("api", 20) == VELOC_SUCCESS);
    CHECK(VELOC_Recover_mem() == VELOC_FAILURE);
    CHECK(VELOC_Restart_end(0) == VELOC_FAILURE);
    CHECK(smeared(1, a2, NA) && smeared(0, A, NA) && smeared(7, A, NA) && smeared(3, A, NA));
    CHECK(VELOC_Restart_begin("api", 20) == VELOC_SUCCESS);
    CHECK(VELOC_Restart_end(rank != 0) == VELOC_FAILURE);

    /* "sel" 40 holds region 7 only: the others stay as they are */
    CHECK(VELOC_Mem_protect(1, A, (size_t)NA, sizeof(double)) == VELOC_SUCCESS);
    smear();
    CHECK(VELOC_Restart_begin("sel", 40) == VELOC_SUCCESS);
    CHECK(VELOC_Recover_size(1) == VELOC_FAILURE);
    CHECK(VELOC_Recover_size(7) == NB * (int)sizeof(int32_t));
    CHECK(VELOC_Recover_mem() == VELOC_SUCCESS);
    CHECK(VELOC_Restart_end(1) == VELOC_SUCCESS);
    CHECK(holds(7, 40, A, NA) && smeared(1, A, NA) && smeared(0, A, NA) && smeared(3, A, NA));

    /* "mix" 45: its routed file first (memory untouched), then its memory */
    char path[VELOC_MAX_NAME];
    int32_t back[NB];
    smear();
    CHECK(VELOC_Restart_test("mix", 0) == 45);
    CHECK(VELOC_Restart_begin("mix", 45) == VELOC_SUCCESS);
    CHECK(VELOC_Route_file("mix.dat", path) == VELOC_SUCCESS);
    FILE *f = fopen(path, "rb");
    CHECK(f && fread(back, sizeof back, 1, f) == 1);
    if (f)
        fclose(f);
    for (int k = 0; k < NB; k++)
        CHECK(back[k] == pb(45, k));
    CHECK(smeared(0, A, NA) && smeared(1, A, NA) && smeared(7, A, NA) && smeared(3, A, NA));
    CHECK(VELOC_Recover_mem() == VELOC_SUCCESS);
    CHECK(VELOC_Restart_end(1) == VELOC_SUCCESS);
    CHECK(holds(0, 45, A, NA) && holds(1, 45, A, NA) && holds(7, 45, A, NA) &&
          holds(3, 45, A, NA));
    /* a checkpoint without a file: the routed path names none */
    CHECK(VELOC_Restart_begin("api", 10) == VELOC_SUCCESS);
    CHECK(VELOC_Route_file("mix.dat", path) == VELOC_SUCCESS);
    CHECK(access(path, F_OK) != 0);
    CHECK(VELOC_Restart_end(1) == VELOC_SUCCESS);
    CHECK(holds(0, 45, A, NA) && holds(1, 45, A, NA)); /* memory untouched */

    /* the full restart, and the run goes on from there */
    smear();
    CHECK(VELOC_Restart("api", 20) == VELOC_SUCCESS);
    CHECK(holds(0, 20, A, NA) && holds(1, 20, A, NA) && holds(7, 20, A, NA) &&
          holds(3, 20, A, NA));
    CHECK(VELOC_Checkpoint("api", 15) == VELOC_FAILURE); /* not above 20 */
    fill(50);
    CHECK(VELOC_Checkpoint("api", 50) == VELOC_SUCCESS);
    CHECK(VELOC_Restart_test("api", 0) == 50);
    free(a2);
    free(a3);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 3 || (strcmp(argv[2], "save") && strcmp(argv[2], "check"))) {
        if (rank == 0)
            fprintf(stderr, "usage: veloc_api CFG_FILE save|check\n");
        MPI_Finalize();
        return 2;
    }
    if (VELOC_Init(MPI_COMM_WORLD, argv[1]) != VELOC_SUCCESS) {
        fprintf(stderr, "veloc_api: rank %d: VELOC_Init failed\n", rank);
        MPI_Finalize();
        return 1;
    }
    NA = 1000 + 37 * rank;
    A = malloc((size_t)NA * sizeof *A);
    CHECK(VELOC_Mem_protect(0, &step, 1, sizeof step) == VELOC_SUCCESS);
    CHECK(VELOC_Mem_protect(1, A, (size_t)NA, sizeof *A) == VELOC_SUCCESS);
    CHECK(VELOC_Mem_protect(7, B, NB, sizeof *B) == VELOC_SUCCESS);
    CHECK(VELOC_Mem_protect(3, C, 5, 24) == VELOC_SUCCESS);
    if (strcmp(argv[2], "save") == 0)
        save();
    else
        check();
    CHECK(VELOC_Finalize(1) == VELOC_SUCCESS);
    int bad = failed, all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("veloc_api %s: %d checks a rank, %s\n", argv[2], checks,
               all ? "FAILED" : "all passed");
    free(A);
    MPI_Finalize();
    return all ? 1 : 0;
}
