/*
 * test_format.c - the checkpoint file format (format.c) and its reader
 * (ckread.c), over images built in memory.
 *
 * build_image() (ckimage.h) lays out a valid file exactly as the writer
 * must. Tests round-trip it, corrupt it byte by byte, truncate it, and reseal
 * it (re-encode table and header with valid checksums) around bad field
 * values, so the validation of each field is exercised, not just the
 * checksums.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "ckimage.h"

/* Parse (and if that works, verify) a private copy of exactly LEN bytes, so
 * the sanitizers see any read past the end. Returns the first failure or 0. */
static int parse_verify(const uint8_t *buf, size_t len, cn_err *err)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, buf, len);
    cn_ckpt *c = NULL;
    int rc = cn_ckpt_parse(copy, len, "img", &c, err);
    if (rc == 0) {
        assert_non_null(c);
        assert_false(c->owns_map);
        rc = cn_ckpt_verify(c, "img", err);
        cn_ckpt_close(c);
    } else {
        assert_null(c);
    }
    free(copy);
    return rc;
}

/* Reseal IMG; expect it to fail with CODE and a message containing WHAT. */
static void expect_reject(image *img, int code, const char *what)
{
    reseal(img);
    cn_err err = {0};
    assert_int_equal(parse_verify(img->buf, img->len, &err), code);
    assert_int_equal(err.code, code);
    if (!strstr(err.msg, what))
        fail_msg("message '%s' lacks '%s'", err.msg, what);
}

static const spec small_specs[] = {
    {"ints", CN_KIND_VAR, CAIRN_INT32, 1, {5}, 5, 0, NULL, 0, false},
    {"empty", CN_KIND_VAR, CAIRN_DOUBLE, 0, {0}, 0, 0, NULL, 0, false},
    {"input.txt", CN_KIND_FILE, CAIRN_BYTE, 0, {0}, 100, 0, NULL, 0, false},
};
#define NSMALL ((uint32_t)(sizeof small_specs / sizeof small_specs[0]))

/* ---- round trips ---------------------------------------------------- */

static void check_round_trip(const image *img)
{
    cn_err err = {0};
    cn_ckpt *c = NULL;
    assert_int_equal(cn_ckpt_parse(img->buf, img->len, "img", &c, &err), 0);
    assert_int_equal(cn_ckpt_verify(c, "img", &err), 0);
    assert_ptr_equal(c->map, img->buf);
    assert_int_equal(c->size, img->len);
    const cn_header *h = &c->h;
    assert_int_equal(h->version, CN_FORMAT_VERSION);
    assert_int_equal(h->level, 1);
    assert_int_equal(h->generation, 7);
    assert_int_equal(h->rank, 3);
    assert_int_equal(h->nranks, 8);
    assert_int_equal(h->node, 1);
    assert_int_equal(h->nnodes, 4);
    assert_int_equal(h->block_size, img->h.block_size);
    assert_int_equal(h->nentries, img->n);
    assert_int_equal(h->table_size, img->h.table_size);
    assert_int_equal(h->data_offset, img->h.data_offset);
    assert_int_equal(h->data_offset, cn_align_up(CN_HEADER_SIZE + h->table_size, CN_ENTRY_ALIGN));
    assert_int_equal(h->file_size, img->len);
    assert_int_equal(h->table_sum, img->h.table_sum);
    assert_int_equal(h->header_sum, img->h.header_sum);
    assert_string_equal(h->job, "job-42");
    for (uint32_t i = 0; i < img->n; i++) {
        const cn_entry *a = &c->e[i], *b = &img->e[i];
        assert_string_equal(a->name, b->name);
        assert_ptr_equal(cn_ckpt_find(c, b->name), a);
        assert_int_equal(a->kind, b->kind);
        assert_int_equal(a->type, b->type);
        assert_int_equal(a->ndims, b->ndims);
        assert_int_equal(a->codec, CN_CODEC_RAW);
        for (int d = 0; d < CAIRN_MAX_DIMS; d++)
            assert_int_equal(a->dims[d], b->dims[d]);
        assert_int_equal(a->count, b->count);
        assert_int_equal(a->raw_size, b->count * cairn_type_size((cairn_type)b->type));
        assert_int_equal(a->stored_size, cn_entry_stream(b, img->h.incr_block));
        assert_int_equal(a->flags, b->flags);
        assert_int_equal(a->nruns, b->nruns);
        for (uint32_t r = 0; r < a->nruns; r++)
            assert_memory_equal(&a->runs[r], &b->runs[r], sizeof *a->runs);
        assert_int_equal(a->nhash, b->nhash);
        if (a->nhash)
            assert_memory_equal(a->hashes, b->hashes, sizeof *a->hashes * a->nhash);
        assert_int_equal(a->offset, b->offset);
        assert_int_equal(a->offset % CN_ENTRY_ALIGN, 0);
        assert_true(a->error_bound == b->error_bound);
        assert_int_equal(a->nblocks, b->nblocks);
        for (uint32_t k = 0; k < a->nblocks; k++)
            assert_int_equal(a->block_sums[k], b->block_sums[k]);
        for (uint64_t j = 0; j < a->stored_size; j++)
            assert_int_equal(c->map[a->offset + j], data_byte(i, j));
    }
    assert_null(cn_ckpt_find(c, "no-such-entry"));
    cn_ckpt_close(c);
}

static void test_round_trip_every_type(void **state)
{
    (void)state;
    spec s[CAIRN_DOUBLE + 5];
    static char names[CAIRN_DOUBLE + 1][16];
    uint32_t n = 0;
    for (int t = CAIRN_BYTE; t <= CAIRN_DOUBLE; t++, n++) {
        snprintf(names[t], sizeof names[t], "var-%d", t);
        spec v = {names[t], CN_KIND_VAR, (uint8_t)t, (uint8_t)(t % 4), {0}, 0, 0, NULL, 0, false};
        static const uint64_t shape[CAIRN_MAX_DIMS] = {3, 2, 5};
        v.count = 1;
        for (int d = 0; d < v.ndims; d++)
            v.count *= (v.dims[d] = shape[d] + (uint64_t)t);
        if (v.ndims == 0)
            v.count = 17 + (uint64_t)t;
        if (t == CAIRN_FLOAT || t == CAIRN_DOUBLE)
            v.bound = 1e-3 * t;
        s[n] = v;
    }
    s[n++] = (spec){"empty", CN_KIND_VAR, CAIRN_FLOAT, 0, {0}, 0, 0, NULL, 0, false};
    s[n++] = (spec){"empty-2d", CN_KIND_VAR, CAIRN_INT64, 2, {4, 0}, 0, 0, NULL, 0, false};
    s[n++] = (spec){"restart.dat", CN_KIND_FILE, CAIRN_BYTE, 0, {0}, 333, 0, NULL, 0, false};
    image img;
    build_image(s, n, CN_MIN_BLOCK, &img);
    assert_int_equal(img.e[n - 2].count, 0);
    check_round_trip(&img);
    free_image(&img);
}

static void test_round_trip_multi_block(void **state)
{
    (void)state;
    /* 10001 doubles = 80008 bytes: 19 full 4 KiB blocks and one of 2184. */
    const spec s[] = {
        {"a", CN_KIND_VAR, CAIRN_UINT8, 0, {0}, 1, 0, NULL, 0, false},
        {"field", CN_KIND_VAR, CAIRN_DOUBLE, 2, {73, 137}, 73 * 137, 0, NULL, 0, false},
        {"z", CN_KIND_VAR, CAIRN_INT16, 1, {3}, 3, 0, NULL, 0, false},
    };
    image img;
    build_image(s, 3, CN_MIN_BLOCK, &img);
    assert_int_equal(img.e[1].nblocks, 20);
    assert_int_equal(img.e[1].stored_size % CN_MIN_BLOCK, 80008 % 4096);
    assert_int_equal(img.e[1].offset, img.h.data_offset + 64);
    assert_true(img.h.data_offset < CN_DATA_ALIGN); /* no page of padding (version 4) */
    check_round_trip(&img);

    /* The last, partial block is checked too. */
    img.buf[img.e[1].offset + img.e[1].stored_size - 1] ^= 1;
    cn_err err = {0};
    assert_int_equal(parse_verify(img.buf, img.len, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "'field' block 19 checksum mismatch"));
    free_image(&img);

    build_image(s, 3, 2 * CN_MIN_BLOCK, &img);
    assert_int_equal(img.e[1].nblocks, 10);
    check_round_trip(&img);
    free_image(&img);
}

static void test_round_trip_no_entries(void **state)
{
    (void)state;
    image img;
    build_image(NULL, 0, CN_MIN_BLOCK, &img);
    assert_int_equal(img.len, CN_HEADER_SIZE); /* the header alone: version 4 pads nothing */
    assert_int_equal(img.h.table_size, 0);
    check_round_trip(&img);
    /* Pin the header layout: magic, version, header size, generation, job. */
    assert_memory_equal(img.buf, "CAIRNCK\x01\x04\0\0\0\0\x01\0\0", 16);
    assert_int_equal(cn_get_u64(img.buf + 152), (uint64_t)-1); /* parent: a full generation */
    assert_int_equal(cn_get_u64(img.buf + 160), 7);            /* base: itself */
    assert_int_equal(cn_get_u64(img.buf + 40), 7);
    assert_string_equal((const char *)img.buf + 88, "job-42");
    assert_int_equal(cn_get_u64(img.buf + CN_HEADER_SIZE - 8), img.h.header_sum);
    free_image(&img);
}

/* ---- corruption ----------------------------------------------------- */

static void test_every_flip_and_truncation_fails(void **state)
{
    (void)state;
    image img;
    build_image(small_specs, NSMALL, CN_MIN_BLOCK, &img);
    /* The checksum chain covers header, table and each entry's data, and the
     * alignment padding must be zero: every flip anywhere must be caught. */
    assert_int_equal(img.h.table_size, 3 * 99 + 4 + 5 + 9 + 2 * 8); /* fixed+name+sums */
    static const uint8_t masks[] = {0x01, 0x80, 0xff};
    size_t checked = 0;
    for (size_t off = 0; off < img.len; off++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            img.buf[off] ^= masks[m];
            cn_err err = {0};
            int rc = parse_verify(img.buf, img.len, &err);
            img.buf[off] ^= masks[m];
            checked++;
            if (rc != CAIRN_ECORRUPT && rc != CAIRN_EFORMAT)
                fail_msg("flip 0x%02x at byte %zu: rc %d (%s)", masks[m], off, rc, err.msg);
        }
    }
    assert_int_equal(checked, 3 * img.len); /* padding is checked too: it must be zero */
    assert_int_equal(parse_verify(img.buf, img.len, NULL), 0);

    for (size_t len = 0; len < img.len; len++) {
        cn_err err = {0};
        int rc = parse_verify(img.buf, len, &err);
        if (rc != CAIRN_ECORRUPT)
            fail_msg("truncated to %zu bytes: rc %d", len, rc);
    }
    /* A byte too many is as wrong as one too few. */
    uint8_t *longer = calloc(1, img.len + 1);
    assert_non_null(longer);
    memcpy(longer, img.buf, img.len);
    assert_int_equal(parse_verify(longer, img.len + 1, NULL), CAIRN_ECORRUPT);
    free(longer);
    free_image(&img);
}

static void test_bad_header_fields(void **state)
{
    (void)state;
    image img;
    build_image(small_specs, NSMALL, CN_MIN_BLOCK, &img);
    img.h.version = CN_FORMAT_VERSION + 1;
    expect_reject(&img, CAIRN_EFORMAT, "version 5");
    img.h.version = CN_FORMAT_VERSION_OLD - 1;
    expect_reject(&img, CAIRN_EFORMAT, "version 2");
    /* version 3 is read, but its data starts at a page: this layout is not one */
    assert_true(img.h.data_offset % CN_DATA_ALIGN != 0);
    img.h.version = CN_FORMAT_VERSION_OLD;
    expect_reject(&img, CAIRN_ECORRUPT, "bad layout");
    img.h.version = CN_FORMAT_VERSION;
    reseal(&img);
    img.buf[7] = 2; /* magic's version byte */
    cn_err err = {0};
    assert_int_equal(parse_verify(img.buf, img.len, &err), CAIRN_EFORMAT);
    memcpy(img.buf, "CAIRNMF", 7);
    assert_int_equal(parse_verify(img.buf, img.len, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "bad magic"));
    reseal(&img);
    const cn_header good = img.h;
#define HDR_CASE(field, value, what)                                                              \
    do {                                                                                          \
        img.h = good;                                                                             \
        img.h.field = (value);                                                                    \
        expect_reject(&img, CAIRN_ECORRUPT, what);                                                \
    } while (0)
    HDR_CASE(level, 0, "bad level 0");
    HDR_CASE(level, 5, "bad level 5");
    HDR_CASE(rank, 8, "bad rank 8 of 8");
    HDR_CASE(nranks, 0, "bad rank");
    HDR_CASE(nranks, CN_MAX_RANKS + 1, "bad rank");
    HDR_CASE(node, 4, "bad node 4 of 4");
    HDR_CASE(nnodes, 9, "bad node");
    HDR_CASE(block_size, CN_MIN_BLOCK / 2, "bad block size");
    HDR_CASE(block_size, CN_MIN_BLOCK + 1, "bad block size");
    HDR_CASE(block_size, CN_MAX_BLOCK * 2u, "bad block size");
    HDR_CASE(generation, -1, "bad generation -1");
    HDR_CASE(nentries, CN_MAX_ENTRIES + 1, "bad entry count");
    HDR_CASE(nentries, 2, "trailing bytes");
    HDR_CASE(nentries, 4, "table too short for 4 entries");
    HDR_CASE(data_offset, good.data_offset + 1, "bad layout");
    HDR_CASE(data_offset, 0, "bad layout");
    HDR_CASE(table_size, good.table_size + 1, "1 trailing bytes");
    HDR_CASE(file_size, good.file_size - 1, "header says");
    HDR_CASE(job[0], '.', "bad job id");
    HDR_CASE(job[0], '\0', "bad job id");
    HDR_CASE(base, 6, "bad chain");                /* a full generation's base is itself */
    HDR_CASE(parent, 7, "bad chain");              /* its own parent */
    HDR_CASE(parent, -2, "bad chain");

    HDR_CASE(incr_block, 3000, "bad incremental block size");
    HDR_CASE(incr_block, CN_MIN_INCR_BLOCK / 2, "bad incremental block size");
    HDR_CASE(incr_block, CN_MAX_INCR_BLOCK * 2u, "bad incremental block size");
#undef HDR_CASE
    img.h = good;
    img.h.parent = 5;
    img.h.base = 3;
    expect_reject(&img, CAIRN_ECORRUPT, "without a block size"); /* incremental, no blocks */
    /* Bytes the encoder leaves zero, set under a valid header checksum. */
    static const struct { size_t off; const char *what; } raw[] = {
        {52, "reserved header field"}, {88 + 7, "bad job id"}, {88 + 63, "bad job id"},
        {152, "bad chain"}, {172, "reserved header bytes"},
        {CN_HEADER_SIZE - 9, "reserved header bytes"}};
    for (size_t i = 0; i < sizeof raw / sizeof raw[0]; i++) {
        img.h = good;
        reseal(&img);
        img.buf[raw[i].off] = 'x';
        cn_put_u64(img.buf + CN_HEADER_SIZE - 8, cn_hash(img.buf, CN_HEADER_SIZE - 8));
        assert_int_equal(parse_verify(img.buf, img.len, &err), CAIRN_ECORRUPT);
        assert_non_null(strstr(err.msg, raw[i].what));
    }
    /* Every entry fits one block either way, so 8 KiB blocks reseal valid. */
    img.h = good;
    img.h.block_size = 2 * CN_MIN_BLOCK;
    reseal(&img);
    assert_int_equal(parse_verify(img.buf, img.len, NULL), 0);
    free_image(&img);
}

/* ---- bad tables, resealed with valid checksums ---------------------- */

static void test_bad_entries(void **state)
{
    (void)state;
    const spec s[] = {
        {"a", CN_KIND_VAR, CAIRN_INT32, 2, {2, 3}, 6, 0, NULL, 0, false},
        {"b", CN_KIND_VAR, CAIRN_DOUBLE, 1, {4}, 4, 0.5, NULL, 0, false},
    };
    image img;
    build_image(s, 2, CN_MIN_BLOCK, &img);
    const cn_entry a = img.e[0], b = img.e[1];
#define ENTRY_CASE(i, stmt, what)                                                                 \
    do {                                                                                          \
        img.e[0] = a;                                                                             \
        img.e[1] = b;                                                                             \
        cn_entry *e = &img.e[i];                                                                  \
        stmt;                                                                                     \
        expect_reject(&img, CAIRN_ECORRUPT, what);                                                \
    } while (0)
    ENTRY_CASE(1, e->name[0] = 'a', "duplicate entry 'a'");
    ENTRY_CASE(1, e->offset = a.offset, "overlapping");      /* b over a */
    ENTRY_CASE(1, e->offset = a.offset + 8, "overlapping");  /* b inside a, unaligned */
    ENTRY_CASE(1, e->offset = a.offset + 32, "overlapping"); /* after a, unaligned */
    ENTRY_CASE(0, e->offset = img.h.data_offset - 64, "overlapping");
    ENTRY_CASE(1, e->offset += 64, "data outside the file");
    ENTRY_CASE(0, e->dims[1] = 4, "dims do not multiply");
    ENTRY_CASE(0, e->dims[2] = 1, "unused dim set");
    ENTRY_CASE(0, e->ndims = 4, "bad kind/type/dims/codec");
    ENTRY_CASE(0, (e->dims[0] = 1ull << 32, e->dims[1] = 1ull << 32), "dims overflow");
    ENTRY_CASE(0, e->error_bound = 0.5, "bad error bound");
    ENTRY_CASE(1, e->error_bound = -0.5, "bad error bound");
    ENTRY_CASE(1, e->max_error = e->error_bound + 1, "bad measured error"); /* above its bound */
    ENTRY_CASE(1, e->max_error = NAN, "bad measured error");
    ENTRY_CASE(1, e->error_bound = NAN, "bad error bound");
    ENTRY_CASE(1, e->error_bound = INFINITY, "bad error bound");
    ENTRY_CASE(0, e->type = CAIRN_DOUBLE + 1, "bad kind/type/dims/codec");
    ENTRY_CASE(0, e->kind = 2, "bad kind/type/dims/codec");
    ENTRY_CASE(0, e->codec = CN_CODEC_COUNT, "bad kind/type/dims/codec");
    ENTRY_CASE(0, e->flags = 4, "bad kind/type/dims/codec/flags");
    ENTRY_CASE(0, e->flags = CN_ENTRY_DELTA, "without a block size");
    ENTRY_CASE(0, e->codec = 1, "bad compressed sizes");          /* frames of 0 bytes */
    ENTRY_CASE(0, e->frame_raw = 1, "raw entry with frames");
    ENTRY_CASE(0, e->flags = CN_ENTRY_PACKED, "raw entry with frames");
    ENTRY_CASE(0, (e->codec = 2, e->frame_raw = e->raw_size + 1), "its pack");
    ENTRY_CASE(1, (e->codec = 2, e->flags = CN_ENTRY_PACKED), "bad packed entry");
    ENTRY_CASE(0, e->kind = CN_KIND_FILE, "file entry 'a' with a type or shape");
    ENTRY_CASE(0, e->raw_size += 4, "sizes disagree");
    ENTRY_CASE(0, e->count = 7, "dims do not multiply");
    ENTRY_CASE(0, e->name[0] = '/', "bad name");
    ENTRY_CASE(0, strcpy(e->name, "."), "bad name");
    ENTRY_CASE(0, e->nblocks = 0, "bad block count");
    ENTRY_CASE(1, e->nblocks = 0, "bad block count");
    /* A resealed table with a wrong block sum parses; verify catches it. */
    ENTRY_CASE(0, e->block_sums[0] ^= 1, "'a' block 0 checksum mismatch");
#undef ENTRY_CASE
    img.e[0] = a;
    img.e[1] = b;
    a.block_sums[0] ^= 1; /* undo the last case (the arrays are shared) */
    reseal(&img);
    assert_int_equal(parse_verify(img.buf, img.len, NULL), 0);
    free_image(&img);
}

/* ---- incremental entries: runs and block hashes --------------------- */

static void test_chain_entries(void **state)
{
    (void)state;
    /* generation 7 of the chain 3..7 (parent 5), blocks of 1 KiB: "big" has
     * 5 blocks (the last 904 bytes) and stores blocks 1, 2 and 4. */
    static const cn_run runs[] = {{1, 2}, {4, 1}};
    const spec s[] = {
        {"big", CN_KIND_VAR, CAIRN_UINT8, 1, {5000}, 5000, 0, runs, 2, true},
        {"same", CN_KIND_VAR, CAIRN_DOUBLE, 0, {0}, 300, 0, runs, 0, false}, /* no runs */
        {"whole", CN_KIND_VAR, CAIRN_INT32, 0, {0}, 700, 0, NULL, 0, true},
        {"in.txt", CN_KIND_FILE, CAIRN_BYTE, 0, {0}, 10, 0, NULL, 0, false},
    };
    image img;
    build_chain_image(s, 4, CN_MIN_BLOCK, 1024, 5, 3, &img);
    assert_int_equal(img.e[0].stored_size, 2048 + 904);
    assert_int_equal(img.e[1].stored_size, 0);
    assert_int_equal(img.e[2].nhash, 3); /* 2800 bytes: 3 blocks */
    check_round_trip(&img);
    cn_ckpt *c = NULL;
    assert_int_equal(cn_ckpt_parse(img.buf, img.len, "img", &c, NULL), 0);
    assert_int_equal(c->h.parent, 5);
    assert_int_equal(c->h.base, 3);
    assert_int_equal(c->h.incr_block, 1024);
    assert_int_equal(c->e[0].nruns, 2);
    assert_int_equal(c->e[0].runs[1].first, 4);
    assert_int_equal(c->e[0].nhash, 3);
    assert_memory_equal(c->e[0].hashes, img.e[0].hashes, 3 * sizeof(cn_h128));
    assert_int_equal(cn_entry_stream(&c->e[0], 1024), 2952);
    assert_int_equal(cn_entry_stream(&c->e[2], 1024), 2800);
    cn_ckpt_close(c);

    cn_entry saved[4];
    memcpy(saved, img.e, sizeof saved);
    cn_run bad[2];
#define CHAIN_CASE(i, stmt, what)                                                                 \
    do {                                                                                          \
        memcpy(img.e, saved, sizeof saved);                                                       \
        memcpy(bad, runs, sizeof bad);                                                            \
        cn_entry *e = &img.e[i];                                                                  \
        if (i == 0)                                                                               \
            e->runs = bad;                                                                        \
        stmt;                                                                                     \
        expect_reject(&img, CAIRN_ECORRUPT, what);                                                \
    } while (0)
    CHAIN_CASE(0, bad[1].first = 5, "outside the variable");
    CHAIN_CASE(0, bad[1].first = 3, "out of order");        /* adjacent: should be merged */
    CHAIN_CASE(0, bad[1].first = 1, "out of order");        /* overlapping */
    CHAIN_CASE(0, bad[0].count = 0, "out of order");        /* empty */
    CHAIN_CASE(0, e->nhash = 2, "2 block hashes for 3 blocks");
    CHAIN_CASE(2, e->nhash = 2, "2 block hashes for 3 blocks");
    CHAIN_CASE(0, e->flags = 0, "runs on a full entry");
    CHAIN_CASE(3, e->flags = CN_ENTRY_DELTA, "delta entry outside an incremental generation");
    CHAIN_CASE(0, e->stored_size = 2952 + 8, "raw entry with frames"); /* sizes disagree */
#undef CHAIN_CASE
    memcpy(img.e, saved, sizeof saved);
    img.h.parent = -1; /* a full generation cannot hold deltas */
    img.h.base = 7;
    expect_reject(&img, CAIRN_ECORRUPT, "delta entry outside an incremental generation");
    img.h.parent = 5;
    img.h.base = 3;
    reseal(&img);
    assert_int_equal(parse_verify(img.buf, img.len, NULL), 0);
    free_image(&img);
}

/* ---- cn_ckpt_open over a real file ---------------------------------- */

static void test_ckpt_open(void **state)
{
    (void)state;
    char dir[] = "/tmp/cairn-test-format-XXXXXX";
    assert_non_null(mkdtemp(dir));
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    assert_true(dfd >= 0);
    image img;
    build_image(small_specs, NSMALL, CN_MIN_BLOCK, &img);
    cn_err err = {0};
    assert_int_equal(cn_write_atomic(dfd, "rank-3.ckpt", img.buf, img.len, &err), 0);

    cn_ckpt *c = NULL;
    assert_int_equal(cn_ckpt_open(dfd, "rank-3.ckpt", NULL, &c, &err), 0);
    assert_true(c->owns_map);
    assert_int_equal(c->size, img.len);
    assert_int_equal(c->h.nentries, NSMALL);
    assert_int_equal(cn_ckpt_verify(c, NULL, &err), 0);
    assert_int_equal(memcmp(c->map, img.buf, img.len), 0);
    cn_ckpt_close(c);
    cn_ckpt_close(NULL);

    assert_int_equal(cn_ckpt_open(dfd, "missing", "x/missing", &c, &err), CAIRN_ENOENT);
    assert_null(c);
    assert_string_equal(err.msg, "x/missing: missing");
    assert_int_equal(symlinkat("rank-3.ckpt", dfd, "link"), 0);
    assert_int_equal(cn_ckpt_open(dfd, "link", NULL, &c, &err), -ELOOP);
    assert_int_equal(mkdirat(dfd, "sub", 0700), 0);
    assert_int_equal(cn_ckpt_open(dfd, "sub", NULL, &c, &err), CAIRN_ECORRUPT);
    assert_string_equal(err.msg, "sub: not a regular file");
    assert_int_equal(cn_write_atomic(dfd, "short", img.buf, CN_HEADER_SIZE - 1, &err), 0);
    assert_int_equal(cn_ckpt_open(dfd, "short", NULL, &c, &err), CAIRN_ECORRUPT);
    assert_string_equal(err.msg, "short: truncated (255 bytes)");
    img.buf[img.len - 1] ^= 1; /* last byte of the file entry's data */
    assert_int_equal(cn_write_atomic(dfd, "bad", img.buf, img.len, &err), 0);
    assert_int_equal(cn_ckpt_open(dfd, "bad", "d/bad", &c, &err), 0);
    assert_int_equal(cn_ckpt_verify(c, "d/bad", &err), CAIRN_ECORRUPT);
    assert_string_equal(err.msg, "d/bad: 'input.txt' block 0 checksum mismatch");
    cn_ckpt_close(c);

    free_image(&img);
    assert_int_equal(cn_rmtree_at(AT_FDCWD, dir, &err), 0);
    close(dfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_type),
        cmocka_unit_test(test_round_trip_multi_block),
        cmocka_unit_test(test_round_trip_no_entries),
        cmocka_unit_test(test_every_flip_and_truncation_fails),
        cmocka_unit_test(test_bad_header_fields),
        cmocka_unit_test(test_bad_entries),
        cmocka_unit_test(test_chain_entries),
        cmocka_unit_test(test_ckpt_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
