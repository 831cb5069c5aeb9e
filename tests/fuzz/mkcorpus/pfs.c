/*
 * pfs.c - seeds of the level-4 formats: HDF5 maps (fuzz_h5map), split HDF5
 * files in aggregated files (fuzz_agg), PFS indexes (fuzz_pindex), node
 * records of the epilog's flush (fuzz_pnode) and delta records of PFS
 * increments (fuzz_pdelta). Part of the seed generator (mkcorpus.h).
 */
#include "mkcorpus.h"
#include "levels/pfs/pfs.h"

/* ---- HDF5 maps (a routed HDF5 file split at level 4) ------------------------- */

static void h5_reseal(uint8_t *b, size_t len) { cn_put_u64(b + len - 8, cn_hash(b, len - 8)); }

void h5map_seeds(void)
{
    static uint8_t file[4096];
    for (size_t i = 0; i < sizeof file; i++)
        file[i] = (uint8_t)(i * 7 + (i >> 5));
    cz_h5_dset d[2] = {{.name = "/fields/T", .type = CAIRN_DOUBLE, .count = 128, .offset = 512,
                        .size = 1024},
                       {.name = "/meta/names", .type = CAIRN_BYTE, .count = 800, .offset = 2048,
                        .size = 800}};
    cn_err err = {0};
    uint8_t *a = NULL, *z = NULL;
    size_t len = 0, zlen = 0;
    if (cz_h5map_encode("state.h5", file, sizeof file, d, 2, &a, &len, &err) != 0 ||
        cz_h5map_encode("empty.h5", file, 100, NULL, 0, &z, &zlen, &err) != 0)
        die("h5map", &err);
    put("fuzz_h5map", "valid-two-datasets", a, len);
    put("fuzz_h5map", "valid-no-dataset", z, zlen);
    uint8_t *b = malloc(len + 8);
    if (!b)
        die("h5map: out of memory", NULL);
    size_t d0 = 48 + strlen("state.h5"), d1 = d0 + 24 + strlen(d[0].name);
    memcpy(b, a, len), b[4] ^= 0x20;
    put("fuzz_h5map", "bad-magic", b, len);
    memcpy(b, a, len), cn_put_u32(b + 8, 2), h5_reseal(b, len);
    put("fuzz_h5map", "bad-version", b, len);
    memcpy(b, a, len), b[d0 + 3] ^= 0x01;
    put("fuzz_h5map", "bad-checksum-mismatch", b, len);
    put("fuzz_h5map", "bad-truncated", a, 20);
    memcpy(b, a, len), b[44] = 1, h5_reseal(b, len);
    put("fuzz_h5map", "bad-reserved-bytes-set", b, len);
    memcpy(b, a, len), cn_put_u64(b + d1, 1000), h5_reseal(b, len); /* inside /fields/T */
    put("fuzz_h5map", "bad-out-of-place--overlap", b, len);
    memcpy(b, a, len), cn_put_u64(b + d1, 3500), h5_reseal(b, len); /* runs past the end */
    put("fuzz_h5map", "bad-out-of-place--past-the-end", b, len);
    memcpy(b, a, len), cn_put_u64(b + 32, cn_get_u64(a + 32) + 1), h5_reseal(b, len);
    put("fuzz_h5map", "bad-skeleton--size", b, len);
    memcpy(b, a, len), b[d0 + 24 + 2] = 0, h5_reseal(b, len);
    put("fuzz_h5map", "bad-name--nul", b, len);
    memcpy(b, a, len - 8), memset(b + len - 8, 0, 8), h5_reseal(b, len + 8);
    put("fuzz_h5map", "bad-stray-bytes", b, len + 8);
    free(a), free(z);
    d[1].name = "/fields/T"; /* the same path twice */
    if (cz_h5map_encode("state.h5", file, sizeof file, d, 2, &a, &len, &err) != 0)
        die("h5map", &err);
    put("fuzz_h5map", "bad-dataset-twice", a, len);
    free(a), free(b);
}

/* An aggregated file (version 2) holding a split HDF5 file's parts for two
 * ranks, for fuzz_agg (one selector byte first: 0 as written, 1 resealed). */
typedef struct agg_buf {
    uint8_t *p;
    size_t len;
} agg_buf;

static int agg_sink(void *arg, const void *buf, size_t len, cn_err *err)
{
    agg_buf *o = arg;
    uint8_t *n = realloc(o->p, o->len + len);
    CN_FAIL_IF(!n, err, CAIRN_ENOMEM, "no memory");
    memcpy(n + o->len, buf, len);
    o->p = n, o->len += len;
    return 0;
}

void agg_h5_seeds(void)
{
    static uint8_t file[2][3000];
    static double fld[2][150];
    cz_agg_var v[8];
    uint8_t *map[2];
    size_t n = 0, mlen[2];
    cn_err err = {0};
    for (uint32_t r = 0; r < 2; r++) {
        for (int i = 0; i < 150; i++)
            fld[r][i] = 1.0 + 0.01 * i + r;
        memset(file[r], 0x11 * (r + 1), sizeof file[r]);
        memcpy(file[r] + 1000, fld[r], sizeof fld[r]);
        cz_h5_dset d = {.name = "/fields/T", .type = CAIRN_DOUBLE, .ndims = 1, .dims = {150},
                        .count = 150, .offset = 1000, .size = sizeof fld[r]};
        if (cz_h5map_encode("state.h5", file[r], sizeof file[r], &d, 1, &map[r], &mlen[r],
                            &err) != 0)
            die("agg h5 seed", &err);
        uint64_t skel = sizeof file[r] - d.size;
        v[n++] = (cz_agg_var){.rank = r, .name = "map", .kind = CZ_KIND_H5MAP, .count = mlen[r],
                              .size = mlen[r], .data = map[r]};
        v[n++] = (cz_agg_var){.rank = r, .name = "skeleton", .kind = CZ_KIND_H5SKEL,
                              .count = skel, .size = skel, .data = file[r]}; /* a stand-in */
        v[n++] = (cz_agg_var){.rank = r, .name = "/fields/T", .kind = CZ_KIND_H5DATA,
                              .type = CAIRN_DOUBLE, .ndims = 1, .dims = {150}, .count = 150,
                              .size = sizeof fld[r], .data = fld[r]};
        v[n++] = (cz_agg_var){.rank = r, .name = "notes.txt", .kind = CN_KIND_FILE,
                              .count = 100, .size = 100, .data = file[r]};
    }
    cz_agg_opts o = {.scheme = CZ_AGG_AWARE};
    agg_buf b = {calloc(1, 1), 1}; /* selector 0 */
    if (!b.p || cz_agg_write(v, n, &o, agg_sink, &b, NULL, &err) != 0)
        die("agg h5 seed", &err);
    put("fuzz_agg", "valid-aware-h5parts", b.p, b.len);
    b.p[0] = 1; /* resealed: version 1 may not hold HDF5 parts */
    cn_put_u32(b.p + 1 + 8, 1);
    cn_put_u32(b.p + b.len - 64 + 8, 1);
    put("fuzz_agg", "bad-hdf5-part-version", b.p, b.len);
    free(b.p);
    /* Version 4, every group raw (AGG_HDRSUM: frame payloads under their headers' sums). */
    o = (cz_agg_opts){.scheme = CZ_AGG_AWARE, .raw = true};
    b = (agg_buf){calloc(1, 1), 1};
    if (!b.p || cz_agg_write(v + 2, 2, &o, agg_sink, &b, NULL, &err) != 0)
        die("agg raw seed", &err);
    put("fuzz_agg", "valid-raw-v4", b.p, b.len);
    b.p[0] = 4; /* opened as a restore does */
    put("fuzz_agg", "valid-raw-v4-lazy", b.p, b.len);
    free(b.p), free(map[0]), free(map[1]);
}

/* ---- PFS indexes ---------------------------------------------------------- */

void pindex_seeds(void)
{
    cn_pfile files[3] = {{40000, 0xabc}, {38000, 0xdef}, {1000, 0x123}};
    cn_pindex x = {.scheme = CZ_AGG_AWARE, .generation = 16, .nranks = 8, .nnodes = 4,
                   .group = 3, .nfiles = 3, .raw = 120000, .stored = 79000, .seconds = 2.5,
                   .parent = -1, .base = 16, .source = 0x5eed, .files = files};
    snprintf(x.job, sizeof x.job, "job-42");
    snprintf(x.label, sizeof x.label, "day 3");
    uint8_t *a = NULL;
    size_t len = 0;
    cn_err err = {0};
    if (cn_pindex_encode(&x, &a, &len, &err) != 0)
        die("pindex", &err);
    put("fuzz_pindex", "valid-8-ranks-3-files", a, len);
    uint8_t *b = malloc(len);
    memcpy(b, a, len), b[3] ^= 0x20;
    put("fuzz_pindex", "bad-magic", b, len);
    memcpy(b, a, len), cn_put_u32(b + 8, CN_PINDEX_VERSION + 1), reseal_tail(b, len);
    put("fuzz_pindex", "bad-format-version", b, len);
    memcpy(b, a, len), cn_put_u32(b + 8, CN_PINDEX_VERSION_OLD - 1), reseal_tail(b, len);
    put("fuzz_pindex", "bad-format-version--older", b, len);
    size_t at = 8 + 4 + 4 + 8 + (CN_JOB_MAX + 1) + 4 * 4 + 8 + 8; /* the label field */
    memcpy(b, a, len), b[at + 2] = 0x80, reseal_tail(b, len);
    put("fuzz_pindex", "bad-label--high-byte", b, len);
    memcpy(b, a, len), cn_put_u64(b + at + CAIRN_LABEL_MAX + 1, 0x7ff8000000000000ull);
    reseal_tail(b, len);
    put("fuzz_pindex", "bad-seconds--nan", b, len);
    memcpy(b, a, len), b[40] ^= 0x01;
    put("fuzz_pindex", "bad-index-checksum", b, len);
    size_t chain = at + CAIRN_LABEL_MAX + 1 + 8; /* parent, base, source */
    memcpy(b, a, len), cn_put_u64(b + chain, 16), reseal_tail(b, len); /* its own parent */
    put("fuzz_pindex", "bad-chain--parent", b, len);
    memcpy(b, a, len), cn_put_u64(b + chain, 14), cn_put_u64(b + chain + 8, 15);
    reseal_tail(b, len); /* base above the parent */
    put("fuzz_pindex", "bad-chain--base", b, len);
    free(a), free(b);
    x.parent = 15, x.base = 12; /* an increment */
    if (cn_pindex_encode(&x, &a, &len, &err) != 0)
        die("pindex", &err);
    put("fuzz_pindex", "valid-incr-8-ranks-3-files", a, len);
    free(a);
    x.parent = -1, x.base = 16;
    files[1].size += 1; /* no longer adds up to stored */
    if (cn_pindex_encode(&x, &a, &len, &err) != 0)
        die("pindex", &err);
    put("fuzz_pindex", "bad-sizes-add", a, len);
    free(a);
}

/* ---- node records of the epilog's flush (pnode.c) ------------------------------- */

void pnode_seeds(void)
{
    cn_pnode_rank ranks[2] = {{.rank = 2, .file = {24867, 0xabc}, .raw = 65536, .source = 0x5eed},
                              {.rank = 3, .file = {24001, 0xdef}, .raw = 65536, .source = 0xfeed}};
    cn_pnode x = {.scheme = CZ_AGG_AWARE, .generation = 3, .nranks = 8, .nnodes = 4, .node = 1,
                  .nlocal = 2, .map = 0x1234, .seconds = 0.5, .rank = ranks};
    snprintf(x.job, sizeof x.job, "job-42");
    snprintf(x.label, sizeof x.label, "day 3");
    uint8_t *a = NULL;
    size_t len = 0;
    cn_err err = {0};
    if (cn_pnode_encode(&x, &a, &len, &err) != 0)
        die("pnode", &err);
    put("fuzz_pnode", "valid-node-1-of-4", a, len);
    uint8_t *b = malloc(len);
    memcpy(b, a, len), b[3] ^= 0x20;
    put("fuzz_pnode", "bad-magic", b, len);
    memcpy(b, a, len), cn_put_u32(b + 8, CN_PNODE_VERSION + 1), reseal_tail(b, len);
    put("fuzz_pnode", "bad-format-version", b, len);
    memcpy(b, a, len), b[40] ^= 0x01;
    put("fuzz_pnode", "bad-record-checksum", b, len);
    size_t counts = 8 + 4 + 4 + 8 + (CN_JOB_MAX + 1); /* nranks, nnodes, node, nlocal */
    memcpy(b, a, len), cn_put_u32(b + counts + 8, 4), reseal_tail(b, len); /* node 4 of 4 */
    put("fuzz_pnode", "bad-inconsistent-counts--node", b, len);
    size_t label = counts + 16 + 8;
    memcpy(b, a, len), b[label + 1] = 0x80, reseal_tail(b, len);
    put("fuzz_pnode", "bad-label--high-byte", b, len);
    put("fuzz_pnode", "bad-truncated", a, 100);
    free(a), free(b);
    ranks[1].rank = 2; /* the same rank twice */
    if (cn_pnode_encode(&x, &a, &len, &err) != 0)
        die("pnode", &err);
    put("fuzz_pnode", "bad-ranks-ascending", a, len);
    free(a);
    ranks[1].rank = 3, ranks[1].file.size = 0;
    if (cn_pnode_encode(&x, &a, &len, &err) != 0)
        die("pnode", &err);
    put("fuzz_pnode", "bad-empty-file", a, len);
    free(a);
    ranks[1].file.size = 24001, x.nlocal = 1; /* one rank: a shorter valid record */
    if (cn_pnode_encode(&x, &a, &len, &err) != 0)
        die("pnode", &err);
    put("fuzz_pnode", "valid-one-rank", a, len);
    free(a);
}

/* ---- delta records of PFS increments ----------------------------------------- */

void pdelta_seeds(void)
{
    cn_run runs[3] = {{0, 2}, {5, 1}, {9, 3}};
    cn_pdelta_var v[3] = {
        {.name = "field", .delta = true, .type = CAIRN_DOUBLE, .ndims = 2, .dims = {64, 96},
         .count = 64 * 96, .size = 64 * 96 * 8, .nruns = 3, .runs = runs},
        {.name = "step", .type = CAIRN_INT64, .ndims = 1, .dims = {1}, .count = 1, .size = 8},
        {.name = "mesh", .delta = true, .type = CAIRN_FLOAT, .ndims = 1, .dims = {4096},
         .count = 4096, .size = 16384},
    };
    cn_pdelta d = {.rank = 5, .block = 4096, .generation = 9, .parent = 8, .nvars = 3, .v = v};
    uint8_t *a = NULL;
    size_t len = 0;
    cn_err err = {0};
    if (cn_pdelta_encode(&d, &a, &len, &err) != 0)
        die("pdelta", &err);
    put("fuzz_pdelta", "valid-rank5-3-vars", a, len);
    uint8_t *b = malloc(len);
    memcpy(b, a, len), b[2] ^= 0x20;
    put("fuzz_pdelta", "bad-magic", b, len);
    memcpy(b, a, len), cn_put_u32(b + 8, CN_PDELTA_VERSION + 1), reseal_tail(b, len);
    put("fuzz_pdelta", "bad-format-version", b, len);
    memcpy(b, a, len), b[len - 20] ^= 0x01;
    put("fuzz_pdelta", "bad-checksum", b, len);
    memcpy(b, a, len), cn_put_u64(b + 32, 9), reseal_tail(b, len); /* parent = generation */
    put("fuzz_pdelta", "bad-chain", b, len);
    size_t run2 = 40 + 8 + 8 * 5 + 5 + 2 * 8; /* the first variable's third run */
    memcpy(b, a, len), cn_put_u32(b + run2, 5), reseal_tail(b, len); /* overlaps run 2 */
    put("fuzz_pdelta", "bad-run-order", b, len);
    memcpy(b, a, len), cn_put_u64(b + 40 + 8 + 8 * 3, 100), reseal_tail(b, len);
    put("fuzz_pdelta", "bad-sizes-disagree", b, len); /* count */
    free(b);
    put("fuzz_pdelta", "bad-checksum--truncated", a, len - 9);
    free(a);
}

/* --previous: rewrite FILE (a manifest or a PFS index) in the oldest version still read. */
