/*
 * ckpt.c - seeds of fuzz_ckpt: rank files written by lvl_local_write (raw,
 * every codec, packs, lossy, incremental) and one precise mutation each.
 * Part of the seed generator (mkcorpus.h).
 */
#include "mkcorpus.h"

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

void ckpt_seeds(void)
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
