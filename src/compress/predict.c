/*
 * predict.c - the predictive lossy codec (SZ-style; contract in compress.h):
 * payload format, entry points, and the Lorenzo predictor. The quantizer
 * and the per-element step shared by encoder and decoder are in
 * predict_impl.h, the interpolation predictor in predict_interp.c.
 *
 * Each element x is predicted from already decoded neighbours as p; the
 * residual is quantized in steps of s ~ 2e (q = round((x - p) / s), x' =
 * p + q * s), and q + PZ_RADIUS is the element's uint16 code. Codes are
 * rANS-coded with static per-context tables (codes_ans.c; version 3), or,
 * when that does not fit or Huffman is smaller (tried for arrays of at most
 * PZ_SMALL elements), Huffman-coded (huffman.c), then zstd'd; version 2
 * range-coded them (codes_rc.c, still read). Exceptions (code 0): NaN, +/-Inf,
 * residuals past the radius, values whose x' misses the bound (by float
 * rounding, or overflow); they are stored exactly, raw bits, in coding
 * order.
 *
 * Predictors: multilevel interpolation (predict_interp.c; SZ3) and Lorenzo
 * (SZ-1.4). Both are tried on a box at the array's centre, through the
 * codes' rANS stage, and the smaller output wins; on smooth 2-D and 3-D fields that
 * is nearly always interpolation, by far. Lorenzo: the 3-D 7-term
 * predictor on a (n0, n1, n2) box, 1-D and 2-D arrays being (1, 1, d0) and
 * (1, d0, d1), in memory order; neighbours outside the array are 0, which
 * at a face is exactly the lower-order Lorenzo predictor of that face (and
 * the first element is predicted as 0).
 *
 * Payload (integers little-endian):
 *   u8 magic 'P', u8 version (3; 2 and 1 are still read), u8 type, u8 ndims,
 *   u8 predictor (enum pz_predictor), u8 flags (bit 0: codes section
 *   zstd'd, bit 1: exceptions zstd'd, bit 2 (version 2 only): codes
 *   range-coded, bit 3 (version 3 only): codes rANS-coded; a coded section
 *   is never zstd'd), u16 0, f64 bound, u32 radius (PZ_RADIUS),
 *   u32 0, u64 dims[ndims], u64 nexc, u64 huff_len (codes section before
 *   zstd), u64 huff_stored, u64 exc_stored (as stored), then the codes
 *   section (cz_ans_encode, cz_rc_encode or cz_huff_encode of the codes)
 *   and the exceptions section. A Huffman section and the exceptions are
 *   zstd'd only when that makes them smaller. Version 2 is version 3 with
 *   bit 2 (cz_rc_encode) in place of bit 3: the same predictors, bounds and
 *   codes; version 1 (what cairn wrote before the range coder) is version 2
 *   without bit 2, and its interpolation used the variable's bound at every
 *   level (predict_interp.c).
 *
 * Ownership: the caller owns every buffer; work memory is allocated and
 * freed within a call: the codes (2 bytes an element; the predictors read
 * decoded values from the output itself), the rANS coder's (codes_ans.c),
 * the sections (bounded by the raw size, touched only as far as they are
 * filled), and a list of the non-finite exceptions (pz_fixup).
 */
#include "compress/predict_impl.h"

#include <stdlib.h>

#include <zstd.h>

#define PZ_MAGIC 'P'
#define PZ_VERSION 3
#define PZ_VERSION_RC 2   /* codes range-coded (flag bit 2) */
#define PZ_VERSION_OLD 1  /* the oldest read: Huffman codes only */
#define PZ_ZSTD_LEVEL 3
#define PZ_FIXED 56          /* header bytes besides the dims */
#define PZ_SAMPLE 16384      /* least elements of the box that picks the predictor */
#define PZ_SMALL 65536       /* arrays up to this many elements: Huffman tried too */

size_t cz_predict_bound(size_t raw_len)
{
    size_t h = cz_huff_bound(raw_len / 4);
    if (h == SIZE_MAX || h > SIZE_MAX - raw_len - PZ_FIXED - 8 * CAIRN_MAX_DIMS)
        return SIZE_MAX;
    return PZ_FIXED + 8 * CAIRN_MAX_DIMS + h + raw_len;
}

/* Shape of C from TYPE and DIMS, checked: 0 or -1. */
static int ctx_shape(pz_ctx *c, uint8_t type, unsigned ndims, const uint64_t *dims)
{
    if ((type != CAIRN_FLOAT && type != CAIRN_DOUBLE) || ndims < 1 || ndims > 3)
        return -1;
    uint64_t d[3] = {1, 1, 1}, count = 1, bytes;
    for (unsigned i = 0; i < ndims; i++) {
        d[3 - ndims + i] = dims[i];
        if (dims[i] == 0 || __builtin_mul_overflow(count, dims[i], &count))
            return -1;
    }
    c->es = type == CAIRN_FLOAT ? 4 : 8;
    if (__builtin_mul_overflow(count, (uint64_t)c->es, &bytes) || bytes > SIZE_MAX / 4)
        return -1;
    c->n0 = d[0];
    c->n1 = d[1];
    c->n2 = d[2];
    c->count = count;
    c->fl = type == CAIRN_FLOAT;
    return 0;
}

/* ---- Lorenzo ------------------------------------------------------------- */

/* Row J of plane I of the ring of decoded values (two planes, or one plane
 * of two rows when n0 == 1), each row with a zero at index -1; rows outside
 * the array are a shared zero row. */
static inline double *row_at(double *buf, double *zero, const pz_ctx *c, int64_t i, int64_t j)
{
    if (i < 0 || j < 0)
        return zero + 1;
    size_t slot = c->n0 > 1 ? (size_t)(i & 1) * c->n1 + (size_t)j : (size_t)(j & 1);
    return buf + slot * (c->n2 + 1) + 1;
}

static inline __attribute__((always_inline)) int lorenzo_run(pz_ctx *cc, double *buf,
                                                             double *zero, bool enc)
{
    pz_ctx c = *cc; /* in registers: see pass() in predict_interp.c */
    size_t idx = 0;
    int rc = 0;
    for (int64_t i = 0; i < (int64_t)c.n0 && rc == 0; i++)
        for (int64_t j = 0; j < (int64_t)c.n1; j++) {
            double *r = row_at(buf, zero, &c, i, j);
            const double *u = row_at(buf, zero, &c, i, j - 1);
            const double *pr = row_at(buf, zero, &c, i - 1, j);
            const double *pu = row_at(buf, zero, &c, i - 1, j - 1);
            for (ptrdiff_t l = 0; l < (ptrdiff_t)c.n2; l++, idx++) {
                double pred = r[l - 1] + u[l] - u[l - 1] + pr[l] - pr[l - 1] - pu[l] +
                              pu[l - 1];
                r[l] = pz_step(&c, idx, pred, enc);
            }
            if (!enc && c.bad) {
                rc = -1;
                break;
            }
        }
    *cc = c;
    return rc;
}

int pz_lorenzo(pz_ctx *c, bool enc)
{
    size_t nrows = c->n0 > 1 ? 2 * c->n1 : 2, w = c->n2 + 1;
    double *buf = calloc(nrows * w, sizeof *buf), *zero = calloc(w, sizeof *zero);
    int rc = -1;
    if (buf && zero)
        rc = enc ? lorenzo_run(c, buf, zero, true) : lorenzo_run(c, buf, zero, false);
    free(buf);
    free(zero);
    return rc;
}

/* ---- non-finite exceptions ----------------------------------------------- */

void pz_note_fix(pz_fixes *f, size_t idx, size_t k)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 64;
        struct pz_fix *v = realloc(f->v, cap * sizeof *v);
        if (!v) {
            f->nomem = true;
            return;
        }
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n++] = (struct pz_fix){idx, k};
}

void pz_fixup(pz_ctx *c, bool enc)
{
    pz_fixes *f = c->fixes;
    for (size_t i = 0; i < f->n; i++)
        memcpy(c->out + f->v[i].idx * c->es,
               enc ? c->src + f->v[i].idx * c->es : c->exc + f->v[i].k * c->es, c->es);
    free(f->v);
    *f = (pz_fixes){0};
}

/* Run predictor PRED over C, coding (ENC) or decoding: 0, or -1 (no memory,
 * or the decoder met bad codes). */
static int predict_run(pz_ctx *c, int pred, bool enc)
{
    pz_fixes fixes = {0};
    c->fixes = &fixes;
    int rc = pred == PZ_INTERP ? pz_interp(c, enc) : pz_lorenzo(c, enc);
    rc = rc == 0 && !c->bad && !fixes.nomem ? 0 : -1;
    pz_fixup(c, enc);
    c->fixes = NULL;
    return rc;
}

/* ---- encoder ------------------------------------------------------------- */

/* Store section S[0..LEN) at DST (CAP bytes), zstd'd if that is smaller.
 * Returns the stored size (*Z set if zstd'd), or SIZE_MAX if it does not fit. */
static size_t put_section(const uint8_t *s, size_t len, uint8_t *dst, size_t cap, bool *z)
{
    *z = false;
    if (len >= 32) {
        size_t r = ZSTD_compress(dst, cap, s, len, PZ_ZSTD_LEVEL);
        if (!ZSTD_isError(r) && r < len) {
            *z = true;
            return r;
        }
    }
    if (len > cap)
        return SIZE_MAX;
    if (len)
        memcpy(dst, s, len);
    return len;
}

/* Sections of a coded array. */
typedef struct pz_body {
    size_t hlen, hs, xs;   /* codes section bytes; codes and exceptions as stored */
    bool zh, ze;           /* zstd'd */
    bool ans;              /* codes rANS-coded (else Huffman) */
} pz_body;

/* The runs of rows in which predictor PRED visits C's elements. */
static size_t pred_rows(const pz_ctx *c, int pred, cz_rows *rows)
{
    if (pred == PZ_INTERP)
        return pz_interp_rows(c, rows);
    rows[0] = (cz_rows){c->count, c->n2, 0}; /* Lorenzo: memory order */
    return 1;
}

/* Code C (codes, exc and out allocated for c->count elements) with predictor
 * PRED and store both sections at DST (CAP bytes); HUFF_TOO: Huffman tried
 * beside rANS, the smaller kept. Returns their size, or SIZE_MAX if they do
 * not fit or memory ran out. */
static size_t encode_body(pz_ctx *c, int pred, bool huff_too, uint8_t *dst, size_t cap,
                          pz_body *b)
{
    c->seq = c->nexc = 0;
    c->err = 0;
    c->bad = false;
    if (predict_run(c, pred, true) != 0)
        return SIZE_MAX;
    size_t out = SIZE_MAX;
    uint8_t *huff = NULL;
    b->zh = false;
    size_t hcap = cz_huff_bound((size_t)c->count); /* the codes section's limit */
    cz_rows rows[PZ_MAX_ROWS];
    size_t nrows = pred_rows(c, pred, rows);
    b->hlen = cz_ans_encode(c->codes, (size_t)c->count, rows, nrows, dst, cap < hcap ? cap : hcap);
    b->ans = b->hlen != 0;
    b->hs = b->hlen;
    /* does not fit, or a small array, where rANS's tables may cost more than
     * they save: Huffman too (bounded), and the smaller wins */
    if (!b->ans || huff_too) {
        huff = malloc(hcap);
        if (!huff)
            return SIZE_MAX;
        size_t hl = cz_huff_encode(c->codes, (size_t)c->count, huff, hcap);
        bool zh;
        uint8_t *at = b->ans ? huff + hl : dst; /* after the Huffman code, if it fits */
        size_t room = b->ans ? (hl < hcap ? hcap - hl : 0) : cap;
        size_t hs = hl ? put_section(huff, hl, at, room, &zh) : SIZE_MAX;
        if (hs != SIZE_MAX && (!b->ans || hs < b->hs)) {
            if (b->ans)
                memcpy(dst, at, hs);
            b->ans = false;
            b->hlen = hl;
            b->hs = hs;
            b->zh = zh;
        } else if (!b->ans) {
            b->hs = SIZE_MAX;
        }
    }
    if (b->hs != SIZE_MAX) {
        b->xs = put_section(c->exc, c->nexc * c->es, dst + b->hs, cap - b->hs, &b->ze);
        if (b->xs != SIZE_MAX)
            out = b->hs + b->xs;
    }
    free(huff);
    return out;
}

/* Free what alloc_work allocated. */
static void free_work(pz_ctx *c)
{
    free(c->codes);
    free(c->exc);
    c->codes = NULL;
    c->exc = NULL;
}

static int alloc_work(pz_ctx *c)
{
    c->codes = malloc((size_t)c->count * sizeof *c->codes);
    c->exc = malloc((size_t)c->count * c->es);
    return c->codes && c->exc ? 0 : -1;
}

/*
 * The predictor for C: both code a box at the array's centre of about a
 * sixteenth of its elements, at least PZ_SAMPLE (the whole array if it is
 * that small), through rANS alone, and the smaller output wins
 * (interpolation on a tie, or on a failure, which the real encode then
 * meets again).
 */
static int choose_predictor(const pz_ctx *c)
{
    uint64_t n[3] = {c->n0, c->n1, c->n2}, m[3], o[3];
    unsigned nd = c->n0 > 1 ? 3 : c->n1 > 1 ? 2 : 1;
    double want = c->count / 16 > PZ_SAMPLE ? (double)(c->count / 16) : PZ_SAMPLE;
    uint64_t side = (uint64_t)ceil(nd == 1 ? want : nd == 2 ? sqrt(want) : cbrt(want));
    for (int d = 0; d < 3; d++) {
        m[d] = n[d] < side ? n[d] : side;
        o[d] = (n[d] - m[d]) / 2;
    }
    pz_ctx t = *c;
    t.n0 = m[0];
    t.n1 = m[1];
    t.n2 = m[2];
    t.count = m[0] * m[1] * m[2];
    size_t bytes = (size_t)t.count * c->es, cap = cz_predict_bound(bytes);
    uint8_t *box = malloc(bytes), *rec = malloc(bytes), *dst = malloc(cap);
    int best = PZ_INTERP;
    if (box && rec && dst && alloc_work(&t) == 0) {
        for (uint64_t i = 0; i < m[0]; i++)
            for (uint64_t j = 0; j < m[1]; j++)
                memcpy(box + ((i * m[1] + j) * m[2]) * c->es,
                       c->src + (((o[0] + i) * n[1] + o[1] + j) * n[2] + o[2]) * c->es,
                       (size_t)m[2] * c->es);
        t.src = box;
        t.out = rec;
        pz_body b;
        size_t si = encode_body(&t, PZ_INTERP, false, dst, cap, &b);
        size_t sl = encode_body(&t, PZ_LORENZO, false, dst, cap, &b);
        if (sl < si)
            best = PZ_LORENZO;
    }
    free_work(&t);
    free(box);
    free(rec);
    free(dst);
    return best;
}

size_t cz_predict_encode(const cz_shape *sh, const void *src, uint8_t *dst, size_t cap,
                         void *recon, double *max_err)
{
    pz_ctx c = {0};
    *max_err = 0;
    if (ctx_shape(&c, sh->type, sh->ndims, sh->dims) != 0 || pz_step_of(sh->bound) == 0)
        return 0;
    const size_t hdr = PZ_FIXED + 8 * (size_t)sh->ndims;
    c.bound = sh->bound;
    c.level_bounds = true;
    c.step = pz_step_of(sh->bound);
    c.inv_step = 1 / c.step;
    c.src = src;
    c.out = recon;
    size_t out = 0, body = SIZE_MAX;
    pz_body b;
    if (cap < hdr)
        return 0;
    int pred = choose_predictor(&c);
    if (alloc_work(&c) == 0)
        body = encode_body(&c, pred, c.count <= PZ_SMALL, dst + hdr, cap - hdr, &b);
    if (body == SIZE_MAX)
        goto done;

    uint8_t *p = dst;
    uint64_t bbits;
    memcpy(&bbits, &c.bound, 8);
    p[0] = PZ_MAGIC;
    p[1] = PZ_VERSION;
    p[2] = sh->type;
    p[3] = sh->ndims;
    p[4] = (uint8_t)pred;
    p[5] = (uint8_t)(b.zh | b.ze << 1 | b.ans << 3);
    cn_put_u16(p + 6, 0);
    cn_put_u64(p + 8, bbits);
    cn_put_u32(p + 16, PZ_RADIUS);
    cn_put_u32(p + 20, 0);
    p += 24;
    for (unsigned d = 0; d < sh->ndims; d++, p += 8)
        cn_put_u64(p, sh->dims[d]);
    cn_put_u64(p, c.nexc);
    cn_put_u64(p + 8, b.hlen);
    cn_put_u64(p + 16, b.hs);
    cn_put_u64(p + 24, b.xs);
    *max_err = c.err;
    out = hdr + body;
done:
    free_work(&c);
    return out;
}

/* ---- decoder ------------------------------------------------------------- */

/* Section of STORED bytes at S into a new buffer of exactly LEN bytes. */
static uint8_t *get_section(const uint8_t *s, uint64_t stored, uint64_t len, bool z)
{
    if (!z && stored != len)
        return NULL;
    uint8_t *b = malloc(len ? (size_t)len : 1);
    if (!b)
        return NULL;
    if (z) {
        size_t r = ZSTD_decompress(b, (size_t)len, s, (size_t)stored);
        if (ZSTD_isError(r) || r != len) {
            free(b);
            return NULL;
        }
    } else if (len) {
        memcpy(b, s, (size_t)len);
    }
    return b;
}

int cz_predict_decode(uint8_t type, const uint8_t *src, size_t n, void *dst, size_t raw_len)
{
    cn_rd rd = {src, n, 0, false};
    uint8_t magic = cn_rd_u8(&rd), version = cn_rd_u8(&rd), ptype = cn_rd_u8(&rd);
    uint8_t ndims = cn_rd_u8(&rd), pred = cn_rd_u8(&rd), flags = cn_rd_u8(&rd);
    uint16_t zero16 = cn_rd_u16(&rd);
    uint64_t bbits = cn_rd_u64(&rd);
    uint32_t radius = cn_rd_u32(&rd), zero32 = cn_rd_u32(&rd);
    /* flag bit 2 (range coder) in version 2 only, bit 3 (rANS) in 3 only */
    uint8_t allowed = version == PZ_VERSION_OLD ? 3 : version == PZ_VERSION_RC ? 7 : 11;
    if (rd.bad || magic != PZ_MAGIC || version < PZ_VERSION_OLD || version > PZ_VERSION ||
        ptype != type || pred > PZ_INTERP || (flags & ~allowed) ||
        ((flags & 12) && (flags & 1)) || zero16 || zero32 || radius != PZ_RADIUS)
        return -1;
    bool rc_codes = flags & 4, ans_codes = flags & 8, coded = rc_codes || ans_codes;
    pz_ctx c = {0};
    memcpy(&c.bound, &bbits, 8);
    uint64_t dims[3] = {0};
    for (unsigned d = 0; d < ndims && d < 3; d++)
        dims[d] = cn_rd_u64(&rd);
    uint64_t nexc = cn_rd_u64(&rd), hlen = cn_rd_u64(&rd), hs = cn_rd_u64(&rd),
             xs = cn_rd_u64(&rd);
    if (rd.bad || ctx_shape(&c, type, ndims, dims) != 0 || c.count * c.es != raw_len ||
        pz_step_of(c.bound) == 0 || nexc > c.count ||
        hlen > cz_huff_bound((size_t)c.count) || hs > n - rd.off || xs != n - rd.off - hs ||
        (coded && hs != hlen))
        return -1;
    c.step = pz_step_of(c.bound);
    c.level_bounds = version > PZ_VERSION_OLD;
    c.out = dst;
    c.exc_cap = (size_t)nexc;
    int rc = -1;
    c.codes = malloc((size_t)c.count * sizeof *c.codes);
    uint8_t *huff = coded ? NULL : get_section(src + rd.off, hs, hlen, flags & 1);
    c.exc = get_section(src + rd.off + hs, xs, nexc * c.es, flags & 2);
    if (!c.codes || (!coded && !huff) || !c.exc)
        goto done;
    cz_rows rows[PZ_MAX_ROWS];
    size_t nrows = pred_rows(&c, pred, rows);
    const uint8_t *cs = src + rd.off;
    if (ans_codes ? cz_ans_decode(cs, (size_t)hs, c.codes, (size_t)c.count, rows, nrows) != 0
        : rc_codes ? cz_rc_decode(cs, (size_t)hs, c.codes, (size_t)c.count, rows, nrows) != 0
                   : cz_huff_decode(huff, (size_t)hlen, c.codes, (size_t)c.count) != 0)
        goto done;
    if (predict_run(&c, pred, false) == 0 && c.nexc == nexc)
        rc = 0;
done:
    free(c.codes);
    free(huff);
    free(c.exc);
    return rc;
}
