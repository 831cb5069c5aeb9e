/*
 * local_internal.h - what local.c (raw level-1 writes) shares with local_z.c
 * (compressed level-1 writes): where bytes go, the entry plan, the metadata.
 */
#ifndef CAIRN_LOCAL_INTERNAL_H
#define CAIRN_LOCAL_INTERNAL_H

#include "levels/local/local.h"

/* Where the bytes go: a file descriptor or a libpmem mapping. */
typedef struct lvl_sink {
    int fd;
    uint8_t *map;
    int is_pmem;
    const char *path;
    bool hash_thread;
} lvl_sink;

int lvl_sink_put(lvl_sink *s, const void *buf, size_t len, uint64_t off, cn_err *err);

/* Bytes SRC stores before encoding: its size, or the bytes of a delta's runs. */
uint64_t lvl_src_stream(const lvl_src *src, uint32_t incr_block);

/* Fill the entry table from SRC: names, shapes, block checksum arrays sized
 * for the most the entry can store, and (for raw entries) offsets; set the
 * header's table size, data offset and file size accordingly. */
int lvl_plan_layout(cn_header *h, const lvl_src *src, uint32_t n, cn_entry **out, cn_err *err);

/* Encode the table and header (setting table_sum, header_sum) at offset 0. */
int lvl_put_meta(lvl_sink *s, cn_header *h, const cn_entry *e, cn_err *err);

/* The compressed write of TMP under GENFD (local_z.c): data, table, header,
 * made durable; H and E are updated to what was written. */
int lvl_write_z(int genfd, const char *tmp, lvl_sink *s, cn_header *h, cn_entry *e,
                const lvl_src *src, uint32_t n, int io, const cz_opts *z, lvl_written *out,
                cn_err *err);

#endif /* CAIRN_LOCAL_INTERNAL_H */
