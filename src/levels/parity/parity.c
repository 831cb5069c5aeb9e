/*
 * parity.c - level 3: the node's parity file for one generation.
 *
 * The ring delivers parity in pieces (row, offset); they go straight into
 * parity.ec.tmp at their place after the page-aligned metadata. At commit
 * the rows are read back once to checksum them per block, the metadata (set
 * description + row checksums) is written in front, and the file is made
 * durable and renamed into place. Reading maps the file, validates the
 * metadata and verifies every row block before anything is decoded from it.
 */
#include "levels/parity/parity.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define TMP_NAME CN_PARITY_NAME ".tmp"

struct lvl_parity_out {
    int fd;
    cn_parity meta;       /* borrowed arrays from the caller's meta, own row_sums */
    uint64_t data_offset; /* where row 0 starts */
};

int lvl_parity_create(int genfd, const cn_parity *meta, lvl_parity_out **out, cn_err *err)
{
    *out = NULL;
    lvl_parity_out *o = calloc(1, sizeof *o);
    CN_FAIL_IF(!o, err, CAIRN_ENOMEM, "no memory");
    o->meta = *meta;
    o->meta.row_sums = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = cn_parity_encode(&o->meta, &buf, &len, err); /* sizes the layout */
    free(buf);
    o->data_offset = o->meta.data_offset;
    unlinkat(genfd, TMP_NAME, 0);
    o->fd = rc < 0 ? -1
                   : openat(genfd, TMP_NAME, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                            0600);
    if (rc == 0 && (o->fd < 0 || ftruncate(o->fd, (off_t)o->meta.file_size) != 0))
        rc = cn_fail_errno(err, errno, "cannot create " TMP_NAME);
    if (rc < 0) {
        if (o->fd >= 0)
            close(o->fd), unlinkat(genfd, TMP_NAME, 0);
        free(o);
        return rc;
    }
    *out = o;
    return 0;
}

int lvl_parity_write(lvl_parity_out *o, int row, uint64_t off, const void *buf, size_t len,
                     cn_err *err)
{
    CN_FAIL_IF(row < 0 || (uint32_t)row >= o->meta.m || off + len > o->meta.chunk, err,
               CAIRN_EINVAL, "parity piece outside row %d", row);
    return cn_pwrite_all(o->fd, buf, len, o->data_offset + (uint64_t)row * o->meta.chunk + off,
                         TMP_NAME, err);
}

void lvl_parity_abort(lvl_parity_out *o, int genfd)
{
    if (!o)
        return;
    close(o->fd);
    unlinkat(genfd, TMP_NAME, 0);
    free(o->meta.row_sums);
    free(o);
}

int lvl_parity_commit(lvl_parity_out *o, int genfd, cn_err *err)
{
    uint32_t nb = cn_parity_nblocks(&o->meta);
    size_t rows_len = (size_t)o->meta.m * o->meta.chunk;
    o->meta.row_sums = calloc((size_t)o->meta.m * nb + 1, 8);
    int rc = o->meta.row_sums ? 0 : cn_fail(err, CAIRN_ENOMEM, "no memory");
    const uint8_t *rows = NULL;
    if (rc == 0 && rows_len) {
        rows = mmap(NULL, (size_t)o->meta.file_size, PROT_READ, MAP_SHARED, o->fd, 0);
        if (rows == MAP_FAILED) {
            rows = NULL;
            rc = cn_fail_errno(err, errno, "cannot map " TMP_NAME);
        }
    }
    for (uint32_t r = 0; rc == 0 && r < o->meta.m; r++)
        for (uint32_t b = 0; b < nb; b++) {
            uint64_t off = (uint64_t)b * o->meta.block_size;
            uint64_t n = o->meta.chunk - off < o->meta.block_size ? o->meta.chunk - off
                                                                  : o->meta.block_size;
            o->meta.row_sums[(size_t)r * nb + b] =
                cn_hash(rows + o->data_offset + (uint64_t)r * o->meta.chunk + off, (size_t)n);
        }
    if (rows)
        munmap((void *)rows, (size_t)o->meta.file_size);
    uint8_t *meta = NULL;
    size_t len = 0;
    if (rc == 0)
        rc = cn_parity_encode(&o->meta, &meta, &len, err);
    if (rc == 0)
        rc = cn_pwrite_all(o->fd, meta, len, 0, TMP_NAME, err);
    free(meta);
    if (rc == 0 && fdatasync(o->fd) != 0)
        rc = cn_fail_errno(err, errno, "cannot sync " TMP_NAME);
    if (rc == 0 && renameat(genfd, TMP_NAME, genfd, CN_PARITY_NAME) != 0)
        rc = cn_fail_errno(err, errno, "cannot rename " TMP_NAME);
    if (rc < 0) {
        lvl_parity_abort(o, genfd);
        return rc;
    }
    close(o->fd);
    free(o->meta.row_sums);
    free(o);
    return 0;
}

int lvl_parity_open(int genfd, const char *path, lvl_parity_in *in, cn_err *err)
{
    memset(in, 0, sizeof *in);
    int fd = openat(genfd, CN_PARITY_NAME, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT ? cn_fail(err, CAIRN_ENOENT, "%s: missing", path)
                               : cn_fail_errno(err, errno, "%s", path);
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 24) {
        close(fd);
        return cn_fail(err, CAIRN_ECORRUPT, "%s: not a parity file", path);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return cn_fail_errno(err, errno, "%s: cannot map", path);
    in->map = map;
    in->size = (size_t)st.st_size;
    int rc = cn_parity_check(in->map, in->size, path, &in->meta, err);
    if (rc < 0) {
        lvl_parity_close(in);
        return rc;
    }
    return 0;
}

void lvl_parity_close(lvl_parity_in *in)
{
    if (in->map)
        munmap((void *)in->map, in->size);
    cn_parity_free(&in->meta);
    memset(in, 0, sizeof *in);
}
