/*
 * meta.c - seeds of fuzz_manifest, fuzz_parity and fuzz_layout: node
 * manifests, parity metadata and layout records from their encoders, each bad
 * one resealed so that the field its name gives is what is refused. Part of
 * the seed generator (mkcorpus.h).
 */
#include "mkcorpus.h"
#include "levels/parity/parity.h"

/* ---- manifests ----------------------------------------------------------- */

static uint32_t rank_node8[8] = {0, 0, 1, 1, 2, 2, 3, 3};

static uint8_t *manifest(int level, int64_t gen, int64_t parent, int64_t base, const char *label,
                         double seconds, uint32_t flags, size_t *len)
{
    static cn_manifest_rank local[2] = {{2, 12288, 0x1111, 9000, 9000}, {3, 16384, 0x2222, 12000, 12000}};
    if (parent >= 0)
        local[0].delta = 3000, local[1].delta = 4000;
    cn_manifest m = {.level = (uint32_t)level, .target = (uint32_t)level, .flags = flags,
                     .generation = gen,
                     .parent = parent, .base = base, .nranks = 8, .nnodes = 4, .node = 1,
                     .nlocal = 2, .rank_node = rank_node8, .local = local};
    snprintf(m.job, sizeof m.job, "job-42");
    snprintf(m.node_name, sizeof m.node_name, "node1");
    snprintf(m.label, sizeof m.label, "%s", label);
    m.seconds = seconds;
    uint8_t *out = NULL;
    cn_err err = {0};
    if (cn_manifest_encode(&m, &out, len, &err) != 0)
        die("manifest", &err);
    return out;
}


void manifest_seeds(void)
{
    size_t len;
    uint8_t *full = manifest(1, 7, -1, 7, "", 0, 0, &len);
    put("fuzz_manifest", "valid-full-level1", full, len);
    uint8_t *b = manifest(3, 9, 8, 5, "", 0.25, 0, &len);
    put("fuzz_manifest", "valid-incr-level3", b, len);
    free(b);
    b = manifest(3, 8, -1, 8, "", 0.5, CN_MF_PFS, &len); /* a pfs.every-th one */
    put("fuzz_manifest", "valid-pfs-level3", b, len);
    size_t flags_at = 8 + 4 * 7 + 8 + 2 * (CN_JOB_MAX + 1) + 16 + CAIRN_LABEL_MAX + 1 + 8;
    cn_put_u32(b + flags_at, 2), reseal_tail(b, len);
    put("fuzz_manifest", "bad-unknown-flags", b, len);
    free(b);
    uint8_t *labeled = manifest(2, 7, -1, 7, "step 4200: after the ~restart!", 1.5, 0, &len);
    put("fuzz_manifest", "valid-label-level2", labeled, len);
    size_t at = 8 + 4 * 7 + 8 + 2 * (CN_JOB_MAX + 1) + 16; /* the label field */
    b = malloc(len);
    memcpy(b, labeled, len), b[at + 4] = 0x07, reseal_tail(b, len);
    put("fuzz_manifest", "bad-label--control-byte", b, len);
    memcpy(b, labeled, len), b[at + CAIRN_LABEL_MAX - 1] = 'x', reseal_tail(b, len);
    put("fuzz_manifest", "bad-label--after-nul", b, len);
    memcpy(b, labeled, len), b[at + CAIRN_LABEL_MAX + 1 + 7] = 0xbf, reseal_tail(b, len);
    put("fuzz_manifest", "bad-seconds--negative", b, len);
    free(b), free(labeled);
    len = cn_manifest_size(8, 2);
    b = malloc(len);
    memcpy(b, full, len), b[1] ^= 0x20;
    put("fuzz_manifest", "bad-magic", b, len);
    memcpy(b, full, len), cn_put_u32(b + 8, CN_MANIFEST_VERSION + 1), reseal_tail(b, len);
    put("fuzz_manifest", "bad-format-version", b, len);
    memcpy(b, full, len), cn_put_u32(b + 8, CN_MANIFEST_VERSION_OLD - 1), reseal_tail(b, len);
    put("fuzz_manifest", "bad-format-version--older", b, len);
    memcpy(b, full, len), b[len / 2] ^= 0x04;
    put("fuzz_manifest", "bad-manifest-checksum", b, len);
    memcpy(b, full, len - 4), reseal_tail(b, len - 4);
    put("fuzz_manifest", "bad-length--truncated", b, len - 4);
    free(b);
    rank_node8[3] = 2; /* rank 3, listed on node 1, placed on node 2 */
    b = manifest(1, 7, -1, 7, "", 0, 0, &len);
    put("fuzz_manifest", "bad-entry-rank", b, len);
    free(b);
    rank_node8[3] = 9; /* a node beyond nnodes */
    b = manifest(1, 7, -1, 7, "", 0, 0, &len);
    put("fuzz_manifest", "bad-rank-node", b, len);
    free(b);
    rank_node8[3] = 1;
    free(full);
}

/* ---- parity files -------------------------------------------------------- */

/* A parity file of member MEMBER of a set of N nodes (2 ranks each) with M
 * rows of CHUNK bytes; rows hold a pattern, checksummed per block. */
static uint8_t *parity(uint32_t n, uint32_t m, uint64_t chunk, int64_t parent, size_t *len)
{
    static uint32_t rank_node[16];
    cn_pmember mb[8];
    cn_manifest_rank local[16];
    for (uint32_t r = 0; r < 2 * n; r++)
        rank_node[r] = r / 2;
    for (uint32_t i = 0; i < n; i++) {
        mb[i] = (cn_pmember){.node = i, .nlocal = 2, .local = &local[2 * i]};
        snprintf(mb[i].node_name, sizeof mb[i].node_name, "node%u", i);
        for (uint32_t j = 0; j < 2; j++) {
            uint64_t size = CN_DATA_ALIGN * (1 + (i + j) % 3);
            local[2 * i + j] = (cn_manifest_rank){2 * i + j, size, 0x1000 + i * 2 + j, size, size};
            mb[i].payload += size;
        }
    }
    cn_parity p = {.level = 3, .target = 3, .generation = 9, .parent = parent,
                   .base = parent >= 0 ? 5 : 9, .nranks = 2 * n, .nnodes = n,
                   .rank_node = rank_node, .set = 0, .n = n, .m = m, .w = 8, .form = 0,
                   .member = 1, .chunk = chunk, .block_size = CN_MIN_BLOCK, .members = mb};
    snprintf(p.job, sizeof p.job, "job-42");
    uint32_t nb = cn_parity_nblocks(&p);
    uint8_t *rows = malloc(m * chunk);
    for (uint64_t i = 0; i < m * chunk; i++)
        rows[i] = (uint8_t)(i * 13 + (i >> 9));
    p.row_sums = malloc(8 * (size_t)m * nb);
    for (uint32_t r = 0; r < m; r++)
        for (uint32_t b = 0; b < nb; b++) {
            uint64_t off = (uint64_t)b * p.block_size;
            uint64_t k = chunk - off < p.block_size ? chunk - off : p.block_size;
            p.row_sums[r * nb + b] = cn_hash(rows + r * chunk + off, (size_t)k);
        }
    uint8_t *meta = NULL;
    size_t mlen = 0;
    cn_err err = {0};
    if (cn_parity_encode(&p, &meta, &mlen, &err) != 0)
        die("parity", &err);
    *len = (size_t)p.file_size;
    uint8_t *file = calloc(1, *len);
    memcpy(file, meta, mlen);
    memcpy(file + p.data_offset, rows, m * chunk);
    free(meta), free(rows), free(p.row_sums);
    return file;
}

void parity_seeds(void)
{
    size_t len, mlen;
    uint8_t *a = parity(4, 1, 3 * CN_DATA_ALIGN, -1, &len);
    put("fuzz_parity", "valid-n4-m1", a, len);
    uint8_t *b = parity(5, 2, 5 * CN_DATA_ALIGN + 100, 8, &mlen); /* several blocks, a short one */
    put("fuzz_parity", "valid-n5-m2-incr", b, mlen);
    free(b);
    size_t meta = cn_get_u32(a + 12), data = (size_t)cn_align_up(meta, CN_DATA_ALIGN);
    b = malloc(len);
    memcpy(b, a, len), b[2] ^= 0x20;
    put("fuzz_parity", "bad-magic", b, len);
    memcpy(b, a, len), cn_put_u32(b + 8, CN_PARITY_VERSION + 1), reseal_tail(b, meta);
    put("fuzz_parity", "bad-format-version", b, len);
    memcpy(b, a, len), b[meta / 2] ^= 0x01;
    put("fuzz_parity", "bad-metadata-checksum", b, len);
    memcpy(b, a, len), b[data + 5000] ^= 0x01;
    put("fuzz_parity", "bad-row-block-checksum", b, len);
    memcpy(b, a, len), b[meta + 1] = 0x7f;
    put("fuzz_parity", "bad-padding", b, len);
    put("fuzz_parity", "bad-size--truncated-rows", a, len - 4096);
    /* member 2 names member 1's node: offset of member i's node field */
    size_t m0 = 8 + 4 * 2 + 8 * 3 + (CN_JOB_MAX + 1) + 4 * 2 + 4 * 8 + 4 * 8 + 8 + 4;
    size_t member = 4 + (CN_JOB_MAX + 1) + 8 + 4 + 36 * 2;
    memcpy(b, a, len), cn_put_u32(b + m0 + 2 * member, 1), reseal_tail(b, meta);
    put("fuzz_parity", "bad-node-twice", b, len);
    free(a), free(b);
}

/* ---- layout records (a restart onto another rank count) ------------------- */

void layout_seeds(void)
{
    const char *names[2] = {"field", "step"};
    cn_block b[2] = {
        {.dist = CN_DIST_BLOCK, .type = CAIRN_DOUBLE, .ndims = 2,
         .global = {720, 1440}, .start = {180, 0}, .count = {180, 1440}},
        {.dist = CN_DIST_REPLICATED, .type = CAIRN_INT64, .ndims = 1,
         .global = {1}, .count = {1}},
    };
    cn_err err = {0};
    uint8_t *a = NULL;
    size_t len = 0;
    if (cn_layout_encode(names, b, 2, &a, &len, &err) != 0)
        die("layout", &err);
    put("fuzz_layout", "valid-block-and-replicated", a, len);
    uint8_t *c = malloc(len + 1);
    if (!c)
        die("layout: out of memory", NULL);
    size_t q = 8 + 2 + strlen(names[0]); /* field's fixed part */
#define MUTATE(NAME, AT, VALUE)                                                                   \
    do {                                                                                           \
        memcpy(c, a, len);                                                                         \
        c[AT] = (VALUE);                                                                           \
        put("fuzz_layout", NAME, c, len);                                                          \
    } while (0)
    MUTATE("bad-version", 0, 2);
    MUTATE("bad-dist", q, 3);
    MUTATE("bad-dims", q + 2, 4);
    MUTATE("bad-dims--nonzero-pad", q + 3, 1);
    MUTATE("bad-name-length", 8, 0);
    MUTATE("bad-name--nul", 10, 0);
    MUTATE("bad-extent-dimension", q + 35, 0x01); /* start[0] past the global extent */
#undef MUTATE
    put("fuzz_layout", "bad-truncated", a, len - 1);
    memcpy(c, a, len);
    c[len] = 0;
    put("fuzz_layout", "bad-trailing-garbage", c, len + 1);
    put("fuzz_layout", "bad-truncated-header", a, 5);
    free(c);
    free(a);
}
