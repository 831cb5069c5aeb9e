/*
 * format.c - encode and validate the on-disk checkpoint header and entry
 * table (layouts in common.h; every integer little-endian). The node
 * manifest is in manifest.c, the PFS index in pindex.c.
 *
 * Every decoder treats its input as hostile: it checks lengths before reading
 * (through cn_rd), checksums before trusting, and every field's range and its
 * consistency with the others before anything is used. Decoders allocate only
 * after the sizes they allocate from are validated, and free everything on
 * failure. These functions are the fuzz targets' entry points.
 */
#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const uint8_t CN_CKPT_MAGIC[8] = {'C', 'A', 'I', 'R', 'N', 'C', 'K', 1};

#define HDR_SUM_OFF (CN_HEADER_SIZE - 8)
#define HDR_JOB_OFF 88
#define HDR_CHAIN_OFF (HDR_JOB_OFF + CN_JOB_MAX + 1) /* parent, base, incr_block */
#define HDR_RESERVED_OFF (HDR_CHAIN_OFF + 20)
#define ENTRY_FIXED 99 /* bytes of an entry besides its name, block sums, runs, hashes */
#define FRAME_HDR 24   /* compress.h CZ_FRAME_HDR; a frame holds at least 1 KiB raw
                        * unless it is an entry's last */

bool cn_id_ok(const char *s)
{
    size_t n = strnlen(s, CN_JOB_MAX + 1);
    if (n == 0 || n > CN_JOB_MAX || s[0] == '.')
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

bool cn_get_id(const uint8_t *p, char out[CN_JOB_MAX + 1])
{
    memcpy(out, p, CN_JOB_MAX + 1);
    if (out[CN_JOB_MAX] != '\0')
        return false;
    size_t n = strlen(out);
    for (size_t i = n; i <= CN_JOB_MAX; i++)
        if (out[i] != '\0')
            return false;
    return cn_id_ok(out);
}

static bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

uint64_t cn_align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* A generation's place in its chain, as header and manifest give it. */
int cn_chain_check(int64_t gen, int64_t parent, int64_t base, uint32_t incr_block,
                   const char *what, cn_err *err)
{
    bool full = parent == -1;
    CN_FAIL_IF(full ? base != gen : parent < 0 || parent >= gen || base < 0 || base > parent,
               err, CAIRN_ECORRUPT, "%s: bad chain: generation %lld, parent %lld, base %lld",
               what, (long long)gen, (long long)parent, (long long)base);
    CN_FAIL_IF(incr_block != 0 && (!is_pow2(incr_block) || incr_block < CN_MIN_INCR_BLOCK ||
                                   incr_block > CN_MAX_INCR_BLOCK),
               err, CAIRN_ECORRUPT, "%s: bad incremental block size %u", what, incr_block);
    CN_FAIL_IF(!full && incr_block == 0, err, CAIRN_ECORRUPT,
               "%s: incremental generation without a block size", what);
    return 0;
}

uint64_t cn_incr_nblocks(uint64_t size, uint32_t incr_block)
{
    return incr_block ? size / incr_block + (size % incr_block != 0) : 0;
}

uint64_t cn_runs_stream(const cn_run *runs, uint32_t nruns, uint64_t size,
                        uint32_t incr_block)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < nruns; i++) {
        uint64_t lo = (uint64_t)runs[i].first * incr_block;
        uint64_t hi = lo + (uint64_t)runs[i].count * incr_block;
        bytes += (hi < size ? hi : size) - lo;
    }
    return bytes;
}

uint64_t cn_entry_stream(const cn_entry *e, uint32_t incr_block)
{
    if (!(e->flags & CN_ENTRY_DELTA))
        return e->raw_size;
    return cn_runs_stream(e->runs, e->nruns, e->raw_size, incr_block);
}

/* ---- header ----------------------------------------------------------- */

void cn_header_encode(cn_header *h, uint8_t *out)
{
    memset(out, 0, CN_HEADER_SIZE);
    memcpy(out, CN_CKPT_MAGIC, 8);
    cn_put_u32(out + 8, h->version);
    cn_put_u32(out + 12, CN_HEADER_SIZE);
    cn_put_u32(out + 16, h->level);
    cn_put_u32(out + 20, h->rank);
    cn_put_u32(out + 24, h->nranks);
    cn_put_u32(out + 28, h->node);
    cn_put_u32(out + 32, h->nnodes);
    cn_put_u32(out + 36, h->block_size);
    cn_put_u64(out + 40, (uint64_t)h->generation);
    cn_put_u32(out + 48, h->nentries);
    cn_put_u64(out + 56, h->table_size);
    cn_put_u64(out + 64, h->data_offset);
    cn_put_u64(out + 72, h->file_size);
    cn_put_u64(out + 80, h->table_sum);
    memcpy(out + HDR_JOB_OFF, h->job, strnlen(h->job, CN_JOB_MAX));
    cn_put_u64(out + HDR_CHAIN_OFF, (uint64_t)h->parent);
    cn_put_u64(out + HDR_CHAIN_OFF + 8, (uint64_t)h->base);
    cn_put_u32(out + HDR_CHAIN_OFF + 16, h->incr_block);
    h->header_sum = cn_hash(out, HDR_SUM_OFF);
    cn_put_u64(out + HDR_SUM_OFF, h->header_sum);
}

int cn_header_decode(const uint8_t *buf, size_t len, cn_header *h, cn_err *err)
{
    memset(h, 0, sizeof *h);
    CN_FAIL_IF(len < CN_HEADER_SIZE, err, CAIRN_ECORRUPT,
               "truncated header: %zu bytes, expected %d", len, CN_HEADER_SIZE);
    CN_FAIL_IF(memcmp(buf, CN_CKPT_MAGIC, 7) != 0, err, CAIRN_ECORRUPT,
               "not a cairn checkpoint file (bad magic)");
    h->version = cn_get_u32(buf + 8);
    CN_FAIL_IF(buf[7] != CN_CKPT_MAGIC[7] || h->version < CN_FORMAT_VERSION_OLD ||
                   h->version > CN_FORMAT_VERSION,
               err, CAIRN_EFORMAT, "checkpoint format version %u; this build reads versions %d..%d",
               h->version, CN_FORMAT_VERSION_OLD, CN_FORMAT_VERSION);
    h->header_sum = cn_get_u64(buf + HDR_SUM_OFF);
    CN_FAIL_IF(cn_hash(buf, HDR_SUM_OFF) != h->header_sum, err, CAIRN_ECORRUPT,
               "header checksum mismatch");
    CN_FAIL_IF(cn_get_u32(buf + 12) != CN_HEADER_SIZE, err, CAIRN_ECORRUPT,
               "bad header size %u", cn_get_u32(buf + 12));
    h->level = cn_get_u32(buf + 16);
    h->rank = cn_get_u32(buf + 20);
    h->nranks = cn_get_u32(buf + 24);
    h->node = cn_get_u32(buf + 28);
    h->nnodes = cn_get_u32(buf + 32);
    h->block_size = cn_get_u32(buf + 36);
    h->generation = (int64_t)cn_get_u64(buf + 40);
    h->nentries = cn_get_u32(buf + 48);
    h->table_size = cn_get_u64(buf + 56);
    h->data_offset = cn_get_u64(buf + 64);
    h->file_size = cn_get_u64(buf + 72);
    h->table_sum = cn_get_u64(buf + 80);
    CN_FAIL_IF(h->level < 1 || h->level > 4, err, CAIRN_ECORRUPT, "bad level %u", h->level);
    CN_FAIL_IF(h->nranks < 1 || h->nranks > CN_MAX_RANKS || h->rank >= h->nranks, err,
               CAIRN_ECORRUPT, "bad rank %u of %u", h->rank, h->nranks);
    CN_FAIL_IF(h->nnodes < 1 || h->nnodes > h->nranks || h->node >= h->nnodes, err,
               CAIRN_ECORRUPT, "bad node %u of %u", h->node, h->nnodes);
    CN_FAIL_IF(!is_pow2(h->block_size) || h->block_size < CN_MIN_BLOCK ||
                   h->block_size > CN_MAX_BLOCK,
               err, CAIRN_ECORRUPT, "bad block size %u", h->block_size);
    CN_FAIL_IF(h->generation < 0, err, CAIRN_ECORRUPT, "bad generation %lld",
               (long long)h->generation);
    CN_FAIL_IF(h->nentries > CN_MAX_ENTRIES, err, CAIRN_ECORRUPT, "bad entry count %u",
               h->nentries);
    CN_FAIL_IF(h->file_size < CN_HEADER_SIZE || h->table_size > h->file_size - CN_HEADER_SIZE ||
                   h->data_offset < CN_HEADER_SIZE + h->table_size ||
                   h->data_offset % (h->version == CN_FORMAT_VERSION_OLD ? CN_DATA_ALIGN
                                                                         : CN_ENTRY_ALIGN) != 0 ||
                   h->data_offset > h->file_size,
               err, CAIRN_ECORRUPT, "bad layout: table %llu bytes, data at %llu, file %llu",
               (unsigned long long)h->table_size, (unsigned long long)h->data_offset,
               (unsigned long long)h->file_size);
    h->parent = (int64_t)cn_get_u64(buf + HDR_CHAIN_OFF);
    h->base = (int64_t)cn_get_u64(buf + HDR_CHAIN_OFF + 8);
    h->incr_block = cn_get_u32(buf + HDR_CHAIN_OFF + 16);
    CN_TRY(cn_chain_check(h->generation, h->parent, h->base, h->incr_block, "header", err));
    CN_FAIL_IF(cn_get_u32(buf + 52) != 0, err, CAIRN_ECORRUPT, "reserved header field set");
    for (size_t i = HDR_RESERVED_OFF; i < HDR_SUM_OFF; i++)
        CN_FAIL_IF(buf[i] != 0, err, CAIRN_ECORRUPT, "reserved header bytes set");
    CN_FAIL_IF(!cn_get_id(buf + HDR_JOB_OFF, h->job), err, CAIRN_ECORRUPT, "bad job id in header");
    return 0;
}

/* ---- entry table ------------------------------------------------------ */

size_t cn_table_size(const cn_entry *e, uint32_t n)
{
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++)
        total += ENTRY_FIXED + strlen(e[i].name) + 8 * (size_t)e[i].nblocks +
                 8 * (size_t)e[i].nruns + 16 * (size_t)e[i].nhash;
    return total;
}

void cn_table_encode(const cn_entry *e, uint32_t n, uint8_t *out)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t nl = strlen(e[i].name);
        cn_put_u16(out, (uint16_t)nl);
        memcpy(out + 2, e[i].name, nl);
        out += 2 + nl;
        out[0] = e[i].kind;
        out[1] = e[i].type;
        out[2] = e[i].ndims;
        out[3] = e[i].codec;
        out[4] = e[i].flags;
        out += 5;
        for (int d = 0; d < CAIRN_MAX_DIMS; d++, out += 8)
            cn_put_u64(out, e[i].dims[d]);
        uint64_t bound_bits, max_bits;
        memcpy(&bound_bits, &e[i].error_bound, 8);
        memcpy(&max_bits, &e[i].max_error, 8);
        const uint64_t fields[7] = {e[i].count,  e[i].raw_size, e[i].stored_size,
                                    e[i].frame_raw, e[i].offset, bound_bits, max_bits};
        for (int f = 0; f < 7; f++, out += 8)
            cn_put_u64(out, fields[f]);
        cn_put_u32(out, e[i].nblocks);
        cn_put_u32(out + 4, e[i].nruns);
        cn_put_u32(out + 8, e[i].nhash);
        out += 12;
        for (uint32_t b = 0; b < e[i].nblocks; b++, out += 8)
            cn_put_u64(out, e[i].block_sums[b]);
        for (uint32_t r = 0; r < e[i].nruns; r++, out += 8) {
            cn_put_u32(out, e[i].runs[r].first);
            cn_put_u32(out + 4, e[i].runs[r].count);
        }
        for (uint32_t k = 0; k < e[i].nhash; k++, out += 16) {
            cn_put_u64(out, e[i].hashes[k].lo);
            cn_put_u64(out + 8, e[i].hashes[k].hi);
        }
    }
}

void cn_entries_free(cn_entry *e, uint32_t n)
{
    if (!e)
        return;
    for (uint32_t i = 0; i < n; i++) {
        free(e[i].block_sums);
        free(e[i].runs);
        free(e[i].hashes);
    }
    free(e);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp((*(const cn_entry *const *)a)->name, (*(const cn_entry *const *)b)->name);
}

/*
 * Stored size against the codec: raw entries store their bytes; compressed
 * ones store frames of frame_raw bytes (at most one 24-byte header per KiB,
 * plus one), or nothing when packed into an earlier entry's frames.
 */
static int check_stored(const cn_entry *e, uint64_t stream, cn_err *err)
{
    bool packed = e->flags & CN_ENTRY_PACKED;
    if (e->codec == CN_CODEC_RAW)
        CN_FAIL_IF(packed || e->frame_raw != 0 || e->stored_size != stream, err,
                   CAIRN_ECORRUPT, "entry '%s': raw entry with frames", e->name);
    else if (packed)
        CN_FAIL_IF(e->kind != CN_KIND_VAR || e->stored_size != 0 || e->frame_raw != 0, err,
                   CAIRN_ECORRUPT, "entry '%s': bad packed entry", e->name);
    else
        CN_FAIL_IF(e->kind != CN_KIND_VAR || e->frame_raw < stream ||
                       e->frame_raw > (1ull << 56) || (e->frame_raw == 0) != (e->stored_size == 0) ||
                       e->stored_size > e->frame_raw + FRAME_HDR * (e->frame_raw / 1024 + 1),
                   err, CAIRN_ECORRUPT, "entry '%s': bad compressed sizes", e->name);
    return 0;
}

/*
 * Packs: members follow their owner (same codec), and the owner's frames
 * decode to exactly its own bytes plus every member's. Called per entry in
 * table order with the running state; LAST closes the final pack.
 */
typedef struct pack_state {
    const cn_entry *owner;
    uint64_t sum;
} pack_state;

static int check_pack(pack_state *ps, const cn_entry *e, uint64_t stream, cn_err *err)
{
    bool member = e && (e->flags & CN_ENTRY_PACKED);
    if (member) {
        CN_FAIL_IF(!ps->owner || ps->owner->codec != e->codec, err, CAIRN_ECORRUPT,
                   "entry '%s': packed without an owner of its codec", e->name);
        ps->sum += stream;
        return 0;
    }
    if (ps->owner)
        CN_FAIL_IF(ps->sum != ps->owner->frame_raw, err, CAIRN_ECORRUPT,
                   "entry '%s': frames hold %llu bytes, its pack %llu", ps->owner->name,
                   (unsigned long long)ps->owner->frame_raw, (unsigned long long)ps->sum);
    ps->owner = e && e->codec != CN_CODEC_RAW ? e : NULL;
    ps->sum = e ? stream : 0;
    return 0;
}

/*
 * An entry's place in an incremental chain: runs ascending, apart and inside
 * the variable's blocks, only on delta entries of an incremental generation;
 * hashes for every stored block or none. Sets *STREAM (cn_entry_stream).
 */
static int check_chain(const cn_entry *e, const cn_header *h, uint64_t *stream, cn_err *err)
{
    bool delta = e->flags & CN_ENTRY_DELTA;
    CN_FAIL_IF(h->incr_block == 0 && (delta || e->nruns || e->nhash), err, CAIRN_ECORRUPT,
               "entry '%s': incremental fields without a block size", e->name);
    CN_FAIL_IF(delta && (e->kind != CN_KIND_VAR || h->parent < 0), err, CAIRN_ECORRUPT,
               "entry '%s': delta entry outside an incremental generation", e->name);
    CN_FAIL_IF(!delta && e->nruns, err, CAIRN_ECORRUPT, "entry '%s': runs on a full entry",
               e->name);
    uint64_t nb = cn_incr_nblocks(e->raw_size, h->incr_block), covered = 0, next = 0;
    for (uint32_t i = 0; i < e->nruns; i++) {
        const cn_run *r = &e->runs[i];
        CN_FAIL_IF(r->count == 0 || r->first < next || (uint64_t)r->first + r->count > nb, err,
                   CAIRN_ECORRUPT, "entry '%s': run %u out of order or outside the variable",
                   e->name, i);
        next = (uint64_t)r->first + r->count + 1; /* runs are merged: a gap between them */
        covered += r->count;
    }
    uint64_t want = delta ? covered : nb;
    CN_FAIL_IF(e->nhash != 0 && (e->nhash != want || e->kind != CN_KIND_VAR), err,
               CAIRN_ECORRUPT, "entry '%s': %u block hashes for %llu blocks", e->name, e->nhash,
               (unsigned long long)want);
    *stream = cn_entry_stream(e, h->incr_block);
    return 0;
}

/* Check one entry's fields (not its block sums) against the header. STREAM
 * receives the size of its decoded stream. */
static int check_entry(const cn_entry *e, const cn_header *h, uint64_t prev_end,
                       uint64_t *stream, cn_err *err)
{
    CN_FAIL_IF(!cn_name_ok(e->name), err, CAIRN_ECORRUPT, "entry has a bad name");
    CN_FAIL_IF(e->kind > CN_KIND_FILE || e->type > CAIRN_DOUBLE || e->ndims > CAIRN_MAX_DIMS ||
                   e->codec >= CN_CODEC_COUNT ||
                   (e->flags & ~(CN_ENTRY_PACKED | CN_ENTRY_DELTA)) != 0,
               err, CAIRN_ECORRUPT, "entry '%s': bad kind/type/dims/codec/flags", e->name);
    CN_FAIL_IF(e->kind == CN_KIND_FILE && (e->type != CAIRN_BYTE || e->ndims != 0), err,
               CAIRN_ECORRUPT, "file entry '%s' with a type or shape", e->name);
    if (e->ndims > 0) {
        uint64_t prod = 1;
        for (int d = 0; d < e->ndims; d++)
            CN_FAIL_IF(__builtin_mul_overflow(prod, e->dims[d], &prod), err, CAIRN_ECORRUPT,
                       "entry '%s': dims overflow", e->name);
        CN_FAIL_IF(prod != e->count, err, CAIRN_ECORRUPT,
                   "entry '%s': dims do not multiply to the count", e->name);
    }
    for (int d = e->ndims; d < CAIRN_MAX_DIMS; d++)
        CN_FAIL_IF(e->dims[d] != 0, err, CAIRN_ECORRUPT, "entry '%s': unused dim set", e->name);
    uint64_t raw;
    CN_FAIL_IF(__builtin_mul_overflow(e->count, (uint64_t)cairn_type_size(e->type), &raw) ||
                   raw != e->raw_size || raw > (1ull << 56),
               err, CAIRN_ECORRUPT, "entry '%s': sizes disagree with count and type", e->name);
    CN_TRY(check_chain(e, h, stream, err));
    CN_TRY(check_stored(e, *stream, err));
    CN_FAIL_IF(!isfinite(e->error_bound) || e->error_bound < 0 ||
                   (e->error_bound > 0 && e->type != CAIRN_FLOAT && e->type != CAIRN_DOUBLE),
               err, CAIRN_ECORRUPT, "entry '%s': bad error bound", e->name);
    bool lossy = e->codec >= CN_CODEC_LOSSY;
    CN_FAIL_IF(!isfinite(e->max_error) || e->max_error < 0 || e->max_error > e->error_bound ||
                   (!lossy && e->max_error != 0),
               err, CAIRN_ECORRUPT, "entry '%s': bad measured error", e->name);
    CN_FAIL_IF(lossy && (e->error_bound == 0 || (e->flags & CN_ENTRY_PACKED)), err,
               CAIRN_ECORRUPT, "entry '%s': lossy codec without an error bound", e->name);
    uint64_t end;
    CN_FAIL_IF(e->offset < h->data_offset || e->offset < prev_end ||
                   e->offset % CN_ENTRY_ALIGN != 0 ||
                   __builtin_add_overflow(e->offset, e->stored_size, &end) || end > h->file_size,
               err, CAIRN_ECORRUPT, "entry '%s': data outside the file or overlapping", e->name);
    uint64_t nb = (e->stored_size + h->block_size - 1) / h->block_size;
    CN_FAIL_IF(nb != e->nblocks, err, CAIRN_ECORRUPT, "entry '%s': bad block count", e->name);
    return 0;
}

/* Read N little-endian items of SIZE bytes each from R into a new array
 * (*OUT, NULL if N is 0), after checking they are there. */
static int take_array(cn_rd *r, uint32_t n, size_t size, void **out, const char *what,
                      const char *name, cn_err *err)
{
    *out = NULL;
    CN_FAIL_IF((uint64_t)n * size > r->len - r->off, err, CAIRN_ECORRUPT,
               "entry '%s': %s truncated", name, what);
    if (n == 0)
        return 0;
    *out = malloc(size * (size_t)n);
    CN_FAIL_IF(!*out, err, CAIRN_ENOMEM, "no memory for %s", what);
    uint64_t *w = *out;
    for (size_t k = 0; k < (size_t)n * size / 8; k++)
        w[k] = cn_rd_u64(r);
    return 0;
}

static int decode_entry(cn_rd *r, const cn_header *h, cn_entry *e, uint64_t prev_end,
                        uint64_t *stream, cn_err *err)
{
    uint16_t nl = cn_rd_u16(r);
    const uint8_t *name = cn_rd_take(r, nl);
    CN_FAIL_IF(r->bad || nl == 0 || nl > CAIRN_NAME_MAX || memchr(name, 0, nl), err,
               CAIRN_ECORRUPT, "truncated or bad entry name");
    memcpy(e->name, name, nl);
    e->name[nl] = '\0';
    e->kind = cn_rd_u8(r);
    e->type = cn_rd_u8(r);
    e->ndims = cn_rd_u8(r);
    e->codec = cn_rd_u8(r);
    e->flags = cn_rd_u8(r);
    for (int d = 0; d < CAIRN_MAX_DIMS; d++)
        e->dims[d] = cn_rd_u64(r);
    e->count = cn_rd_u64(r);
    e->raw_size = cn_rd_u64(r);
    e->stored_size = cn_rd_u64(r);
    e->frame_raw = cn_rd_u64(r);
    e->offset = cn_rd_u64(r);
    uint64_t bound_bits = cn_rd_u64(r), max_bits = cn_rd_u64(r);
    memcpy(&e->error_bound, &bound_bits, 8);
    memcpy(&e->max_error, &max_bits, 8);
    e->nblocks = cn_rd_u32(r);
    e->nruns = cn_rd_u32(r);
    e->nhash = cn_rd_u32(r);
    CN_FAIL_IF(r->bad, err, CAIRN_ECORRUPT, "truncated entry '%s'", e->name);
    uint32_t nruns = e->nruns, nhash = e->nhash;
    e->nruns = e->nhash = 0; /* counts follow the arrays, so a failure frees what exists */
    CN_TRY(take_array(r, e->nblocks, 8, (void **)&e->block_sums, "block checksums", e->name, err));
    /* runs: (u32 first, u32 count) pairs, read as u64 then split */
    CN_TRY(take_array(r, nruns, 8, (void **)&e->runs, "runs", e->name, err));
    e->nruns = nruns;
    for (uint32_t i = 0; i < nruns; i++) {
        uint64_t v;
        memcpy(&v, &e->runs[i], 8);
        e->runs[i] = (cn_run){(uint32_t)v, (uint32_t)(v >> 32)};
    }
    CN_TRY(take_array(r, nhash, 16, (void **)&e->hashes, "block hashes", e->name, err));
    e->nhash = nhash;
    return check_entry(e, h, prev_end, stream, err);
}

int cn_table_decode(const uint8_t *buf, size_t len, const cn_header *h, cn_entry **out,
                    cn_err *err)
{
    *out = NULL;
    CN_FAIL_IF(len != h->table_size, err, CAIRN_ECORRUPT, "table is %zu bytes, header says %llu",
               len, (unsigned long long)h->table_size);
    CN_FAIL_IF(cn_hash(buf, len) != h->table_sum, err, CAIRN_ECORRUPT, "table checksum mismatch");
    CN_FAIL_IF((uint64_t)h->nentries * (ENTRY_FIXED + 1) > len, err, CAIRN_ECORRUPT,
               "table too short for %u entries", h->nentries);
    cn_entry *e = calloc(h->nentries ? h->nentries : 1, sizeof *e);
    CN_FAIL_IF(!e, err, CAIRN_ENOMEM, "no memory for %u entries", h->nentries);
    cn_rd r = {.p = buf, .len = len};
    uint64_t prev_end = h->data_offset;
    pack_state ps = {0};
    int rc = 0;
    for (uint32_t i = 0; i < h->nentries && rc == 0; i++) {
        uint64_t stream = 0;
        rc = decode_entry(&r, h, &e[i], prev_end, &stream, err);
        if (rc == 0)
            rc = check_pack(&ps, &e[i], stream, err);
        prev_end = e[i].offset + e[i].stored_size;
    }
    if (rc == 0)
        rc = check_pack(&ps, NULL, 0, err);
    if (rc == 0 && r.off != len)
        rc = cn_fail(err, CAIRN_ECORRUPT, "%zu trailing bytes after the table", len - r.off);
    if (rc == 0 && h->nentries > 1) {
        const cn_entry **sorted = malloc(h->nentries * sizeof *sorted);
        if (!sorted) {
            rc = cn_fail(err, CAIRN_ENOMEM, "no memory");
        } else {
            for (uint32_t i = 0; i < h->nentries; i++)
                sorted[i] = &e[i];
            qsort(sorted, h->nentries, sizeof *sorted, cmp_names);
            for (uint32_t i = 1; i < h->nentries && rc == 0; i++)
                if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0)
                    rc = cn_fail(err, CAIRN_ECORRUPT, "duplicate entry '%s'", sorted[i]->name);
            free(sorted);
        }
    }
    if (rc < 0) {
        cn_entries_free(e, h->nentries);
        return rc;
    }
    *out = e;
    return 0;
}
