/*
 * erasure.h - the contract of src/erasure: Cauchy Reed-Solomon over GF(2^w)
 * and the pipelined ring that computes parity across the nodes of a set.
 *
 *   codec.c      the codec: a Cauchy coding matrix from Jerasure
 *                (cauchy_good_general_coding_matrix), encode / decode of k data
 *                and m parity shards, and the column update the ring uses.
 *                Kernels: EC_KERNEL_ISAL (ISA-L's ec_encode_data[_update] with
 *                Jerasure's matrix), EC_KERNEL_MATRIX (Jerasure's matrix form,
 *                GF-Complete's SIMD region multiply-and-add over cache-sized
 *                slices), EC_KERNEL_BITMATRIX (Jerasure's bitmatrix with a smart
 *                schedule). ISA-L and the matrix form compute identical bytes
 *                (EC_FORM_MATRIX); the bitmatrix form is a different code
 *                (EC_FORM_BITMATRIX), so files record the form, never the kernel.
 *   ring.c       (MPI) the ring encode of the rotated layout and the set decode.
 *
 * Rotated layout of one encoding set of n members (one per node), k = n - m:
 * each member's payload is padded with zeros to k * chunk bytes and cut into k
 * chunks. There are n stripes. Stripe t's parity row r (0..m-1) is held by
 * member (t + r) mod n; its data are chunk p of member (t + m + p) mod n for
 * p = 0..k-1 (coding matrix column p). So member x holds parity of the m
 * stripes t = x - r, contributes data to the other k, and never holds parity
 * of its own data; any m lost members leave every stripe at most m shards
 * short. Parity costs m/k of the (padded) data, spread evenly.
 *
 * Nothing here depends on MPI except ring.c; nothing here allocates on the
 * caller's behalf except ec_codec_new (freed by ec_codec_free).
 */
#ifndef CAIRN_ERASURE_H
#define CAIRN_ERASURE_H

#include "common/common.h"

enum ec_kernel {
    EC_KERNEL_AUTO = 0,      /* fastest available: ISA-L if w == 8, else matrix */
    EC_KERNEL_ISAL = 1,
    EC_KERNEL_MATRIX = 2,
    EC_KERNEL_BITMATRIX = 3,
};

enum ec_form { EC_FORM_MATRIX = 0, EC_FORM_BITMATRIX = 1 };

#define EC_MAX_SHARDS 1024  /* k + m, w = 16 above 256 */
#define EC_SLICE (64u << 10) /* matrix-form work unit: keeps shards in cache */

typedef struct ec_codec ec_codec;

/*
 * Create a codec for K data and M parity shards over GF(2^W) (W = 8, or 16;
 * K + M <= 256 for W = 8), using KERNEL (EC_KERNEL_AUTO picks). Fails with
 * CAIRN_ENOTSUP for a kernel not usable with W, CAIRN_EINVAL for bad sizes.
 */
int ec_codec_new(int k, int m, int w, int kernel, ec_codec **out, cn_err *err);
void ec_codec_free(ec_codec *c);

int ec_codec_kernel(const ec_codec *c);   /* the resolved kernel */
int ec_codec_k(const ec_codec *c);
int ec_codec_m(const ec_codec *c);
int ec_codec_w(const ec_codec *c);
int ec_codec_form(const ec_codec *c);     /* enum ec_form */
const char *ec_kernel_name(int kernel);   /* "isal", "matrix", "bitmatrix", "auto" */
/* Shard lengths must be multiples of this (8 for matrix forms, w * packet for bitmatrix). */
size_t ec_codec_align(const ec_codec *c);

/* PARITY[r] = sum over p of X[r][p] * DATA[p], for shards of LEN bytes. */
int ec_encode(const ec_codec *c, const uint8_t *const *data, uint8_t *const *parity, size_t len);

/*
 * The ring's step: PARITY[r] ^= X[r][COL] * DATA for r = 0..m-1 (or = instead
 * of ^= when FIRST, so the caller need not zero the rows).
 */
int ec_encode_column(const ec_codec *c, int col, const uint8_t *data, uint8_t *const *parity,
                     size_t len, bool first);

/*
 * SHARDS[0..k-1] data, SHARDS[k..k+m-1] parity, each LEN bytes; ERASED lists
 * NERASED (<= m) indexes whose contents are lost: they are rebuilt in place.
 * Returns CAIRN_ECORRUPT naming the count if more than m are erased.
 */
int ec_decode(const ec_codec *c, uint8_t *const *shards, const int *erased, int nerased,
              size_t len, cn_err *err);

/* ---- layout (rotated; see above) ------------------------------------- */

/* Holder of parity row R of stripe T in a set of N members. */
static inline int ec_parity_holder(int n, int t, int r) { return (t + r) % n; }
/* Member giving data column P of stripe T. */
static inline int ec_data_member(int n, int m, int t, int p) { return (t + m + p) % n; }
/* Column (= chunk index) of member X in stripe T, or -1 if X holds its parity. */
static inline int ec_data_column(int n, int m, int t, int x)
{
    int p = ((x - t - m) % n + n) % n;
    return p < n - m ? p : -1;
}

#ifndef CAIRN_NO_MPI
#include <mpi.h>

/* How the ring reads a member's payload and stores its parity. */
typedef struct ec_ring_io {
    /* Read LEN bytes of this member's payload at OFF into BUF; bytes past the
     * payload's end read as zero (padding). */
    int (*read)(void *arg, uint64_t off, void *buf, size_t len, cn_err *err);
    /* Store LEN bytes at OFF of parity row ROW of stripe STRIPE (held here). */
    int (*write_parity)(void *arg, int stripe, int row, uint64_t off, const void *buf,
                        size_t len, cn_err *err);
    /* Decode only: read LEN bytes at OFF of parity row ROW of STRIPE held here. */
    int (*read_parity)(void *arg, int stripe, int row, uint64_t off, void *buf, size_t len,
                       cn_err *err);
    /* Decode only: store rebuilt payload bytes of this member at OFF. */
    int (*write_data)(void *arg, uint64_t off, const void *buf, size_t len, cn_err *err);
    void *arg;
    /* The members share cores (more of them, or of other busy processes, than
     * cores): one waiting for a message or an agreement naps (at most
     * 0.25 ms) instead of spinning in MPI, which would take the core from the
     * member it waits for. */
    bool nap;
} ec_ring_io;

/*
 * The ring uses tags 0x4543-0x4551 on COMM: give it a communicator of its
 * own. BLOCK is a hint: it is rounded down to ec_codec_align and cut so that
 * every chunk has at least two blocks in flight. write_data also receives the
 * rebuilt padding past a member's true payload (zeros): callers drop it.
 * Shard buffers aligned to 64 bytes avoid a copy inside GF-Complete.
 *
 * Collective over COMM (n members, one per node, rank = member index).
 * Encode the set: every member contributes k = n - m chunks of CHUNK bytes
 * (a multiple of ec_codec_align) and stores the parity rows it holds, in
 * blocks of BLOCK bytes that travel the ring double-buffered (non-blocking
 * sends and receives overlap the column updates). C must have k = n - m.
 * Returns the same code on every member.
 */
int ec_ring_encode(MPI_Comm comm, const ec_codec *c, uint64_t chunk, size_t block,
                   const ec_ring_io *io, cn_err *err);

/*
 * Collective over COMM. Members with LOST[x] set have lost their payload and
 * their parity (every member passes the same LOST array). Rebuild: each lost
 * member receives its payload (write_data) and its parity rows
 * (write_parity). Fails with CAIRN_ECORRUPT if more than m members are lost.
 */
int ec_ring_decode(MPI_Comm comm, const ec_codec *c, uint64_t chunk, size_t block,
                   const bool *lost, const ec_ring_io *io, cn_err *err);
#endif

#endif /* CAIRN_ERASURE_H */
