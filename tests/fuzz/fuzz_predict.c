/*
 * fuzz_predict.c - libFuzzer target for the predictive lossy codec and its
 * entropy coders (cz_predict_decode, cz_huff_decode, cz_rc_decode,
 * cz_ans_decode, and the encoders behind a round trip; src/compress/predict*.c,
 * huffman.c, codes_rc.c, codes_ans.c).
 *
 * Input: one selector byte, then bytes. Selector % 4:
 *   0  predict payload: type from selector bit 2 (float/double), raw_len
 *      from the next u32 (elements, capped so raw_len <= FUZZ_MAX_RAW), then
 *      the payload. Must return 0 or -1.
 *   1  the same, but raw_len taken from the payload's own dims when they
 *      describe at most FUZZ_MAX_RAW bytes, so mutations reach the sections.
 *   2  rANS-coded codes (cz_ans_decode, selector bit 3 set), range-coded
 *      codes (cz_rc_decode, bit 3 clear, bit 2 set) or a Huffman stream
 *      (both clear): n from the next u16, then the stream; two runs of rows
 *      (n / 3 codes of width 1 + n % 37 at level selector bits 4-5, the
 *      rest of width 1 + n % 101 at level bits 6-7); 0 or -1.
 *   3  round trip: type (bit 2), ndims (1 + selector/8 % 3) and a bound
 *      (10^-(byte % 10), times the next byte) from the next bytes, the rest
 *      as elements; the shape spreads them over ndims dimensions (leftovers
 *      dropped). Encode must succeed with CAP = cz_predict_bound; decode
 *      must equal the reconstruction byte for byte; every finite element
 *      within the bound, every other one bit-exact; max_err right.
 * Output buffers are allocated at their exact sizes so the sanitizers see
 * any overrun.
 */
#include "compress/compress.h"
#include "compress/predict_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_RAW (1u << 20)

static void decode_payload(const uint8_t *p, size_t len, uint8_t type, size_t raw_len)
{
    if (raw_len == 0 || raw_len > FUZZ_MAX_RAW)
        return;
    uint8_t *dst = malloc(raw_len);
    if (!dst)
        abort();
    int rc = cz_predict_decode(type, p, len, dst, raw_len);
    if (rc != 0 && rc != -1)
        abort();
    free(dst);
}

/* raw_len the payload P claims, or 0. */
static size_t claimed_raw(const uint8_t *p, size_t len, size_t es)
{
    if (len < 24 || p[3] < 1 || p[3] > 3 || len < 24 + 8 * (size_t)p[3])
        return 0;
    uint64_t n = es;
    for (unsigned d = 0; d < p[3]; d++) {
        uint64_t v = cn_get_u64(p + 24 + 8 * d);
        if (v == 0 || v > FUZZ_MAX_RAW || __builtin_mul_overflow(n, v, &n) || n > FUZZ_MAX_RAW)
            return 0;
    }
    return (size_t)n;
}

static void huff(const uint8_t *p, size_t len, uint8_t sel)
{
    if (len < 2)
        return;
    size_t n = cn_get_u16(p);
    uint16_t *sym = malloc((n ? n : 1) * sizeof *sym);
    if (!sym)
        abort();
    cz_rows rows[2] = {{n / 3, 1 + n % 37, sel >> 4 & 3}, {n - n / 3, 1 + n % 101, sel >> 6}};
    int rc = sel & 8   ? cz_ans_decode(p + 2, len - 2, sym, n, rows, 2)
             : sel & 4 ? cz_rc_decode(p + 2, len - 2, sym, n, rows, 2)
                       : cz_huff_decode(p + 2, len - 2, sym, n);
    if (rc != 0 && rc != -1)
        abort();
    free(sym);
}

static void round_trip(const uint8_t *p, size_t len, uint8_t sel)
{
    if (len < 2)
        return;
    bool fl = !(sel & 4);
    size_t es = fl ? 4 : 8, count = (len - 2) / es;
    cz_shape sh = {fl ? CAIRN_FLOAT : CAIRN_DOUBLE, (uint8_t)(1 + sel / 8 % 3), {0}, 0};
    sh.bound = pow(10, -(double)(p[0] % 10)) * (1 + p[1]);
    if (count == 0 || count * es > FUZZ_MAX_RAW)
        return;
    /* dims: the last gets what the others leave; others are small factors */
    uint64_t rest = count;
    for (int d = 0; d < sh.ndims - 1; d++) {
        uint64_t f = 1 + p[1 + d] % 7;
        sh.dims[d] = rest >= f ? f : 1;
        rest /= sh.dims[d];
    }
    sh.dims[sh.ndims - 1] = rest;
    count = 1;
    for (int d = 0; d < sh.ndims; d++)
        count *= sh.dims[d];
    size_t raw = count * es, cap = cz_predict_bound(raw);
    uint8_t *src = malloc(raw), *rec = malloc(raw), *out = malloc(raw), *dst = malloc(cap);
    if (!src || !rec || !out || !dst)
        abort();
    memcpy(src, p + 2, raw);
    double me = -1, worst = 0;
    size_t n = cz_predict_encode(&sh, src, dst, cap, rec, &me);
    if (n == 0 || n > cap)
        abort();
    uint8_t *pay = malloc(n);
    if (!pay)
        abort();
    memcpy(pay, dst, n);
    if (cz_predict_decode(sh.type, pay, n, out, raw) != 0 || memcmp(out, rec, raw) != 0)
        abort();
    for (size_t i = 0; i < count; i++) {
        double x = pz_load(src + i * es, fl), y = pz_load(out + i * es, fl);
        if (!isfinite(x)) {
            if (memcmp(src + i * es, out + i * es, es) != 0)
                abort();
            continue;
        }
        double e = fabs(x - y);
        if (!(e <= sh.bound))
            abort();
        worst = e > worst ? e : worst;
    }
    if (me != worst)
        abort();
    free(src);
    free(rec);
    free(out);
    free(dst);
    free(pay);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t sel = data[0];
    const uint8_t *p = data + 1;
    size_t len = size - 1;
    uint8_t type = (sel & 4) ? CAIRN_DOUBLE : CAIRN_FLOAT;
    size_t es = type == CAIRN_DOUBLE ? 8 : 4;
    switch (sel % 4) {
    case 0:
        if (len >= 4)
            decode_payload(p + 4, len - 4, type, (size_t)(cn_get_u32(p) % (FUZZ_MAX_RAW / es + 1)) * es);
        break;
    case 1:
        decode_payload(p, len, type, claimed_raw(p, len, es));
        break;
    case 2:
        huff(p, len, sel);
        break;
    default:
        round_trip(p, len, sel);
        break;
    }
    return 0;
}
