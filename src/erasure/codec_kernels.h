/*
 * codec_kernels.h - private to the codec (codec*.c): the codec's state and the
 * three kernels that apply a coefficient matrix to shards.
 *
 * Every kernel does one thing: OUT[i] (=, or ^= when ACCUMULATE) sum over j
 * of ROWS[i][j] * SRC[j], for NOUT outputs and NSRC sources of LEN bytes, in
 * GF(2^w). Encode applies the coding matrix X to the data; the column update
 * applies column COL of X (NSRC = 1); decode applies rows that codec.c
 * derives from X and the erasure pattern, so no kernel knows about erasures.
 *
 *   codec_gf.c         EC_KERNEL_MATRIX: GF-Complete region multiply-and-add
 *                      over EC_SLICE slices (Jerasure's matrix form).
 *   codec_isal.c       EC_KERNEL_ISAL: ISA-L's expanded tables (w = 8 only).
 *   codec_bitmatrix.c  EC_KERNEL_BITMATRIX: the rows as a GF(2) bitmatrix,
 *                      scheduled by Jerasure, run packet by packet.
 *
 * Jerasure's and GF-Complete's fields are initialised once (ec__fields_init)
 * before any use, so that their lazy initialisation never races; after that
 * the libraries' functions used here touch no shared state. Kernels allocate
 * what they need per call, so one codec may be used by many threads at once.
 */
#ifndef CAIRN_CODEC_KERNELS_H
#define CAIRN_CODEC_KERNELS_H

#include "erasure/erasure.h"

/*
 * Debian installs jerasure.h in /usr/include but the "galois.h" it includes in
 * /usr/include/jerasure/, so <jerasure.h> compiles only with
 * -I/usr/include/jerasure. Without that flag the few functions used here are
 * declared below; with it, the real header is included too, so the compiler
 * checks these declarations against it.
 */
#include <jerasure/cauchy.h>
#include <jerasure/galois.h>
#if defined(__has_include)
#if __has_include(<galois.h>)
#include <jerasure.h>
#endif
#endif
int *jerasure_matrix_to_bitmatrix(int k, int m, int w, int *matrix);
int **jerasure_dumb_bitmatrix_to_schedule(int k, int m, int w, int *bitmatrix);
int **jerasure_smart_bitmatrix_to_schedule(int k, int m, int w, int *bitmatrix);
void jerasure_free_schedule(int **schedule);
int jerasure_invert_matrix(int *mat, int *inv, int rows, int w);

/* Bitmatrix packet: w packets of this size make one coding unit per shard.
 * Measured with bench/ec_bench (see codec_bitmatrix.c). */
#define EC_BM_PACKET 2048u

typedef struct ec__sched ec__sched; /* a flattened bitmatrix schedule */

struct ec_codec {
    int k, m, w;
    int kernel;          /* resolved: never EC_KERNEL_AUTO */
    size_t align;
    int *matrix;         /* X: m x k, X[r][p] = matrix[r * k + p] (Jerasure's, malloc'd) */
    uint8_t *isal_tbls;  /* ISA-L: ec_init_tables of X (32 * k * m bytes) */
    uint8_t *isal_cols;  /* ISA-L: per column p, ec_init_tables of X[.][p] (32 * m bytes) */
    ec__sched *sched;    /* bitmatrix: the smart schedule of X */
};

/* Initialise GF(2^8) and GF(2^16) once per process; 0 or CAIRN_ENOMEM. */
int ec__fields_init(void);

/*
 * Clear the upper halves of the vector registers (vzeroupper) if the CPU has
 * AVX. ISA-L's AVX-512 kernels return with them dirty, and legacy-SSE code
 * (all of GF-Complete) then runs about 4x slower on this thread until the
 * next vzeroupper: measured 11 -> 2.9 GB/s for the matrix form at k=8, m=2.
 * Called before GF-Complete runs and after ISA-L returns.
 */
void ec__simd_clean(void);

/* EC_KERNEL_MATRIX. ROWS is NOUT x NSRC. */
int ec__gf_apply(int w, const int *rows, int nout, int nsrc, const uint8_t *const *src,
                 uint8_t *const *out, size_t len, bool accumulate);

/* EC_KERNEL_ISAL. TBLS from ec_init_tables(NSRC, NOUT, ...). */
void ec__isal_apply(const uint8_t *tbls, int nout, int nsrc, const uint8_t *const *src,
                    uint8_t *const *out, size_t len, bool accumulate);
/* Expanded tables of ROWS (NOUT x NSRC ints < 256) in a new buffer (NULL: no memory). */
uint8_t *ec__isal_tables(const int *rows, int nout, int nsrc);
/* Set C->isal_tbls and C->isal_cols from C->matrix; 0 or CAIRN_ENOMEM. */
int ec__isal_init(ec_codec *c);

/* EC_KERNEL_BITMATRIX. A schedule of ROWS (NOUT x NSRC): SMART uses earlier
 * outputs to compute later ones (fewer XORs); a plain one reads only sources,
 * which is what accumulation needs. NULL: no memory. */
ec__sched *ec__bm_sched_new(int w, const int *rows, int nout, int nsrc, bool smart);
void ec__bm_sched_free(ec__sched *s);
/* LEN a multiple of w * EC_BM_PACKET; ACCUMULATE needs a plain schedule. */
void ec__bm_run(const ec__sched *s, const uint8_t *const *src, uint8_t *const *out, size_t len,
                bool accumulate);

#endif /* CAIRN_CODEC_KERNELS_H */
