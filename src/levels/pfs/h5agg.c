/*
 * h5agg.c - routed HDF5 files as aggregation variables, for level 4: the
 * glue between h5split.c/h5map.c and the aggregated file (agg.c).
 *
 * Out (cz_h5_split_vars): each routed file (kind file) whose bytes are HDF5
 * with contiguous datasets to take out becomes, under the rank's next file
 * number k,
 *   kind h5map   name "map"       the map record (h5map.c), bytes
 *   kind h5skel  name "skeleton"  every byte outside the datasets, bytes
 *   kind h5data  name its path    one per dataset, typed (h5split.c)
 * so that the aware schemes group each dataset path and type across ranks
 * (the paper's similarity key), all skeletons together, all maps together.
 * Any other file is passed on whole, as before.
 *
 * Back (cz_h5_parts_*): the parts are copied as cz_agg_read delivers them;
 * then for one rank its parts are sorted by (kind, file, name), every map is
 * parsed, its skeleton and datasets found by binary search, the file rebuilt
 * and its whole-file checksum checked (cz_h5_join). A part no map claims is
 * an error, as is a part missing.
 *
 * Ownership: a cz_h5_split owns the variable array, skeletons, maps and
 * dataset lists it made; a cz_h5_parts owns the copies it keeps; the files
 * rebuilt go to the callback.
 */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>

typedef struct split_own {
    uint8_t **bufs;        /* skeletons and maps */
    size_t nbufs;
    cz_h5_dset **dsets;    /* one list per split file */
    size_t *ndsets;
    size_t nfiles;
} split_own;

void cz_h5_split_free(cz_h5_split *s)
{
    split_own *o = s ? s->own : NULL;
    if (o) {
        for (size_t i = 0; i < o->nbufs; i++)
            free(o->bufs[i]);
        for (size_t i = 0; i < o->nfiles; i++)
            cz_h5_dsets_free(o->dsets[i], o->ndsets[i]);
        free(o->bufs);
        free(o->dsets);
        free(o->ndsets);
        free(o);
    }
    if (s) {
        free(s->v);
        memset(s, 0, sizeof *s);
    }
}

/* File F (kind file, of V) split at D[0..ND) appended to S's variables as file K. */
static int add_parts(cz_h5_split *s, split_own *o, const cz_agg_var *f, uint32_t k,
                     cz_h5_dset *d, size_t nd, cn_err *err)
{
    uint64_t data = 0;
    for (size_t i = 0; i < nd; i++)
        data += d[i].size;
    uint8_t *skel = malloc(f->size - data ? f->size - data : 1), *map = NULL;
    size_t maplen = 0;
    CN_FAIL_IF(!skel, err, CAIRN_ENOMEM, "no memory for the skeleton of '%s'", f->name);
    o->bufs[o->nbufs++] = skel;
    cz_h5_skeleton(f->data, f->size, d, nd, skel);
    CN_TRY(cz_h5map_encode(f->name, f->data, f->size, d, nd, &map, &maplen, err));
    o->bufs[o->nbufs++] = map;
    s->v[s->n++] = (cz_agg_var){.rank = f->rank, .name = "map", .kind = CZ_KIND_H5MAP,
                                .file = k, .type = CAIRN_BYTE, .count = maplen,
                                .size = maplen, .data = map};
    s->v[s->n++] = (cz_agg_var){.rank = f->rank, .name = "skeleton", .kind = CZ_KIND_H5SKEL,
                                .file = k, .type = CAIRN_BYTE, .count = f->size - data,
                                .size = f->size - data, .data = skel};
    for (size_t i = 0; i < nd; i++) {
        cz_agg_var *x = &s->v[s->n++];
        *x = (cz_agg_var){.rank = f->rank, .name = d[i].name, .kind = CZ_KIND_H5DATA,
                          .file = k, .type = d[i].type, .ndims = d[i].ndims,
                          .count = d[i].count, .size = d[i].size,
                          .data = (const uint8_t *)f->data + d[i].offset};
        memcpy(x->dims, d[i].dims, sizeof x->dims);
    }
    s->files++;
    s->datasets += (uint32_t)nd;
    s->skel += f->size - data;
    return 0;
}

int cz_h5_split_vars(const cz_agg_var *v, size_t n, cz_h5_split *out, cn_err *err)
{
    memset(out, 0, sizeof *out);
    size_t nfile = 0;
    for (size_t i = 0; i < n; i++)
        nfile += v[i].kind == CN_KIND_FILE;
    split_own *o = calloc(1, sizeof *o);
    out->own = o;
    out->v = malloc((n ? n : 1) * sizeof *out->v);
    if (o) {
        o->bufs = calloc(2 * nfile + 1, sizeof *o->bufs);
        o->dsets = calloc(nfile + 1, sizeof *o->dsets);
        o->ndsets = calloc(nfile + 1, sizeof *o->ndsets);
    }
    int rc = 0;
    if (!o || !out->v || !o->bufs || !o->dsets || !o->ndsets)
        rc = cn_fail(err, CAIRN_ENOMEM, "no memory to split %zu routed files", nfile);
    size_t cap = n;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        cz_h5_dset *d = NULL;
        size_t nd = 0;
        if (v[i].kind == CN_KIND_FILE)
            rc = cz_h5_scan(v[i].data, (size_t)v[i].size, &d, &nd, err);
        if (rc == 0 && nd == 0) {
            out->v[out->n++] = v[i]; /* kept whole */
            continue;
        }
        o->dsets[o->nfiles] = d;
        o->ndsets[o->nfiles++] = nd;
        if (rc)
            break;
        cap += 1 + nd; /* map, skeleton, datasets replace the file */
        cz_agg_var *nv = realloc(out->v, cap * sizeof *nv);
        if (!nv) {
            rc = cn_fail(err, CAIRN_ENOMEM, "no memory for the datasets of '%s'", v[i].name);
            break;
        }
        out->v = nv;
        uint32_t k = 0; /* this rank's next file number */
        for (size_t j = 0; j < out->n; j++)
            if (out->v[j].rank == v[i].rank && out->v[j].kind == CZ_KIND_H5MAP)
                k++;
        rc = add_parts(out, o, &v[i], k, d, nd, err);
    }
    if (rc)
        cz_h5_split_free(out);
    return rc;
}

/* ---- back -------------------------------------------------------------------- */

typedef struct part {
    uint32_t rank, file;
    uint8_t kind;
    bool used;
    char *name;
    uint8_t *data;
    uint64_t size;
} part;

struct cz_h5_parts {
    part *p;
    size_t n, cap;
};

cz_h5_parts *cz_h5_parts_new(void) { return calloc(1, sizeof(cz_h5_parts)); }

void cz_h5_parts_free(cz_h5_parts *ps)
{
    for (size_t i = 0; ps && i < ps->n; i++) {
        free(ps->p[i].name);
        free(ps->p[i].data);
    }
    if (ps)
        free(ps->p);
    free(ps);
}

int cz_h5_parts_keep(cz_h5_parts *ps, const cz_agg_var *v, cn_err *err)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 16;
        part *np = realloc(ps->p, cap * sizeof *np);
        CN_FAIL_IF(!np, err, CAIRN_ENOMEM, "no memory");
        ps->p = np, ps->cap = cap;
    }
    part *x = &ps->p[ps->n];
    *x = (part){.rank = v->rank, .file = v->file, .kind = v->kind, .size = v->size};
    x->name = strdup(v->name);
    x->data = malloc(v->size ? v->size : 1);
    if (!x->name || !x->data) {
        free(x->name), free(x->data);
        return cn_fail(err, CAIRN_ENOMEM, "no memory for '%s' (%llu bytes)", v->name,
                       (unsigned long long)v->size);
    }
    memcpy(x->data, v->data, v->size);
    ps->n++;
    return 0;
}

/* One rank's parts, sorted by (kind, file, name) for lookups. */
typedef struct rank_index {
    part *p;
    size_t *idx, n;
} rank_index;

static int part_cmp(const part *a, uint8_t kind, uint32_t file, const char *name)
{
    if (a->kind != kind)
        return a->kind < kind ? -1 : 1;
    if (a->file != file)
        return a->file < file ? -1 : 1;
    return strcmp(a->name, name);
}

static int cmp_parts(const void *ctx, size_t a, size_t b)
{
    const part *p = ctx;
    return part_cmp(&p[a], p[b].kind, p[b].file, p[b].name);
}

/* The unused part (KIND, FILE, NAME) of the rank, or NULL. */
static part *find(const rank_index *ri, uint8_t kind, uint32_t file, const char *name)
{
    size_t lo = 0, hi = ri->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = part_cmp(&ri->p[ri->idx[mid]], kind, file, name);
        if (c == 0)
            return ri->p[ri->idx[mid]].used ? NULL : &ri->p[ri->idx[mid]];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* Rebuild the file of map part MP (rank RANK) and hand it to CB. */
static int join_one(const rank_index *ri, part *mp,
                    int (*cb)(void *, const char *, uint8_t *, uint64_t), void *arg,
                    cn_err *err)
{
    cz_h5map *m = NULL;
    CN_TRY(cz_h5map_parse(mp->data, (size_t)mp->size, &m, err));
    part *sk = find(ri, CZ_KIND_H5SKEL, mp->file, "skeleton");
    const uint8_t **data = calloc(m->n + 1, sizeof *data);
    uint64_t *len = calloc(m->n + 1, sizeof *len);
    uint8_t *out = malloc(m->size ? m->size : 1);
    int rc = data && len && out ? 0 : cn_fail(err, CAIRN_ENOMEM, "no memory to rebuild '%s' "
                                              "(%llu bytes)", m->file,
                                              (unsigned long long)m->size);
    for (uint32_t i = 0; rc == 0 && i < m->n; i++) {
        part *d = find(ri, CZ_KIND_H5DATA, mp->file, m->d[i].name);
        if (d) {
            d->used = true;
            data[i] = d->data, len[i] = d->size;
        }
    }
    if (sk)
        sk->used = true;
    if (rc == 0)
        rc = cz_h5_join(m, sk ? sk->data : NULL, sk ? sk->size : 0, data, len, out, err);
    if (rc == 0) {
        rc = cb(arg, m->file, out, m->size);
        out = NULL; /* the callback's */
    }
    free(out);
    free(data);
    free(len);
    cz_h5map_free(m);
    return rc;
}

int cz_h5_parts_join(cz_h5_parts *ps, uint32_t rank,
                     int (*cb)(void *arg, const char *name, uint8_t *data, uint64_t size),
                     void *arg, cn_err *err)
{
    rank_index ri = {.p = ps->p, .idx = malloc((ps->n ? ps->n : 1) * sizeof *ri.idx)};
    CN_FAIL_IF(!ri.idx, err, CAIRN_ENOMEM, "no memory to index %zu parts", ps->n);
    for (size_t i = 0; i < ps->n; i++)
        if (ps->p[i].rank == rank)
            ri.idx[ri.n++] = i;
    int rc = cz_agg_sort(ri.idx, ri.n, cmp_parts, ps->p) ? cn_fail(err, CAIRN_ENOMEM, "no memory")
                                                         : 0;
    for (size_t i = 0; rc == 0 && i < ri.n; i++) {
        part *x = &ps->p[ri.idx[i]];
        if (x->kind != CZ_KIND_H5MAP || x->used)
            continue;
        x->used = true;
        rc = join_one(&ri, x, cb, arg, err);
        if (rc)
            cn_err_prefix(err, "rank %u, split routed file %u: ", rank, x->file);
    }
    for (size_t i = 0; rc == 0 && i < ri.n; i++) {
        const part *x = &ps->p[ri.idx[i]];
        if (!x->used)
            rc = cn_fail(err, CAIRN_ECORRUPT,
                         "rank %u: %s '%s' of split routed file %u belongs to no map", rank,
                         cz_agg_kind_name(x->kind), x->name, x->file);
    }
    free(ri.idx);
    return rc;
}
