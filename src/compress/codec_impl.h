/*
 * codec_impl.h - the per-codec functions behind the registry in codec.c
 * (signatures and contracts as in cz_codec, compress.h). Internal to
 * src/compress.
 */
#ifndef CAIRN_CODEC_IMPL_H
#define CAIRN_CODEC_IMPL_H

#include "compress/compress.h"

/* codec_lz.c */
size_t cz_zlib_bound(size_t raw_len);
size_t cz_zlib_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                      size_t cap, uint8_t *scratch);
int cz_zlib_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst, size_t raw_len,
                   uint8_t *scratch);

size_t cz_zstd_bound(size_t raw_len);
size_t cz_zstd_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                      size_t cap, uint8_t *scratch);
int cz_zstd_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst, size_t raw_len,
                   uint8_t *scratch);

size_t cz_lz4_bound(size_t raw_len);
size_t cz_lz4_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                     size_t cap, uint8_t *scratch);
int cz_lz4_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst, size_t raw_len,
                  uint8_t *scratch);

/* codec_float.c */
size_t cz_shuf_zstd_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                           size_t cap, uint8_t *scratch);
int cz_shuf_zstd_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst,
                        size_t raw_len, uint8_t *scratch);

size_t cz_shuf_lz4_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                          size_t cap, uint8_t *scratch);
int cz_shuf_lz4_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst,
                       size_t raw_len, uint8_t *scratch);

size_t cz_fpzip_bound(size_t raw_len);
size_t cz_fpzip_encode(uint8_t type, int level, const uint8_t *src, size_t n, uint8_t *dst,
                       size_t cap, uint8_t *scratch);
/* fpzip over an array of NDIMS (1..3) DIMS, slowest varying first, whose
 * product is the element count of N; 0 if it is not. */
size_t cz_fpzip_encode_shape(uint8_t type, int ndims, const uint64_t *dims, const uint8_t *src,
                             size_t n, uint8_t *dst, size_t cap, uint8_t *scratch);
int cz_fpzip_decode(uint8_t type, const uint8_t *src, size_t n, uint8_t *dst, size_t raw_len,
                    uint8_t *scratch);

#endif /* CAIRN_CODEC_IMPL_H */
