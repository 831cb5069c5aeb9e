/*
 * pfile.c - encode and validate the metadata of a level-3 parity file
 * (layout in common.h). Like format.c, the decoder trusts nothing: the
 * checksum first, then every count before it sizes an allocation, then every
 * field against the others. Used by the level-3 writer, recovery, the CLI
 * and the fuzz target.
 */
#include "levels/parity/parity.h"

#include <stdlib.h>
#include <string.h>

const uint8_t CN_PARITY_MAGIC[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'F', 1};

#define PF_MAX_MEMBERS 1024
#define PF_LOCAL 36 /* a member's rank file: rank, size, header checksum, raw, delta */

uint32_t cn_parity_nblocks(const cn_parity *p)
{
    return (uint32_t)((p->chunk + p->block_size - 1) / p->block_size);
}

static size_t meta_size(const cn_parity *p)
{
    size_t n = 8 + 4 * 2 + 8 + 16 + (CN_JOB_MAX + 1) + 4 * 2 + 4 * (size_t)p->nranks + 4 * 8 +
               8 + 4;
    for (uint32_t i = 0; i < p->n; i++)
        n += 4 + (CN_JOB_MAX + 1) + 8 + 4 + PF_LOCAL * (size_t)p->members[i].nlocal;
    return n + 8 * (size_t)p->m * cn_parity_nblocks(p) + 8;
}

int cn_parity_encode(cn_parity *p, uint8_t **out, size_t *len, cn_err *err)
{
    size_t n = meta_size(p);
    uint8_t *b = calloc(1, n);
    CN_FAIL_IF(!b, err, CAIRN_ENOMEM, "no memory for parity metadata");
    uint8_t *q = b;
    memcpy(q, CN_PARITY_MAGIC, 8), q += 8;
    cn_put_u32(q, CN_PARITY_VERSION), q += 4;
    cn_put_u32(q, (uint32_t)n), q += 4;
    cn_put_u64(q, (uint64_t)p->generation), q += 8;
    cn_put_u64(q, (uint64_t)p->parent), q += 8;
    cn_put_u64(q, (uint64_t)p->base), q += 8;
    memcpy(q, p->job, strnlen(p->job, CN_JOB_MAX)), q += CN_JOB_MAX + 1;
    cn_put_u32(q, p->nranks), q += 4;
    cn_put_u32(q, p->nnodes), q += 4;
    for (uint32_t i = 0; i < p->nranks; i++, q += 4)
        cn_put_u32(q, p->rank_node[i]);
    const uint32_t f[] = {p->level, p->target, p->set, p->n, p->m, p->w, p->form, p->member};
    for (size_t i = 0; i < 8; i++, q += 4)
        cn_put_u32(q, f[i]);
    cn_put_u64(q, p->chunk), q += 8;
    cn_put_u32(q, p->block_size), q += 4;
    for (uint32_t i = 0; i < p->n; i++) {
        const cn_pmember *mb = &p->members[i];
        cn_put_u32(q, mb->node), q += 4;
        memcpy(q, mb->node_name, strnlen(mb->node_name, CN_JOB_MAX)), q += CN_JOB_MAX + 1;
        cn_put_u64(q, mb->payload), q += 8;
        cn_put_u32(q, mb->nlocal), q += 4;
        for (uint32_t j = 0; j < mb->nlocal; j++, q += PF_LOCAL) {
            cn_put_u32(q, mb->local[j].rank);
            cn_put_u64(q + 4, mb->local[j].file_size);
            cn_put_u64(q + 12, mb->local[j].header_sum);
            cn_put_u64(q + 20, mb->local[j].raw);
            cn_put_u64(q + 28, mb->local[j].delta);
        }
    }
    size_t nsums = (size_t)p->m * cn_parity_nblocks(p);
    for (size_t i = 0; i < nsums; i++, q += 8)
        cn_put_u64(q, p->row_sums ? p->row_sums[i] : 0);
    cn_put_u64(q, cn_hash(b, n - 8));
    p->data_offset = cn_align_up(n, CN_DATA_ALIGN);
    p->file_size = p->data_offset + (uint64_t)p->m * p->chunk;
    *out = b;
    *len = n;
    return 0;
}

void cn_parity_free(cn_parity *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; p->members && i < p->n; i++)
        free(p->members[i].local);
    free(p->members);
    free(p->rank_node);
    free(p->row_sums);
    p->members = NULL;
    p->rank_node = NULL;
    p->row_sums = NULL;
}

static bool id_field(cn_rd *r, char out[CN_JOB_MAX + 1])
{
    const uint8_t *f = cn_rd_take(r, CN_JOB_MAX + 1);
    if (!f)
        return false;
    memcpy(out, f, CN_JOB_MAX + 1);
    if (out[CN_JOB_MAX] != '\0')
        return false;
    for (size_t i = strlen(out); i <= CN_JOB_MAX; i++)
        if (out[i])
            return false;
    return cn_id_ok(out);
}

static int decode_members(cn_rd *r, cn_parity *p, cn_err *err)
{
    p->members = calloc(p->n, sizeof *p->members);
    CN_FAIL_IF(!p->members, err, CAIRN_ENOMEM, "no memory");
    uint32_t ranks_seen = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        cn_pmember *mb = &p->members[i];
        mb->node = cn_rd_u32(r);
        bool name_ok = id_field(r, mb->node_name);
        mb->payload = cn_rd_u64(r);
        mb->nlocal = cn_rd_u32(r);
        CN_FAIL_IF(r->bad || !name_ok || mb->node >= p->nnodes || mb->nlocal > p->nranks ||
                       (uint64_t)mb->nlocal * PF_LOCAL > r->len - r->off,
                   err, CAIRN_ECORRUPT, "parity: bad member %u", i);
        for (uint32_t j = 0; j < i; j++)
            CN_FAIL_IF(p->members[j].node == mb->node, err, CAIRN_ECORRUPT,
                       "parity: node %u listed twice", mb->node);
        mb->local = calloc(mb->nlocal ? mb->nlocal : 1, sizeof *mb->local);
        CN_FAIL_IF(!mb->local, err, CAIRN_ENOMEM, "no memory");
        uint64_t total = 0;
        for (uint32_t j = 0; j < mb->nlocal; j++) {
            cn_manifest_rank *l = &mb->local[j];
            l->rank = cn_rd_u32(r);
            l->file_size = cn_rd_u64(r);
            l->header_sum = cn_rd_u64(r);
            l->raw = cn_rd_u64(r);
            l->delta = cn_rd_u64(r);
            CN_FAIL_IF(l->rank >= p->nranks || p->rank_node[l->rank] != mb->node ||
                           (j > 0 && l->rank <= mb->local[j - 1].rank) ||
                           l->file_size < CN_HEADER_SIZE || l->delta > l->raw ||
                           __builtin_add_overflow(total, l->file_size, &total),
                       err, CAIRN_ECORRUPT, "parity: bad rank entry in member %u", i);
        }
        ranks_seen += mb->nlocal;
        CN_FAIL_IF(total != mb->payload || mb->payload > (p->n - p->m) * p->chunk, err,
                   CAIRN_ECORRUPT, "parity: member %u payload does not fit", i);
    }
    CN_FAIL_IF(ranks_seen > p->nranks, err, CAIRN_ECORRUPT, "parity: too many ranks");
    return 0;
}

int cn_parity_decode(const uint8_t *buf, size_t len, cn_parity *p, cn_err *err)
{
    memset(p, 0, sizeof *p);
    CN_FAIL_IF(len < 24 || memcmp(buf, CN_PARITY_MAGIC, 7) != 0, err, CAIRN_ECORRUPT,
               "not a cairn parity file (bad magic or truncated)");
    p->version = cn_get_u32(buf + 8);
    CN_FAIL_IF(buf[7] != CN_PARITY_MAGIC[7] || p->version != CN_PARITY_VERSION, err,
               CAIRN_EFORMAT, "parity format version %u; this build reads version %d",
               p->version, CN_PARITY_VERSION);
    size_t n = cn_get_u32(buf + 12);
    CN_FAIL_IF(n < 24 || n > len, err, CAIRN_ECORRUPT, "parity metadata truncated");
    CN_FAIL_IF(cn_hash(buf, n - 8) != cn_get_u64(buf + n - 8), err, CAIRN_ECORRUPT,
               "parity metadata checksum mismatch");
    cn_rd r = {.p = buf, .len = n - 8, .off = 16};
    p->generation = (int64_t)cn_rd_u64(&r);
    p->parent = (int64_t)cn_rd_u64(&r);
    p->base = (int64_t)cn_rd_u64(&r);
    bool job_ok = id_field(&r, p->job);
    p->nranks = cn_rd_u32(&r);
    p->nnodes = cn_rd_u32(&r);
    CN_FAIL_IF(r.bad || !job_ok || p->generation < 0 || p->nranks < 1 ||
                   p->nranks > CN_MAX_RANKS || p->nnodes < 1 || p->nnodes > p->nranks ||
                   (uint64_t)p->nranks * 4 > r.len - r.off,
               err, CAIRN_ECORRUPT, "parity: bad job description");
    p->rank_node = malloc(4 * (size_t)p->nranks);
    CN_FAIL_IF(!p->rank_node, err, CAIRN_ENOMEM, "no memory");
    int rc = 0;
    for (uint32_t i = 0; i < p->nranks; i++)
        if ((p->rank_node[i] = cn_rd_u32(&r)) >= p->nnodes)
            rc = cn_fail(err, CAIRN_ECORRUPT, "parity: rank %u on bad node", i);
    uint32_t *f[] = {&p->level, &p->target, &p->set, &p->n, &p->m, &p->w, &p->form, &p->member};
    for (size_t i = 0; i < 8; i++)
        *f[i] = cn_rd_u32(&r);
    p->chunk = cn_rd_u64(&r);
    p->block_size = cn_rd_u32(&r);
    if (rc == 0 &&
        (r.bad || p->level < 2 || p->level > 4 || p->target < 1 || p->target > 4 || p->n < 2 || p->n > PF_MAX_MEMBERS ||
         p->n > p->nnodes || p->m < 1 || p->m >= p->n || (p->w != 8 && p->w != 16) ||
         p->form > 1 || p->member >= p->n || p->set >= p->nnodes || p->chunk > (1ull << 48) ||
         p->block_size < CN_MIN_BLOCK || p->block_size > CN_MAX_BLOCK ||
         (p->block_size & (p->block_size - 1))))
        rc = cn_fail(err, CAIRN_ECORRUPT, "parity: bad set description");
    if (rc == 0)
        rc = cn_chain_check(p->generation, p->parent, p->base, CN_MIN_INCR_BLOCK, "parity", err);
    if (rc == 0)
        rc = decode_members(&r, p, err);
    size_t nsums = rc == 0 ? (size_t)p->m * cn_parity_nblocks(p) : 0;
    if (rc == 0 && nsums * 8 != r.len - r.off)
        rc = cn_fail(err, CAIRN_ECORRUPT, "parity: metadata length does not match its counts");
    if (rc == 0 && !(p->row_sums = malloc(8 * (nsums ? nsums : 1))))
        rc = cn_fail(err, CAIRN_ENOMEM, "no memory");
    for (size_t i = 0; rc == 0 && i < nsums; i++)
        p->row_sums[i] = cn_rd_u64(&r);
    if (rc < 0) {
        cn_parity_free(p);
        return rc;
    }
    p->data_offset = cn_align_up(n, CN_DATA_ALIGN);
    p->file_size = p->data_offset + (uint64_t)p->m * p->chunk;
    return 0;
}

int cn_parity_check(const uint8_t *map, size_t size, const char *path, cn_parity *p, cn_err *err)
{
    int rc = cn_parity_decode(map, size, p, err);
    if (rc < 0) {
        cn_err_prefix(err, "%s: ", path);
        return rc;
    }
    if (p->file_size != size)
        rc = cn_fail(err, CAIRN_ECORRUPT, "%s: size %zu, expected %llu", path, size,
                     (unsigned long long)p->file_size);
    /* No checksum covers the padding after the metadata: it must be zero. */
    for (uint64_t i = cn_get_u32(map + 12); rc == 0 && i < p->data_offset; i++)
        if (map[i])
            rc = cn_fail(err, CAIRN_ECORRUPT, "%s: nonzero padding", path);
    uint32_t nb = cn_parity_nblocks(p);
    for (uint32_t r = 0; rc == 0 && r < p->m; r++)
        for (uint32_t b = 0; rc == 0 && b < nb; b++) {
            uint64_t off = (uint64_t)b * p->block_size;
            uint64_t n = p->chunk - off < p->block_size ? p->chunk - off : p->block_size;
            if (cn_hash(map + p->data_offset + (uint64_t)r * p->chunk + off, (size_t)n) !=
                p->row_sums[(size_t)r * nb + b])
                rc = cn_fail(err, CAIRN_ECORRUPT, "%s: row %u block %u checksum mismatch", path,
                             r, b);
        }
    if (rc < 0)
        cn_parity_free(p);
    return rc;
}
