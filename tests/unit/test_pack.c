/*
 * test_pack.c - packed variables in a level-1 file (src/levels/local*.c):
 * small variables of one codec share one frame stored under the first (the
 * pack owner), so the owner's stored bytes and block checksums are those of
 * the whole pack, not of its own size. Each case writes a real rank file
 * with lvl_local_write (plain writes and libpmem), then opens, verifies every
 * block checksum and decodes it, and compares every byte:
 *
 *   - a 100 B owner with two 300 KB members (zstd), and an owner with members
 *     filling a 1 MiB buffer exactly, at every store.block_size from 4 KiB to
 *     2 MiB, compressible and incompressible (then the pack is stored raw in
 *     its frame and is larger than the buffer);
 *   - the same with a raw variable and a second pack (lz4) in the file;
 *   - the members really are packed (else the test would prove nothing).
 *
 * Built with the sanitizers (make asan), a block checksum written past the
 * owner's array is reported as a heap overflow.
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

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/dev/shm/cairn-test-pack.XXXXXX");
    if (!mkdtemp(dir)) {
        snprintf(dir, sizeof dir, "/tmp/cairn-test-pack.XXXXXX");
        if (!mkdtemp(dir))
            return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/rank-0.ckpt", dir);
    unlink(path);
    return rmdir(dir);
}

static uint64_t mix(uint64_t x) /* splitmix64: every output bit depends on every input bit */
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* Compressible (slow ramps) or incompressible (noise) bytes. */
static void fill(uint8_t *p, size_t n, int seed, bool noise)
{
    for (size_t i = 0; i < n; i++)
        p[i] = noise ? (uint8_t)mix(i * 131 + (uint64_t)seed * 7919 + 1)
                     : (uint8_t)(i / 97 + (size_t)seed);
}

typedef struct var {
    const char *name;
    uint8_t codec;
    size_t size;
} var;

/* Write VARS[0..N-1] as a rank file with BLOCK-byte checksum blocks and a
 * BUF-byte pipeline buffer, read it back and compare; NPACKED members must
 * come out packed. */
static void round_trip(const var *vars, uint32_t n, uint32_t block, uint32_t buf, bool noise,
                       int io, int threads, uint32_t npacked)
{
    lvl_src src[8];
    uint8_t *in[8], *out[8];
    assert_true(n <= 8);
    for (uint32_t i = 0; i < n; i++) {
        in[i] = malloc(vars[i].size);
        out[i] = calloc(1, vars[i].size);
        assert_non_null(in[i]);
        assert_non_null(out[i]);
        fill(in[i], vars[i].size, (int)i + 1, noise);
        src[i] = (lvl_src){.name = vars[i].name, .kind = CN_KIND_VAR, .type = CAIRN_UINT8,
                           .count = vars[i].size, .codec = vars[i].codec, .ptr = in[i],
                           .size = vars[i].size};
    }
    cn_header proto = {.level = 1, .generation = 1, .rank = 0, .nranks = 1, .node = 0,
                       .nnodes = 1, .block_size = block, .parent = -1, .base = 1};
    snprintf(proto.job, sizeof proto.job, "pack");
    cz_opts z = {.buf_size = buf, .threads = threads, .level = 1};
    int genfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    assert_true(genfd >= 0);
    lvl_written w;
    cn_err err = {0};
    if (lvl_local_write(genfd, dir, "rank-0.ckpt", &proto, src, n, io, &z, &w, &err) != 0)
        fail_msg("write (block %u, buffer %u, %s, io %d): %s", block, buf,
                 noise ? "noise" : "ramps", io, err.msg);

    cn_ckpt *c = NULL;
    if (cn_ckpt_open(genfd, "rank-0.ckpt", NULL, &c, &err) != 0 ||
        cn_ckpt_verify(c, "rank-0.ckpt", &err) != 0)
        fail_msg("read back (block %u, buffer %u, %s, io %d): %s", block, buf,
                 noise ? "noise" : "ramps", io, err.msg);
    assert_int_equal(c->h.file_size, w.file_size);
    uint32_t packed = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cn_entry *e = &c->e[i];
        packed += (e->flags & CN_ENTRY_PACKED) != 0;
        /* every stored byte is under a block checksum, no more blocks than that */
        assert_true((uint64_t)e->nblocks * block >= e->stored_size);
        assert_true(e->nblocks == 0 || (uint64_t)(e->nblocks - 1) * block < e->stored_size);
    }
    assert_int_equal(packed, npacked);
    for (uint32_t i = 0; noise && i < n; i++) { /* noise: each pack is stored as it is */
        uint64_t pack = vars[i].size;
        for (uint32_t j = i + 1; j < n && (c->e[j].flags & CN_ENTRY_PACKED); j++)
            pack += vars[j].size;
        if (!(c->e[i].flags & CN_ENTRY_PACKED) && c->e[i].codec != CZ_RAW)
            assert_true(c->e[i].stored_size > pack);
    }
    cz_dest d[8];
    const cz_dest *dp[8];
    uint32_t nd[8];
    for (uint32_t i = 0; i < n; i++) {
        d[i] = (cz_dest){out[i], vars[i].size};
        dp[i] = &d[i];
        nd[i] = 1;
    }
    if (cz_decode_ckpt(c, dp, nd, threads, &err) != 0)
        fail_msg("decode (block %u, buffer %u): %s", block, buf, err.msg);
    for (uint32_t i = 0; i < n; i++) {
        assert_memory_equal(in[i], out[i], vars[i].size);
        free(in[i]);
        free(out[i]);
    }
    cn_ckpt_close(c);
    unlinkat(genfd, "rank-0.ckpt", 0);
    close(genfd);
}

/* Every block size 4 KiB .. 2 MiB, both kinds of data, both ways of writing. */
static void sweep(const var *vars, uint32_t n, uint32_t buf, uint32_t npacked)
{
    for (uint32_t block = 4u << 10; block <= 2u << 20; block *= 2)
        for (int noise = 0; noise <= 1; noise++) {
            round_trip(vars, n, block, buf, noise, CN_IO_WRITE, 0, npacked);
            round_trip(vars, n, block, buf, noise, CN_IO_PMEM, 2, npacked);
        }
}

/* The case: a 100 B owner, two 300 KB members. */
static void test_small_owner(void **state)
{
    (void)state;
    static const var v[] = {{"owner", CZ_ZSTD, 100}, {"a", CZ_ZSTD, 300000},
                            {"b", CZ_ZSTD, 300000}};
    sweep(v, 3, 1u << 20, 2);
}

/* A pack that fills the default 1 MiB buffer exactly: incompressible, its
 * frame is larger than the buffer. */
static void test_full_buffer(void **state)
{
    (void)state;
    static const var v[] = {{"owner", CZ_ZSTD, 100}, {"a", CZ_ZSTD, 524288},
                            {"b", CZ_ZSTD, 524188}};
    sweep(v, 3, 1u << 20, 2);
}

/* Two packs of different codecs around a raw variable and a large one, at a
 * smaller buffer: every owner's blocks are its pack's. */
static void test_mixed(void **state)
{
    (void)state;
    static const var v[] = {{"z0", CZ_ZSTD, 8},       {"z1", CZ_ZSTD, 32000},
                            {"z2", CZ_ZSTD, 32760},   {"raw", CZ_RAW, 70001},
                            {"l0", CZ_LZ4, 1},        {"l1", CZ_LZ4, 65535},
                            {"big", CZ_ZLIB, 300001}, {"l2", CZ_LZ4, 12345}};
    sweep(v, 8, 128u << 10, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_small_owner, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_buffer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mixed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
