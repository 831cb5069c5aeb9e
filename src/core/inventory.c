/*
 * inventory.c - which generations can be restored.
 *
 * Locally, a rank can use generation G when <node>/gen-G/manifest decodes,
 * belongs to this job, lists this rank on this node with the same rank ->
 * node map and rank count, and the rank's file is present with the size the
 * manifest records. Globally, G is usable when every rank can use it: ranks
 * walk down from their newest candidates with MIN all-reductions until they
 * meet (api_common_below). Data checksums are checked later, by restart.
 * A generation of another layout is only noted (ctx->layout_note, restart's
 * CAIRN_EMISMATCH); one of this job and layout that a rank cannot use (its
 * file missing or of the wrong size, its manifest unreadable, a link of its
 * chain unusable) is noted as damaged (api_note_lost).
 */
#include "core/core.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The note restart gives when generation ID is of another layout than this run. */
static void note_layout(cairn_ctx *ctx, long id, const cn_manifest *m)
{
    if (ctx->layout_note[0])
        return;
    char was[96], now[96];
    api_layout_str(was, sizeof was, (int)m->nranks, (int)m->nnodes);
    api_layout_str(now, sizeof now, ctx->nranks, ctx->nnodes);
    bool same = m->nranks == (uint32_t)ctx->nranks && m->nnodes == (uint32_t)ctx->nnodes;
    snprintf(ctx->layout_note, sizeof ctx->layout_note,
             "generation %ld was written by %.60s%s; this run has %.60s", id, was,
             same ? " (another rank -> node map)" : "", now);
}

/* Does generation ID hold a manifest that names RANK's file as usable? A
 * generation of this job and layout that does not is noted as damaged. */
static bool usable(cairn_ctx *ctx, int rank, long id, api_gen *out)
{
    char gen[64], rank_file[64];
    cn_gen_dirname(gen, sizeof gen, id);
    cn_rank_filename(rank_file, sizeof rank_file, (uint32_t)rank);
    cn_err err = {0};
    int genfd = cn_dir_open(ctx->nodefd, gen, false, &err);
    if (genfd < 0)
        return false;
    cn_manifest m;
    bool ok = false;
    cn_err saved = ctx->err; /* a manifest that does not read only makes G unusable */
    int rc = api_read_manifest(ctx, genfd, &m);
    err = ctx->err;
    ctx->err = saved;
    if (rc == 0 && strcmp(m.job, ctx->job) == 0 && !api_same_layout(ctx, &m)) {
        note_layout(ctx, id, &m); /* another layout's: not ours to use, nor damaged */
        cn_debug("generation %ld was written by another layout", id);
    } else if (rc == 0) {
        const cn_manifest_rank *me = NULL;
        for (uint32_t i = 0; i < m.nlocal; i++)
            if (m.local[i].rank == (uint32_t)rank)
                me = &m.local[i];
        struct stat st;
        bool there = me && fstatat(genfd, rank_file, &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (!api_manifest_of(ctx, &m, id, ctx->node) || !me)
            api_note_lost(ctx, id, CAIRN_ECORRUPT, "%s/%s/%s names generation %lld of job %s, "
                          "node %u, without rank %d", ctx->node_path, gen, CN_MANIFEST_NAME,
                          (long long)m.generation, m.job, m.node, rank);
        else if (!there)
            api_note_lost(ctx, id, CAIRN_ECORRUPT, "%s/%s/%s is missing", ctx->node_path, gen,
                          rank_file);
        else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != me->file_size)
            api_note_lost(ctx, id, CAIRN_ECORRUPT, "%s/%s/%s is %lld bytes; the manifest says %llu",
                          ctx->node_path, gen, rank_file, (long long)st.st_size,
                          (unsigned long long)me->file_size);
        else
            ok = true;
        if (ok) {
            *out = (api_gen){.id = id, .level = (int)m.level, .parent = (long)m.parent,
                             .base = (long)m.base, .file_size = me->file_size,
                             .header_sum = me->header_sum, .raw = me->raw, .delta = me->delta,
                             .seconds = m.seconds};
            memcpy(out->label, m.label, sizeof out->label);
        }
        else
            cn_debug("generation %ld not usable on rank %d", id, rank);
        cn_manifest_free(&m);
    } else if (err.msg[0]) {
        cn_debug("generation %ld: %s", id, err.msg);
        if (err.code != -ENOENT) { /* a manifest is there but does not read */
            cn_warn("%s/%s/%s: %s", ctx->node_path, gen, CN_MANIFEST_NAME, err.msg);
            api_note_lost(ctx, id, err.code == CAIRN_EFORMAT ? CAIRN_EFORMAT : CAIRN_ECORRUPT,
                          "%s/%s/%s: %s", ctx->node_path, gen, CN_MANIFEST_NAME, err.msg);
        }
    }
    close(genfd);
    return ok;
}

static int cmp_gen_desc(const void *a, const void *b)
{
    long x = ((const api_gen *)a)->id, y = ((const api_gen *)b)->id;
    return (x < y) - (x > y);
}

int api_local_gens(cairn_ctx *ctx, int rank, api_gen **out, int *n)
{
    *out = NULL;
    *n = 0;
    long *ids = NULL;
    int nids = 0;
    if (cn_gen_list(ctx->nodefd, &ids, &nids, &ctx->err) < 0)
        return cn_err_prefix(&ctx->err, "cannot list %s: ", ctx->node_path), ctx->err.code;
    api_gen *g = malloc((nids ? (size_t)nids : 1) * sizeof *g);
    if (!g) {
        free(ids);
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "out of memory");
    }
    size_t cnt = 0;
    for (int i = 0; i < nids; i++)
        if (usable(ctx, rank, ids[i], &g[cnt]))
            cnt++;
    free(ids);
    qsort(g, cnt, sizeof *g, cmp_gen_desc);
    /* Oldest first, keep a generation only if its parent was kept: a chain
     * with a missing link restores nothing past it. */
    size_t kept = cnt;
    for (size_t i = cnt; i-- > 0;)
        if (g[i].parent >= 0 && !api_gen_find(g + i + 1, (int)(kept - i - 1), g[i].parent)) {
            cn_debug("generation %ld: its parent %ld is not usable here", g[i].id, g[i].parent);
            api_note_lost(ctx, g[i].id, CAIRN_ECORRUPT,
                          "generation %ld (incremental) needs generation %ld, which rank %d "
                          "cannot use in %s", g[i].id, g[i].parent, rank, ctx->node_path);
            memmove(&g[i], &g[i + 1], (kept - i - 1) * sizeof *g);
            kept--;
        }
    *out = g;
    *n = (int)kept;
    return 0;
}

const api_gen *api_gen_find(const api_gen *g, int n, long id)
{
    for (int i = 0; i < n; i++)
        if (g[i].id == id)
            return &g[i];
    return NULL;
}

long api_common_below(cairn_ctx *ctx, const api_gen *g, int n, long bound, int *rc)
{
    *rc = 0;
    for (;;) {
        long mine = -1, low = -1;
        for (int i = 0; i < n && mine < 0; i++) /* g is newest first */
            if (g[i].id <= bound)
                mine = g[i].id;
        if (MPI_Allreduce(&mine, &low, 1, MPI_LONG, MPI_MIN, ctx->comm) != MPI_SUCCESS) {
            *rc = CAIRN_EMPI;
            return -1;
        }
        if (low < 0)
            return -1;
        int have = api_gen_find(g, n, low) != NULL, all = 0;
        if (MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_LAND, ctx->comm) != MPI_SUCCESS) {
            *rc = CAIRN_EMPI;
            return -1;
        }
        if (all)
            return low;
        bound = low - 1;
    }
}
