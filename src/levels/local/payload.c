/*
 * payload.c - a node's payload for levels 2 and 3: the rank files of one
 * generation, in ascending rank order, seen as one byte stream.
 *
 * Reading maps every file read-only and copies ranges out, reading zeros past
 * the end (the padding of the erasure code). A payload copied to a partner
 * or encoded into parity is verified as it is read, in the same pass:
 * lvl_payload_verify checks each file's header against its manifest entry and
 * its table, and lists its data blocks (and the zero gaps between entries);
 * lvl_payload_read_checked then hashes each block the first time a byte of it
 * is asked for and only then copies, from cache. Damaged data is reported,
 * never protected as if it were good. Writing (rebuild after a node
 * loss) creates NAME.tmp files of the listed sizes, scatters ranges into
 * them, and commits each only after it verifies against the checksums the
 * set description lists, so a wrong rebuild never becomes a checkpoint.
 */
#include "levels/local/local.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A stretch of a rank file a checked read verifies before copying from it:
 * one checksum block of an entry, or a gap between entries (must be zero). */
typedef struct pseg {
    uint64_t off, len;         /* in the file */
    uint64_t sum;              /* the block's checksum (cn_hash) */
    uint32_t entry;            /* entry index, or PSEG_GAP */
    uint32_t block;
    bool checked;
} pseg;
#define PSEG_GAP UINT32_MAX

typedef struct pcheck {        /* one file of a verified payload */
    char path[4400];           /* for messages */
    cn_ckpt *c;                /* its header and table (over the mapping) */
    pseg *seg;                 /* ascending, covering [header + table, file end) */
    size_t nseg;
} pcheck;

struct lvl_payload {
    uint32_t n;
    const uint8_t **map;
    uint64_t *size;
    uint64_t total;
    pcheck *chk;               /* n entries once lvl_payload_verify ran, else NULL */
};

void lvl_payload_close(lvl_payload *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; p->chk && i < p->n; i++) {
        cn_ckpt_close(p->chk[i].c);
        free(p->chk[i].seg);
    }
    free(p->chk);
    for (uint32_t i = 0; i < p->n; i++)
        if (p->map[i])
            munmap((void *)p->map[i], p->size[i]);
    free(p->map);
    free(p->size);
    free(p);
}

int lvl_payload_open(int genfd, const cn_manifest_rank *local, uint32_t n, lvl_payload **out,
                     cn_err *err)
{
    *out = NULL;
    lvl_payload *p = calloc(1, sizeof *p);
    if (p) {
        p->map = calloc(n ? n : 1, sizeof *p->map);
        p->size = calloc(n ? n : 1, sizeof *p->size);
    }
    if (!p || !p->map || !p->size) {
        lvl_payload_close(p);
        return cn_fail(err, CAIRN_ENOMEM, "no memory for the payload");
    }
    p->n = n;
    int rc = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        char name[64];
        cn_rank_filename(name, sizeof name, local[i].rank);
        int fd = openat(genfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        if (fd < 0) {
            rc = cn_fail_errno(err, errno, "%s", name);
            break;
        }
        if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != local[i].file_size) {
            close(fd);
            rc = cn_fail(err, CAIRN_ECORRUPT, "%s: size differs from the manifest", name);
            break;
        }
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (m == MAP_FAILED) {
            rc = cn_fail_errno(err, errno, "cannot map %s", name);
            break;
        }
        p->map[i] = m;
        p->size[i] = (uint64_t)st.st_size;
        p->total += p->size[i];
    }
    if (rc < 0) {
        lvl_payload_close(p);
        return rc;
    }
    *out = p;
    return 0;
}

uint64_t lvl_payload_size(const lvl_payload *p) { return p->total; }

/* List the checksum blocks and gaps of K's file (as cn_ckpt_verify walks them). */
static int plan_checks(pcheck *k, cn_err *err)
{
    const cn_ckpt *c = k->c;
    size_t n = 1;
    for (uint32_t i = 0; i < c->h.nentries; i++)
        n += 1 + c->e[i].nblocks;
    k->seg = calloc(n, sizeof *k->seg);
    CN_FAIL_IF(!k->seg, err, CAIRN_ENOMEM, "no memory to verify %s", k->path);
    uint32_t bs = c->h.block_size;
    uint64_t gap = CN_HEADER_SIZE + c->h.table_size; /* header and table: checked already */
    for (uint32_t i = 0; i <= c->h.nentries; i++) {
        uint64_t next = i < c->h.nentries ? c->e[i].offset : c->h.file_size;
        if (next > gap)
            k->seg[k->nseg++] = (pseg){.off = gap, .len = next - gap, .entry = PSEG_GAP};
        if (i == c->h.nentries)
            break;
        const cn_entry *e = &c->e[i];
        for (uint32_t b = 0; b < e->nblocks; b++) {
            uint64_t off = (uint64_t)b * bs;
            k->seg[k->nseg++] = (pseg){.off = e->offset + off,
                                       .len = e->stored_size - off < bs ? e->stored_size - off : bs,
                                       .sum = e->block_sums[b], .entry = i, .block = b};
        }
        gap = e->offset + e->stored_size;
    }
    return 0;
}

int lvl_payload_verify(lvl_payload *p, const cn_manifest_rank *local, const char *gen_path,
                       cn_err *err)
{
    if (p->chk)
        return 0;
    pcheck *chk = calloc(p->n ? p->n : 1, sizeof *chk);
    CN_FAIL_IF(!chk, err, CAIRN_ENOMEM, "no memory to verify the payload");
    int rc = 0;
    for (uint32_t i = 0; i < p->n && rc == 0; i++) {
        pcheck *k = &chk[i];
        char name[64];
        cn_rank_filename(name, sizeof name, local[i].rank);
        snprintf(k->path, sizeof k->path, "%s/%s", gen_path, name);
        rc = cn_ckpt_parse(p->map[i], (size_t)p->size[i], k->path, &k->c, err);
        if (rc == 0 && k->c->h.header_sum != local[i].header_sum)
            rc = cn_fail(err, CAIRN_ECORRUPT, "%s: header checksum differs from the manifest's "
                         "(the file was replaced since level 1 was written)", k->path);
        else if (rc == 0 && k->c->h.rank != local[i].rank)
            rc = cn_fail(err, CAIRN_ECORRUPT, "%s: holds rank %u, not %u", k->path,
                         k->c->h.rank, local[i].rank);
        if (rc == 0)
            rc = plan_checks(k, err);
    }
    if (rc == 0) {
        p->chk = chk;
        return 0;
    }
    for (uint32_t i = 0; i < p->n; i++) {
        cn_ckpt_close(chk[i].c);
        free(chk[i].seg);
    }
    free(chk);
    return rc;
}

static int check_seg(const uint8_t *map, const pcheck *k, pseg *s, cn_err *err)
{
    const uint8_t *b = map + s->off;
    if (s->entry == PSEG_GAP) {
        for (uint64_t i = 0; i < s->len; i++)
            CN_FAIL_IF(b[i], err, CAIRN_ECORRUPT,
                       "%s: nonzero byte at %llu in the padding before offset %llu (the file "
                       "changed since level 1 was written)",
                       k->path, (unsigned long long)(s->off + i),
                       (unsigned long long)(s->off + s->len));
    } else {
        CN_FAIL_IF(cn_hash(b, (size_t)s->len) != s->sum, err, CAIRN_ECORRUPT,
                   "%s: '%s' block %u (bytes %llu..%llu) checksum mismatch (the file changed "
                   "since level 1 was written)",
                   k->path, k->c->e[s->entry].name, s->block, (unsigned long long)s->off,
                   (unsigned long long)(s->off + s->len - 1));
    }
    s->checked = true;
    return 0;
}

/* Verify every unchecked block of file I that [LO, LO + LEN) touches. */
static int check_range(lvl_payload *p, uint32_t i, uint64_t lo, uint64_t len, cn_err *err)
{
    pcheck *k = &p->chk[i];
    size_t a = 0, b = k->nseg; /* the first block that ends after LO */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (k->seg[mid].off + k->seg[mid].len <= lo)
            a = mid + 1;
        else
            b = mid;
    }
    for (; a < k->nseg && k->seg[a].off < lo + len; a++)
        if (!k->seg[a].checked)
            CN_TRY(check_seg(p->map[i], k, &k->seg[a], err));
    return 0;
}

int lvl_payload_read_checked(lvl_payload *p, uint64_t off, void *buf, size_t len, cn_err *err)
{
    CN_FAIL_IF(!p->chk, err, CAIRN_EINVAL, "payload read before it was verified");
    uint64_t base = 0;
    for (uint32_t i = 0; i < p->n && len > 0; base += p->size[i], i++) {
        if (off + len <= base || off >= base + p->size[i])
            continue;
        uint64_t lo = off > base ? off - base : 0;
        uint64_t hi = off + len - base < p->size[i] ? off + len - base : p->size[i];
        CN_TRY(check_range(p, i, lo, hi - lo, err));
    }
    lvl_payload_read(p, off, buf, len);
    return 0;
}

void lvl_payload_read(const lvl_payload *p, uint64_t off, void *buf, size_t len)
{
    uint8_t *dst = buf;
    uint64_t base = 0;
    for (uint32_t i = 0; i < p->n && len > 0; base += p->size[i], i++) {
        if (off >= base + p->size[i])
            continue;
        size_t n = (size_t)(base + p->size[i] - off < len ? base + p->size[i] - off : len);
        memcpy(dst, p->map[i] + (off - base), n);
        dst += n;
        off += n;
        len -= n;
    }
    memset(dst, 0, len);
}

struct lvl_payload_out {
    int genfd;
    uint32_t n;
    cn_manifest_rank *local;
    int *fd;
};

void lvl_payload_abort(lvl_payload_out *o)
{
    if (!o)
        return;
    for (uint32_t i = 0; i < o->n; i++) {
        if (o->fd[i] < 0)
            continue;
        close(o->fd[i]);
        char tmp[80];
        snprintf(tmp, sizeof tmp, "rank-%u.ckpt.tmp", o->local[i].rank);
        unlinkat(o->genfd, tmp, 0);
    }
    free(o->fd);
    free(o->local);
    free(o);
}

int lvl_payload_create(int genfd, const cn_manifest_rank *local, uint32_t n,
                       lvl_payload_out **out, cn_err *err)
{
    *out = NULL;
    lvl_payload_out *o = calloc(1, sizeof *o);
    if (o) {
        o->local = malloc((n ? n : 1) * sizeof *o->local);
        o->fd = malloc((n ? n : 1) * sizeof *o->fd);
    }
    if (!o || !o->local || !o->fd) {
        if (o)
            free(o->local), free(o->fd);
        free(o);
        return cn_fail(err, CAIRN_ENOMEM, "no memory");
    }
    o->genfd = genfd;
    o->n = n;
    memcpy(o->local, local, n * sizeof *local);
    for (uint32_t i = 0; i < n; i++)
        o->fd[i] = -1;
    for (uint32_t i = 0; i < n; i++) {
        char tmp[80];
        snprintf(tmp, sizeof tmp, "rank-%u.ckpt.tmp", local[i].rank);
        unlinkat(genfd, tmp, 0);
        o->fd[i] = openat(genfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (o->fd[i] < 0 || ftruncate(o->fd[i], (off_t)local[i].file_size) != 0) {
            int rc = cn_fail_errno(err, errno, "cannot create %s", tmp);
            lvl_payload_abort(o);
            return rc;
        }
    }
    *out = o;
    return 0;
}

int lvl_payload_write(lvl_payload_out *o, uint64_t off, const void *buf, size_t len,
                      cn_err *err)
{
    const uint8_t *src = buf;
    uint64_t base = 0;
    for (uint32_t i = 0; i < o->n && len > 0; base += o->local[i].file_size, i++) {
        uint64_t end = base + o->local[i].file_size;
        if (off >= end)
            continue;
        size_t n = (size_t)(end - off < len ? end - off : len);
        CN_TRY(cn_pwrite_all(o->fd[i], src, n, off - base, "rebuilt rank file", err));
        src += n;
        off += n;
        len -= n;
    }
    return 0;
}

int lvl_payload_commit(lvl_payload_out *o, const char *gen_path, cn_err *err)
{
    int rc = 0;
    for (uint32_t i = 0; i < o->n && rc == 0; i++) {
        char tmp[80], name[64], path[4400];
        cn_rank_filename(name, sizeof name, o->local[i].rank);
        snprintf(tmp, sizeof tmp, "%s.tmp", name);
        snprintf(path, sizeof path, "%s/%s (rebuilt)", gen_path, name);
        if (fdatasync(o->fd[i]) != 0) {
            rc = cn_fail_errno(err, errno, "%s: cannot sync", path);
            break;
        }
        cn_ckpt *c = NULL;
        rc = cn_ckpt_open(o->genfd, tmp, path, &c, err);
        if (rc == 0 && c->h.header_sum != o->local[i].header_sum)
            rc = cn_fail(err, CAIRN_ECORRUPT, "%s: checksum differs from the set description",
                         path);
        if (rc == 0)
            rc = cn_ckpt_verify(c, path, err);
        cn_ckpt_close(c);
    }
    for (uint32_t i = 0; i < o->n && rc == 0; i++) {
        char tmp[80], name[64];
        cn_rank_filename(name, sizeof name, o->local[i].rank);
        snprintf(tmp, sizeof tmp, "%s.tmp", name);
        if (renameat(o->genfd, tmp, o->genfd, name) != 0)
            rc = cn_fail_errno(err, errno, "cannot rename %s", tmp);
    }
    if (rc < 0) {
        lvl_payload_abort(o);
        return rc;
    }
    int genfd = o->genfd;
    for (uint32_t i = 0; i < o->n; i++)
        close(o->fd[i]);
    free(o->fd);
    free(o->local);
    free(o);
    return cn_dir_sync(genfd, err);
}
