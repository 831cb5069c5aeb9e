/*
 * huffman_impl.h - what the Huffman encoder (huffman.c) and decoder
 * (huffman_dec.c) share: the limits of the code and the canonical code
 * assignment. Internal to src/compress; the stream format is described in
 * huffman.c.
 */
#ifndef CAIRN_HUFFMAN_IMPL_H
#define CAIRN_HUFFMAN_IMPL_H

#include "compress/compress.h"

#include <string.h>

#define HUFF_NSYM 65536   /* 16-bit symbols */
#define HUFF_MAXLEN 24    /* longest code, in bits */
#define HUFF_FAST 12      /* decoder: codes up to this long take one lookup */

/* First canonical code of each length, from the count of codes per length. */
static inline void huff_first_codes(const uint32_t *count, uint32_t *first)
{
    uint32_t code = 0;
    first[0] = 0;
    for (int l = 1; l <= HUFF_MAXLEN; l++) {
        code = (code + count[l - 1]) << 1;
        first[l] = code;
    }
}

#endif /* CAIRN_HUFFMAN_IMPL_H */
