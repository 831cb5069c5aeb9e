/*
 * test_period.c - src/common/period.c: the interval and duration parser of
 * ckpt.every_<L> and fail.mtbf_<L>, and Daly's optimum checkpoint interval,
 * checked against values computed by hand (cost / (2 mtbf) chosen so that
 * its square root is exact).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "common/common.h"

static void assert_contains(const char *msg, const char *want)
{
    if (!msg || !strstr(msg, want))
        fail_msg("message \"%s\"\n  does not contain \"%s\"", msg ? msg : "(none)", want);
}

static void ok_every(const char *v, long iters, double seconds)
{
    cn_interval iv = {-1, -1};
    const char *bad = cn_interval_parse(v, true, &iv);
    if (bad)
        fail_msg("'%s' refused: %s", v, bad);
    assert_int_equal(iv.iters, iters);
    assert_true(iv.seconds == seconds);
}

static void bad_parse(const char *v, bool iters_ok, const char *why)
{
    cn_interval iv = {-1, -1};
    const char *bad = cn_interval_parse(v, iters_ok, &iv);
    if (!bad)
        fail_msg("'%s' accepted (iters %ld, seconds %g)", v, iv.iters, iv.seconds);
    assert_contains(bad, why);
    assert_int_equal(iv.iters, 0); /* refused: off */
    assert_true(iv.seconds == 0);
}

static void test_every_ok(void **state)
{
    (void)state;
    ok_every("", 0, 0);
    ok_every("1", 1, 0);
    ok_every("100", 100, 0);
    ok_every("007", 7, 0);
    ok_every("1000000000", 1000000000L, 0);
    ok_every("30s", 0, 30);
    ok_every("1s", 0, 1);
    ok_every("0.5s", 0, 0.5);
    ok_every("5m", 0, 300);
    ok_every("1.5h", 0, 5400);
    ok_every("2d", 0, 172800);
    ok_every("0.25m", 0, 15);
    ok_every("10000000000s", 0, 1e10);
}

static void test_every_bad(void **state)
{
    (void)state;
    const char *not_interval = "is not an interval: N iterations, or a time: N followed by s, "
                               "m, h or d";
    const char *bad[] = {"abc", "-1", "+1", " 1", "1 ", "1 s", "1x", "1ss", "s", ".5s",
                         "5.s", "1e3", "1e3s", "1.2.3s", "0x10", "1S", "1H", "1.5.", "--"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        bad_parse(bad[i], true, not_interval);
    bad_parse("0", true, "must be more than 0");
    bad_parse("0s", true, "must be more than 0");
    bad_parse("0.000d", true, "must be more than 0");
    bad_parse("1.5", true, "is not a whole number of iterations");
    bad_parse("1000000001", true, "is too large (at most 1000000000 iterations)");
    bad_parse("99999999999999999999999", true, "is too large");
    bad_parse("10000000001s", true, "is too large (at most 10000000000 s");
    bad_parse("115741d", true, "is too large");
}

static void test_duration(void **state)
{
    (void)state;
    cn_interval iv;
    assert_null(cn_interval_parse("12h", false, &iv));
    assert_true(iv.seconds == 43200 && iv.iters == 0);
    assert_null(cn_interval_parse("7d", false, &iv));
    assert_true(iv.seconds == 604800);
    assert_null(cn_interval_parse("", false, &iv));
    assert_true(iv.seconds == 0 && iv.iters == 0);
    bad_parse("3600", false, "needs a unit: s, m, h or d");
    bad_parse("1.5", false, "needs a unit");
    bad_parse("abc", false, "is not a duration: N followed by s, m, h or d");
    bad_parse("-5h", false, "is not a duration");
    bad_parse("0h", false, "must be more than 0");
}

/* |got - want| within a relative 1e-12. */
static void near(double got, double want)
{
    if (fabs(got - want) > 1e-12 * fabs(want))
        fail_msg("got %.17g, want %.17g", got, want);
}

static void test_daly(void **state)
{
    (void)state;
    /* C = 2, M = 4: C/2M = 1/4, sqrt(2CM) = 4: T = 4 (1 + 1/6 + 1/36) - 2 = 25/9. */
    near(cn_daly_interval(2, 4), 25.0 / 9);
    /* C = 2, M = 100: C/2M = 1/100, sqrt(2CM) = 20: T = 20 (1 + 1/30 + 1/900) - 2 = 841/45. */
    near(cn_daly_interval(2, 100), 841.0 / 45);
    /* C = 18 s, M = 1 h: C/2M = 1/400, sqrt(2CM) = 360: T = 360 (1 + 1/60 + 1/3600) - 18 = 348.1. */
    near(cn_daly_interval(18, 3600), 348.1);
    /* C = 0.5 s, M = 1e4 s: C/2M = 1/40000, sqrt(2CM) = 100: T = 100 (1 + 1/600 + 1/360000) - 0.5. */
    near(cn_daly_interval(0.5, 1e4), 100 * (1 + 1.0 / 600 + 1.0 / 360000) - 0.5);
    /* C >= 2M: T = M. */
    near(cn_daly_interval(8, 4), 4);
    near(cn_daly_interval(10, 4), 4);
    /* Just below 2M: x = sqrt(C/2M) -> 1 gives T -> 2M (1 - 2/3 + 1/9) = 8M/9. */
    near(cn_daly_interval(8 * (1 - 1e-14), 4), 32.0 / 9);
    /* Small C: Young's sqrt(2CM) to first order. */
    double y = sqrt(2 * 1e-3 * 1e5);
    assert_true(fabs(cn_daly_interval(1e-3, 1e5) - y) < 1e-3 * y);
    /* Longer MTBF, later checkpoints; costlier checkpoints (C < 2M), later too. */
    assert_true(cn_daly_interval(10, 7200) > cn_daly_interval(10, 3600));
    assert_true(cn_daly_interval(20, 3600) > cn_daly_interval(10, 3600));
    /* Nothing to compute from. */
    assert_true(cn_daly_interval(0, 100) == 0);
    assert_true(cn_daly_interval(1, 0) == 0);
    assert_true(cn_daly_interval(-1, 100) == 0);
    assert_true(cn_daly_interval(NAN, 100) == 0);
}

static void test_seconds_str(void **state)
{
    (void)state;
    char b[32];
    assert_string_equal(cn_seconds_str(b, sizeof b, 1.5), "1.5 s");
    assert_string_equal(cn_seconds_str(b, sizeof b, 348.1), "5.8 min");
    assert_string_equal(cn_seconds_str(b, sizeof b, 5400), "90 min");
    assert_string_equal(cn_seconds_str(b, sizeof b, 18000), "5 h");
    assert_string_equal(cn_seconds_str(b, sizeof b, 604800), "7 d");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_ok), cmocka_unit_test(test_every_bad),
        cmocka_unit_test(test_duration), cmocka_unit_test(test_daly),
        cmocka_unit_test(test_seconds_str),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
