/*
 * field.c - lossy_bench's helpers on a field: element size, raw size, value
 * range, a printable shape, the error of a decoded array against the field
 * (non-finite elements bit for bit), the shape cairn's codecs are given, and
 * the check that a cairn decode is what its encode promised. Owned by
 * lossy_bench (bench/lossy_bench.c).
 */
#include "lossy_bench.h"

/* ---- small helpers ------------------------------------------------------- */

static size_t esize(uint8_t type) { return type == CAIRN_FLOAT ? 4 : 8; }
size_t raw_size(const field *f) { return f->n * esize(f->type); }

static double at(const field *f, const void *p, size_t i)
{
    return f->type == CAIRN_FLOAT ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

void set_range(field *f)
{
    f->lo = INFINITY, f->hi = -INFINITY;
    for (size_t i = 0; i < f->n; i++) {
        double x = at(f, f->p, i);
        if (isfinite(x)) {
            f->lo = x < f->lo ? x : f->lo;
            f->hi = x > f->hi ? x : f->hi;
        }
    }
    if (!(f->hi > f->lo))
        die("%s: no range (min %g, max %g)", f->name, f->lo, f->hi);
}

double range(const field *f) { return f->hi - f->lo; }

/* Calls per timed sample: a small field is coded several times in a row. */
int inner_calls(const field *f)
{
    size_t raw = raw_size(f);
    return raw >= SAMPLE ? 1 : (int)((SAMPLE + raw - 1) / raw);
}

const char *dims_str(const field *f, char *buf, size_t cap)
{
    size_t used = 0;
    for (int d = 0; d < f->ndims && used < cap; d++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%llu", d ? " x " : "",
                                (unsigned long long)f->dims[d]);
    return buf;
}

/*
 * |x - x'| of the decoded array DEC against F. Non-finite elements must come
 * back bit for bit. With BOUND > 0, abort at the first element beyond it
 * (WHAT names the method in the message).
 */
errs measure(const field *f, const void *dec, double bound, const char *what)
{
    errs e = {0, 0};
    double sum = 0;
    size_t nf = 0;
    for (size_t i = 0; i < f->n; i++) {
        double x = at(f, f->p, i), y = at(f, dec, i);
        if (!isfinite(x)) {
            size_t es = esize(f->type);
            if (memcmp((const uint8_t *)f->p + i * es, (const uint8_t *)dec + i * es, es) != 0)
                die("%s: %s: element %zu is %g, decoded as %g (non-finite must be exact)",
                    f->name, what, i, x, y);
            continue;
        }
        double d = fabs(x - y);
        if (bound > 0 && !(d <= bound))
            die("%s: %s: element %zu is %.17g, decoded as %.17g: error %.3g > bound %.3g",
                f->name, what, i, x, y, d, bound);
        if (!(d <= e.max_abs)) /* NaN propagates, so a NaN decode is seen */
            e.max_abs = d;
        sum += d;
        nf++;
    }
    e.mean_abs = nf ? sum / (double)nf : 0;
    return e;
}

/* The shape cairn's lossy codecs take for F at absolute bound BOUND. */
cz_shape shape_of(const field *f, double bound)
{
    cz_shape sh = {.type = f->type, .ndims = f->ndims, .bound = bound};
    for (int d = 0; d < f->ndims; d++)
        sh.dims[d] = f->dims[d];
    return sh;
}

/*
 * After a cairn encode that reported MAX_ERR and decoded into g.dec: the
 * decode must equal the reconstruction bit for bit, every element must be
 * within BOUND (if > 0), and MAX_ERR must be the error observed.
 */
errs verify_cairn(const field *f, double bound, double max_err, const char *what)
{
    if (memcmp(g.dec, g.recon, raw_size(f)) != 0)
        die("%s: %s: decode differs from the reconstruction encode reported", f->name, what);
    errs e = measure(f, g.dec, bound, what);
    if (!(fabs(e.max_abs - max_err) <= 1e-12 * range(f)))
        die("%s: %s: encode reported max error %.17g, observed %.17g", f->name, what, max_err,
            e.max_abs);
    return e;
}
