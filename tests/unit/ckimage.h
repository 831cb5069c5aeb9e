/*
 * ckimage.h - build valid checkpoint images in memory, for tests (and for
 * generating fuzz seeds). Header-only: static helpers over common.h.
 *
 * Layout, as the writer must produce it: header; entry table at
 * CN_HEADER_SIZE; data from data_offset = cn_align_up(CN_HEADER_SIZE +
 * table_size, CN_ENTRY_ALIGN) (version 4), each entry at a CN_ENTRY_ALIGN-aligned offset;
 * one cn_hash per block_size block; file_size = end of the last entry's data
 * (data_offset if there are none). The image owns buf and e (free_image).
 */
#ifndef CAIRN_TEST_CKIMAGE_H
#define CAIRN_TEST_CKIMAGE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

static inline void *ck_calloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        fprintf(stderr, "ckimage: out of memory\n");
        abort();
    }
    return p;
}

/* One entry to lay out: sizes, offset and block sums are derived. */
typedef struct spec {
    const char *name;
    uint8_t kind, type, ndims; /* enum cn_kind, cairn_type, 0..3 */
    uint64_t dims[CAIRN_MAX_DIMS];
    uint64_t count;            /* elements (bytes for a file) */
    double bound;              /* error bound */
    const cn_run *runs;        /* an incremental entry: the blocks it stores (else NULL) */
    uint32_t nruns;
    bool hashed;               /* record a block hash per stored block */
} spec;

typedef struct image {
    uint8_t *buf; /* the whole file, len bytes */
    size_t len;
    cn_header h;  /* as encoded */
    cn_entry *e;  /* n entries, as encoded */
    uint32_t n;
} image;

static inline uint8_t data_byte(uint32_t entry, uint64_t i)
{
    return (uint8_t)(entry * 31 + i * 7 + 1);
}

/* Re-encode the table and header of IMG from img->e and img->h (with valid
 * checksums), after a test changed a field. */
static inline void reseal(image *img)
{
    uint8_t *table = img->buf + CN_HEADER_SIZE;
    cn_table_encode(img->e, img->n, table);
    img->h.table_sum = cn_hash(table, (size_t)img->h.table_size);
    cn_header_encode(&img->h, img->buf);
}

/* Lay out N entries described by S in a fresh image of a generation in an
 * incremental chain (PARENT -1: full; INCR_BLOCK 0: no chain fields); block
 * sums, offsets and header fields are computed. Header: level 1, generation
 * 7, rank 3 of 8, node 1 of 4, job "job-42". Entry I's stored byte J is
 * data_byte(I, J); its block hashes are data_byte-derived too. */
static inline void build_chain_image(const spec *s, uint32_t n, uint32_t block_size,
                                     uint32_t incr_block, int64_t parent, int64_t base,
                                     image *img)
{
    memset(img, 0, sizeof *img);
    img->n = n;
    img->e = ck_calloc(n ? n : 1, sizeof *img->e);
    for (uint32_t i = 0; i < n; i++) {
        cn_entry *e = &img->e[i];
        strcpy(e->name, s[i].name);
        e->kind = s[i].kind;
        e->type = s[i].type;
        e->ndims = s[i].ndims;
        memcpy(e->dims, s[i].dims, sizeof e->dims);
        e->count = s[i].count;
        e->raw_size = e->count * cairn_type_size((cairn_type)e->type);
        e->error_bound = s[i].bound;
        if (s[i].runs) {
            e->flags = CN_ENTRY_DELTA;
            e->nruns = s[i].nruns;
            e->runs = ck_calloc(e->nruns ? e->nruns : 1, sizeof *e->runs);
            memcpy(e->runs, s[i].runs, sizeof *e->runs * e->nruns);
        }
        uint64_t covered = 0;
        for (uint32_t r = 0; r < e->nruns; r++)
            covered += e->runs[r].count;
        if (s[i].hashed) {
            e->nhash = (uint32_t)(s[i].runs ? covered : cn_incr_nblocks(e->raw_size, incr_block));
            e->hashes = ck_calloc(e->nhash ? e->nhash : 1, sizeof *e->hashes);
            for (uint32_t k = 0; k < e->nhash; k++)
                e->hashes[k] = (cn_h128){data_byte(i, k) * 0x0101010101010101ull, i + k};
        }
        e->stored_size = cn_entry_stream(e, incr_block);
        e->nblocks = (uint32_t)((e->stored_size + block_size - 1) / block_size);
        e->block_sums = ck_calloc(e->nblocks ? e->nblocks : 1, 8);
    }
    cn_header *h = &img->h;
    h->version = CN_FORMAT_VERSION;
    h->level = 1;
    h->generation = 7;
    h->parent = parent;
    h->base = base;
    h->incr_block = incr_block;
    h->rank = 3;
    h->nranks = 8;
    h->node = 1;
    h->nnodes = 4;
    h->block_size = block_size;
    h->nentries = n;
    strcpy(h->job, "job-42");
    h->table_size = cn_table_size(img->e, n);
    h->data_offset = cn_align_up(CN_HEADER_SIZE + h->table_size, CN_ENTRY_ALIGN);
    uint64_t off = h->data_offset;
    for (uint32_t i = 0; i < n; i++) {
        img->e[i].offset = cn_align_up(off, CN_ENTRY_ALIGN);
        off = img->e[i].offset + img->e[i].stored_size;
    }
    h->file_size = off;
    img->len = (size_t)off;
    img->buf = ck_calloc(1, img->len);
    for (uint32_t i = 0; i < n; i++) {
        cn_entry *e = &img->e[i];
        for (uint64_t j = 0; j < e->stored_size; j++)
            img->buf[e->offset + j] = data_byte(i, j);
        for (uint32_t b = 0; b < e->nblocks; b++) {
            uint64_t start = (uint64_t)b * block_size;
            uint64_t left = e->stored_size - start;
            e->block_sums[b] = cn_hash(img->buf + e->offset + start,
                                       (size_t)(left < block_size ? left : block_size));
        }
    }
    reseal(img);
}

/* A full generation without chain fields. */
static inline void build_image(const spec *s, uint32_t n, uint32_t block_size, image *img)
{
    build_chain_image(s, n, block_size, 0, -1, 7, img);
}

static inline void free_image(image *img)
{
    free(img->buf);
    cn_entries_free(img->e, img->n);
}

#endif /* CAIRN_TEST_CKIMAGE_H */
