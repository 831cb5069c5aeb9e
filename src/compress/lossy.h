/*
 * lossy.h - the lossy codecs' part of src/compress's contract (included by
 * compress.h, never on its own): the wavelet and predictive codecs and the
 * entropy coders the predictive one uses. Split from compress.h only to keep
 * that file readable; cz_shape and the frame types come from compress.h.
 */
#ifndef CAIRN_LOSSY_H
#define CAIRN_LOSSY_H

/* ---- lossy codecs (wavelet.c, predict.c, huffman.c) -------------------- */
/*
 * For float/double arrays of 1-3 dimensions whose owner allowed an absolute
 * error bound: every decoded element x' satisfies |x - x'| <= bound, computed
 * in double precision on the values as stored (after rounding to float for
 * CAIRN_FLOAT). NaN and +/-Inf are stored exactly (as exceptions), so their
 * error is 0; max_err is taken over the finite elements.
 *
 * A lossy payload describes itself (type, ndims, dims): decode needs only
 * the payload and the expected raw length, and checks both. Decoders treat
 * the payload as hostile (they are fuzz targets).
 */

/* The paper's wavelet method (Sasaki et al., section 3). */
enum cz_quantizer { CZ_Q_SIMPLE = 0, CZ_Q_MOUNTAIN = 1 };

typedef struct cz_wavelet_opts {
    int quantizer;     /* enum cz_quantizer */
    int divisions;     /* n; 0 = as many as the bound needs (guaranteed mode) */
    int bins;          /* d: histogram bins to find the "mountain" (paper: 64) */
    bool encode;       /* bitmap + table + bit-packed codes (the paper's encoding);
                        * false: quantized values written back as floats */
    bool guarantee;    /* exact corrections so that every error <= bound; false
                        * only to reproduce the paper's figures (bound ignored) */
    int lossless;      /* final pass: CZ_ZSTD, CZ_ZLIB or CZ_RAW */
} cz_wavelet_opts;

/* cairn's defaults: mountain quantizer, derived divisions, d = 64, encoded,
 * guaranteed, zstd. */
extern const cz_wavelet_opts cz_wavelet_defaults;

/*
 * Encode the array SRC of shape SH into DST (CAP bytes). RECON (as many
 * bytes as SRC, not overlapping it: the error is measured against SRC after
 * reconstructing) receives exactly what decode will produce; *MAX_ERR the
 * largest |x - x'| over finite elements. Returns the payload size, or 0 if
 * it does not fit in CAP or the input is not a valid shape.
 */
size_t cz_wavelet_encode(const cz_shape *sh, const cz_wavelet_opts *o, const void *src,
                         uint8_t *dst, size_t cap, void *recon, double *max_err);
/* Decode payload SRC[0..N-1] into exactly RAW_LEN bytes of TYPE; 0 or -1. */
int cz_wavelet_decode(uint8_t type, const uint8_t *src, size_t n, void *dst, size_t raw_len);
size_t cz_wavelet_bound(size_t raw_len);

/*
 * Predictive mode (SZ-style): each value predicted from already decoded
 * neighbours (Lorenzo, or SZ3-style multilevel interpolation, whichever
 * compresses a centre sample better; 1-3 D), the prediction error quantized in steps of
 * 2 * bound, codes rANS-coded (codes_ans.c); values whose code would
 * fall outside the quantizer's range are stored exactly. Same contract as
 * the wavelet functions.
 */
size_t cz_predict_encode(const cz_shape *sh, const void *src, uint8_t *dst, size_t cap,
                         void *recon, double *max_err);
int cz_predict_decode(uint8_t type, const uint8_t *src, size_t n, void *dst, size_t raw_len);
size_t cz_predict_bound(size_t raw_len);

/* The adaptive range coder of quantization codes (codes_rc.c), used by
 * predict.c for payload version 2. The codes come in NROWS runs, ROWS[i].count codes laid out in
 * rows of ROWS[i].width (> 0) codes, as the predictor visits its array: a
 * code's neighbour one row up in its run is part of its context (both sides
 * must give the same runs; their counts add up to N). cz_rc_encode codes
 * CODES[0..N) into DST (CAP bytes) and returns the bytes written, or 0 if
 * they do not fit; cz_rc_decode fills CODES[0..N) from exactly LEN bytes at
 * SRC: 0, or -1 for a stream that cannot be one (or runs that do not add
 * up to N). */
typedef struct cz_rows {
    uint64_t count, width;
    uint64_t level;        /* interpolation level (log2 h; 0 for Lorenzo): rANS contexts */
} cz_rows;
size_t cz_rc_encode(const uint16_t *codes, size_t n, const cz_rows *rows, size_t nrows,
                    uint8_t *dst, size_t cap);
int cz_rc_decode(const uint8_t *src, size_t len, uint16_t *codes, size_t n, const cz_rows *rows,
                 size_t nrows);
/* The same contract for the static context-modelled rANS coder
 * (codes_ans.c), which predict.c writes from payload version 3 on. */
size_t cz_ans_encode(const uint16_t *codes, size_t n, const cz_rows *rows, size_t nrows,
                     uint8_t *dst, size_t cap);
int cz_ans_decode(const uint8_t *src, size_t len, uint16_t *codes, size_t n, const cz_rows *rows,
                  size_t nrows);

/* Canonical Huffman coding of 16-bit symbols (huffman.c), used by predict.c.
 * Encode N symbols into DST (CAP bytes): a self-describing code table, then
 * the bits. Returns bytes written or 0 if CAP is too small. */
size_t cz_huff_encode(const uint16_t *sym, size_t n, uint8_t *dst, size_t cap);
/* Decode exactly N symbols from SRC[0..LEN-1]; 0, or -1 on malformed input. */
int cz_huff_decode(const uint8_t *src, size_t len, uint16_t *sym, size_t n);
size_t cz_huff_bound(size_t n);

#endif /* CAIRN_LOSSY_H */
