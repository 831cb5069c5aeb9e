/*
 * period.c - when to checkpoint, as pure functions: the checkpoint intervals
 * and failure times of the configuration (ckpt.every_<L>, fail.mtbf_<L>)
 * parsed from text, and Daly's optimum interval between checkpoints.
 *
 * An interval is a count of iterations ("100": calls of
 * cairn_need_checkpoint) or a wall time ("30s", "1.5h"); a duration is a
 * wall time only. Times are a non-negative decimal number (no sign, no
 * exponent, at most one '.') followed by s, m, h or d; the result must be
 * more than 0 and at most CN_PERIOD_MAX_SECONDS. The empty string is "off".
 *
 * Daly (J. T. Daly, "A higher order estimate of the optimum checkpoint
 * interval for restart dumps", FGCS 22, 2006): for a checkpoint of cost C
 * and a mean time between failures M, the compute time between checkpoints
 * that minimises the expected wall time is
 *   T = sqrt(2 C M) * (1 + (1/3) sqrt(C / (2M)) + (1/9) (C / (2M))) - C  for C < 2M,
 *   T = M                                                                otherwise.
 * Its first term alone is Young's (1974) sqrt(2 C M).
 *
 * Depends on libc and libm only; allocates nothing.
 */
#include "common/common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *cn_interval_parse(const char *v, bool iters_ok, cn_interval *out)
{
    static const char *const bad_every =
        "is not an interval: N iterations, or a time: N followed by s, m, h or d (e.g. 100, "
        "30s, 1.5h)";
    static const char *const bad_time = "is not a duration: N followed by s, m, h or d (e.g. "
                                        "90m, 12h, 7d)";
    *out = (cn_interval){0, 0};
    if (!*v)
        return NULL;
    const char *p = v;
    double whole = 0, frac = 0, scale = 1;
    int digits = 0, dots = 0;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9') {
            if (dots) {
                scale /= 10;
                frac += (*p - '0') * scale;
            } else if (whole < 1e18) { /* more is too large anyway */
                whole = whole * 10 + (*p - '0');
            }
            digits++;
        } else if (*p == '.' && !dots) {
            dots = 1;
        } else {
            break;
        }
    }
    if (!digits || (dots && scale == 1) || (*p && p[1]) || v[0] == '.')
        return iters_ok ? bad_every : bad_time;
    static const char units[] = "smhd";
    static const double secs[] = {1, 60, 3600, 86400};
    if (!*p) { /* no unit: iterations */
        if (!iters_ok)
            return "needs a unit: s, m, h or d (e.g. 12h, 7d)";
        if (dots)
            return "is not a whole number of iterations";
        if (whole < 1)
            return "must be more than 0";
        if (whole > CN_PERIOD_MAX_ITERS)
            return "is too large (at most 1000000000 iterations)";
        out->iters = (long)whole;
        return NULL;
    }
    const char *u = strchr(units, *p);
    if (!u)
        return iters_ok ? bad_every : bad_time;
    double s = (whole + frac) * secs[u - units];
    if (!(s > 0))
        return "must be more than 0";
    if (s > CN_PERIOD_MAX_SECONDS)
        return "is too large (at most 10000000000 s, about 317 years)";
    out->seconds = s;
    return NULL;
}

double cn_daly_interval(double cost, double mtbf)
{
    if (!(cost > 0) || !(mtbf > 0))
        return 0;
    if (cost >= 2 * mtbf)
        return mtbf;
    double r = cost / (2 * mtbf);
    return sqrt(2 * cost * mtbf) * (1 + sqrt(r) / 3 + r / 9) - cost;
}

const char *cn_seconds_str(char *buf, size_t len, double s)
{
    if (s < 120)
        snprintf(buf, len, "%.3g s", s);
    else if (s < 7200)
        snprintf(buf, len, "%.3g min", s / 60);
    else if (s < 172800)
        snprintf(buf, len, "%.3g h", s / 3600);
    else
        snprintf(buf, len, "%.3g d", s / 86400);
    return buf;
}
