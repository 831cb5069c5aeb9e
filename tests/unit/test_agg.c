/*
 * test_agg.c - N->M aggregation (src/levels/pfs/agg*.c):
 *
 *   - every scheme (and AUTO) round-trips 37 ranks whose variable sets and
 *     sizes differ (ranks lacking variables, empty variables, a routed file
 *     named like a variable, every cairn type, 1-3 dims, a variable larger
 *     than a chunk), bit for bit and with the same metadata, in table order;
 *   - block sizes: the default, an odd one (rounded down to 8), a tiny one;
 *   - every byte position flipped (header, data, table, trailer) and every
 *     truncation is refused by cz_agg_open with CAIRN_ECORRUPT and a message;
 *     a frame altered and the file resealed (checksums recomputed) passes
 *     open but fails cz_agg_read;
 *   - scheme names parse and print; bad ones are refused;
 *   - aware stores a similar-variables workload smaller than agnostic;
 *   - with a write bandwidth the time model picks: raw groups (version 2)
 *     and no AUTO sampling on a fast file system, compression on a slow one,
 *     the same bytes for the same input;
 *   - cz_agg_read_some delivers exactly the variables wanted, bit for bit;
 *   - variables with known block checksums (cz_agg_var.sums) round-trip in
 *     every scheme, blocks smaller and larger than a chunk; the checksums
 *     given are the frames' (one altered: the file opens, its read fails);
 *   - variables lent as level 1's frames (cz_agg_var.frames) round-trip in
 *     every scheme; a group of them all of one codec is written as they are
 *     (aware, and auto, which then takes aware without trials), else they
 *     are decoded first; frames that do not hold the variable, a damaged
 *     one, and a lossy codec are refused;
 *   - bad input (duplicate names, size against count), sink errors and a
 *     callback's stop are returned; an empty set is a valid file.
 * With CAIRN_AGG_CORPUS=DIR set, also writes seed files for fuzz_agg there.
 *
 * This file owns main and the tests of round trips, names, the comparison,
 * the time model and the seeds; the rest is in tests/unit/agg/ (agg.h lists
 * who does what).
 */
#include "agg/agg.h"
#include "levels/pfs/pfs.h"

/* ---- round trips ------------------------------------------------------------ */

static void test_round_trips(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    big_set(s);
    static const uint32_t blocks[] = {0, 1001, 8};
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AUTO; sc++) {
        for (int k = 0; k < 3; k++) {
            cz_agg_opts o = {.scheme = sc, .block = blocks[k]};
            if (k && sc != CZ_AGG_AGNOSTIC_BLOCK && sc != CZ_AGG_AWARE_BLOCK)
                continue;
            if (k == 2 && sc == CZ_AGG_AGNOSTIC_BLOCK)
                continue; /* 8-byte rounds over 6 MiB: slow, adds nothing */
            cz_agg_stats st;
            buf b = round_trip(s, &o, &st);
            print_message("# %-14s block %4u: %zu variables, %llu -> %llu bytes, %u groups "
                          "(%u second pass)%s%s\n",
                          cz_agg_scheme_name(sc), blocks[k], s->n, (unsigned long long)st.raw,
                          (unsigned long long)st.stored, st.ngroups, st.npass2,
                          sc == CZ_AGG_AUTO ? ", picked " : "",
                          sc == CZ_AGG_AUTO ? cz_agg_scheme_name(st.scheme) : "");
            if (st.scheme == CZ_AGG_AWARE || st.scheme == CZ_AGG_AWARE_BLOCK)
                assert_int_equal(st.ngroups, 16); /* field, t0..t10, step, big, 2 files */
            else
                assert_int_equal(st.ngroups, 1);
            free(b.p);
        }
    }
    set_free(s);
    free(s);
}

/* ---- names, the comparison, errors ------------------------------------------ */

static void test_names(void **state)
{
    (void)state;
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AUTO; sc++)
        assert_int_equal(cz_agg_scheme_parse(cz_agg_scheme_name(sc)), sc);
    assert_string_equal(cz_agg_scheme_name(CZ_AGG_AWARE_BLOCK), "aware-block");
    assert_string_equal(cz_agg_scheme_name(CZ_AGG_AUTO), "auto");
    assert_string_equal(cz_agg_scheme_name(5), "?");
    assert_string_equal(cz_agg_scheme_name(-1), "?");
    assert_int_equal(cz_agg_scheme_parse("bogus"), -1);
    assert_int_equal(cz_agg_scheme_parse(""), -1);
    assert_int_equal(cz_agg_scheme_parse("Aware"), -1);
    assert_int_equal(cz_agg_scheme_parse("aware "), -1);
    assert_int_equal(cz_agg_scheme_parse(NULL), -1);
}

static void test_aware_beats_agnostic(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    similar_set(s, 16);
    uint64_t stored[5];
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AUTO; sc++) {
        cz_agg_opts o = {.scheme = sc};
        cz_agg_stats st;
        buf b = round_trip(s, &o, &st);
        stored[sc] = st.stored;
        print_message("# similar variables, %s: %llu -> %llu bytes (ratio %.2f)%s%s\n",
                      cz_agg_scheme_name(sc), (unsigned long long)st.raw,
                      (unsigned long long)st.stored, (double)st.raw / (double)st.stored,
                      sc == CZ_AGG_AUTO ? ", picked " : "",
                      sc == CZ_AGG_AUTO ? cz_agg_scheme_name(st.scheme) : "");
        free(b.p);
    }
    assert_true(stored[CZ_AGG_AWARE] < stored[CZ_AGG_AGNOSTIC]);
    assert_true(stored[CZ_AGG_AWARE_BLOCK] < stored[CZ_AGG_AGNOSTIC_BLOCK]);
    /* AUTO picks by a sample; it must not lose to agnostic here */
    assert_true(stored[CZ_AGG_AUTO] < stored[CZ_AGG_AGNOSTIC]);
    set_free(s);
    free(s);
}

/* Write S with O twice: the same bytes (no clock decides), read back whole. */
static buf twice(const set *s, const cz_agg_opts *o, cz_agg_stats *st)
{
    buf a = round_trip(s, o, st), b = round_trip(s, o, st);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.p, b.p, a.len);
    free(b.p);
    return a;
}

/* With a write bandwidth (opts.bps) the codec is picked by the time model:
 * on a fast file system everything is stored raw (version 2's raw groups)
 * and AUTO does not sample; on a slow one the data is compressed and AUTO
 * samples; the same input gives the same bytes. */
static void test_time_model(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    similar_set(s, 8);
    cz_agg_stats st;
    cz_agg_opts fast = {.scheme = CZ_AGG_AUTO, .bps = 1e12};
    buf b = twice(s, &fast, &st);
    assert_int_equal(st.sampled, 0);
    assert_int_equal(st.scheme, CZ_AGG_AWARE);
    assert_int_equal(st.npass2, 0);
    assert_true(st.stored > st.raw); /* raw frames, headers and table */
    free(b.p);
    cz_agg_opts slow = {.scheme = CZ_AGG_AUTO, .bps = 1e6};
    b = twice(s, &slow, &st);
    assert_true(st.sampled > 0);
    assert_true(2 * st.stored < st.raw);
    free(b.p);
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AWARE_BLOCK; sc++) {
        fast.scheme = slow.scheme = sc;
        cz_agg_stats sf, ss;
        buf x = twice(s, &fast, &sf), y = twice(s, &slow, &ss);
        assert_true(sf.stored > sf.raw);
        assert_true(ss.stored < sf.stored);
        free(x.p);
        free(y.p);
    }
    cz_agg_opts bad = {.scheme = CZ_AGG_AWARE, .bps = -1};
    cn_err err = {0};
    b = (buf){0};
    assert_int_equal(cz_agg_write(s->v, s->n, &bad, sink, &b, &st, &err), CAIRN_EINVAL);
    assert_int_equal(b.len, 0);
    set_free(s);
    free(s);
}
/* The memo (opts.memo): a lone variable's codec is modelled once per EVERY
 * generations (ticks) at one bandwidth and kept in between, over every file;
 * another bandwidth or the tick after EVERY models it again; a kept pick the data no longer suits still
 * round-trips bit for bit; without a memo, or all raw, nothing is kept. */
static void test_memo(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    s->n = 0;
    uint64_t seed = 7, n = 1u << 17; /* 1 MiB of smooth doubles: 6 model samples of 64 KiB */
    add(s, 3, "field", CN_KIND_VAR, CAIRN_DOUBLE, 1, &n, n, &seed);
    cz_agg_memo *m = cz_agg_memo_new(3);
    assert_non_null(m);
    cz_agg_opts o = {.scheme = CZ_AGG_AUTO, .bps = 1e6, .memo = m}; /* slow: compressed */
    cz_agg_stats st;
    static const uint32_t want[] = {1, 0, 0, 1, 0, 0, 1};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        cz_agg_memo_tick(m); /* a generation of two files: the second models nothing */
        for (uint32_t f = 0; f < 2; f++) {
            buf b = round_trip(s, &o, &st);
            assert_int_equal(st.modelled, f ? 0 : want[k]);
            assert_true(st.stored < st.raw); /* compressed, by the pick kept */
            free(b.p);
        }
    }
    o.bps = 2e6; /* another bandwidth: modelled again, then kept */
    for (uint32_t k = 0; k < 2; k++) {
        buf b = round_trip(s, &o, &st);
        assert_int_equal(st.modelled, 1 - k);
        free(b.p);
    }
    double *x = (double *)s->data[0]; /* noise under the kept pick: stored by it, exact */
    for (uint64_t i = 0; i < n; i++)
        x[i] = (double)(seed = seed * 6364136223846793005u + 1442695040888963407u);
    buf b = round_trip(s, &o, &st);
    assert_int_equal(st.modelled, 0);
    free(b.p);
    o.memo = NULL; /* none: every file models */
    b = twice(s, &o, &st);
    assert_int_equal(st.modelled, 1);
    free(b.p);
    o = (cz_agg_opts){.scheme = CZ_AGG_AUTO, .raw = true, .memo = m}; /* all raw: not used */
    b = round_trip(s, &o, &st);
    assert_int_equal(st.modelled, 0);
    assert_true(st.stored > st.raw);
    free(b.p);
    cz_agg_memo_free(m);
    cz_agg_memo_tick(NULL);
    cz_agg_memo_free(NULL);
    set_free(s);
    free(s);
}

/* The memo holding many variables (its table grows while kept): a file of
 * 300 ranks' variables, aware (each a group of its own, picked as the group
 * is written), models each once, the next file of the generation none, and
 * both round-trip. */
static void test_memo_many(void **state)
{
    (void)state;
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    s->n = 0;
    uint64_t seed = 11, n = 1024;
    for (uint32_t r = 0; r < 300; r++) { /* a name each: every group is one variable */
        char name[16];
        snprintf(name, sizeof name, "v%u", r);
        add(s, r, name, CN_KIND_VAR, CAIRN_DOUBLE, 1, &n, n, &seed);
    }
    cz_agg_memo *m = cz_agg_memo_new(8);
    assert_non_null(m);
    cz_agg_memo_tick(m);
    cz_agg_opts o = {.scheme = CZ_AGG_AWARE, .bps = 1e6, .memo = m}; /* picked per group */
    cz_agg_stats st;
    buf b = round_trip(s, &o, &st);
    assert_int_equal(st.modelled, 300);
    free(b.p);
    b = round_trip(s, &o, &st);
    assert_int_equal(st.modelled, 0);
    free(b.p);
    cz_agg_memo_free(m);
    set_free(s);
    free(s);
}

/* ---- seeds for fuzz_agg ---------------------------------------------------------- */

static void write_seed(const char *dir, const char *name, const buf *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fputc(0, fp), 0); /* fuzz_agg's selector: the file as it is */
    assert_int_equal(fwrite(b->p, 1, b->len, fp), b->len);
    fclose(fp);
}

static void test_corpus(void **state)
{
    (void)state;
    const char *dir = getenv("CAIRN_AGG_CORPUS");
    if (!dir)
        skip();
    set *s = malloc(sizeof *s);
    assert_non_null(s);
    for (int sc = CZ_AGG_AGNOSTIC; sc <= CZ_AGG_AWARE_BLOCK; sc++) {
        buf b = small_file(sc, s);
        char name[64];
        snprintf(name, sizeof name, "valid-%s", cz_agg_scheme_name(sc));
        write_seed(dir, name, &b);
        free(b.p);
        set_free(s);
    }
    similar_set(s, 2);
    cz_agg_opts o = {.scheme = CZ_AGG_AUTO};
    buf b = {0};
    cn_err err = {0};
    cz_agg_stats st;
    assert_int_equal(cz_agg_write(s->v, 4, &o, sink, &b, &st, &err), 0);
    write_seed(dir, "valid-auto-similar", &b);
    free(b.p);
    b = (buf){0};
    cz_agg_opts raw = {.scheme = CZ_AGG_AUTO, .bps = 1e12}; /* version 2: raw groups */
    assert_int_equal(cz_agg_write(s->v, 4, &raw, sink, &b, &st, &err), 0);
    write_seed(dir, "valid-raw", &b);
    free(b.p);
    b = (buf){0};
    assert_int_equal(cz_agg_write(NULL, 0, &o, sink, &b, &st, &err), 0);
    write_seed(dir, "valid-empty", &b);
    free(b.p);
    set_free(s);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_flips_and_truncation),
        cmocka_unit_test(test_raw_index_sum),
        cmocka_unit_test(test_resealed_damage),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_aware_beats_agnostic),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_time_model),
        cmocka_unit_test(test_memo),
        cmocka_unit_test(test_memo_many),
        cmocka_unit_test(test_read_some),
        cmocka_unit_test(test_known_sums),
        cmocka_unit_test(test_lent_frames),
        cmocka_unit_test(test_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
