/*
 * t_h5forge.c - test helper: damage one part of a split HDF5 routed file in
 * a level-4 aggregated file, then reseal every checksum the container has,
 * so that only the whole-file checksum of the rebuilt file can catch it
 * (tests/mpi/run_h5.sh).
 *
 *   t_h5forge GENDIR FILE RANK KIND [NAME]
 *
 * In GENDIR/agg-<FILE>.cz, take the variable of RANK whose kind is KIND
 * (h5skel, h5data, h5map) and, for h5data, whose name is NAME (the first such
 * part when the rank has several files); flip one byte in its middle; write
 * the aggregated file again with the same scheme (so group, frame, header
 * and table checksums are right), and reseal GENDIR/index (the file's size
 * and XXH3-64). Prints "forged KIND NAME of rank RANK at byte B of S".
 * Built like the MPI test programs (over libcairn's internals), calls no MPI.
 */
#include "common/common.h"
#include "compress/compress.h"
#include "levels/pfs/pfs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

typedef struct copy {
    cz_agg_var *v;
    size_t n, cap;
} copy;

static int die(const char *what, const cn_err *err)
{
    fprintf(stderr, "t_h5forge: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    return 1;
}

static int keep(void *arg, const cz_agg_var *v)
{
    copy *c = arg;
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->v = realloc(c->v, c->cap * sizeof *c->v);
        if (!c->v)
            return -1;
    }
    cz_agg_var *x = &c->v[c->n++];
    *x = *v;
    x->name = strdup(v->name);
    void *d = malloc(v->size ? v->size : 1);
    memcpy(d, v->data, v->size);
    x->data = d;
    return 0;
}

typedef struct out {
    uint8_t *p;
    size_t len, cap;
} out;

static int sink(void *arg, const void *buf, size_t len, cn_err *err)
{
    out *o = arg;
    (void)err;
    if (o->len + len > o->cap) {
        o->cap = 2 * (o->len + len);
        o->p = realloc(o->p, o->cap);
        if (!o->p)
            return -1;
    }
    memcpy(o->p + o->len, buf, len);
    o->len += len;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return die("usage: t_h5forge GENDIR FILE RANK KIND [NAME]", NULL);
    cn_err err = {0};
    uint32_t f = (uint32_t)strtoul(argv[2], NULL, 10), rank = (uint32_t)strtoul(argv[3], NULL, 10);
    const char *kind = argv[4], *name = argc > 5 ? argv[5] : NULL;
    int dfd = cn_dir_open_path(argv[1], &err);
    if (dfd < 0)
        return die(argv[1], &err);
    char file[64];
    cn_agg_filename(file, sizeof file, f);
    uint8_t *buf = NULL, *ibuf = NULL;
    size_t len = 0, ilen = 0;
    if (cn_read_small(dfd, file, (size_t)1 << 31, &buf, &len, &err) != 0)
        return die(file, &err);
    cz_agg_file *af = NULL;
    copy c = {0};
    if (cz_agg_open(buf, len, &af, &err) != 0 || cz_agg_read(af, keep, &c, &err) != 0)
        return die(file, &err);
    int scheme = cz_agg_scheme_of(af);
    cz_agg_close(af);
    cz_agg_var *hit = NULL;
    for (size_t i = 0; i < c.n && !hit; i++)
        if (c.v[i].rank == rank && strcmp(cz_agg_kind_name(c.v[i].kind), kind) == 0 &&
            (!name || strcmp(c.v[i].name, name) == 0))
            hit = &c.v[i];
    if (!hit || hit->size == 0)
        return die("no such part (or it is empty)", NULL);
    uint8_t *d = (uint8_t *)hit->data;
    d[hit->size / 2] ^= 0x5a;
    out o = {0};
    cz_agg_opts opts = {.scheme = scheme};
    if (cz_agg_write(c.v, c.n, &opts, sink, &o, NULL, &err) != 0)
        return die("rewriting", &err);
    if (cn_write_atomic(dfd, file, o.p, o.len, &err) != 0)
        return die(file, &err);
    cn_pindex x;
    if (cn_read_small(dfd, CN_PINDEX_NAME, (size_t)1 << 26, &ibuf, &ilen, &err) != 0 ||
        cn_pindex_decode(ibuf, ilen, &x, &err) != 0)
        return die("index", &err);
    if (f >= x.nfiles)
        return die("no such file in the index", NULL);
    x.stored = x.stored - x.files[f].size + o.len;
    x.files[f] = (cn_pfile){o.len, XXH3_64bits(o.p, o.len)};
    uint8_t *enc = NULL;
    size_t elen = 0;
    if (cn_pindex_encode(&x, &enc, &elen, &err) != 0 ||
        cn_write_atomic(dfd, CN_PINDEX_NAME, enc, elen, &err) != 0)
        return die("index", &err);
    printf("forged %s %s of rank %u at byte %llu of %llu\n", kind, hit->name, rank,
           (unsigned long long)(hit->size / 2), (unsigned long long)hit->size);
    return 0;
}
