/*
 * paper.c - lossy_bench's paper section: the wavelet method as published
 * (figs. 8-10), ratio and error per quantiser and bin count. Owned by
 * lossy_bench (bench/lossy_bench.c).
 */
#include "lossy_bench.h"

/* ---- paper: the wavelet method as published (figs. 8-10) -------------------- */

const char *qname(int q) { return q == CZ_Q_SIMPLE ? "simple" : "mountain"; }

void paper_section(const field *f)
{
    size_t raw = raw_size(f);
    int inner = inner_calls(f);
    char dbuf[64];

    /* gzip alone: zlib -6 on the raw array, in one piece. */
    const cz_codec *zl = cz_codec_get(CZ_ZLIB);
    if (!zl || zl->bound(raw) > g.cap)
        die("zlib codec missing or its bound exceeds the buffer");
    size_t gz = zl->encode(f->type, 6, f->p, raw, g.dst, g.cap, g.scratch);
    if (gz == 0)
        die("%s: zlib -6 of the raw array failed", f->name);
    double gz_pct = 100.0 * (double)gz / (double)raw;

    printf("# paper %s: %s %s (%.2f MiB), range %.6g .. %.6g; the wavelet method with d = %d, "
           "guarantee off, final pass zlib; size %% = payload / raw (the paper's fig. 8 counts "
           "only the coefficients, not bitmap and table); re = |x - x'| / (max - min) (eq. 4); "
           "one sample each (of %d call%s)\n",
           f->name, dims_str(f, dbuf, sizeof dbuf), f->type == CAIRN_FLOAT ? "float" : "double",
           (double)raw / MIB, f->lo, f->hi, PAPER_BINS, inner, inner > 1 ? "s in a row" : "");
    printf("#   gzip alone (zlib -6 on the raw array): %.2f %%   (paper, NICAM temperature "
           "1156 x 82 x 2: 86.78 %%)\n",
           gz_pct);
    printf("#   %-8s %6s %4s %8s %11s %10s %10s %12s\n", "quant", "encode", "n", "size %",
           "mean re %", "max re %", "comp MB/s", "decomp MB/s");
    double headline = -1;
    cz_shape sh = shape_of(f, range(f)); /* the bound is ignored without the guarantee */
    for (int q = CZ_Q_SIMPLE; q <= CZ_Q_MOUNTAIN; q++)
        for (int enc = 1; enc >= 0; enc--)
            for (int n = 1; n <= PAPER_MAX_N; n *= 2) {
                cz_wavelet_opts o = {.quantizer = q, .divisions = n, .bins = PAPER_BINS,
                                     .encode = enc, .guarantee = false, .lossless = CZ_ZLIB};
                char what[64];
                snprintf(what, sizeof what, "wavelet %s n=%d encode=%d", qname(q), n, enc);
                double max_err = -1, t0 = now();
                size_t len = 0;
                for (int k = 0; k < inner; k++)
                    len = cz_wavelet_encode(&sh, &o, f->p, g.dst, g.cap, g.recon, &max_err);
                double tc = (now() - t0) / inner;
                if (len == 0)
                    die("%s: %s: cz_wavelet_encode failed", f->name, what);
                memset(g.dec, 0xff, raw);
                t0 = now();
                for (int k = 0; k < inner; k++)
                    if (cz_wavelet_decode(f->type, g.dst, len, g.dec, raw) != 0)
                        die("%s: %s: cz_wavelet_decode failed", f->name, what);
                double td = (now() - t0) / inner;
                errs e = verify_cairn(f, 0, max_err, what);
                double pct = 100.0 * (double)len / (double)raw;
                printf("#   %-8s %6s %4d %8.2f %11.5f %10.4f %10.1f %12.1f\n", qname(q),
                       enc ? "yes" : "no", n, pct, 100 * e.mean_abs / range(f),
                       100 * e.max_abs / range(f), (double)raw / 1e6 / tc,
                       (double)raw / 1e6 / td);
                if (q == CZ_Q_MOUNTAIN && enc && n == PAPER_MAX_N)
                    headline = pct;
            }
    printf("#   paper (NICAM temperature): simple 11.06 %% (n=1) .. 12.10 %% (n=128), mean re "
           "0.74 %% .. 0.025 %%; mountain 14.43 %% .. 16.75 %%, mean re 0.49 %% .. 0.0056 %%\n");
    printf("bench: wavelet.paper.n%d.mountain.%s %.2f %% ratio=%.3f vs gzip\n", PAPER_MAX_N,
           f->name, headline, headline / gz_pct);
    fflush(stdout);
}
