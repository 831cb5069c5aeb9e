/*
 * mkcorpus.c - regenerate the seeds of the format fuzz targets for the
 * current format versions (tests/fuzz/corpus/<target>/):
 *
 *   mkcorpus DIR       writes DIR/fuzz_ckpt, fuzz_manifest, fuzz_parity, fuzz_pindex, fuzz_pnode, fuzz_layout,
 *                      fuzz_h5map, fuzz_pdelta, and fuzz_agg's seeds of split HDF5 files
 *   mkcorpus --previous FILE...   rewrites each node manifest or PFS index
 *                      FILE in the oldest format version that this build
 *                      still reads (manifest 3, PFS index 1: cairn 0.2.0),
 *                      for the tests of checkpoints an older release wrote
 *
 * Valid seeds are written by the real writers: checkpoint files by
 * lvl_local_write (raw, every codec, packs, lossy, incremental), manifests,
 * parity metadata and PFS indexes by their encoders. Each bad-* seed is one
 * valid seed with one precise mutation, resealed wherever a checksum would
 * otherwise catch it first, so that the parser refuses it for the field its
 * name gives (replay.c checks that the message says so). Run it after a
 * format change and commit the result; the replay's valid-* checks fail
 * until then. Old seeds of other names are left alone: valid-v3-* and
 * valid-v4-* manifests and valid-v1-* and valid-v2-* PFS indexes are what earlier versions
 * wrote (kept from their corpus): they must still decode, and re-encode to
 * the same bytes; valid-v3-* rank files are version 3 checkpoint files
 * (data at a 4 KiB page; valid-v3-lossy's predict frames are payload
 * version 1, Huffman-coded), which must still parse.
 */
#include "common/common.h"
#include "compress/compress.h"
#include "incr/incr.h"
#include "levels/levels.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *outdir;

static void die(const char *what, const cn_err *err)
{
    fprintf(stderr, "mkcorpus: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    exit(1);
}

static void put(const char *target, const char *name, const uint8_t *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", outdir, target);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", outdir, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0)
        die(path, NULL);
}

/* ---- checkpoint files ---------------------------------------------------- */

#define NX 24
#define NY 40
static double field[NX * NY], fp[2000];
static float cube[3 * 5 * 7];
static int32_t ints[1001];
static uint8_t bytes[4099], notes[300];
static int64_t step = 4200;

static void fill(void)
{
    for (int i = 0; i < NX * NY; i++)
        field[i] = 300.0 + sin(i * 0.01) * 20.0;
    for (int i = 0; i < 2000; i++)
        fp[i] = 1.0 / (1.0 + i);
    for (int i = 0; i < 105; i++)
        cube[i] = (float)i * 0.25f;
    for (int i = 0; i < 1001; i++)
        ints[i] = i / 7;
    for (int i = 0; i < 4099; i++)
        bytes[i] = (uint8_t)(i * 7 + (i >> 5));
    for (int i = 0; i < 300; i++)
        notes[i] = (uint8_t)("rank 3 notes "[i % 13]);
}

/* A variable source of codec CODEC (lossy ones within BOUND). */
static lvl_src var(const char *name, cairn_type type, const void *p, uint64_t count, int ndims,
                   uint64_t d0, uint64_t d1, uint64_t d2, int codec, double bound)
{
    lvl_src s = {.name = name, .kind = CN_KIND_VAR, .type = (uint8_t)type, .ndims = (uint8_t)ndims,
                 .dims = {d0, d1, d2}, .count = count, .codec = (uint8_t)codec, .ptr = p,
                 .size = count * cairn_type_size(type), .error_bound = bound};
    if (cz_is_lossy(codec))
        s.shape = (cz_shape){.type = (uint8_t)type, .ndims = (uint8_t)(ndims ? ndims : 1),
                             .dims = {ndims ? d0 : count, d1, d2}, .bound = bound};
    return s;
}

static lvl_src file_src(void)
{
    return (lvl_src){.name = "notes.txt", .kind = CN_KIND_FILE, .type = CAIRN_BYTE,
                     .count = sizeof notes, .size = sizeof notes, .ptr = notes};
}

/* Write SRC[0..N-1] as rank 3's file of generation GEN through lvl_local_write
 * and return the file's bytes. */
static uint8_t *write_ckpt(const lvl_src *src, uint32_t n, int64_t gen, int64_t parent,
                           uint32_t incr_block, size_t *len)
{
    char dir[] = "/tmp/mkcorpus.XXXXXX";
    cn_err err = {0};
    if (!mkdtemp(dir))
        die("mkdtemp", NULL);
    int dfd = cn_dir_open_path(dir, &err);
    if (dfd < 0)
        die(dir, &err);
    cn_header proto = {.level = 1, .generation = gen, .rank = 3, .nranks = 8, .node = 1,
                       .nnodes = 4, .block_size = CN_MIN_BLOCK, .parent = parent,
                       .base = parent >= 0 ? 5 : gen, .incr_block = incr_block};
    snprintf(proto.job, sizeof proto.job, "job-42");
    cz_opts z = {.buf_size = 4096, .threads = 0, .level = 3}; /* many frames and packs */
    lvl_written w;
    if (lvl_local_write(dfd, dir, "rank-3.ckpt", &proto, src, n, CN_IO_WRITE, &z, &w, &err) != 0)
        die("lvl_local_write", &err);
    uint8_t *buf = NULL;
    if (cn_read_small(dfd, "rank-3.ckpt", 1u << 26, &buf, len, &err) != 0)
        die("read back", &err);
    unlinkat(dfd, "rank-3.ckpt", 0);
    close(dfd);
    rmdir(dir);
    return buf;
}

/* A seed parsed for mutation: its bytes (a copy) and table. */
typedef struct seed {
    uint8_t *buf;
    size_t len;
    cn_ckpt *c;
} seed;

static seed parse(const uint8_t *buf, size_t len)
{
    seed s = {malloc(len), len, NULL};
    cn_err err = {0};
    memcpy(s.buf, buf, len);
    if (cn_ckpt_parse(s.buf, len, "seed", &s.c, &err) != 0)
        die("a generated file does not parse", &err);
    return s;
}

static cn_entry *entry(seed *s, const char *name)
{
    cn_entry *e = (cn_entry *)cn_ckpt_find(s->c, name);
    if (!e)
        die(name, NULL);
    return e;
}

/* Re-encode S's table and header (checksums right), write it as NAME, free S. */
static void reseal_put(seed *s, const char *name)
{
    cn_header h = s->c->h;
    cn_table_encode(s->c->e, h.nentries, s->buf + CN_HEADER_SIZE);
    h.table_sum = cn_hash(s->buf + CN_HEADER_SIZE, (size_t)h.table_size);
    cn_header_encode(&h, s->buf);
    put("fuzz_ckpt", name, s->buf, s->len);
    cn_ckpt_close(s->c);
    free(s->buf);
}

/* Write a mutated copy of BUF as NAME: byte AT xor X, then, with HDR, the
 * header checksum recomputed. */
static void poke(const char *name, const uint8_t *buf, size_t len, size_t at, uint8_t x, bool hdr)
{
    uint8_t *b = malloc(len);
    memcpy(b, buf, len);
    b[at] ^= x;
    if (hdr)
        cn_put_u64(b + CN_HEADER_SIZE - 8, cn_hash(b, CN_HEADER_SIZE - 8));
    put("fuzz_ckpt", name, b, len);
    free(b);
}

static void ckpt_seeds(void)
{
    fill();
    size_t len;
    uint8_t *buf;
    /* valid-raw: every type and shape, an empty variable, a routed file. */
    lvl_src raw[] = {
        var("field", CAIRN_DOUBLE, field, NX * NY, 2, NX, NY, 0, CZ_RAW, 0),
        var("cube", CAIRN_FLOAT, cube, 105, 3, 3, 5, 7, CZ_RAW, 0),
        var("ints", CAIRN_INT32, ints, 1001, 0, 0, 0, 0, CZ_RAW, 0),
        var("bytes", CAIRN_UINT8, bytes, 4099, 1, 4099, 0, 0, CZ_RAW, 0),
        var("step", CAIRN_INT64, &step, 1, 0, 0, 0, 0, CZ_RAW, 0),
        var("empty", CAIRN_UINT16, NULL, 0, 0, 0, 0, 0, CZ_RAW, 0),
        file_src(),
    };
    uint8_t *rawbuf = write_ckpt(raw, 7, 7, -1, 0, &len);
    size_t rawlen = len;
    put("fuzz_ckpt", "valid-raw", rawbuf, rawlen);
    buf = write_ckpt(NULL, 0, 7, -1, 0, &len);
    put("fuzz_ckpt", "valid-0-entries", buf, len);
    free(buf);
    /* valid-zstd-packed: the small variables packed into their owners' frames */
    lvl_src packed[] = {raw[0], raw[1], raw[4], raw[2], raw[3]}; /* cube, step adjacent */
    for (int i = 0; i < 5; i++)
        packed[i].codec = CZ_ZSTD;
    uint8_t *packbuf = write_ckpt(packed, 5, 7, -1, 0, &len);
    size_t packlen = len;
    put("fuzz_ckpt", "valid-zstd-packed", packbuf, packlen);
    /* valid-codecs: every lossless codec */
    lvl_src codecs[] = {
        var("field", CAIRN_DOUBLE, field, NX * NY, 2, NX, NY, 0, CZ_ZLIB, 0),
        var("cube", CAIRN_FLOAT, cube, 105, 3, 3, 5, 7, CZ_LZ4, 0),
        var("ints", CAIRN_INT32, ints, 1001, 0, 0, 0, 0, CZ_SHUF_ZSTD, 0),
        var("bytes", CAIRN_UINT8, bytes, 4099, 0, 0, 0, 0, CZ_SHUF_LZ4, 0),
        var("fp", CAIRN_DOUBLE, fp, 2000, 0, 0, 0, 0, CZ_FPZIP, 0),
        var("step", CAIRN_INT64, &step, 1, 0, 0, 0, 0, CZ_ZSTD, 0),
    };
    buf = write_ckpt(codecs, 6, 7, -1, 0, &len);
    put("fuzz_ckpt", "valid-codecs", buf, len);
    free(buf);
    /* valid-lossy: wavelet (2-D) and predict (1-D) within their bounds */
    lvl_src lossy[] = {
        var("field", CAIRN_DOUBLE, field, NX * NY, 2, NX, NY, 0, CZ_WAVELET, 1e-3),
        var("fp", CAIRN_DOUBLE, fp, 2000, 0, 0, 0, 0, CZ_PREDICT, 1e-4),
        var("ints", CAIRN_INT32, ints, 1001, 0, 0, 0, 0, CZ_ZSTD, 0),
    };
    uint8_t *lossybuf = write_ckpt(lossy, 3, 7, -1, 0, &len);
    size_t lossylen = len;
    put("fuzz_ckpt", "valid-lossy", lossybuf, lossylen);
    /* valid-incr-full: a full generation with block hashes (incr_block 1 KiB) */
    enum { IB = 1024 };
    static cn_h128 hf[8], hb[8], hf_runs[3];
    incr_hash(field, sizeof field, IB, 1, hf);
    incr_hash(bytes, sizeof bytes, IB, 1, hb);
    lvl_src full[] = {raw[0], raw[3]};
    full[0].codec = CZ_ZSTD, full[0].hashes = hf, full[0].nhash = 8;
    full[1].hashes = hb, full[1].nhash = 5;
    buf = write_ckpt(full, 2, 5, -1, IB, &len);
    put("fuzz_ckpt", "valid-incr-full", buf, len);
    free(buf);
    /* valid-incr-delta: generation 7 of the chain 5 <- 6 <- 7; field stores
     * blocks 1-2 and 5 (zstd), bytes stores block 4 (its short last one, raw) */
    static const cn_run fr[] = {{1, 2}, {5, 1}}, br[] = {{4, 1}};
    hf_runs[0] = hf[1], hf_runs[1] = hf[2], hf_runs[2] = hf[5];
    lvl_src delta[] = {full[0], full[1]};
    delta[0].flags = CN_ENTRY_DELTA, delta[0].runs = fr, delta[0].nruns = 2;
    delta[0].hashes = hf_runs, delta[0].nhash = 3;
    delta[1].flags = CN_ENTRY_DELTA, delta[1].runs = br, delta[1].nruns = 1;
    delta[1].hashes = &hb[4], delta[1].nhash = 1;
    uint8_t *deltabuf = write_ckpt(delta, 2, 7, 6, IB, &len);
    size_t deltalen = len;
    put("fuzz_ckpt", "valid-incr-delta", deltabuf, deltalen);

    /* bad-*: one mutation each */
    poke("bad-magic", rawbuf, rawlen, 0, 0x20, false);
    uint8_t *b = malloc(rawlen);
    memcpy(b, rawbuf, rawlen);
    cn_put_u32(b + 8, CN_FORMAT_VERSION + 1);
    cn_put_u64(b + CN_HEADER_SIZE - 8, cn_hash(b, CN_HEADER_SIZE - 8));
    put("fuzz_ckpt", "bad-format-version", b, rawlen);
    memcpy(b, rawbuf, rawlen);
    cn_put_u32(b + 8, CN_FORMAT_VERSION_OLD - 1);
    cn_put_u64(b + CN_HEADER_SIZE - 8, cn_hash(b, CN_HEADER_SIZE - 8));
    put("fuzz_ckpt", "bad-format-version--older", b, rawlen);
    /* version 3 is read, but with its data at a page, which this file's is not */
    memcpy(b, rawbuf, rawlen);
    if (cn_get_u64(b + 64) % CN_DATA_ALIGN == 0)
        die("valid-raw: data at a page; bad-layout--v3 would be valid", NULL);
    cn_put_u32(b + 8, CN_FORMAT_VERSION_OLD);
    cn_put_u64(b + CN_HEADER_SIZE - 8, cn_hash(b, CN_HEADER_SIZE - 8));
    put("fuzz_ckpt", "bad-layout--v3-data-not-at-a-page", b, rawlen);
    free(b);
    poke("bad-header-checksum", rawbuf, rawlen, 100, 0x01, false);
    poke("bad-table-checksum", rawbuf, rawlen, CN_HEADER_SIZE + 10, 0x01, false);
    seed s = parse(rawbuf, rawlen);
    poke("bad-block-checksum", rawbuf, rawlen, (size_t)entry(&s, "bytes")->offset + 4096 + 1,
         0x10, false);
    cn_ckpt_close(s.c), free(s.buf);
    put("fuzz_ckpt", "bad-truncated-header", rawbuf, 200);
    put("fuzz_ckpt", "bad-truncated--file", rawbuf, rawlen - 100);
    s = parse(rawbuf, rawlen);
    memcpy(entry(&s, "ints")->name, "cube", 4); /* same length: same table size */
    reseal_put(&s, "bad-duplicate-entry");
    s = parse(rawbuf, rawlen);
    entry(&s, "ints")->error_bound = 0.5; /* a bound on integers */
    reseal_put(&s, "bad-error-bound");
    s = parse(rawbuf, rawlen);
    entry(&s, "field")->dims[1] = NY + 1;
    reseal_put(&s, "bad-dims-count");
    s = parse(rawbuf, rawlen);
    entry(&s, "ints")->count += 1; /* its sizes no longer agree with count and type */
    reseal_put(&s, "bad-sizes--count");
    s = parse(lossybuf, lossylen);
    entry(&s, "field")->max_error = 2e-3; /* beyond its bound of 1e-3 */
    reseal_put(&s, "bad-measured-error");
    s = parse(lossybuf, lossylen);
    entry(&s, "fp")->error_bound = 0, entry(&s, "fp")->max_error = 0;
    reseal_put(&s, "bad-lossy-bound");
    s = parse(packbuf, packlen);
    for (uint32_t i = 0; i < s.c->h.nentries; i++)
        if (s.c->e[i].flags & CN_ENTRY_PACKED) {
            s.c->e[i].codec = CZ_LZ4; /* its owner's codec is zstd */
            break;
        }
    reseal_put(&s, "bad-packed-owner");
    s = parse(deltabuf, deltalen);
    s.c->h.parent = 7; /* its own generation */
    reseal_put(&s, "bad-chain");
    s = parse(deltabuf, deltalen);
    cn_entry *e = entry(&s, "field");
    cn_run r0 = e->runs[0];
    e->runs[0] = e->runs[1], e->runs[1] = r0;
    reseal_put(&s, "bad-run-order");
    s = parse(deltabuf, deltalen);
    entry(&s, "bytes")->runs[0].first = 9; /* past its 5 blocks */
    reseal_put(&s, "bad-run-outside");
    free(rawbuf), free(packbuf), free(lossybuf), free(deltabuf);
}

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

static void reseal_tail(uint8_t *b, size_t len)
{
    cn_put_u64(b + len - 8, cn_hash(b, len - 8));
}

static void manifest_seeds(void)
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

static void parity_seeds(void)
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

static void layout_seeds(void)
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

/* ---- HDF5 maps (a routed HDF5 file split at level 4) ------------------------- */

static void h5_reseal(uint8_t *b, size_t len) { cn_put_u64(b + len - 8, cn_hash(b, len - 8)); }

static void h5map_seeds(void)
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

static void agg_h5_seeds(void)
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
    free(b.p), free(map[0]), free(map[1]);
}

/* ---- PFS indexes ---------------------------------------------------------- */

static void pindex_seeds(void)
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

static void pnode_seeds(void)
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

static void pdelta_seeds(void)
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
static int previous(const char *path)
{
    uint8_t *buf = NULL, *out = NULL;
    size_t len = 0, olen = 0;
    cn_err err = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *name = slash ? slash + 1 : path;
    if (slash)
        *slash = '\0';
    int dfd = cn_dir_open_path(slash ? dir : ".", &err);
    int rc = dfd < 0 ? dfd : cn_read_small(dfd, name, 1u << 26, &buf, &len, &err);
    if (rc == 0 && len >= 8 && memcmp(buf, CN_MANIFEST_MAGIC, 8) == 0) {
        cn_manifest m;
        if ((rc = cn_manifest_decode(buf, len, &m, &err)) == 0) {
            m.version = CN_MANIFEST_VERSION_OLD;
            rc = cn_manifest_encode(&m, &out, &olen, &err);
            cn_manifest_free(&m);
        }
    } else if (rc == 0 && len >= 8 && memcmp(buf, CN_PINDEX_MAGIC, 8) == 0) {
        cn_pindex x;
        if ((rc = cn_pindex_decode(buf, len, &x, &err)) == 0) {
            x.version = CN_PINDEX_VERSION_OLD;
            rc = cn_pindex_encode(&x, &out, &olen, &err);
            cn_pindex_free(&x);
        }
    } else if (rc == 0) {
        rc = cn_fail(&err, CAIRN_EINVAL, "neither a node manifest nor a PFS index");
    }
    if (rc == 0)
        rc = cn_write_atomic(dfd, name, out, olen, &err);
    if (rc < 0)
        fprintf(stderr, "mkcorpus: %s: %s\n", path, err.msg);
    if (dfd >= 0)
        close(dfd);
    free(buf), free(out);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--previous") == 0) {
        int bad = 0;
        for (int i = 2; i < argc; i++)
            bad |= previous(argv[i]) != 0;
        return bad || argc < 3;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: mkcorpus DIR (e.g. tests/fuzz/corpus) | mkcorpus --previous "
                        "FILE...\n");
        return 2;
    }
    outdir = argv[1];
    ckpt_seeds();
    manifest_seeds();
    parity_seeds();
    pindex_seeds();
    pnode_seeds();
    pdelta_seeds();
    layout_seeds();
    h5map_seeds();
    agg_h5_seeds();
    printf("mkcorpus: seeds for checkpoint format %d, manifest %d, PFS index %d written under "
           "%s\n", CN_FORMAT_VERSION, CN_MANIFEST_VERSION, CN_PINDEX_VERSION, outdir);
    return 0;
}
