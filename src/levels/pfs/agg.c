/*
 * agg.c - N->M aggregation, the writer: the (decoded) variables of a group of
 * ranks merged into one file for level 4, after mcrEngine (Islam et al.,
 * "mcrEngine: a scalable checkpointing system using data-aware aggregation
 * and compression"), sections 3 and 6.
 *
 * Schemes. The file's bytes come in GROUPS, each compressed on its own:
 *   agnostic        one group: rank after rank, each rank's variables in the
 *                   order given; a byte codec (zstd), as the paper's gzip.
 *   agnostic-block  one group: the ranks' streams interleaved in blocks of
 *                   opts.block bytes (block 0 of every rank, then block 1...).
 *   aware           one group per similarity key (kind, name, type): the
 *                   variables of that key from every rank, in rank order
 *                   (then file order, for the parts of split HDF5 files),
 *                   compressed by a codec for their type.
 *   aware-block     aware groups with their variables interleaved in blocks.
 *   auto            all four run over a sample (a prefix of every variable,
 *                   about 1/16 of the data, 1..16 MiB); the smallest wins.
 *                   With a time model (opts.bps) only when the trials can
 *                   pay for themselves; else aware (agg_auto.c).
 * A group's stream is cut into chunks of at most AGG_CHUNK raw bytes; each
 * chunk becomes one frame (compress.h) of the group's codec. With opts.bps
 * (the file's write bandwidth) the codec, raw included, is the one of least
 * modelled time on the group's first chunk (choose.c's model: compression
 * CPU on opts.threads against the stored bytes' write; raw unless a codec
 * saves 5%), the second pass only when the write time it saves exceeds its
 * CPU time. Without opts.bps, the codec is picked on the first AGG_SAMPLE
 * bytes of the group among the candidates for its type (float and double:
 * shuffle-zstd, zstd, fpzip; wider integers: shuffle-zstd, zstd; bytes and the
 * agnostic schemes: zstd), the smallest frame winning (the paper's adaptive
 * per-type choice, section 7.4). A group of one variable keeps the codec
 * agg_auto.c's sampling picked for it (agg_modelled). The second pass
 * (the paper's double compression) is tried on the first chunk too: if zstd
 * over the inner frame makes it smaller, the group takes it (flag PASS2) and
 * every unit becomes a zstd frame (type byte) holding exactly one inner
 * frame; a unit where zstd does not pay is a raw frame.
 *
 * Layout (every integer little-endian; offsets implicit, checked on open):
 *   header, 64 bytes:
 *     0 "CAIRNAGG"  8 u32 version (1; 2 when the file holds the parts of
 *       split HDF5 files, kinds h5map/h5skel/h5data; 3 when a time model
 *       picked the codecs: a group may be raw; 4 when a time model picked
 *       them or all are raw (opts.bps, opts.raw): a raw group has flag
 *       HDRSUM; all are read)  12 u8 scheme (0..3), u8 0, u16 0
 *    16 u32 block (block schemes: the unit, a multiple of 8; else 0)
 *    20 u32 nvars  24 u32 ngroups  28 u32 chunk (largest raw bytes of a frame)
 *    32 u64 raw (all variables' bytes)  40 u64 0  48 u64 0
 *    56 u64 XXH3-64 of bytes 0..55
 *   data: every group's units, group after group (group g at 64 + the
 *     stored bytes of groups before it)
 *   table: ngroups group records, then nvars variable records, in table
 *     order (group by group; within a group member by member: aware by rank,
 *     agnostic rank after rank, variables in the order given):
 *     group, 48 bytes: 0 u8 codec (0: raw frames, version 3 on), u8 type (byte for agnostic), u8 flags
 *       (PASS2, HDRSUM), u8 0, 4 u32 nvars, 8 u64 raw, 16 u64 stored, 24 u64 units,
 *       32 u64 XXH3-64 of the group's stored bytes (HDRSUM: of its frames' headers), 40 u64 0
 *     variable, 56 bytes + name: 0 u32 rank, 4 u8 kind, u8 type, u8 ndims,
 *       u8 0, 8 u16 name length, u16 0, 12 u32 file (version 2: which routed
 *       file of the rank an HDF5 part belongs to; else 0), 16 u64 dims[3],
 *       40 u64 count, 48 u64 size, 56 name (no NUL; an h5data name is the
 *       dataset's path and may hold '/')
 *   trailer, 64 bytes:
 *     0 "CAIRNEND"  8 u32 version  12 u32 nvars  16 u32 ngroups  20 u32 0
 *    24 u64 data bytes  32 u64 table bytes  40 u64 XXH3-64 of the table
 *    48 u64 file size  56 u64 XXH3-64 of bytes 0..55
 * Every byte is under a checksum (header, each group's data, table,
 * trailer), and every frame carries the XXH3-64 of its raw bytes (HDRSUM:
 * a raw payload only that, hashed once; cz_agg_sum leaves it out too).
 *
 * A raw group's first unit (whose bytes the codec was picked on) is written
 * from that chunk as it is, the others from the variables' memory, without
 * a copy (raw_unit: units of AGG_RAW_UNIT, from cache after their checksum); a
 * variable whose block checksums the caller knows (cz_agg_var.sums: a flush
 * lending a verified rank file) goes a block a unit, framed with them.
 * A variable lent as level 1's frames (cz_agg_var.frames, agg_lend.c) is
 * written as those frames when its whole group is, else decoded first.
 * Pipeline: a compressed unit goes to a thread of its own (agg_pipe.c) that
 * writes it while the next chunk is compressed into a second buffer set;
 * the sink is called by one thread at a time, in file order.
 * Memory: one chunk and two sets of its frames (about 6 x AGG_CHUNK), the
 * table until the end. The caller's variables are only read, during the call.
 */
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef agg_wgroup wgroup;
typedef agg_writer writer;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* LEN bytes at P to the sink, after every unit posted before. */
static int sink_now(writer *w, const void *p, size_t len, cn_err *err)
{
    if (!len)
        return 0;
    if (w->pipe)
        CN_TRY(cz_agg_pipe_drain(w->pipe, err));
    int rc = w->sink(w->arg, p, len, err);
    if (rc) {
        rc = rc < 0 ? rc : CAIRN_EIO;
        if (err && !err->msg[0])
            cn_fail(err, rc, "aggregated file: the sink refused %zu bytes", len);
        return rc;
    }
    w->stored += len;
    return 0;
}

/* Bytes of the file written here, in order (raw frames too: the pipe costs
 * more than it overlaps); COVERED: an AGG_HDRSUM frame's payload. */
static int put_now(writer *w, const void *p, size_t len, bool covered, cn_err *err)
{
    if (!covered)
        XXH3_64bits_update(w->fsum, p, len);
    return sink_now(w, p, len, err);
}

/* The header, table and trailer (agg_table.c). */
int agg_emit(writer *w, const void *p, size_t len, cn_err *err)
{
    return put_now(w, p, len, false, err);
}

/* A unit (in w->inner or w->outer) to the pipe's thread, which writes it
 * while the next chunk is gathered and compressed into the other buffer set
 * (the unit untouched until the next post); without a pipe, written here. */
static int emit_unit(writer *w, const uint8_t *p, size_t len, cn_err *err)
{
    if (!w->pipe)
        return put_now(w, p, len, false, err);
    XXH3_64bits_update(w->fsum, p, len);
    CN_TRY(cz_agg_pipe_post(w->pipe, p, len, err));
    w->stored += len;
    w->cur ^= 1;
    w->inner = w->inners[w->cur];
    w->outer = w->outers[w->cur];
    return 0;
}

/* ---- plan: table order and groups -------------------------------------- */

static int cmp_key_rank(const void *ctx, size_t a, size_t b)
{
    const cz_agg_var *x = (const cz_agg_var *)ctx + a, *y = (const cz_agg_var *)ctx + b;
    int c = cz_agg_key_cmp(x->kind, x->name, x->type, y->kind, y->name, y->type);
    return c ? c : cz_agg_member_cmp(x, y);
}

static int cmp_rank(const void *ctx, size_t a, size_t b)
{
    const cz_agg_var *x = (const cz_agg_var *)ctx + a, *y = (const cz_agg_var *)ctx + b;
    return x->rank == y->rank ? 0 : x->rank < y->rank ? -1 : 1;
}

static int plan(writer *w, cn_err *err)
{
    for (size_t i = 0; i < w->n; i++)
        w->order[i] = i;
    bool aware = cz_agg_is_aware(w->scheme);
    if (cz_agg_sort(w->order, w->n, aware ? cmp_key_rank : cmp_rank, w->v) != 0)
        return cn_fail(err, CAIRN_ENOMEM, "no memory to order %zu variables", w->n);
    w->ngroups = 0;
    for (size_t i = 0; i < w->n; i++) {
        const cz_agg_var *x = &w->v[w->order[i]];
        bool fresh = i == 0;
        if (!fresh && aware) {
            const cz_agg_var *p = &w->v[w->order[i - 1]];
            fresh = cz_agg_key_cmp(p->kind, p->name, p->type, x->kind, x->name, x->type) != 0;
        }
        if (fresh)
            w->g[w->ngroups++] = (wgroup){.first = i, .type = aware ? x->type : CAIRN_BYTE};
        wgroup *g = &w->g[w->ngroups - 1];
        g->nvar++;
        g->raw += x->size; /* the caller checked the total fits */
    }
    return 0;
}

/* Members of group G (see cz_agg_member) into w->m; returns how many. */
static size_t members(writer *w, const wgroup *g)
{
    size_t nm = 0;
    bool per_var = cz_agg_is_aware(w->scheme);
    for (size_t i = g->first; i < g->first + g->nvar; i++) {
        const cz_agg_var *x = &w->v[w->order[i]];
        if (per_var || nm == 0 || w->v[w->order[i - 1]].rank != x->rank)
            w->m[nm++] = (cz_agg_member){.first = i};
        w->m[nm - 1].nvar++;
        w->m[nm - 1].size += x->size;
    }
    return nm;
}

/* ---- one group ---------------------------------------------------------- */

/* Bytes [P, P + LEN) of a variable's data, there to be read (opts.ready). */
int agg_ready(const writer *w, const void *p, uint64_t len, cn_err *err)
{
    int rc = w->ready && len ? w->ready(w->ready_arg, p, (size_t)len) : 0;
    if (rc && err && !err->msg[0])
        cn_fail(err, rc < 0 ? rc : CAIRN_EIO, "aggregation: the data did not arrive");
    return rc ? (rc < 0 ? rc : CAIRN_EIO) : 0;
}

/* The next piece (at most K > 0 bytes, within one variable) of member M's
 * stream: *P and *T, its data arrived (ready); M moves past it. */
/* The variable member M's stream is in (exhausted ones passed); M must have
 * bytes left. */
static const cz_agg_var *member_var(const writer *w, cz_agg_member *m)
{
    const cz_agg_var *x = &w->v[w->order[m->first + m->cur]];
    while (x->size == m->cur_off) {
        m->cur++;
        m->cur_off = 0;
        x = &w->v[w->order[m->first + m->cur]];
    }
    return x;
}

static int next_piece(const writer *w, cz_agg_member *m, uint64_t k, const uint8_t **p,
                      uint64_t *t, cn_err *err)
{
    const cz_agg_var *x = member_var(w, m);
    uint64_t left = x->size - m->cur_off;
    *t = left < k ? left : k;
    *p = (const uint8_t *)x->data + m->cur_off;
    CN_TRY(agg_ready(w, *p, *t, err));
    m->cur_off += *t;
    return 0;
}

/* The next K bytes of member M's stream as pieces of the variables' memory,
 * appended to w->spans. */
static int spans_of(writer *w, cz_agg_member *m, uint64_t k, cn_err *err)
{
    for (uint64_t t; k; k -= t) {
        const uint8_t *p;
        CN_TRY(next_piece(w, m, k, &p, &t, err));
        cz_span *last = w->nspans ? &w->spans[w->nspans - 1] : NULL;
        if (last && (const uint8_t *)last->ptr + last->len == p) {
            last->len += t;
        } else {
            if (w->nspans == w->spans_cap) {
                size_t cap = w->spans_cap ? 2 * w->spans_cap : 64;
                cz_span *s = realloc(w->spans, cap * sizeof *s);
                if (!s)
                    return cn_fail(err, CAIRN_ENOMEM, "no memory for %zu pieces", cap);
                w->spans = s, w->spans_cap = cap;
            }
            w->spans[w->nspans++] = (cz_span){p, t};
        }
    }
    return 0;
}

/* The chunk in w->spans as one run of bytes: its only piece where it is (no
 * copy: a large variable's chunks), else its pieces gathered into w->raw. */
static const uint8_t *chunk_bytes(writer *w)
{
    if (w->nspans == 1)
        return w->spans[0].ptr;
    size_t off = 0;
    for (size_t i = 0; i < w->nspans; off += (size_t)w->spans[i++].len)
        memcpy(w->raw + off, w->spans[i].ptr, (size_t)w->spans[i].len);
    return w->raw;
}

/* A raw frame of FILL bytes in the pieces SP[0..N-1] of group G, written
 * here: its header (checksum KNOWN, or hashed now), then the pieces, from
 * cache after their checksum. HS: the group's checksum so far. */
static int raw_frame(writer *w, wgroup *g, XXH3_state_t *hs, const cz_span *sp, size_t n,
                     size_t fill, const uint64_t *known, cn_err *err)
{
    uint64_t sum = known ? *known : 0;
    if (!known) {
        XXH3_state_t fs;
        XXH3_64bits_reset(&fs);
        for (size_t i = 0; i < n; i++)
            XXH3_64bits_update(&fs, sp[i].ptr, (size_t)sp[i].len);
        sum = XXH3_64bits_digest(&fs);
    }
    cz_frame_raw_header(w->hdr, g->type, (uint32_t)fill, sum);
    XXH3_64bits_update(hs, w->hdr, CZ_FRAME_HDR);
    CN_TRY(put_now(w, w->hdr, CZ_FRAME_HDR, false, err));
    bool covered = g->flags & AGG_HDRSUM; /* else hashed into the group's and the file's */
    for (size_t i = 0; i < n; i++) {
        if (!covered)
            XXH3_64bits_update(hs, sp[i].ptr, (size_t)sp[i].len);
        CN_TRY(put_now(w, sp[i].ptr, (size_t)sp[i].len, covered, err));
    }
    g->stored += CZ_FRAME_HDR + fill;
    g->nunits++;
    return 0;
}

/* The next chunk of raw group G written straight from the variables' memory,
 * no copy: the frame header (checksum over the pieces), then the pieces.
 * A variable with known block checksums (cz_agg_var.sums) goes a block a
 * unit, its units starting on its blocks, each framed with its block's
 * checksum (not hashed again), unless the scheme interleaves blocks. *FILL: its raw bytes (0: the stream is over). */
static int raw_unit(writer *w, wgroup *g, cz_agg_walk *wk, XXH3_state_t *hs, size_t *fill,
                    cn_err *err)
{
    w->nspans = 0;
    *fill = 0;
    const uint64_t *known = NULL; /* the unit is one block whose checksum this is */
    size_t most = w->chunk < AGG_RAW_UNIT ? w->chunk : AGG_RAW_UNIT;
    while (*fill < most && !known) {
        size_t mi;
        uint64_t piece = cz_agg_walk_piece(wk, &mi);
        if (!piece)
            break;
        uint64_t take = piece < most - *fill ? piece : most - *fill;
        const cz_agg_var *x = member_var(w, &w->m[mi]);
        /* Not in the block schemes: their pieces (opts.block) are smaller than a
         * block, and a unit per piece would only add frames. */
        uint64_t bs = x->sums && !w->block ? x->sum_block : 0, off = w->m[mi].cur_off;
        if (bs && off % bs == 0) {
            if (*fill)
                break; /* its block starts a unit of its own */
            uint64_t len = x->size - off < bs ? x->size - off : bs;
            if (len <= take) {
                take = len;
                known = &x->sums[off / bs];
            }
        } else if (bs && bs - off % bs < take) {
            take = bs - off % bs; /* up to its next block: the unit after starts on one */
        }
        CN_TRY(spans_of(w, &w->m[mi], take, err));
        cz_agg_walk_take(wk, take);
        *fill += (size_t)take;
    }
    return *fill ? raw_frame(w, g, hs, w->spans, w->nspans, *fill, known, err) : 0;
}

static int candidates(const writer *w, uint8_t type, uint8_t out[3])
{
    if (!cz_agg_is_aware(w->scheme) || cairn_type_size((cairn_type)type) == 1) {
        out[0] = CZ_ZSTD;
        return 1;
    }
    out[0] = CZ_SHUF_ZSTD;
    out[1] = CZ_ZSTD;
    if (type != CAIRN_FLOAT && type != CAIRN_DOUBLE)
        return 2;
    out[2] = CZ_FPZIP;
    return 3;
}

/* With a time model (w->bps): the codec, raw included, of least modelled time
 * (choose.c: compression CPU against the stored bytes' write, ratios sampled
 * at fixed places of the chunk; no clock): a lone variable's by agg_modelled
 * (sampling_pays's pick, or the memo's, or modelled there and kept). Without: the candidate whose frame of the
 * first SAMPLE bytes of the chunk is smallest. */
static uint8_t pick_codec(writer *w, const wgroup *g, const uint8_t *src, size_t fill)
{
    uint8_t type = g->type;
    int known = agg_modelled(w, g, src, fill); /* a lone variable's */
    if (known >= 0)
        return (uint8_t)known;
    if (w->bps > 0) {
        cz_env env = agg_model_env(w);
        cz_model m;
        cz_model_lossless(src, fill, type, NULL, &env, &m);
        w->modelled++;
        return (uint8_t)cz_pick(&m);
    }
    uint8_t cand[3];
    int ncand = candidates(w, type, cand);
    size_t n = fill < AGG_SAMPLE ? fill : AGG_SAMPLE, best = 0;
    uint8_t pick = cand[0];
    for (int c = 0; ncand > 1 && c < ncand; c++) {
        size_t len = cz_frame_encode(cand[c], type, w->level, src, n, w->trial, w->scratch);
        if (c == 0 || len < best) {
            best = len;
            pick = cand[c];
        }
    }
    return pick;
}

static int write_group(writer *w, wgroup *g, cn_err *err)
{
    if (w->v[w->order[g->first]].frames) /* lent whole (agg_lend_plan) */
        return agg_write_lent(w, g, err);
    size_t nm = members(w, g);
    cz_agg_walk wk;
    cz_agg_walk_init(&wk, w->m, nm, w->block);
    XXH3_state_t hs;
    XXH3_64bits_reset(&hs);
    uint8_t cand[3];
    candidates(w, g->type, cand);
    g->codec = w->raw_only ? CZ_RAW : cand[0]; /* an empty group keeps it */
    if (w->raw_only) /* no codec to pick: every unit straight from memory */
        g->flags |= AGG_HDRSUM;
    for (bool first = !w->raw_only;; first = false) {
        size_t fill = 0;
        if (!first && g->codec == CZ_RAW && !(g->flags & AGG_PASS2)) {
            CN_TRY(raw_unit(w, g, &wk, &hs, &fill, err));
            if (!fill)
                break;
            continue;
        }
        w->nspans = 0;
        while (fill < w->chunk) {
            size_t mi;
            uint64_t piece = cz_agg_walk_piece(&wk, &mi);
            if (!piece)
                break;
            uint64_t take = piece < w->chunk - fill ? piece : w->chunk - fill;
            CN_TRY(spans_of(w, &w->m[mi], take, err));
            cz_agg_walk_take(&wk, take);
            fill += (size_t)take;
        }
        if (!fill)
            break;
        const uint8_t *src = chunk_bytes(w);
        if (first)
            g->codec = pick_codec(w, g, src, fill);
        /* A raw group's payloads are covered by their frames' checksums alone. */
        if (first && g->codec == CZ_RAW && w->version >= AGG_VERSION_SUMS)
            g->flags |= AGG_HDRSUM;
        if (g->codec == CZ_RAW) { /* the gathered bytes as they are, not copied into a frame */
            const cz_span sp = {src, fill};
            CN_TRY(raw_frame(w, g, &hs, &sp, 1, fill, NULL, err));
            continue;
        }
        size_t ilen = cz_frame_encode(g->codec, g->type, w->level, src, fill, w->inner,
                                      w->scratch);
        if (ilen == 0)
            return cn_fail(err, CAIRN_EINVAL, "aggregated file: cannot frame %zu bytes", fill);
        const uint8_t *unit = w->inner;
        size_t ulen = ilen;
        if ((first && g->codec != CZ_RAW) || (g->flags & AGG_PASS2)) {
            size_t olen = cz_frame_encode(CZ_ZSTD, CAIRN_BYTE, w->level, w->inner, ilen,
                                          w->outer, w->scratch);
            if (first && olen < ilen && agg_pass2_pays(w, ilen, olen))
                g->flags |= AGG_PASS2;
            if (g->flags & AGG_PASS2) {
                unit = w->outer;
                ulen = olen;
            }
        }
        XXH3_64bits_update(&hs, unit, ulen);
        CN_TRY(emit_unit(w, unit, ulen, err));
        g->stored += ulen;
        g->nunits++;
    }
    g->sum = XXH3_64bits_digest(&hs);
    if (g->flags & AGG_PASS2)
        w->npass2++;
    return 0;
}

/* Write V[0..N-1] (checked by the caller) by SCHEME; RAW is their total. */
int agg_write_scheme(writer *w, uint64_t raw, cn_err *err)
{
    uint64_t most = 0;
    w->stored = 0;
    w->npass2 = 0;
    CN_TRY(plan(w, err));
    CN_TRY(agg_lend_plan(w, err));
    for (uint32_t i = 0; i < w->ngroups; i++)
        if (w->g[i].raw > most)
            most = w->g[i].raw;
    most = (most + 7) & ~(uint64_t)7;
    w->chunk = most < AGG_CHUNK ? (most > AGG_MIN_CHUNK ? (uint32_t)most : AGG_MIN_CHUNK)
                                : AGG_CHUNK;
    size_t cap_in = cz_frame_bound(w->chunk), cap_out = cz_frame_bound(w->chunk + CZ_FRAME_HDR);
    w->raw = malloc(w->chunk);
    w->trial = malloc(cap_in);
    w->scratch = malloc(w->chunk + CZ_FRAME_HDR);
    int sets = w->pipe ? 2 : 1;
    for (int i = 0; i < 2; i++) {
        w->inners[i] = i < sets ? malloc(cap_in) : w->inners[0];
        w->outers[i] = i < sets ? malloc(cap_out) : w->outers[0];
    }
    w->cur = 0;
    w->inner = w->inners[0];
    w->outer = w->outers[0];
    int rc = 0;
    if (!w->raw || !w->inners[0] || !w->inners[1] || !w->trial || !w->outers[0] ||
        !w->outers[1] || !w->scratch)
        rc = cn_fail(err, CAIRN_ENOMEM, "no memory for aggregation buffers of %u bytes",
                     w->chunk);
    uint8_t h[AGG_HDR];
    if (!rc) {
        agg_put_header(w, raw, h);
        rc = agg_emit(w, h, AGG_HDR, err);
    }
    for (uint32_t i = 0; !rc && i < w->ngroups; i++)
        rc = write_group(w, &w->g[i], err);
    if (!rc)
        rc = agg_write_table(w, w->stored - AGG_HDR, err);
    if (w->pipe) { /* no unit in flight when the buffers go */
        int drained = cz_agg_pipe_drain(w->pipe, rc ? NULL : err);
        rc = rc ? rc : drained;
    }
    free(w->raw);
    free(w->trial);
    free(w->scratch);
    for (int i = 0; i < sets; i++) {
        free(w->inners[i]);
        free(w->outers[i]);
    }
    return rc;
}

/* ---- the entry point ------------------------------------------------------ */

int cz_agg_write(const cz_agg_var *v, size_t n, const cz_agg_opts *o, cz_agg_sink sink,
                 void *arg, cz_agg_stats *st, cn_err *err)
{
    double t0 = now_s();
    CN_FAIL_IF(!o || !sink || (n && !v), err, CAIRN_EINVAL, "cz_agg_write: missing argument");
    CN_FAIL_IF(o->scheme < CZ_AGG_AGNOSTIC || o->scheme > CZ_AGG_AUTO, err, CAIRN_EINVAL,
               "aggregation scheme %d is unknown", o->scheme);
    CN_FAIL_IF(n > AGG_MAX_VARS, err, CAIRN_EINVAL, "%zu variables: at most %u in one file", n,
               AGG_MAX_VARS);
    uint32_t block = o->block ? o->block : AGG_DEFAULT_BLOCK;
    CN_FAIL_IF(block < 8 || block > AGG_MAX_BLOCK, err, CAIRN_EINVAL,
               "aggregation block of %u bytes is not 8..%u", block, AGG_MAX_BLOCK);
    block &= ~7u;
    uint64_t raw = 0;
    for (size_t i = 0; i < n; i++) {
        CN_TRY(cz_agg_var_check(&v[i], CAIRN_EINVAL, "aggregation", err));
        CN_FAIL_IF(v[i].size && !v[i].data && !v[i].frames, err, CAIRN_EINVAL,
                   "aggregation: '%s' (rank %u) has no data", v[i].name, v[i].rank);
        CN_FAIL_IF(__builtin_add_overflow(raw, v[i].size, &raw), err, CAIRN_EINVAL,
                   "aggregation: variables too large in total");
    }
    CN_FAIL_IF(!(o->bps >= 0), err, CAIRN_EINVAL, "aggregation: bandwidth %g", o->bps);
    writer w = {.v = v, .n = n, .level = o->level, .threads = o->threads, .core = o->core, .bps = o->bps,
                .raw_only = o->raw, .memo = o->raw ? NULL : o->memo,
                .sink = sink, .arg = arg, .ready = o->ready, .ready_arg = o->ready_arg,
                .version = AGG_VERSION_PLAIN};
    for (size_t i = 0; i < n; i++)
        if (v[i].kind > CN_KIND_FILE)
            w.version = AGG_VERSION;
    if (w.memo)
        agg_memo_at(w.memo, o->bps);
    if (o->bps > 0 || o->raw) /* the header first: the groups' codecs are not known yet */
        w.version = AGG_VERSION_SUMS;
    w.order = malloc((n ? n : 1) * sizeof *w.order);
    w.g = malloc((n ? n : 1) * sizeof *w.g);
    w.m = malloc((n ? n : 1) * sizeof *w.m);
    w.fsum = XXH3_createState();
    int rc = 0;
    if (!w.order || !w.g || !w.m || !w.fsum)
        rc = cn_fail(err, CAIRN_ENOMEM, "no memory to plan %zu variables", n);
    else
        XXH3_64bits_reset(w.fsum); /* AUTO's sampling hashes into it too */
    if (!rc) {
        for (size_t i = 0; i < n; i++)
            w.order[i] = i;
        rc = cz_agg_unique(v, w.order, n, CAIRN_EINVAL, err);
    }
    if (!rc)
        rc = agg_lend_setup(&w, v, n, err);
    uint64_t sampled = 0;
    w.block = block;
    w.scheme = o->scheme;
    if (!rc && o->scheme == CZ_AGG_AUTO && w.vown) /* level 1's frames: no trials */
        w.scheme = CZ_AGG_AWARE;
    else if (!rc && o->scheme == CZ_AGG_AUTO)
        rc = agg_pick_scheme(&w, raw, &sampled, err);
    if (!rc) {
        XXH3_64bits_reset(w.fsum); /* the file's own bytes */
        w.block = cz_agg_is_block(w.scheme) ? block : 0;
        w.sink = sink;
        w.arg = arg;
        w.pipe = raw && !o->raw ? cz_agg_pipe_start(sink, arg) : NULL; /* NULL: written here */
        rc = agg_write_scheme(&w, raw, err);
        cz_agg_pipe_stop(w.pipe);
    }
    if (!rc && st)
        *st = (cz_agg_stats){.raw = raw, .stored = w.stored, .scheme = w.scheme,
                             .ngroups = w.ngroups, .modelled = w.modelled, .npass2 = w.npass2,
                             .sampled = sampled,
                             .sum = XXH3_64bits_digest(w.fsum), .seconds = now_s() - t0};
    XXH3_freeState(w.fsum);
    agg_lend_free(&w);
    free(w.order);
    free(w.g);
    free(w.m);
    free(w.spans);
    free(w.vpick);
    return rc;
}
