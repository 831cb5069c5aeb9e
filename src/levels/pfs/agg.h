/*
 * agg.h - N->M aggregation (agg*.c): many ranks' variables merged into one
 * file by one of mcrEngine's four schemes, and read back verified. Part of
 * pfs.h, the contract of src/levels/pfs, which includes it: include pfs.h.
 * Built without MPI (the CLI and the fuzz targets use it too).
 */
#ifndef CAIRN_LEVELS_PFS_AGG_H
#define CAIRN_LEVELS_PFS_AGG_H

#include "common/common.h"
#include "compress/compress.h"

/* ---- N->M aggregation (agg*.c) ------------------------------------------ */
/* One aggregator merges the variables of a group of ranks into one file (level 4).
 * Pure library: variables in memory, the file's bytes out through a sink in sequential
 * appends; reading parses a whole file held in memory. Layout, the schemes: agg.c. */
enum cz_agg_scheme {            /* the paper's merging schemes; values are on disk */
    CZ_AGG_AGNOSTIC = 0,        /* rank after rank, variables in their order, one stream */
    CZ_AGG_AGNOSTIC_BLOCK = 1,  /* ranks' streams interleaved in blocks of opts.block */
    CZ_AGG_AWARE = 2,           /* variables grouped by similarity key (name, type, kind) across ranks */
    CZ_AGG_AWARE_BLOCK = 3,     /* aware groups, their variables interleaved in blocks */
    CZ_AGG_AUTO = 4             /* not on disk: pick by sampling (the paper's adaptive mcrEngine) */
};
/* Kinds only aggregated files hold (beside CN_KIND_VAR and CN_KIND_FILE): the parts of
 * a routed HDF5 file split for level 4 (h5split.c, h5map.c). Values are on disk. */
enum cz_agg_kind {
    CZ_KIND_H5MAP = 2,          /* the file's map (cz_h5map record); name "map" */
    CZ_KIND_H5SKEL = 3,         /* its skeleton: every byte outside the datasets; name "skeleton" */
    CZ_KIND_H5DATA = 4,         /* one contiguous dataset's bytes; name its path ("/g/x") */
    CZ_KIND_MAX = 4
};
typedef struct cz_agg_var {
    uint32_t rank;               /* application rank */
    const char *name;            /* 1..CAIRN_NAME_MAX bytes ('/' only in CZ_KIND_H5DATA) */
    uint8_t kind;                /* CN_KIND_VAR, CN_KIND_FILE (common.h) or enum cz_agg_kind */
    uint32_t file;               /* H5 kinds: which routed file of the rank (0, 1, ...);
                                  * else 0. Similar variables share (kind, name, type); a
                                  * rank's are told apart by (kind, file, name) */
    uint8_t type;                /* cairn_type */
    uint8_t ndims;
    uint64_t dims[CAIRN_MAX_DIMS];
    uint64_t count;              /* elements (for files: bytes) */
    uint64_t size;               /* bytes */
    const void *data;            /* write: borrowed; read callback: valid during the call only */
    const uint64_t *sums;        /* write, may be NULL: the XXH3-64 of each SUM_BLOCK bytes of
                                  * DATA (the last shorter), checked by the caller: a raw group
                                  * frames those blocks with them instead of hashing again */
    uint64_t sum_block;
    const uint8_t *frames;       /* write, may be NULL: DATA is NULL and the variable is these
                                  * FRAMES_LEN bytes of frames (compress.h) of codec FCODEC
                                  * (lossless), as level 1 stored them, checked by the caller;
                                  * written as they are where their group allows (agg_lend.c) */
    uint64_t frames_len;
    uint8_t fcodec;
} cz_agg_var;
/* Decode FRAMES_LEN bytes of frames at FRAMES (codec FCODEC or raw, elements of TYPE; cz_read) into
 * DST, exactly RAW bytes; CAIRN_ECORRUPT if they do not hold exactly that (agg_lend.c). */
int cz_agg_unframe(const uint8_t *frames, uint64_t frames_len, uint8_t fcodec, uint8_t type,
                   uint8_t *dst, uint64_t raw, cn_err *err);
/* Codec picks of variables modelled alone, kept at one bandwidth (agg_auto.c); _tick: a
 * generation more, emptied after EVERY; _new: NULL if no memory; NULL accepted. */
typedef struct cz_agg_memo cz_agg_memo;
cz_agg_memo *cz_agg_memo_new(int every);
void cz_agg_memo_tick(cz_agg_memo *m);
void cz_agg_memo_free(cz_agg_memo *m);
typedef struct cz_agg_opts {
    int scheme;                  /* enum cz_agg_scheme */
    uint32_t block;              /* block schemes: interleaving unit in bytes, rounded down to a
                                  * multiple of 8 (0 = 4096, the paper's best sizes were 1-8 KiB) */
    int level;                   /* codec level for zstd/zlib (0 = codec default) */
    int threads;                 /* compressor threads, 0 = calling thread (unused: one thread) */
    double core;                 /* the share of a core each can count on (0: a whole one) */
    double bps;                  /* bytes/s the file is written at: the codec (raw included), the
                                  * second pass and AUTO's sampling are chosen by choose.c's time
                                  * model against it; 0: the smallest frame wins, whatever its time */
    bool raw;                    /* every group stored raw, no trials (compress.codec = none) */
    int (*ready)(void *arg, const void *p, size_t len); /* may be NULL: data still arriving.
                                  * Returns once bytes [P, P + LEN) of a variable are there to
                                  * be read (nonzero: the write fails), so fetching overlaps */
    void *ready_arg;
    cz_agg_memo *memo;           /* may be NULL: lone variables' picks kept across files */
} cz_agg_opts;
typedef struct cz_agg_stats {
    uint64_t raw, stored;        /* variable bytes in, file bytes out */
    int scheme;                  /* the scheme used (AUTO resolved) */
    uint32_t ngroups, modelled;  /* groups; codecs the time model sampled (not opts.memo's) */
    uint32_t npass2;             /* groups that took the second (zstd) pass */
    uint64_t sampled, sum;       /* AUTO's sampled bytes; the file's checksum (cz_agg_sum's) */
    double seconds;              /* whole call, sampling included */
} cz_agg_stats;
typedef int (*cz_agg_sink)(void *arg, const void *buf, size_t len, cn_err *err); /* appends */
/* Write V[0..N-1] (any order; ranks may have differing variable sets and sizes) as one
 * aggregated file through SINK (sequential appends; the sink may throttle). Two variables
 * may not share (rank, kind, name). ST may be NULL. */
int cz_agg_write(const cz_agg_var *v, size_t n, const cz_agg_opts *o, cz_agg_sink sink,
                 void *arg, cz_agg_stats *st, cn_err *err);
/* Parse and verify a whole aggregated file in memory (P, LEN): header, table, every
 * checksum, before anything is trusted. *OUT owns its parse, not P (P must outlive it). */
typedef struct cz_agg_file cz_agg_file;
extern const uint8_t cz_agg_magic[8];  /* "CAIRNAGG": an aggregated file's first bytes */
int cz_agg_open(const uint8_t *p, size_t len, cz_agg_file **out, cn_err *err);
/* An index's checksum of file (P, LEN): XXH3-64 but of format 4's raw payloads (each checked). */
int cz_agg_sum(const uint8_t *p, size_t len, uint64_t *sum, cn_err *err);
/* As cz_agg_open; with CZ_AGG_LAZY a raw group's units are verified by their frames'
 * checksums only when cz_agg_read(_some) decodes them (a partial reader touches its part;
 * compressed groups are still verified whole). */
#define CZ_AGG_LAZY 1u
int cz_agg_open_flags(const uint8_t *p, size_t len, unsigned flags, cz_agg_file **out,
                      cn_err *err);
size_t cz_agg_count(const cz_agg_file *f);                 /* variables */
int cz_agg_info(const cz_agg_file *f, size_t i, cz_agg_var *v); /* metadata, data NULL */
int cz_agg_scheme_of(const cz_agg_file *f);
/* Decode every variable (group by group) and call CB once per variable with data set (in file
 * table order); CB's nonzero return stops and is returned. Memory: the variable being delivered
 * for Agnostic and Aware; a whole group for the block schemes (whose members are interleaved). */
int cz_agg_read(const cz_agg_file *f, int (*cb)(void *arg, const cz_agg_var *v), void *arg,
                cn_err *err);
/* As cz_agg_read, delivering only the variables WANT (with ARG; given metadata, data NULL) says
 * yes to (WANT NULL: all); a unit holding none of them is not decoded, and the others' bytes are
 * not copied (a restore reads only its node's ranks). With FLAGS CZ_AGG_GIVE each delivered
 * variable's data (malloc'd, at least one byte) is the callback's, to free, whatever it returns. */
#define CZ_AGG_GIVE 1u
int cz_agg_read_some(const cz_agg_file *f, bool (*want)(void *arg, const cz_agg_var *v),
                     int (*cb)(void *arg, const cz_agg_var *v), void *arg, unsigned flags,
                     cn_err *err);
void cz_agg_close(cz_agg_file *f);              /* accepts NULL */
const char *cz_agg_scheme_name(int scheme);   /* "agnostic", "agnostic-block", "aware", "aware-block", "auto" */
int cz_agg_scheme_parse(const char *name);    /* -1 if unknown */
const char *cz_agg_kind_name(int kind);       /* "var", "file", "h5map", "h5skel", "h5data" */

#endif /* CAIRN_LEVELS_PFS_AGG_H */
