/*
 * payload.c - a node's payload for levels 2 and 3: the rank files of one
 * generation, in ascending rank order, seen as one byte stream.
 *
 * Reading maps every file read-only and copies ranges out, reading zeros past
 * the end (the padding of the erasure code). Writing (rebuild after a node
 * loss) creates NAME.tmp files of the listed sizes, scatters ranges into
 * them, and commits each only after it verifies against the checksums the
 * set description lists, so a wrong rebuild never becomes a checkpoint.
 */
#include "levels/levels.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct lvl_payload {
    uint32_t n;
    const uint8_t **map;
    uint64_t *size;
    uint64_t total;
};

void lvl_payload_close(lvl_payload *p)
{
    if (!p)
        return;
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
