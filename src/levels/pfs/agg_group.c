/*
 * agg_group.c - the parts of N->M aggregation that writer and reader share:
 * scheme names, the similarity key, the checks of a variable's metadata and
 * of (rank, kind, name) uniqueness, and the walk that orders a group's bytes
 * (whole members, or members interleaved in blocks). See agg.c for the file.
 *
 * Nothing here allocates; the caller owns every array.
 */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>

const uint8_t cz_agg_magic[8] = {'C', 'A', 'I', 'R', 'N', 'A', 'G', 'G'};
const uint8_t cz_agg_tmagic[8] = {'C', 'A', 'I', 'R', 'N', 'E', 'N', 'D'};

static const char *const scheme_names[] = {"agnostic", "agnostic-block", "aware", "aware-block",
                                           "auto"};

const char *cz_agg_scheme_name(int scheme)
{
    if (scheme < CZ_AGG_AGNOSTIC || scheme > CZ_AGG_AUTO)
        return "?";
    return scheme_names[scheme];
}

int cz_agg_scheme_parse(const char *name)
{
    if (!name)
        return -1;
    for (int i = CZ_AGG_AGNOSTIC; i <= CZ_AGG_AUTO; i++)
        if (strcmp(name, scheme_names[i]) == 0)
            return i;
    return -1;
}

static const char *const kind_names[] = {"var", "file", "h5map", "h5skel", "h5data"};

const char *cz_agg_kind_name(int kind)
{
    return kind >= 0 && kind <= CZ_KIND_MAX ? kind_names[kind] : "?";
}

/* ---- the walk ----------------------------------------------------------- */

void cz_agg_walk_init(cz_agg_walk *w, const cz_agg_member *m, size_t nm, uint64_t block)
{
    uint64_t most = 0;
    for (size_t i = 0; i < nm; i++)
        if (m[i].size > most)
            most = m[i].size;
    *w = (cz_agg_walk){.m = m, .nm = nm, .block = block};
    w->rounds = block ? most / block + (most % block != 0) : 0;
}

static void walk_find(cz_agg_walk *w)
{
    if (w->left)
        return;
    if (!w->block) {
        if (w->started && w->at < w->nm)
            w->at++;
        w->started = true;
        while (w->at < w->nm && w->m[w->at].size == 0)
            w->at++;
        if (w->at < w->nm)
            w->left = w->m[w->at].size;
        return;
    }
    while (w->round < w->rounds) {
        if (w->started)
            w->at++;
        w->started = true;
        if (w->at >= w->nm) {
            w->at = 0;
            if (++w->round >= w->rounds)
                return;
        }
        uint64_t start = w->round * w->block; /* <= the largest size: no overflow */
        if (w->m[w->at].size > start) {
            uint64_t rest = w->m[w->at].size - start;
            w->left = rest < w->block ? rest : w->block;
            return;
        }
    }
}

uint64_t cz_agg_walk_piece(cz_agg_walk *w, size_t *mi)
{
    walk_find(w);
    *mi = w->at;
    return w->left;
}

void cz_agg_walk_take(cz_agg_walk *w, uint64_t k) { w->left -= k; }

/* ---- keys and checks ------------------------------------------------------ */

int cz_agg_key_cmp(uint8_t ka, const char *na, uint8_t ta, uint8_t kb, const char *nb,
                   uint8_t tb)
{
    if (ka != kb)
        return ka < kb ? -1 : 1;
    int c = strcmp(na, nb);
    if (c)
        return c < 0 ? -1 : 1;
    return ta == tb ? 0 : ta < tb ? -1 : 1;
}

int cz_agg_member_cmp(const cz_agg_var *a, const cz_agg_var *b)
{
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->file == b->file ? 0 : a->file < b->file ? -1 : 1;
}

/* A dataset's path may hold '/'; every other name is flat. */
static bool name_ok(const cz_agg_var *v)
{
    if (v->kind != CZ_KIND_H5DATA)
        return cn_name_ok(v->name);
    size_t n = v->name ? strnlen(v->name, CAIRN_NAME_MAX + 1) : 0;
    return n >= 1 && n <= CAIRN_NAME_MAX;
}

int cz_agg_var_check(const cz_agg_var *v, int code, const char *what, cn_err *err)
{
    CN_FAIL_IF(!name_ok(v), err, code, "%s: bad name", what);
    CN_FAIL_IF(v->kind > CZ_KIND_MAX || v->type > CAIRN_DOUBLE || v->ndims > CAIRN_MAX_DIMS,
               err, code, "%s '%s' (rank %u): bad kind, type or number of dims", what, v->name,
               v->rank);
    CN_FAIL_IF((v->kind == CN_KIND_FILE || v->kind == CZ_KIND_H5MAP ||
                v->kind == CZ_KIND_H5SKEL) && (v->type != CAIRN_BYTE || v->ndims != 0),
               err, code, "%s: %s '%s' (rank %u) with a type or shape", what,
               cz_agg_kind_name(v->kind), v->name, v->rank);
    CN_FAIL_IF(v->file != 0 && v->kind <= CN_KIND_FILE, err, code,
               "%s '%s' (rank %u): a file number on a %s", what, v->name, v->rank,
               cz_agg_kind_name(v->kind));
    if (v->ndims > 0) {
        uint64_t prod = 1;
        for (int d = 0; d < v->ndims; d++)
            CN_FAIL_IF(__builtin_mul_overflow(prod, v->dims[d], &prod), err, code,
                       "%s '%s' (rank %u): dims overflow", what, v->name, v->rank);
        CN_FAIL_IF(prod != v->count, err, code,
                   "%s '%s' (rank %u): dims do not multiply to the count", what, v->name,
                   v->rank);
    }
    for (int d = v->ndims; d < CAIRN_MAX_DIMS; d++)
        CN_FAIL_IF(v->dims[d] != 0, err, code, "%s '%s' (rank %u): unused dim set", what,
                   v->name, v->rank);
    uint64_t size;
    CN_FAIL_IF(__builtin_mul_overflow(v->count, (uint64_t)cairn_type_size(v->type), &size) ||
                   size != v->size,
               err, code, "%s '%s' (rank %u): size %llu is not %llu elements of its type", what,
               v->name, v->rank, (unsigned long long)v->size, (unsigned long long)v->count);
    return 0;
}

int cz_agg_sort(size_t *idx, size_t n, int (*cmp)(const void *ctx, size_t a, size_t b),
                const void *ctx)
{
    size_t *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!tmp)
        return -1;
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = n - lo > width ? lo + width : n;
            size_t hi = n - mid > width ? mid + width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                tmp[k++] = cmp(ctx, idx[i], idx[j]) <= 0 ? idx[i++] : idx[j++];
            while (i < mid)
                tmp[k++] = idx[i++];
            while (j < hi)
                tmp[k++] = idx[j++];
        }
        memcpy(idx, tmp, n * sizeof *idx);
    }
    free(tmp);
    return 0;
}

static int cmp_rank_name(const void *ctx, size_t a, size_t b)
{
    const cz_agg_var *x = (const cz_agg_var *)ctx + a, *y = (const cz_agg_var *)ctx + b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return strcmp(x->name, y->name);
}

int cz_agg_unique(const cz_agg_var *v, size_t *idx, size_t n, int code, cn_err *err)
{
    if (cz_agg_sort(idx, n, cmp_rank_name, v) != 0)
        return cn_fail(err, CAIRN_ENOMEM, "no memory to check %zu names", n);
    for (size_t i = 1; i < n; i++)
        CN_FAIL_IF(cmp_rank_name(v, idx[i - 1], idx[i]) == 0, err, code,
                   "rank %u has two %s named '%s' (file %u)", v[idx[i]].rank,
                   cz_agg_kind_name(v[idx[i]].kind), v[idx[i]].name, v[idx[i]].file);
    return 0;
}
