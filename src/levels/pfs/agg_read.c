/*
 * agg_read.c - N->M aggregation, the reader: an aggregated file (layout in
 * agg.c) held whole in memory is parsed and verified before anything in it
 * is trusted, then decoded group by group back into variables.
 *
 * cz_agg_open checks, in order: the sizes of header and trailer, their
 * magics and checksums, that they agree with each other and with the
 * buffer's length (data + table + both ends = file size, every sum
 * overflow-checked), the table's checksum, every group and variable record
 * (codec, type, flags, reserved bytes, counts adding up, names, dims against
 * count, size = count x type size, the variables of a group sharing its key
 * and ranks in order, (rank, kind, name) unique), then every group's
 * checksum and its frames' headers (units counted, lengths inside the group,
 * raw bytes adding up). cz_agg_read then decodes each frame, checking its raw
 * checksum, and scatters its bytes to the variables by the group's walk.
 *
 * Ownership: the cz_agg_file owns its records and a copy of the names; the
 * caller's buffer is only pointed into and must outlive the handle. Data
 * passed to the read callback lives until the callback returns.
 */
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include <xxhash.h>

typedef struct rgroup {
    uint8_t codec, type, flags;
    size_t first, nvar;
    uint64_t raw, stored, nunits, off, sum;
} rgroup;

struct cz_agg_file {
    const uint8_t *p;
    size_t len;
    int scheme;
    uint32_t version;
    uint32_t block, chunk;
    uint32_t ngroups;
    size_t nvars;
    rgroup *g;
    cz_agg_var *v;
    char *names;
};

#define BAD(cond, ...) CN_FAIL_IF(cond, err, CAIRN_ECORRUPT, "aggregated file: " __VA_ARGS__)

static int parse_ends(cz_agg_file *f, uint64_t *raw, uint64_t *data_size, uint64_t *tsize,
                      uint64_t *tsum, cn_err *err)
{
    const uint8_t *h = f->p, *t = f->p + f->len - AGG_TRAILER;
    BAD(memcmp(h, cz_agg_magic, 8) != 0, "no CAIRNAGG magic: not an aggregated file");
    BAD(cn_get_u64(h + 56) != cn_hash(h, 56), "header checksum mismatch");
    f->version = cn_get_u32(h + 8);
    CN_FAIL_IF(f->version < AGG_VERSION_PLAIN || f->version > AGG_VERSION_SUMS, err,
               CAIRN_EFORMAT, "aggregated file: version %u, this build reads %u..%u",
               f->version, AGG_VERSION_PLAIN, AGG_VERSION_SUMS);
    BAD(h[13] || cn_get_u16(h + 14) || cn_get_u64(h + 40) || cn_get_u64(h + 48),
        "header has nonzero reserved fields");
    BAD(h[12] > CZ_AGG_AWARE_BLOCK, "unknown scheme %u", h[12]);
    f->scheme = h[12];
    f->block = cn_get_u32(h + 16);
    f->nvars = cn_get_u32(h + 20);
    f->ngroups = cn_get_u32(h + 24);
    f->chunk = cn_get_u32(h + 28);
    *raw = cn_get_u64(h + 32);
    if (cz_agg_is_block(f->scheme))
        BAD(f->block < 8 || f->block > AGG_MAX_BLOCK || f->block % 8,
            "block of %u bytes is not a multiple of 8 in 8..%u", f->block, AGG_MAX_BLOCK);
    else
        BAD(f->block != 0, "block %u set for scheme %s", f->block, cz_agg_scheme_name(f->scheme));
    BAD(f->chunk < AGG_MIN_CHUNK || f->chunk > AGG_CHUNK || f->chunk % 8,
        "chunk of %u bytes is not a multiple of 8 in %u..%u", f->chunk, AGG_MIN_CHUNK, AGG_CHUNK);
    BAD(f->nvars > AGG_MAX_VARS || f->ngroups > f->nvars || (f->nvars && !f->ngroups),
        "%zu variables in %u groups", f->nvars, f->ngroups);
    BAD(!cz_agg_is_aware(f->scheme) && f->ngroups > 1, "%u groups in an agnostic file",
        f->ngroups);

    BAD(memcmp(t, cz_agg_tmagic, 8) != 0, "trailer magic missing (truncated?)");
    BAD(cn_get_u64(t + 56) != cn_hash(t, 56), "trailer checksum mismatch");
    BAD(cn_get_u32(t + 8) != f->version || cn_get_u32(t + 12) != f->nvars ||
            cn_get_u32(t + 16) != f->ngroups || cn_get_u32(t + 20) != 0,
        "trailer disagrees with the header");
    BAD(cn_get_u64(t + 48) != f->len, "file is %zu bytes, its trailer says %llu", f->len,
        (unsigned long long)cn_get_u64(t + 48));
    *data_size = cn_get_u64(t + 24);
    *tsize = cn_get_u64(t + 32);
    *tsum = cn_get_u64(t + 40);
    uint64_t body = f->len - AGG_HDR - AGG_TRAILER;
    BAD(*data_size > body || *tsize != body - *data_size,
        "data (%llu) and table (%llu) do not fill the %llu bytes between header and trailer",
        (unsigned long long)*data_size, (unsigned long long)*tsize, (unsigned long long)body);
    uint64_t least = (uint64_t)f->ngroups * AGG_GROUP_REC + (uint64_t)f->nvars * (AGG_VAR_FIXED + 1);
    BAD(*tsize < least, "table of %llu bytes cannot hold %u groups and %zu variables",
        (unsigned long long)*tsize, f->ngroups, f->nvars);
    return 0;
}

static int parse_groups(cz_agg_file *f, cn_rd *r, uint64_t data_size, cn_err *err)
{
    uint64_t off = AGG_HDR, vars = 0;
    for (uint32_t i = 0; i < f->ngroups; i++) {
        rgroup *g = &f->g[i];
        const uint8_t *p = cn_rd_take(r, AGG_GROUP_REC);
        BAD(!p, "table truncated in group %u", i);
        *g = (rgroup){.codec = p[0], .type = p[1], .flags = p[2], .nvar = cn_get_u32(p + 4),
                      .raw = cn_get_u64(p + 8), .stored = cn_get_u64(p + 16),
                        .nunits = cn_get_u64(p + 24), .sum = cn_get_u64(p + 32), .first = (size_t)vars, .off = off};
        const cz_codec *c = cz_codec_get(g->codec);
        bool raw_ok = g->codec == CZ_RAW && f->version >= AGG_VERSION_RAW; /* stored raw */
        BAD(!(raw_ok || (c && !c->lossy)) || !cz_codec_accepts(g->codec, g->type),
            "group %u: codec %u for type %s (version %u)", i, g->codec, cn_type_name(g->type),
            f->version);
        BAD(!cz_agg_is_aware(f->scheme) && g->type != CAIRN_BYTE, "group %u: agnostic, type %s",
            i, cn_type_name(g->type));
        bool hdrsum_ok = g->codec == CZ_RAW && f->version >= AGG_VERSION_SUMS;
        BAD((g->flags & ~(AGG_PASS2 | AGG_HDRSUM)) || p[3] || cn_get_u64(p + 40) ||
                ((g->flags & AGG_HDRSUM) && (!hdrsum_ok || (g->flags & AGG_PASS2))),
            "group %u: bad flags", i);
        BAD(g->nvar == 0 || g->nvar > f->nvars - vars, "group %u: %zu variables", i, g->nvar);
        BAD((g->raw == 0) != (g->nunits == 0) || (g->stored == 0) != (g->nunits == 0) ||
                g->nunits > g->stored / CZ_FRAME_HDR,
            "group %u: %llu units for %llu raw, %llu stored bytes", i,
            (unsigned long long)g->nunits, (unsigned long long)g->raw,
            (unsigned long long)g->stored);
        BAD(g->stored > AGG_HDR + data_size - off, "group %u runs past the data", i);
        vars += g->nvar;
        off += g->stored;
    }
    BAD(vars != f->nvars, "groups hold %llu variables, the header says %zu",
        (unsigned long long)vars, f->nvars);
    BAD(off != AGG_HDR + data_size, "groups hold %llu bytes, the data section %llu",
        (unsigned long long)(off - AGG_HDR), (unsigned long long)data_size);
    return 0;
}

static int parse_vars(cz_agg_file *f, cn_rd *r, cn_err *err)
{
    char *np = f->names;
    for (size_t i = 0; i < f->nvars; i++) {
        const uint8_t *p = cn_rd_take(r, AGG_VAR_FIXED);
        BAD(!p, "table truncated in variable %zu", i);
        cz_agg_var *v = &f->v[i];
        uint16_t nl = cn_get_u16(p + 8);
        *v = (cz_agg_var){.rank = cn_get_u32(p), .kind = p[4], .type = p[5], .ndims = p[6],
                          .count = cn_get_u64(p + 40), .size = cn_get_u64(p + 48)};
        for (int d = 0; d < CAIRN_MAX_DIMS; d++)
            v->dims[d] = cn_get_u64(p + 16 + 8 * d);
        v->file = cn_get_u32(p + 12);
        BAD(p[7] || cn_get_u16(p + 10), "variable %zu: reserved bytes set", i);
        BAD(f->version == AGG_VERSION_PLAIN && (v->file || v->kind > CN_KIND_FILE),
            "variable %zu: an HDF5 part in a version %u file", i, f->version);
        BAD(nl == 0 || nl > CAIRN_NAME_MAX, "variable %zu: name of %u bytes", i, nl);
        const uint8_t *name = cn_rd_take(r, nl);
        BAD(!name, "table truncated in the name of variable %zu", i);
        BAD(memchr(name, 0, nl) != NULL, "variable %zu: NUL in its name", i);
        memcpy(np, name, nl);
        np[nl] = '\0';
        v->name = np;
        np += nl + 1;
        CN_TRY(cz_agg_var_check(v, CAIRN_ECORRUPT, "aggregated file: variable", err));
    }
    BAD(r->off != r->len, "%zu stray bytes at the end of the table", r->len - r->off);
    return 0;
}

/* Variables against their groups: sizes add up, keys and rank order hold. */
static int check_groups(cz_agg_file *f, uint64_t raw, cn_err *err)
{
    bool aware = cz_agg_is_aware(f->scheme);
    uint64_t total = 0;
    for (uint32_t i = 0; i < f->ngroups; i++) {
        const rgroup *g = &f->g[i];
        uint64_t sum = 0;
        for (size_t j = g->first; j < g->first + g->nvar; j++) {
            const cz_agg_var *v = &f->v[j], *h = &f->v[g->first];
            BAD(__builtin_add_overflow(sum, v->size, &sum), "group %u: sizes overflow", i);
            if (aware) {
                BAD(cz_agg_key_cmp(v->kind, v->name, v->type, h->kind, h->name, g->type) != 0,
                    "group %u: '%s' (rank %u) is not of the group's key", i, v->name, v->rank);
                BAD(j > g->first && cz_agg_member_cmp(v, &f->v[j - 1]) <= 0,
                    "group %u: ranks out of order at '%s' (rank %u)", i, v->name, v->rank);
            } else {
                BAD(j > g->first && v->rank < f->v[j - 1].rank,
                    "ranks out of order at '%s' (rank %u)", v->name, v->rank);
            }
        }
        BAD(sum != g->raw, "group %u: variables hold %llu bytes, the group %llu", i,
            (unsigned long long)sum, (unsigned long long)g->raw);
        if (aware && i > 0) {
            const cz_agg_var *a = &f->v[f->g[i - 1].first], *b = &f->v[g->first];
            BAD(cz_agg_key_cmp(a->kind, a->name, a->type, b->kind, b->name, b->type) >= 0,
                "groups %u and %u out of key order", i - 1, i);
        }
        total += g->raw; /* <= file size x 2^32 / 24, cannot overflow in practice */
        BAD(total < g->raw, "sizes overflow");
    }
    BAD(total != raw, "variables hold %llu bytes, the header says %llu",
        (unsigned long long)total, (unsigned long long)raw);
    size_t *idx = malloc((f->nvars ? f->nvars : 1) * sizeof *idx);
    if (!idx)
        return cn_fail(err, CAIRN_ENOMEM, "no memory to check %zu names", f->nvars);
    for (size_t i = 0; i < f->nvars; i++)
        idx[i] = i;
    int rc = cz_agg_unique(f->v, idx, f->nvars, CAIRN_ECORRUPT, err);
    free(idx);
    return rc;
}

/* Group G's checksum (LAZY: not for a raw group, whose units' frame checksums
 * are verified as they are decoded), then its frames' headers: units counted,
 * inside the group, of the expected codec and type, raw bytes adding up. An
 * AGG_HDRSUM group's checksum is of its frames' headers, and unless LAZY each
 * payload is checked against its header's. */
static int check_data(const cz_agg_file *f, uint32_t i, bool lazy, cn_err *err)
{
    const rgroup *g = &f->g[i];
    const uint8_t *q = f->p + g->off;
    bool pass2 = g->flags & AGG_PASS2, hdrsum = g->flags & AGG_HDRSUM;
    BAD(!hdrsum && !(lazy && g->codec == CZ_RAW && !pass2) &&
            XXH3_64bits(q, (size_t)g->stored) != g->sum,
        "group %u: checksum mismatch in its %llu bytes", i, (unsigned long long)g->stored);
    XXH3_state_t hs;
    XXH3_64bits_reset(&hs);
    uint64_t left = g->stored, units = 0, raw = 0;
    while (left) {
        cz_frame fr;
        size_t used;
        cn_err e = {0};
        if (cz_frame_parse(q, (size_t)left, pass2 ? CZ_ZSTD : g->codec, &fr, &used, &e) != 0)
            return cn_fail(err, CAIRN_ECORRUPT, "aggregated file: group %u, unit %llu: %s", i,
                           (unsigned long long)units, e.msg);
        BAD(fr.type != (pass2 ? CAIRN_BYTE : g->type) ||
                fr.raw_len > f->chunk + (pass2 ? CZ_FRAME_HDR : 0),
            "group %u, unit %llu: type %s, %u raw bytes", i, (unsigned long long)units,
            cn_type_name(fr.type),
            fr.raw_len);
        if (hdrsum)
            XXH3_64bits_update(&hs, q, CZ_FRAME_HDR);
        BAD(hdrsum && !lazy && XXH3_64bits(fr.payload, fr.raw_len) != fr.raw_sum,
            "group %u, unit %llu: checksum mismatch", i, (unsigned long long)units);
        raw += fr.raw_len;
        units++;
        q += used;
        left -= used;
    }
    BAD(units != g->nunits, "group %u: %llu units, its record says %llu", i,
        (unsigned long long)units, (unsigned long long)g->nunits);
    BAD(!pass2 && raw != g->raw, "group %u: frames hold %llu bytes, its variables %llu", i,
        (unsigned long long)raw, (unsigned long long)g->raw);
    BAD(hdrsum && XXH3_64bits_digest(&hs) != g->sum, "group %u: checksum mismatch in its %llu "
        "frame headers", i, (unsigned long long)units);
    return 0;
}

int cz_agg_sum(const uint8_t *p, size_t len, uint64_t *sum, cn_err *err)
{
    if (len < AGG_HDR + AGG_TRAILER || memcmp(p, cz_agg_magic, 8) != 0 ||
        cn_get_u32(p + 8) < AGG_VERSION_SUMS) {
        *sum = XXH3_64bits(p, len); /* not one that leaves anything out */
        return 0;
    }
    cz_agg_file *f;
    CN_TRY(cz_agg_open_flags(p, len, CZ_AGG_LAZY, &f, err));
    XXH3_state_t s;
    XXH3_64bits_reset(&s);
    uint64_t at = 0; /* hashed up to here */
    for (uint32_t i = 0; i < f->ngroups; i++) {
        const rgroup *g = &f->g[i];
        if (!(g->flags & AGG_HDRSUM))
            continue;
        XXH3_64bits_update(&s, p + at, (size_t)(g->off - at));
        for (uint64_t q = g->off, units = 0; q < g->off + g->stored; units++) {
            cz_frame fr; /* parsed by cz_agg_open already */
            size_t used;
            cz_frame_parse(p + q, (size_t)(g->off + g->stored - q), CZ_RAW, &fr, &used, err);
            XXH3_64bits_update(&s, p + q, CZ_FRAME_HDR);
            if (XXH3_64bits(fr.payload, fr.raw_len) != fr.raw_sum) {
                cz_agg_close(f);
                return cn_fail(err, CAIRN_ECORRUPT, "aggregated file: group %u, unit %llu: "
                               "checksum mismatch", i, (unsigned long long)units);
            }
            q += used;
        }
        at = g->off + g->stored;
    }
    XXH3_64bits_update(&s, p + at, len - (size_t)at);
    *sum = XXH3_64bits_digest(&s);
    cz_agg_close(f);
    return 0;
}

int cz_agg_open(const uint8_t *p, size_t len, cz_agg_file **out, cn_err *err)
{
    return cz_agg_open_flags(p, len, 0, out, err);
}

int cz_agg_open_flags(const uint8_t *p, size_t len, unsigned flags, cz_agg_file **out,
                      cn_err *err)
{
    *out = NULL;
    CN_FAIL_IF(flags & ~CZ_AGG_LAZY, err, CAIRN_EINVAL, "cz_agg_open: flags %#x", flags);
    CN_FAIL_IF(!p && len, err, CAIRN_EINVAL, "cz_agg_open: no buffer");
    BAD(len < AGG_HDR + AGG_TRAILER, "%zu bytes, shorter than header and trailer", len);
    cz_agg_file *f = calloc(1, sizeof *f);
    if (!f)
        return cn_fail(err, CAIRN_ENOMEM, "no memory for an aggregated file");
    f->p = p;
    f->len = len;
    uint64_t raw = 0, data_size = 0, tsize = 0, tsum = 0;
    int rc = parse_ends(f, &raw, &data_size, &tsize, &tsum, err);
    const uint8_t *table = p + AGG_HDR + (size_t)(rc ? 0 : data_size);
    if (!rc && cn_hash(table, (size_t)tsize) != tsum)
        rc = cn_fail(err, CAIRN_ECORRUPT, "aggregated file: table checksum mismatch");
    if (!rc) {
        f->g = calloc(f->ngroups ? f->ngroups : 1, sizeof *f->g);
        f->v = calloc(f->nvars ? f->nvars : 1, sizeof *f->v);
        f->names = malloc((size_t)tsize + 1);
        if (!f->g || !f->v || !f->names)
            rc = cn_fail(err, CAIRN_ENOMEM, "no memory for a table of %zu variables", f->nvars);
    }
    cn_rd r = {.p = table, .len = (size_t)tsize};
    rc = rc ? rc : parse_groups(f, &r, data_size, err);
    rc = rc ? rc : parse_vars(f, &r, err);
    rc = rc ? rc : check_groups(f, raw, err);
    for (uint32_t i = 0; !rc && i < f->ngroups; i++)
        rc = check_data(f, i, flags & CZ_AGG_LAZY, err);
    if (rc) {
        cz_agg_close(f);
        return rc;
    }
    *out = f;
    return 0;
}

size_t cz_agg_count(const cz_agg_file *f) { return f ? f->nvars : 0; }

int cz_agg_scheme_of(const cz_agg_file *f) { return f ? f->scheme : -1; }

int cz_agg_info(const cz_agg_file *f, size_t i, cz_agg_var *v)
{
    if (!f || i >= f->nvars || !v)
        return CAIRN_EINVAL;
    *v = f->v[i];
    v->data = NULL;
    return 0;
}

void cz_agg_close(cz_agg_file *f)
{
    if (!f)
        return;
    free(f->g);
    free(f->v);
    free(f->names);
    free(f);
}

/* ---- decoding ------------------------------------------------------------ */

typedef struct reader {
    const cz_agg_file *f;
    const rgroup *g;
    cz_agg_member *m;
    cz_agg_walk wk;
    uint8_t **buf;         /* per variable of the group, allocated on its first byte */
    uint64_t *fill;
    size_t next;           /* next variable (of the group) to deliver */
    bool *wanted;          /* per variable of the group: delivered (else only passed over) */
    bool give;             /* CZ_AGG_GIVE: delivered data becomes the callback's */
    bool (*want)(void *arg, const cz_agg_var *v); /* NULL: every variable */
    int (*cb)(void *arg, const cz_agg_var *v);
    void *arg;
} reader;

/* The next K bytes of the group's stream, from SRC, to the variables that
 * are wanted; passed over for the others, and all of them with SRC NULL. */

/* A variable's buffer (the callback's with CZ_AGG_GIVE: freed with free()).
 * A large one asks for transparent huge pages: it is written once, whole,
 * and a fault per 4 KiB page (with its zeroing) costs about what the copy
 * does. */
static uint8_t *var_alloc(uint64_t size)
{
    uint8_t *p = malloc((size_t)size);
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    if (p && size >= 4 * huge) {
        uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1);
        uintptr_t hi = ((uintptr_t)p + size) & ~(huge - 1);
        if (hi > lo)
            madvise((void *)lo, hi - lo, MADV_HUGEPAGE); /* a hint */
    }
#endif
    return p;
}

static int scatter(reader *rd, const uint8_t *src, size_t k, cn_err *err)
{
    while (k) {
        size_t mi;
        uint64_t piece = cz_agg_walk_piece(&rd->wk, &mi);
        BAD(!piece, "group decodes to more bytes than its variables hold");
        size_t take = piece < k ? (size_t)piece : k;
        cz_agg_walk_take(&rd->wk, take);
        k -= take;
        cz_agg_member *m = &rd->m[mi];
        while (take) {
            size_t j = m->first + m->cur - rd->g->first;
            uint64_t size = rd->f->v[rd->g->first + j].size, left = size - m->cur_off;
            if (!left) {
                m->cur++;
                m->cur_off = 0;
                continue;
            }
            bool copy = src && rd->wanted[j];
            if (copy && !rd->buf[j] && !(rd->buf[j] = var_alloc(size)))
                return cn_fail(err, CAIRN_ENOMEM, "no memory for a variable of %llu bytes",
                               (unsigned long long)size);
            size_t c = left < take ? (size_t)left : take;
            if (copy)
                memcpy(rd->buf[j] + m->cur_off, src, c);
            m->cur_off += c;
            rd->fill[j] += c;
            if (src)
                src += c;
            take -= c;
        }
    }
    return 0;
}

static int deliver(reader *rd)
{
    static const uint8_t empty[1];
    while (rd->next < rd->g->nvar &&
           rd->fill[rd->next] == rd->f->v[rd->g->first + rd->next].size) {
        cz_agg_var v = rd->f->v[rd->g->first + rd->next];
        if (rd->give && rd->wanted[rd->next] && !rd->buf[rd->next] &&
            !(rd->buf[rd->next] = malloc(1)))
            return CAIRN_ENOMEM;
        v.data = rd->buf[rd->next] ? rd->buf[rd->next] : empty;
        int rc = rd->wanted[rd->next] ? rd->cb(rd->arg, &v) : 0;
        if (rd->give && rd->wanted[rd->next])
            rd->buf[rd->next] = NULL; /* the callback's now */
        free(rd->buf[rd->next]);
        rd->buf[rd->next++] = NULL;
        if (rc)
            return rc;
    }
    return 0;
}

/* Would the next K bytes of the group's stream reach a wanted variable? The
 * walk is tried on copies: RD is left as it was. */
static bool touches(const reader *rd, size_t nm, uint64_t k)
{
    cz_agg_walk wk = rd->wk;
    cz_agg_member m[nm ? nm : 1];
    memcpy(m, rd->m, nm * sizeof *m);
    wk.m = m;
    while (k) {
        size_t mi;
        uint64_t piece = cz_agg_walk_piece(&wk, &mi);
        if (!piece)
            return false;
        uint64_t take = piece < k ? piece : k;
        cz_agg_walk_take(&wk, take);
        k -= take;
        while (take) {
            size_t j = m[mi].first + m[mi].cur - rd->g->first;
            uint64_t left = rd->f->v[rd->g->first + j].size - m[mi].cur_off;
            if (!left) {
                m[mi].cur++;
                m[mi].cur_off = 0;
                continue;
            }
            if (rd->wanted[j])
                return true;
            uint64_t c = left < take ? left : take;
            m[mi].cur_off += c;
            take -= c;
        }
    }
    return false;
}

/* Decode group RD->g unit by unit into IBUF (OBUF for the second pass). A
 * unit that holds nothing wanted is not decoded (the group's checksum, over
 * its stored bytes, was verified by cz_agg_open): with one frame per unit its
 * raw length is in its header; second-pass units are always decoded. */
static int read_group(reader *rd, uint8_t *obuf, uint8_t *ibuf, uint8_t *scratch, cn_err *err)
{
    const rgroup *g = rd->g;
    size_t nm = 0;
    bool per_var = cz_agg_is_aware(rd->f->scheme);
    for (size_t j = g->first; j < g->first + g->nvar; j++) {
        if (per_var || nm == 0 || rd->f->v[j - 1].rank != rd->f->v[j].rank)
            rd->m[nm++] = (cz_agg_member){.first = j};
        rd->m[nm - 1].nvar++;
        rd->m[nm - 1].size += rd->f->v[j].size;
    }
    cz_agg_walk_init(&rd->wk, rd->m, nm, cz_agg_is_block(rd->f->scheme) ? rd->f->block : 0);
    bool any = false;
    for (size_t j = 0; j < g->nvar; j++) {
        cz_agg_var v = rd->f->v[g->first + j];
        any |= rd->wanted[j] = !rd->want || rd->want(rd->arg, &v);
    }
    if (!any)
        return 0;
    int rc = deliver(rd); /* the callback's nonzero return, as is */
    if (rc)
        return rc;
    const uint8_t *q = rd->f->p + g->off;
    uint64_t left = g->stored;
    bool pass2 = g->flags & AGG_PASS2;
    while (left) {
        cz_frame fr, in;
        size_t used, iused;
        CN_TRY(cz_frame_parse(q, (size_t)left, pass2 ? CZ_ZSTD : g->codec, &fr, &used, err));
        BAD(fr.raw_len > rd->f->chunk + (pass2 ? CZ_FRAME_HDR : 0), "frame of %u raw bytes",
            fr.raw_len);
        if (pass2) {
            CN_TRY(cz_frame_decode(&fr, obuf, scratch, err));
            CN_TRY(cz_frame_parse(obuf, fr.raw_len, g->codec, &in, &iused, err));
            BAD(iused != fr.raw_len || in.type != g->type || in.raw_len > rd->f->chunk,
                "second-pass frame does not hold exactly one frame of the group");
        } else {
            in = fr;
        }
        if (!pass2 && rd->want && !touches(rd, nm, in.raw_len)) {
            CN_TRY(scatter(rd, NULL, in.raw_len, err));
        } else {
            CN_TRY(cz_frame_decode(&in, ibuf, scratch, err));
            CN_TRY(scatter(rd, ibuf, in.raw_len, err));
        }
        if ((rc = deliver(rd)) != 0)
            return rc;
        q += used;
        left -= used;
    }
    size_t mi;
    BAD(cz_agg_walk_piece(&rd->wk, &mi) != 0 || rd->next != g->nvar,
        "group decodes to fewer bytes than its variables hold");
    return 0;
}

int cz_agg_read(const cz_agg_file *f, int (*cb)(void *arg, const cz_agg_var *v), void *arg,
                cn_err *err)
{
    return cz_agg_read_some(f, NULL, cb, arg, 0, err);
}

int cz_agg_read_some(const cz_agg_file *f, bool (*want)(void *arg, const cz_agg_var *v),
                     int (*cb)(void *arg, const cz_agg_var *v), void *arg, unsigned flags,
                     cn_err *err)
{
    CN_FAIL_IF(!f || !cb || (flags & ~CZ_AGG_GIVE), err, CAIRN_EINVAL,
               "cz_agg_read: missing argument or unknown flags");
    size_t most = 0;
    for (uint32_t i = 0; i < f->ngroups; i++)
        if (f->g[i].nvar > most)
            most = f->g[i].nvar;
    reader rd = {.f = f, .want = want, .give = flags & CZ_AGG_GIVE, .cb = cb, .arg = arg};
    rd.wanted = malloc((most ? most : 1) * sizeof *rd.wanted);
    rd.m = malloc((most ? most : 1) * sizeof *rd.m);
    rd.buf = calloc(most ? most : 1, sizeof *rd.buf);
    rd.fill = malloc((most ? most : 1) * sizeof *rd.fill);
    uint8_t *obuf = malloc(f->chunk + CZ_FRAME_HDR), *ibuf = malloc(f->chunk),
            *scratch = malloc(f->chunk + CZ_FRAME_HDR);
    int rc = 0;
    if (!rd.m || !rd.buf || !rd.fill || !rd.wanted || !obuf || !ibuf || !scratch)
        rc = cn_fail(err, CAIRN_ENOMEM, "no memory to read an aggregated file");
    for (uint32_t i = 0; !rc && i < f->ngroups; i++) {
        rd.g = &f->g[i];
        rd.next = 0;
        memset(rd.fill, 0, rd.g->nvar * sizeof *rd.fill);
        rc = read_group(&rd, obuf, ibuf, scratch, err);
        for (size_t j = 0; j < rd.g->nvar; j++) {
            free(rd.buf[j]);
            rd.buf[j] = NULL;
        }
    }
    free(rd.m);
    free(rd.wanted);
    free(rd.buf);
    free(rd.fill);
    free(obuf);
    free(ibuf);
    free(scratch);
    return rc;
}
