/*
 * ckread.c - open a checkpoint file for reading: map it, validate header and
 * entry table, and (on request) every data block's checksum.
 *
 * The mapping is read-only and private; the cn_ckpt owns it and its entry
 * table until cn_ckpt_close. Restart verifies a whole generation before it
 * copies a byte into protected memory, so a failed restart changes nothing.
 */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int cn_ckpt_parse(const uint8_t *buf, size_t len, const char *path, cn_ckpt **out, cn_err *err)
{
    *out = NULL;
    cn_ckpt *c = calloc(1, sizeof *c);
    CN_FAIL_IF(!c, err, CAIRN_ENOMEM, "no memory");
    c->map = buf;
    c->size = len;
    int rc = cn_header_decode(buf, len, &c->h, err);
    if (rc == 0 && c->h.file_size != len)
        rc = cn_fail(err, CAIRN_ECORRUPT, "size is %zu bytes, header says %llu (truncated?)",
                     len, (unsigned long long)c->h.file_size);
    if (rc == 0)
        rc = cn_table_decode(buf + CN_HEADER_SIZE, (size_t)c->h.table_size, &c->h, &c->e, err);
    if (rc < 0) {
        free(c);
        if (path)
            cn_err_prefix(err, "%s: ", path);
        return rc;
    }
    *out = c;
    return 0;
}

int cn_ckpt_open(int dirfd, const char *name, const char *path, cn_ckpt **out, cn_err *err)
{
    *out = NULL;
    if (!path)
        path = name;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return cn_fail(err, CAIRN_ENOENT, "%s: missing", path);
        return cn_fail_errno(err, e, "%s: cannot open", path);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return cn_fail(err, CAIRN_ECORRUPT, "%s: not a regular file", path);
    }
    if (st.st_size < CN_HEADER_SIZE) {
        close(fd);
        return cn_fail(err, CAIRN_ECORRUPT, "%s: truncated (%lld bytes)", path,
                       (long long)st.st_size);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    int e = errno;
    close(fd);
    if (map == MAP_FAILED)
        return cn_fail_errno(err, e, "%s: cannot map", path);
    madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
    int rc = cn_ckpt_parse(map, (size_t)st.st_size, path, out, err);
    if (rc < 0)
        munmap(map, (size_t)st.st_size);
    else
        (*out)->owns_map = true;
    return rc;
}

/* Alignment gaps carry no checksum, so they must be zero. */
static bool zeros(const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

int cn_ckpt_verify(const cn_ckpt *c, const char *path, cn_err *err)
{
    uint32_t bs = c->h.block_size;
    uint64_t gap = CN_HEADER_SIZE + c->h.table_size; /* end of what precedes entry i */
    for (uint32_t i = 0; i <= c->h.nentries; i++) {
        uint64_t next = i < c->h.nentries ? c->e[i].offset : c->h.file_size;
        if (!zeros(c->map + gap, next - gap))
            return cn_fail(err, CAIRN_ECORRUPT, "%s: nonzero padding before offset %llu",
                           path ? path : "checkpoint", (unsigned long long)next);
        if (i == c->h.nentries)
            break;
        const cn_entry *e = &c->e[i];
        gap = e->offset + e->stored_size;
        for (uint32_t b = 0; b < e->nblocks; b++) {
            uint64_t off = (uint64_t)b * bs;
            uint64_t n = e->stored_size - off < bs ? e->stored_size - off : bs;
            if (cn_hash(c->map + e->offset + off, (size_t)n) != e->block_sums[b])
                return cn_fail(err, CAIRN_ECORRUPT, "%s: '%s' block %u checksum mismatch",
                               path ? path : "checkpoint", e->name, b);
        }
    }
    return 0;
}

void cn_ckpt_close(cn_ckpt *c)
{
    if (!c)
        return;
    if (c->owns_map)
        munmap((void *)c->map, c->size);
    cn_entries_free(c->e, c->h.nentries);
    free(c);
}

const cn_entry *cn_ckpt_find(const cn_ckpt *c, const char *name)
{
    for (uint32_t i = 0; i < c->h.nentries; i++)
        if (strcmp(c->e[i].name, name) == 0)
            return &c->e[i];
    return NULL;
}
