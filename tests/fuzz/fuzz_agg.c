/*
 * fuzz_agg.c - libFuzzer target for aggregated files (cz_agg_open,
 * cz_agg_info, cz_agg_read; src/levels/pfs/agg*.c).
 *
 * Input: one selector byte, then the file. Every byte of a file is under a
 * checksum, so mutations alone stop at the first check; with bit 2 of the
 * selector set the file is opened as a restore opens it (CZ_AGG_LAZY: a raw
 * group's units verified as they are decoded); with bit 0 set the target first
 * reseals the file (recomputes the header,
 * group, table and trailer checksums where the layout allows, see agg.c), so
 * the parser's other checks and the decoder behind them are reached.
 * Every input also goes through cz_agg_sum (the checksum a PFS index keeps,
 * which walks a version-4 file's raw groups frame by frame): it succeeds or
 * refuses with CAIRN_ECORRUPT / CAIRN_EFORMAT and a message.
 * A refusal must be CAIRN_ECORRUPT or CAIRN_EFORMAT with a message; a file
 * that opens must give metadata for each variable and read whole and in part
 * (cz_agg_read_some: the odd ranks, or the even with bit 1 set; each delivered
 * variable's bytes are all touched, so the sanitizers see a bad pointer or
 * length); a read may fail only with CAIRN_ECORRUPT (or ENOMEM).
 * Known: with libFuzzer's comparison tracing (-use_cmp, the default) a
 * resealed input can also match the XXH3 that guards an fpzip payload
 * (codec_float.c) and then crash inside libfpzip, which does not check its
 * input (as fuzz_frame.c notes); run with -use_cmp=0 to fuzz cairn's checks.
 */
#include "compress/compress.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "levels/pfs/pfs.h"

static void reseal(uint8_t *p, size_t len)
{
    if (len < 128)
        return;
    cn_put_u64(p + 56, cn_hash(p, 56));
    uint8_t *t = p + len - 64;
    uint64_t data = cn_get_u64(t + 24), tsize = cn_get_u64(t + 32);
    if (data <= len - 128 && tsize == len - 128 - data) {
        uint8_t *table = p + 64 + data;
        uint32_t ngroups = cn_get_u32(p + 24);
        uint64_t off = 64;
        for (uint64_t i = 0; i < ngroups && (i + 1) * 48 <= tsize; i++) {
            uint8_t *g = table + 48 * i;
            uint64_t stored = cn_get_u64(g + 16);
            if (stored > 64 + data - off)
                break;
            cn_put_u64(g + 32, cn_hash(p + off, (size_t)stored));
            off += stored;
        }
        cn_put_u64(t + 40, cn_hash(table, (size_t)tsize));
    }
    cn_put_u64(t + 56, cn_hash(t, 56));
}

static int touch(void *arg, const cz_agg_var *v)
{
    uint64_t *acc = arg;
    const uint8_t *p = v->data;
    if (!p || !v->name || strlen(v->name) == 0)
        abort();
    for (uint64_t i = 0; i < v->size; i++)
        *acc += p[i];
    return 0;
}

/* A partial read: touch's sum first, then which ranks are wanted. */
typedef struct part {
    uint64_t acc;
    unsigned even;
} part;

/* cz_agg_read_some's filter: the odd ranks (the selector's bit 1: the even). */
static bool odd_rank(void *arg, const cz_agg_var *v)
{
    if (v->data)
        abort();
    return (v->rank & 1) != ((const part *)arg)->even;
}

/* touch, then free the data handed over (CZ_AGG_GIVE). */
static int touch_free(void *arg, const cz_agg_var *v)
{
    int rc = touch(arg, v);
    free((void *)v->data);
    return rc;
}

static int drop(void *arg, const cz_agg_var *v)
{
    (void)arg, (void)v;
    return 0;
}

/* The file after the selector byte (resealed first if its bit 0 is set, as
 * below) opens and every variable reads back. */
int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    if (size < 1)
        return cn_fail(err, CAIRN_ECORRUPT, "empty input: no selector byte");
    size_t len = size - 1;
    uint8_t *p = malloc(len ? len : 1);
    CN_FAIL_IF(!p, err, CAIRN_ENOMEM, "no memory");
    memcpy(p, data + 1, len);
    if (data[0] & 1)
        reseal(p, len);
    cz_agg_file *f = NULL;
    int rc = cz_agg_open_flags(p, len, data[0] & 4 ? CZ_AGG_LAZY : 0, &f, err);
    if (rc == 0)
        rc = cz_agg_read(f, drop, NULL, err);
    cz_agg_close(f);
    free(p);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t len = size - 1;
    uint8_t *p = malloc(len ? len : 1); /* exact size: over-reads are seen */
    if (!p)
        return 0;
    memcpy(p, data + 1, len);
    if (data[0] & 1)
        reseal(p, len);
    cz_agg_file *f = NULL;
    cn_err err = {0};
    uint64_t sum = 0;
    int rc = cz_agg_sum(p, len, &sum, &err);
    if (rc != 0 && ((rc != CAIRN_ECORRUPT && rc != CAIRN_EFORMAT && rc != CAIRN_ENOMEM) ||
                    !err.msg[0]))
        abort();
    err = (cn_err){0};
    rc = cz_agg_open_flags(p, len, data[0] & 4 ? CZ_AGG_LAZY : 0, &f, &err);
    if (rc != 0) {
        if ((rc != CAIRN_ECORRUPT && rc != CAIRN_EFORMAT && rc != CAIRN_ENOMEM) || !err.msg[0] ||
            f)
            abort();
        free(p);
        return 0;
    }
    for (size_t i = 0; i < cz_agg_count(f); i++) {
        cz_agg_var v;
        if (cz_agg_info(f, i, &v) != 0 || v.data || !v.name)
            abort();
    }
    uint64_t acc = 0;
    rc = cz_agg_read(f, touch, &acc, &err);
    if (rc != 0 && ((rc != CAIRN_ECORRUPT && rc != CAIRN_ENOMEM) || !err.msg[0]))
        abort();
    part pt = {.even = (data[0] >> 1) & 1}; /* a restore reads only its node's ranks */
    err = (cn_err){0};
    rc = cz_agg_read_some(f, odd_rank, touch_free, &pt, CZ_AGG_GIVE, &err);
    if (rc != 0 && ((rc != CAIRN_ECORRUPT && rc != CAIRN_ENOMEM) || !err.msg[0]))
        abort();
    cz_agg_close(f);
    free(p);
    return 0;
}
