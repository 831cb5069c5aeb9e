/*
 * codec_gf.c - EC_KERNEL_MATRIX: Jerasure's matrix form on GF-Complete's SIMD
 * region multiply-and-add (galois_w08/w16_region_multiply, add = 1 XORs the
 * product into the output).
 *
 * The loops run slice by slice (EC_SLICE bytes of every shard), then output
 * row, then source column: one slice of the sources and outputs stays in
 * cache while every row reads it, instead of every row rereading whole
 * multi-megabyte shards from memory (3-4x slower).
 *
 * GF-Complete requires a source and its output to have the same address
 * modulo 16 (it stops the process otherwise). When some do not, the source
 * slice is first copied into a per-call scratch buffer at the output's
 * alignment; callers that keep shards 16-byte aligned never pay for it.
 *
 * Also here: the once-per-process field initialisation (ec__fields_init)
 * and ec__simd_clean (see codec_kernels.h).
 */
#include "erasure/codec_kernels.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

static pthread_once_t fields_once = PTHREAD_ONCE_INIT;
static int fields_rc;
static bool have_avx;

static void fields_init_once(void)
{
#if defined(__x86_64__) || defined(__i386__)
    have_avx = __builtin_cpu_supports("avx");
#endif
    if (galois_init_default_field(8) != 0 || galois_init_default_field(16) != 0)
        fields_rc = CAIRN_ENOMEM;
}

#if defined(__x86_64__) || defined(__i386__)
__attribute__((target("avx"))) static void zeroupper(void) { _mm256_zeroupper(); }

void ec__simd_clean(void)
{
    if (have_avx)
        zeroupper();
}
#else
void ec__simd_clean(void) {}
#endif

int ec__fields_init(void)
{
    pthread_once(&fields_once, fields_init_once);
    return fields_rc;
}

static void region_madd(int w, const uint8_t *src, int coef, uint8_t *out, size_t n, bool add)
{
    /* GF-Complete reads SRC only; its prototypes are not const-correct. */
    if (w == 8)
        galois_w08_region_multiply((char *)src, coef, (int)n, (char *)out, add);
    else
        galois_w16_region_multiply((char *)src, coef, (int)n, (char *)out, add);
}

int ec__gf_apply(int w, const int *rows, int nout, int nsrc, const uint8_t *const *src,
                 uint8_t *const *out, size_t len, bool accumulate)
{
    /* Relative alignment is the same for every slice (EC_SLICE % 16 == 0). */
    bool mixed = false;
    uintptr_t a0 = (uintptr_t)out[0] & 15;
    for (int i = 0; i < nout && !mixed; i++)
        mixed = ((uintptr_t)out[i] & 15) != a0;
    for (int j = 0; j < nsrc && !mixed; j++)
        mixed = ((uintptr_t)src[j] & 15) != a0;
    uint8_t *scratch = NULL;
    if (mixed && !(scratch = aligned_alloc(16, EC_SLICE + 16)))
        return CAIRN_ENOMEM;
    ec__simd_clean();

    for (size_t off = 0; off < len; off += EC_SLICE) {
        size_t n = len - off < EC_SLICE ? len - off : EC_SLICE;
        for (int i = 0; i < nout; i++) {
            uint8_t *o = out[i] + off;
            const int *row = rows + (size_t)i * nsrc;
            for (int j = 0; j < nsrc; j++) {
                const uint8_t *s = src[j] + off;
                if (mixed && (((uintptr_t)s ^ (uintptr_t)o) & 15)) {
                    uint8_t *t = scratch + ((uintptr_t)o & 15);
                    memcpy(t, s, n);
                    s = t;
                }
                region_madd(w, s, row[j], o, n, accumulate || j > 0);
            }
        }
    }
    free(scratch);
    return 0;
}
