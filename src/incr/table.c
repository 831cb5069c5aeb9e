/*
 * table.c - one generation's block hashes, per variable.
 *
 * After a checkpoint commits, its hashes become the table a later
 * checkpoint diffs against; after a restart, the table is rebuilt from the
 * chain that was restored. A table is immutable once sealed and shared by
 * reference count (one generation can be the parent at several levels).
 */
#include "incr/incr.h"

#include <stdlib.h>
#include <string.h>

incr_tab *incr_tab_new(int64_t gen, int64_t base, uint32_t depth, uint32_t block)
{
    incr_tab *t = calloc(1, sizeof *t);
    if (t)
        *t = (incr_tab){.refs = 1, .gen = gen, .base = base, .depth = depth, .block = block};
    return t;
}

int incr_tab_add(incr_tab *t, const char *name, uint64_t size, double bound, cn_h128 *hash)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        incr_var *v = realloc(t->v, cap * sizeof *v);
        if (!v) {
            free(hash);
            return -1;
        }
        t->v = v;
        t->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) {
        free(hash);
        return -1;
    }
    t->v[t->n++] = (incr_var){copy, size, hash, bound};
    return 0;
}

static int cmp_var(const void *a, const void *b)
{
    return strcmp(((const incr_var *)a)->name, ((const incr_var *)b)->name);
}

void incr_tab_seal(incr_tab *t)
{
    if (t->n > 1)
        qsort(t->v, t->n, sizeof *t->v, cmp_var);
}

const incr_var *incr_tab_find(const incr_tab *t, const char *name)
{
    if (!t || t->n == 0)
        return NULL;
    incr_var key = {.name = (char *)name};
    return bsearch(&key, t->v, t->n, sizeof *t->v, cmp_var);
}

incr_tab *incr_tab_ref(incr_tab *t)
{
    if (t)
        t->refs++;
    return t;
}

void incr_tab_unref(incr_tab *t)
{
    if (!t || --t->refs > 0)
        return;
    for (size_t i = 0; i < t->n; i++) {
        free(t->v[i].name);
        free(t->v[i].hash);
    }
    free(t->v);
    free(t);
}
