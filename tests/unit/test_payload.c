/*
 * test_payload.c - a node's payload as levels 2 and 3 read it
 * (src/levels/local/payload.c), verified in the same pass:
 *
 *   - two real rank files (lvl_local_write: raw, packed and compressed
 *     entries, 4 KiB blocks) read back through lvl_payload_read_checked in
 *     chunks of awkward sizes equal the files' bytes, zeros past the end;
 *   - a byte flipped in a data block fails the read that first touches the
 *     block (whichever end of it), naming the file, the entry and the block;
 *     what comes before it still reads;
 *   - a nonzero byte in the padding between entries fails too;
 *   - a header that differs from the manifest's checksum, or a damaged
 *     table, fails lvl_payload_verify before anything is read, and a payload
 *     that did not verify is not read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "levels/local/local.h"

static char dir[64];
static int genfd = -1;
static cn_manifest_rank local[2];
static uint8_t *file[2]; /* each rank file's bytes as written */

#define NV 5
static uint8_t *data[NV];
static const size_t vsize[NV] = {100, 30000, 70001, 9000, 123457};
static const uint8_t vcodec[NV] = {CZ_ZSTD, CZ_ZSTD, CZ_RAW, CZ_LZ4, CZ_ZLIB};

static uint8_t *slurp(const char *name, uint64_t size)
{
    uint8_t *b = malloc(size);
    int fd = openat(genfd, name, O_RDONLY);
    assert_true(fd >= 0 && b);
    assert_int_equal(pread(fd, b, size, 0), (ssize_t)size);
    close(fd);
    return b;
}

/* Write rank R's file (fresh data per rank) and remember its manifest entry. */
static void write_rank(uint32_t r)
{
    lvl_src src[NV];
    char names[NV][16];
    for (int i = 0; i < NV; i++) {
        for (size_t k = 0; k < vsize[i]; k++)
            data[i][k] = (uint8_t)(i % 2 ? k / 31 + r : (k * 2654435761u >> 13) ^ r);
        snprintf(names[i], sizeof names[i], "v%d", i);
        src[i] = (lvl_src){.name = names[i], .kind = CN_KIND_VAR, .type = CAIRN_UINT8,
                           .count = vsize[i], .codec = vcodec[i], .ptr = data[i],
                           .size = vsize[i]};
    }
    cn_header proto = {.level = 1, .generation = 7, .rank = r, .nranks = 2, .node = 0,
                       .nnodes = 1, .block_size = 4096, .parent = -1, .base = 7};
    snprintf(proto.job, sizeof proto.job, "payload");
    cz_opts z = {.buf_size = 64 << 10, .threads = 0, .level = 1};
    char name[64];
    cn_rank_filename(name, sizeof name, r);
    lvl_written w;
    cn_err err = {0};
    if (lvl_local_write(genfd, dir, name, &proto, src, NV, CN_IO_WRITE, &z, &w, &err) != 0)
        fail_msg("write %s: %s", name, err.msg);
    local[r] = (cn_manifest_rank){.rank = r, .file_size = w.file_size, .header_sum = w.header_sum};
    file[r] = slurp(name, w.file_size);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/dev/shm/cairn-test-payload.XXXXXX");
    if (!mkdtemp(dir)) {
        snprintf(dir, sizeof dir, "/tmp/cairn-test-payload.XXXXXX");
        if (!mkdtemp(dir))
            return -1;
    }
    genfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; i < NV; i++)
        data[i] = malloc(vsize[i]);
    write_rank(0);
    write_rank(1);
    return genfd >= 0 ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    unlinkat(genfd, "rank-0.ckpt", 0);
    unlinkat(genfd, "rank-1.ckpt", 0);
    close(genfd);
    for (int i = 0; i < NV; i++)
        free(data[i]);
    free(file[0]);
    free(file[1]);
    return rmdir(dir);
}

/* Overwrite byte OFF of rank R's file with V (returns the old byte). */
static uint8_t poke(uint32_t r, uint64_t off, uint8_t v)
{
    char name[64];
    cn_rank_filename(name, sizeof name, r);
    int fd = openat(genfd, name, O_RDWR);
    assert_true(fd >= 0);
    uint8_t old = file[r][off];
    assert_int_equal(pwrite(fd, &v, 1, (off_t)off), 1);
    close(fd);
    return old;
}

static lvl_payload *open_verified(cn_err *err)
{
    lvl_payload *p = NULL;
    assert_int_equal(lvl_payload_open(genfd, local, 2, &p, err), 0);
    return p;
}

/* The whole payload in chunks of STEP: equal to the files, then zeros. */
static void test_reads_back(void **state)
{
    (void)state;
    static const size_t steps[] = {1, 777, 4095, 4097, 65539, 1 << 20};
    uint64_t total = local[0].file_size + local[1].file_size;
    uint8_t *want = calloc(1, total + 5000), *got = malloc(total + 5000);
    memcpy(want, file[0], local[0].file_size);
    memcpy(want + local[0].file_size, file[1], local[1].file_size);
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        cn_err err = {0};
        lvl_payload *p = open_verified(&err);
        if (lvl_payload_verify(p, local, dir, &err) != 0)
            fail_msg("verify: %s", err.msg);
        assert_int_equal(lvl_payload_size(p), total);
        for (uint64_t off = 0; off < total + 5000; off += steps[s]) {
            size_t n = (size_t)(total + 5000 - off < steps[s] ? total + 5000 - off : steps[s]);
            if (lvl_payload_read_checked(p, off, got + off, n, &err) != 0)
                fail_msg("read %llu+%zu: %s", (unsigned long long)off, n, err.msg);
        }
        assert_memory_equal(want, got, total + 5000);
        lvl_payload_close(p);
    }
    free(want);
    free(got);
}

/* A flipped byte in entry E's block B of rank 1: found by the first read that
 * touches that block, from whichever side; bytes before it read. */
static void test_damaged_block(void **state)
{
    (void)state;
    cn_ckpt *c = NULL;
    cn_err err = {0};
    assert_int_equal(cn_ckpt_parse(file[1], local[1].file_size, NULL, &c, &err), 0);
    const cn_entry *e = &c->e[4]; /* v4: zlib, several blocks */
    assert_true(e->nblocks >= 2);
    uint64_t at = e->offset + 4096 + 100; /* block 1 */
    uint8_t old = poke(1, at, (uint8_t)(file[1][at] ^ 0x40));
    uint64_t base = local[0].file_size, blk_lo = e->offset + 4096;
    uint8_t *buf = malloc(1 << 20);
    for (int side = 0; side < 3; side++) {
        lvl_payload *p = open_verified(&err);
        assert_int_equal(lvl_payload_verify(p, local, dir, &err), 0);
        /* everything before the block reads */
        assert_int_equal(lvl_payload_read_checked(p, 0, buf, 4096, &err), 0);
        assert_int_equal(lvl_payload_read_checked(p, base, buf, (size_t)(blk_lo - 1), &err), 0);
        uint64_t off = side == 0 ? base + blk_lo : side == 1 ? base + at : base + blk_lo + 4095;
        cn_err_clear(&err);
        assert_int_equal(lvl_payload_read_checked(p, off, buf, 1, &err), CAIRN_ECORRUPT);
        assert_non_null(strstr(err.msg, "rank-1.ckpt: 'v4' block 1 "));
        assert_non_null(strstr(err.msg, "checksum mismatch"));
        lvl_payload_close(p);
    }
    poke(1, at, old);
    free(buf);
    cn_ckpt_close(c);
}

/* A nonzero byte where the file must be zero (alignment before an entry). */
static void test_damaged_padding(void **state)
{
    (void)state;
    cn_ckpt *c = NULL;
    cn_err err = {0};
    assert_int_equal(cn_ckpt_parse(file[0], local[0].file_size, NULL, &c, &err), 0);
    uint64_t gap = c->e[0].offset + c->e[0].stored_size; /* before the next entry */
    assert_true(c->e[1].offset > gap || c->e[2].offset > c->e[1].offset + c->e[1].stored_size);
    if (c->e[1].offset == gap)
        gap = c->e[1].offset + c->e[1].stored_size;
    uint8_t old = poke(0, gap, 0x5a);
    lvl_payload *p = open_verified(&err);
    assert_int_equal(lvl_payload_verify(p, local, dir, &err), 0);
    uint8_t *buf = malloc(local[0].file_size);
    assert_int_equal(lvl_payload_read_checked(p, 0, buf, (size_t)local[0].file_size, &err),
                     CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "rank-0.ckpt: nonzero byte"));
    lvl_payload_close(p);
    poke(0, gap, old);
    free(buf);
    cn_ckpt_close(c);
}

/* Header or table wrong: refused before any data is read. */
static void test_bad_header(void **state)
{
    (void)state;
    cn_err err = {0};
    lvl_payload *p = open_verified(&err);
    cn_manifest_rank other[2] = {local[0], local[1]};
    other[1].header_sum ^= 1; /* the file was replaced since the manifest was written */
    assert_int_equal(lvl_payload_verify(p, other, dir, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "rank-1.ckpt: header checksum differs from the manifest"));
    uint8_t byte;
    assert_int_equal(lvl_payload_read_checked(p, 0, &byte, 1, &err), CAIRN_EINVAL); /* refused */
    lvl_payload_close(p);
    uint8_t old = poke(0, CN_HEADER_SIZE + 3, (uint8_t)(file[0][CN_HEADER_SIZE + 3] ^ 1));
    p = open_verified(&err);
    assert_int_equal(lvl_payload_verify(p, local, dir, &err), CAIRN_ECORRUPT);
    assert_non_null(strstr(err.msg, "rank-0.ckpt"));
    assert_non_null(strstr(err.msg, "table checksum"));
    lvl_payload_close(p);
    poke(0, CN_HEADER_SIZE + 3, old);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_back),
        cmocka_unit_test(test_damaged_block),
        cmocka_unit_test(test_damaged_padding),
        cmocka_unit_test(test_bad_header),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
