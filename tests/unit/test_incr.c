/*
 * test_incr.c - change detection for incremental checkpoints (src/incr):
 * block hashes (one thread or several give the same hashes, every block
 * length handled), diffs into runs (nothing, a few, all changed; a variable
 * that grows, shrinks or whose last block changes length; no parent), run
 * byte counts, and the per-generation tables (lookup, reference counts).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "incr/incr.h"

static uint8_t *noise(size_t n, uint64_t seed)
{
    uint8_t *p = malloc(n ? n : 1);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (uint8_t)(seed >> 56);
    }
    return p;
}

static cn_h128 *hashes(const uint8_t *p, uint64_t size, uint32_t block, int threads)
{
    uint64_t nb = cn_incr_nblocks(size, block);
    cn_h128 *h = calloc(nb ? nb : 1, sizeof *h);
    assert_non_null(h);
    incr_hash(p, size, block, threads, h);
    return h;
}

static void test_hash(void **state)
{
    (void)state;
    const uint64_t sizes[] = {0, 1, 1023, 1024, 1025, 4096 * 3 + 7, 9u << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint64_t n = sizes[s];
        uint8_t *p = noise(n, n);
        cn_h128 *one = hashes(p, n, 1024, 1), *many = hashes(p, n, 1024, 4);
        uint64_t nb = cn_incr_nblocks(n, 1024);
        assert_int_equal(nb, (n + 1023) / 1024);
        if (nb)
            assert_memory_equal(one, many, nb * sizeof *one); /* threads change nothing */
        for (uint64_t b = 0; b < nb; b++) { /* and each is XXH3-128 of its block */
            size_t len = (size_t)(n - b * 1024 < 1024 ? n - b * 1024 : 1024);
            XXH128_hash_t x = XXH3_128bits(p + b * 1024, len);
            assert_true(one[b].lo == x.low64 && one[b].hi == x.high64);
        }
        free(p), free(one), free(many);
    }
}

static uint32_t diff(const uint8_t *a, uint64_t na, const uint8_t *b, uint64_t nb_bytes,
                     uint32_t block, cn_run *runs, uint64_t *changed)
{
    cn_h128 *ha = hashes(a, na, block, 1), *hb = hashes(b, nb_bytes, block, 1);
    uint32_t n = incr_diff(ha, na, hb, nb_bytes, block, runs, changed);
    free(ha), free(hb);
    return n;
}

static void test_diff(void **state)
{
    (void)state;
    const uint32_t B = 1024;
    const uint64_t N = 16 * B + 100; /* 17 blocks, the last of 100 bytes */
    uint8_t *a = noise(N, 1), *b = malloc(N + 4 * B);
    cn_run runs[32];
    uint64_t changed;

    memcpy(b, a, N); /* nothing changed */
    assert_int_equal(diff(a, N, b, N, B, runs, &changed), 0);
    assert_int_equal(changed, 0);

    b[3 * B] ^= 1;      /* block 3 */
    b[4 * B + 9] ^= 1;  /* block 4: merges with 3 */
    b[9 * B - 1] ^= 1;  /* block 8 */
    b[N - 1] ^= 1;      /* block 16, the short last one */
    assert_int_equal(diff(a, N, b, N, B, runs, &changed), 3);
    assert_int_equal(changed, 4);
    assert_true(runs[0].first == 3 && runs[0].count == 2);
    assert_true(runs[1].first == 8 && runs[1].count == 1);
    assert_true(runs[2].first == 16 && runs[2].count == 1);
    assert_int_equal(incr_run_bytes(runs, 3, N, B), 3 * B + 100);

    memcpy(b, a, N); /* every other block changed: as many runs as incr_max_runs allows */
    for (uint64_t k = 0; k < 17; k += 2)
        b[k * B] ^= 0x80;
    assert_int_equal(diff(a, N, b, N, B, runs, &changed), 9);
    assert_true(9 <= incr_max_runs(17));
    assert_int_equal(changed, 9);

    memcpy(b, a, N); /* grown by 3 blocks and a bit: the old last block and the new ones */
    memset(b + N, 7, 3 * B + 5);
    assert_int_equal(diff(a, N, b, N + 3 * B + 5, B, runs, &changed), 1);
    assert_true(runs[0].first == 16 && runs[0].count == 4);
    assert_int_equal(incr_run_bytes(runs, 1, N + 3 * B + 5, B), 3 * B + 105); /* 16-18 whole */

    /* shrunk to 10 blocks and 5 bytes: only the new last block (shorter) differs */
    assert_int_equal(diff(a, N, a, 10 * B + 5, B, runs, &changed), 1);
    assert_true(runs[0].first == 10 && runs[0].count == 1);
    assert_int_equal(incr_run_bytes(runs, 1, 10 * B + 5, B), 5);
    /* shrunk to whole blocks: nothing to store */
    assert_int_equal(diff(a, N, a, 10 * B, B, runs, &changed), 0);

    /* no parent: everything */
    cn_h128 *hb = hashes(a, N, B, 1);
    assert_int_equal(incr_diff(NULL, 0, hb, N, B, runs, &changed), 1);
    assert_true(runs[0].first == 0 && runs[0].count == 17 && changed == 17);
    assert_int_equal(incr_diff(NULL, 0, hb, 0, B, runs, &changed), 0); /* empty */
    free(hb);
    free(a), free(b);
}

static void test_table(void **state)
{
    (void)state;
    incr_tab *t = incr_tab_new(12, 8, 4, 4096);
    assert_non_null(t);
    const char *names[] = {"zeta", "alpha", "mid", "beta"};
    for (int i = 0; i < 4; i++) {
        cn_h128 *h = i == 2 ? NULL : calloc(3, sizeof *h);
        if (h)
            h[0].lo = (uint64_t)i + 1;
        assert_int_equal(incr_tab_add(t, names[i], 100u * (unsigned)i, 0, h), 0);
    }
    incr_tab_seal(t);
    for (int i = 0; i < 4; i++) {
        const incr_var *v = incr_tab_find(t, names[i]);
        assert_non_null(v);
        assert_string_equal(v->name, names[i]);
        assert_int_equal(v->size, 100 * i);
        if (i == 2)
            assert_null(v->hash);
        else
            assert_int_equal(v->hash[0].lo, i + 1);
    }
    assert_null(incr_tab_find(t, "gamma"));
    assert_null(incr_tab_find(NULL, "alpha"));
    assert_true(incr_tab_ref(t) == t);
    assert_int_equal(t->refs, 2);
    incr_tab_unref(t);
    assert_int_equal(t->gen, 12);
    incr_tab_unref(t); /* freed: ASan would see a leak or a double free */
    incr_tab_unref(NULL);
    assert_null(incr_tab_ref(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
