/*
 * wavelet_xform.c - the Haar transform of the wavelet codec (the paper's
 * section 3.1): each pair of neighbours (x0, x1) becomes its average
 * a = (x0 + x1) / 2 (low frequency) and half-difference h = (x0 - x1) / 2
 * (high frequency), so that x0 = a + h and x1 = a - h.
 *
 * Dimensions: the 1-D step is applied along each dimension of length >= 2
 * in turn, fastest first, as in the paper's Fig. 3. Each step splits every
 * block of the previous step into its low half then its high half, each
 * stored contiguously (the paper's Fig. 4): after a 3-D level the array is
 * eight contiguous blocks, the all-low block first. Every element is thus
 * its low value plus or minus one coefficient of each of the 2^D - 1 high
 * blocks (D = dimensions of length >= 2), all with weight 1.
 *
 * Odd lengths: the last element of an odd line has no partner; it is
 * carried into the low half unchanged (a line of L values gives ceil(L/2)
 * low and floor(L/2) high values). A dimension of length 1 is not
 * transformed at all.
 *
 * Levels: level l + 1 transforms level l's low block (at the front) again,
 * leaving level l's high blocks where they are, so the coefficients read:
 * coarsest low block, coarsest level's high blocks, ..., finest level's.
 *
 * The inverse is the only reconstruction there is: the encoder runs it on
 * the values it will store to know exactly what the decoder will produce.
 * Only additions and halvings: no operation a compiler could contract.
 *
 * Ownership: callers own all arrays; nothing allocates here.
 */
#include "compress/wavelet_impl.h"

/* Stop adding levels once the low block holds at most this many elements. */
#define WL_LOW_SMALL 16

/* A block of one step: its offset in the level's region and its shape. */
typedef struct wl_block {
    size_t off;
    uint64_t m[3];
} wl_block;

/* The steps of one level: before step s there are 2^s blocks, b[s][...]. */
typedef struct wl_steps {
    int n;          /* steps: one per dimension of length >= 2 */
    int dim[3];
    wl_block b[4][8];
} wl_steps;

static size_t block_count(const wl_block *b)
{
    return (size_t)(b->m[0] * b->m[1] * b->m[2]);
}

static void steps_init(wl_steps *st, const uint64_t in[3])
{
    st->n = 0;
    st->b[0][0] = (wl_block){0, {in[0], in[1], in[2]}};
    for (int k = 2; k >= 0; k--) {
        if (in[k] < 2)
            continue;
        int s = st->n++;
        st->dim[s] = k;
        for (int i = 0; i < (1 << s); i++) {
            wl_block lo = st->b[s][i], hi = lo;
            lo.m[k] = (lo.m[k] + 1) / 2;
            hi.m[k] = hi.m[k] / 2;
            hi.off = lo.off + block_count(&lo);
            st->b[s + 1][2 * i] = lo;
            st->b[s + 1][2 * i + 1] = hi;
        }
    }
}

/* Block B seen along dimension K: A lines of L rows of W contiguous values. */
static void along(const wl_block *b, int k, size_t *a, size_t *l, size_t *w)
{
    *a = k == 0 ? 1 : k == 1 ? (size_t)b->m[0] : (size_t)(b->m[0] * b->m[1]);
    *l = (size_t)b->m[k];
    *w = k == 2 ? 1 : k == 1 ? (size_t)b->m[2] : (size_t)(b->m[1] * b->m[2]);
}

/* One 1-D step over IN (A x L x W) into LO (A x ceil(L/2) x W) and HI. */
static void split(const double *in, double *lo, double *hi, size_t a, size_t l, size_t w)
{
    size_t nl = (l + 1) / 2, nh = l / 2;
    for (size_t i = 0; i < a; i++) {
        const double *s = in + i * l * w;
        double *pl = lo + i * nl * w, *ph = hi + i * nh * w;
        if (w == 1) {
            for (size_t j = 0; j < nh; j++) {
                double x0 = s[2 * j], x1 = s[2 * j + 1];
                pl[j] = (x0 + x1) * 0.5;
                ph[j] = (x0 - x1) * 0.5;
            }
        } else {
            for (size_t j = 0; j < nh; j++) {
                const double *r0 = s + 2 * j * w, *r1 = r0 + w;
                double *ql = pl + j * w, *qh = ph + j * w;
                for (size_t v = 0; v < w; v++) {
                    ql[v] = (r0[v] + r1[v]) * 0.5;
                    qh[v] = (r0[v] - r1[v]) * 0.5;
                }
            }
        }
        if (l & 1)
            memcpy(pl + nh * w, s + (l - 1) * w, w * sizeof *s);
    }
}

/* The inverse of split: LO and HI back into OUT (A x L x W). */
static void merge(const double *lo, const double *hi, double *out, size_t a, size_t l, size_t w)
{
    size_t nl = (l + 1) / 2, nh = l / 2;
    for (size_t i = 0; i < a; i++) {
        double *d = out + i * l * w;
        const double *pl = lo + i * nl * w, *ph = hi + i * nh * w;
        if (w == 1) {
            for (size_t j = 0; j < nh; j++) {
                double av = pl[j], hv = ph[j];
                d[2 * j] = av + hv;
                d[2 * j + 1] = av - hv;
            }
        } else {
            for (size_t j = 0; j < nh; j++) {
                double *r0 = d + 2 * j * w, *r1 = r0 + w;
                const double *ql = pl + j * w, *qh = ph + j * w;
                for (size_t v = 0; v < w; v++) {
                    r0[v] = ql[v] + qh[v];
                    r1[v] = ql[v] - qh[v];
                }
            }
        }
        if (l & 1)
            memcpy(d + (l - 1) * w, pl + nh * w, w * sizeof *d);
    }
}

void wl_plan_init(wl_plan *p, const uint64_t dims[3], int levels)
{
    uint64_t s[3] = {dims[0], dims[1], dims[2]};
    p->levels = levels;
    p->count = (size_t)(s[0] * s[1] * s[2]);
    for (int l = 0; l < levels; l++) {
        wl_level *v = &p->lv[l];
        v->active = 0;
        for (int k = 0; k < 3; k++) {
            v->in[k] = s[k];
            v->active += s[k] >= 2;
            s[k] = (s[k] + 1) / 2;
        }
        v->nin = (size_t)(v->in[0] * v->in[1] * v->in[2]);
        v->nlow = (size_t)(s[0] * s[1] * s[2]);
    }
}

int wl_auto_levels(const uint64_t dims[3])
{
    uint64_t s[3] = {dims[0], dims[1], dims[2]};
    int levels = 1;
    for (;;) {
        for (int k = 0; k < 3; k++)
            s[k] = (s[k] + 1) / 2;
        if (levels == WL_MAX_LEVELS || s[0] * s[1] * s[2] <= WL_LOW_SMALL ||
            (s[0] < 2 && s[1] < 2 && s[2] < 2))
            return levels;
        levels++;
    }
}

void wl_forward(const wl_plan *p, double *c, double *tmp)
{
    for (int l = 0; l < p->levels; l++) {
        wl_steps st;
        steps_init(&st, p->lv[l].in);
        double *src = c, *dst = tmp;
        for (int s = 0; s < st.n; s++) {
            for (int i = 0; i < (1 << s); i++) {
                const wl_block *b = &st.b[s][i], *lo = &st.b[s + 1][2 * i],
                               *hi = &st.b[s + 1][2 * i + 1];
                size_t a, len, w;
                along(b, st.dim[s], &a, &len, &w);
                split(src + b->off, dst + lo->off, dst + hi->off, a, len, w);
            }
            double *t = src;
            src = dst;
            dst = t;
        }
        if (src != c)
            memcpy(c, src, p->lv[l].nin * sizeof *c);
    }
}

void wl_reconstruct(const wl_plan *p, double *c, double *tmp, uint8_t type, void *out)
{
    for (int l = p->levels - 1; l >= 0; l--) {
        wl_steps st;
        steps_init(&st, p->lv[l].in);
        double *src = c, *dst = tmp;
        for (int s = st.n - 1; s >= 0; s--) {
            for (int i = 0; i < (1 << s); i++) {
                const wl_block *b = &st.b[s][i], *lo = &st.b[s + 1][2 * i],
                               *hi = &st.b[s + 1][2 * i + 1];
                size_t a, len, w;
                along(b, st.dim[s], &a, &len, &w);
                merge(src + lo->off, src + hi->off, dst + b->off, a, len, w);
            }
            double *t = src;
            src = dst;
            dst = t;
        }
        if (src != c)
            memcpy(c, src, p->lv[l].nin * sizeof *c);
    }
    if (type == CAIRN_FLOAT) {
        uint8_t *o = out; /* any alignment */
        for (size_t i = 0; i < p->count; i++)
            wl_put(CAIRN_FLOAT, o + 4 * i, c[i]);
    } else {
        memcpy(out, c, p->count * sizeof *c);
    }
}
