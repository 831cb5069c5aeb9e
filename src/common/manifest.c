/*
 * manifest.c - encode and validate the node manifest: written by a node's
 * leader once every rank of the job committed a generation. Layout, every
 * integer little-endian:
 *   "CAIRNMF" 0x01 | u32 version, level, nranks, nnodes, node, nlocal, target
 *   | i64 generation | job[64] | node_name[64] | i64 parent | i64 base
 *   | (version 4:) label[64] | f64 seconds | (version 5:) u32 flags
 *   | nranks x u32 node of rank | nlocal x (u32 rank, u64 file_size,
 *   header_sum, raw, delta) | u64 XXH3-64 of all before
 * Version 3 (cairn 0.2.0) has no label and seconds, version 4 no flags (read
 * as CN_MF_PFS when the generation was asked for level 4); all three are
 * read, and each is written back in its own version (cn_manifest.version),
 * so a manifest decodes and re-encodes to the same bytes. The decoder treats its
 * input as hostile (a fuzz target) and frees everything it allocated on
 * failure.
 */
#include "common/common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const uint8_t CN_MANIFEST_MAGIC[8] = {'C', 'A', 'I', 'R', 'N', 'M', 'F', 1};

/* ---- node manifest ---------------------------------------------------- */

#define MF_FIXED (8 + 4 * 7 + 8 + 2 * (CN_JOB_MAX + 1) + 16) /* through parent, base */
#define MF_V4 ((CAIRN_LABEL_MAX + 1) + 8)                   /* label, seconds */
#define MF_V5 4                                             /* flags */
#define MF_LOCAL 36

bool cn_label_ok(const char *s)
{
    size_t n = strnlen(s, CAIRN_LABEL_MAX + 1);
    if (n > CAIRN_LABEL_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] > 0x7e)
            return false;
    return true;
}

static size_t size_of(uint32_t version, uint32_t nranks, uint32_t nlocal)
{
    return MF_FIXED + (version >= 4 ? MF_V4 : 0) + (version >= 5 ? MF_V5 : 0) +
           4 * (size_t)nranks + MF_LOCAL * (size_t)nlocal + 8;
}

size_t cn_manifest_size(uint32_t nranks, uint32_t nlocal)
{
    return size_of(CN_MANIFEST_VERSION, nranks, nlocal);
}

int cn_manifest_encode(const cn_manifest *m, uint8_t **out, size_t *len, cn_err *err)
{
    uint32_t version = m->version ? m->version : CN_MANIFEST_VERSION;
    CN_FAIL_IF(version < CN_MANIFEST_VERSION_OLD || version > CN_MANIFEST_VERSION, err,
               CAIRN_EINVAL, "manifest: cannot write format version %u", version);
    CN_FAIL_IF(version >= 5 && (m->flags & ~CN_MF_KNOWN), err, CAIRN_EINVAL,
               "manifest: unknown flags 0x%x", m->flags);
    CN_FAIL_IF(version >= 4 && (!cn_label_ok(m->label) || !isfinite(m->seconds) ||
                                m->seconds < 0),
               err, CAIRN_EINVAL, "manifest: bad label or seconds");
    size_t n = size_of(version, m->nranks, m->nlocal);
    uint8_t *b = calloc(1, n);
    CN_FAIL_IF(!b, err, CAIRN_ENOMEM, "no memory for the manifest");
    uint8_t *p = b;
    memcpy(p, CN_MANIFEST_MAGIC, 8);
    p += 8;
    const uint32_t f[] = {version, m->level, m->nranks, m->nnodes, m->node, m->nlocal, m->target};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++, p += 4)
        cn_put_u32(p, f[i]);
    cn_put_u64(p, (uint64_t)m->generation);
    p += 8;
    memcpy(p, m->job, strnlen(m->job, CN_JOB_MAX));
    p += CN_JOB_MAX + 1;
    memcpy(p, m->node_name, strnlen(m->node_name, CN_JOB_MAX));
    p += CN_JOB_MAX + 1;
    cn_put_u64(p, (uint64_t)m->parent);
    cn_put_u64(p + 8, (uint64_t)m->base);
    p += 16;
    if (version >= 4) {
        memcpy(p, m->label, strnlen(m->label, CAIRN_LABEL_MAX));
        p += CAIRN_LABEL_MAX + 1;
        uint64_t bits;
        memcpy(&bits, &m->seconds, 8);
        cn_put_u64(p, bits);
        p += 8;
    }
    if (version >= 5) {
        cn_put_u32(p, m->flags);
        p += 4;
    }
    for (uint32_t i = 0; i < m->nranks; i++, p += 4)
        cn_put_u32(p, m->rank_node[i]);
    for (uint32_t i = 0; i < m->nlocal; i++, p += MF_LOCAL) {
        cn_put_u32(p, m->local[i].rank);
        cn_put_u64(p + 4, m->local[i].file_size);
        cn_put_u64(p + 12, m->local[i].header_sum);
        cn_put_u64(p + 20, m->local[i].raw);
        cn_put_u64(p + 28, m->local[i].delta);
    }
    cn_put_u64(p, cn_hash(b, n - 8));
    *out = b;
    *len = n;
    return 0;
}

void cn_manifest_free(cn_manifest *m)
{
    if (!m)
        return;
    free(m->rank_node);
    free(m->local);
    m->rank_node = NULL;
    m->local = NULL;
}

static int check_manifest(const cn_manifest *m, cn_err *err)
{
    CN_FAIL_IF(m->level < 1 || m->level > 4 || m->target < 1 || m->target > 4, err,
               CAIRN_ECORRUPT, "manifest: bad level %u (asked for %u)", m->level, m->target);
    CN_FAIL_IF(m->generation < 0, err, CAIRN_ECORRUPT, "manifest: bad generation");
    CN_TRY(cn_chain_check(m->generation, m->parent, m->base, CN_MIN_INCR_BLOCK, "manifest",
                          err));
    CN_FAIL_IF(m->nranks < 1 || m->nranks > CN_MAX_RANKS || m->nnodes < 1 ||
                   m->nnodes > m->nranks || m->node >= m->nnodes || m->nlocal > m->nranks,
               err, CAIRN_ECORRUPT, "manifest: bad rank/node counts");
    return 0;
}

bool cn_get_label(const uint8_t *p, char out[CAIRN_LABEL_MAX + 1])
{
    size_t n = 0;
    while (n < CAIRN_LABEL_MAX && p[n])
        n++;
    for (size_t i = n; i <= CAIRN_LABEL_MAX; i++)
        if (p[i])
            return false;
    memcpy(out, p, n);
    out[n] = '\0';
    return cn_label_ok(out);
}

int cn_manifest_decode(const uint8_t *buf, size_t len, cn_manifest *m, cn_err *err)
{
    memset(m, 0, sizeof *m);
    CN_FAIL_IF(len < MF_FIXED + 8 || memcmp(buf, CN_MANIFEST_MAGIC, 7) != 0, err, CAIRN_ECORRUPT,
               "not a cairn manifest (bad magic or truncated)");
    cn_rd r = {.p = buf, .len = len, .off = 8};
    m->version = cn_rd_u32(&r);
    CN_FAIL_IF(buf[7] != CN_MANIFEST_MAGIC[7] || m->version < CN_MANIFEST_VERSION_OLD ||
                   m->version > CN_MANIFEST_VERSION,
               err, CAIRN_EFORMAT, "manifest format version %u; this build reads versions %d "
               "to %d", m->version, CN_MANIFEST_VERSION_OLD, CN_MANIFEST_VERSION);
    CN_FAIL_IF(cn_hash(buf, len - 8) != cn_get_u64(buf + len - 8), err, CAIRN_ECORRUPT,
               "manifest checksum mismatch");
    m->level = cn_rd_u32(&r);
    m->nranks = cn_rd_u32(&r);
    m->nnodes = cn_rd_u32(&r);
    m->node = cn_rd_u32(&r);
    m->nlocal = cn_rd_u32(&r);
    m->target = cn_rd_u32(&r);
    m->generation = (int64_t)cn_rd_u64(&r);
    const uint8_t *job = cn_rd_take(&r, CN_JOB_MAX + 1);
    const uint8_t *node = cn_rd_take(&r, CN_JOB_MAX + 1);
    m->parent = (int64_t)cn_rd_u64(&r);
    m->base = (int64_t)cn_rd_u64(&r);
    const uint8_t *label = m->version >= 4 ? cn_rd_take(&r, CAIRN_LABEL_MAX + 1) : NULL;
    uint64_t bits = m->version >= 4 ? cn_rd_u64(&r) : 0;
    memcpy(&m->seconds, &bits, 8);
    m->flags = m->version >= 5 ? cn_rd_u32(&r) : 0;
    CN_FAIL_IF(r.bad, err, CAIRN_ECORRUPT, "manifest: bad fixed part");
    CN_TRY(check_manifest(m, err));
    CN_FAIL_IF(m->flags & ~CN_MF_KNOWN, err, CAIRN_ECORRUPT, "manifest: unknown flags 0x%x",
               m->flags);
    if (m->version < 5 && m->target == CAIRN_LEVEL_PFS)
        m->flags = CN_MF_PFS; /* before flags, only level 4 went to the PFS */
    CN_FAIL_IF(!cn_get_id(job, m->job) || !cn_get_id(node, m->node_name), err, CAIRN_ECORRUPT,
               "manifest: bad job or node name");
    CN_FAIL_IF(label && !cn_get_label(label, m->label), err, CAIRN_ECORRUPT,
               "manifest: bad label (printable ASCII, NUL-padded)");
    CN_FAIL_IF(!isfinite(m->seconds) || m->seconds < 0, err, CAIRN_ECORRUPT,
               "manifest: bad seconds");
    CN_FAIL_IF(len != size_of(m->version, m->nranks, m->nlocal), err, CAIRN_ECORRUPT,
               "manifest: length %zu does not match its counts", len);
    m->rank_node = malloc(4 * (size_t)m->nranks);
    m->local = malloc(sizeof *m->local * (m->nlocal ? m->nlocal : 1));
    if (!m->rank_node || !m->local) {
        cn_manifest_free(m);
        return cn_fail(err, CAIRN_ENOMEM, "no memory for the manifest");
    }
    int rc = 0;
    uint8_t *seen = calloc(m->nnodes, 1);
    if (!seen)
        rc = cn_fail(err, CAIRN_ENOMEM, "no memory for the manifest");
    for (uint32_t i = 0; rc == 0 && i < m->nranks; i++) {
        m->rank_node[i] = cn_rd_u32(&r);
        if (m->rank_node[i] >= m->nnodes)
            rc = cn_fail(err, CAIRN_ECORRUPT, "manifest: rank %u on bad node %u", i,
                         m->rank_node[i]);
        else
            seen[m->rank_node[i]] = 1;
    }
    for (uint32_t i = 0; rc == 0 && i < m->nnodes; i++)
        if (!seen[i])
            rc = cn_fail(err, CAIRN_ECORRUPT, "manifest: node %u has no ranks", i);
    free(seen);
    for (uint32_t i = 0; rc == 0 && i < m->nlocal; i++) {
        cn_manifest_rank *l = &m->local[i];
        l->rank = cn_rd_u32(&r);
        l->file_size = cn_rd_u64(&r);
        l->header_sum = cn_rd_u64(&r);
        l->raw = cn_rd_u64(&r);
        l->delta = cn_rd_u64(&r);
        if (l->rank >= m->nranks || m->rank_node[l->rank] != m->node ||
            (i > 0 && l->rank <= m->local[i - 1].rank) || l->file_size < CN_HEADER_SIZE ||
            l->delta > l->raw)
            rc = cn_fail(err, CAIRN_ECORRUPT, "manifest: bad entry for rank %u", l->rank);
    }
    if (rc < 0)
        cn_manifest_free(m);
    return rc;
}
