/*
 * chain.c - restore a generation through its incremental chain.
 *
 * A full generation is a chain of one. An incremental generation G needs its
 * parent, and that one its own, down to the full generation of the chain.
 * Open: every link's rank file is mapped and fully verified against its node
 * manifest, and must be the link the next one names (generation, parent,
 * base, block size); a broken link is named in the message and in
 * ch->broken. Check: every frame of every link decoded once and checked
 * against its raw checksum; so a frame that passes its stored checksums but
 * does not decode (a codec bug, a crafted file) fails before any protected
 * byte is written. The variables the restore will write that have a
 * compressed frame are rebuilt by the check, into buffers of their size in
 * G that the chain keeps (ch->kept: at most the size of those variables,
 * and half of the node's free memory shared by its ranks, keep_budget; one
 * past it, or without memory, is decoded, dropped and decoded again by the
 * restore); the rest is decoded and dropped. Restore, only after every rank
 * verified and checked every link: routed files come from G; kept variables
 * are copied; the others (raw: no decode) rebuilt by applying the links
 * oldest first, each writing the blocks it stores:
 *   full entry    its bytes from the start of the variable
 *   delta entry   each run's blocks at their place
 * (both clipped to the variable's size in G), so every block ends up holding
 * the newest link that stored it, which is G's content, the same into a
 * kept buffer as into place: the runs are the destinations of
 * cz_decode_ckpt, and an entry the check already decoded is skipped.
 * Then the block hashes of G are rebuilt the same way, oldest link first,
 * and become the context's parent tables for G's level.
 *
 * Ownership: api_chain owns its mapped links and kept buffers until
 * api_chain_close.
 */
#include "core/core.h"
#include "levels/local/local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Open NAME in GENFD (PATH for messages), check that its header is the one the node
 * manifest names (WANT's header_sum, generation, rank and nranks; with CHAIN its parent
 * and base too), then verify it whole. On failure *OUT is NULL. */
int lvl_rank_file_open(int genfd, const char *name, const char *path, const cn_header *want,
                       bool chain, cn_ckpt **out, cn_err *err)
{
    CN_TRY(cn_ckpt_open(genfd, name, path, out, err));
    const cn_header *h = &(*out)->h;
    int rc = 0;
    if (h->header_sum != want->header_sum || h->generation != want->generation ||
        h->rank != want->rank || h->nranks != want->nranks ||
        (chain && (h->parent != want->parent || h->base != want->base)))
        rc = cn_fail(err, CAIRN_ECORRUPT, "%s: header does not match the node manifest", path);
    if (rc == 0)
        rc = cn_ckpt_verify(*out, path, err);
    if (rc < 0) {
        cn_ckpt_close(*out);
        *out = NULL;
    }
    return rc;
}

/* Open and fully verify RANK's file of generation G. */
static int verify_link(cairn_ctx *ctx, int rank, const api_gen *g, cn_ckpt **out)
{
    char gen[64], name[64], path[4600];
    cn_gen_dirname(gen, sizeof gen, g->id);
    cn_rank_filename(name, sizeof name, (uint32_t)rank);
    snprintf(path, sizeof path, "%s/%s/%s", ctx->node_path, gen, name);
    int genfd = cn_dir_open(ctx->nodefd, gen, false, &ctx->err);
    if (genfd < 0)
        return genfd;
    const cn_header want = {.header_sum = g->header_sum, .generation = g->id,
                            .rank = (uint32_t)rank, .nranks = (uint32_t)ctx->nranks,
                            .parent = g->parent, .base = g->base};
    int rc = lvl_rank_file_open(genfd, name, path, &want, true, out, &ctx->err);
    close(genfd);
    return rc;
}

/* Block J's length in a variable of SIZE bytes. */
static uint64_t block_len(uint64_t j, uint64_t size, uint32_t block)
{
    uint64_t off = j * block;
    return off >= size ? 0 : size - off < block ? size - off : block;
}

/* Does every delta entry of NEXT continue its variable in C: the parent holds
 * it, and every block the delta does not store, with the same length? */
static int continues(cairn_ctx *ctx, const cn_ckpt *c, const cn_ckpt *next)
{
    uint32_t block = next->h.incr_block;
    for (uint32_t i = 0; i < next->h.nentries; i++) {
        const cn_entry *e = &next->e[i];
        if (!(e->flags & CN_ENTRY_DELTA))
            continue;
        const cn_entry *pe = cn_ckpt_find(c, e->name);
        bool ok = pe && pe->kind == CN_KIND_VAR; /* blocks are bytes: the type may change */
        uint64_t nb = cn_incr_nblocks(e->raw_size, block), j = 0;
        for (uint32_t r = 0; ok && r <= e->nruns; r++) {
            uint64_t stop = r < e->nruns ? e->runs[r].first : nb;
            for (; ok && j < stop; j++) /* a block the parent must hold */
                ok = block_len(j, pe->raw_size, block) == block_len(j, e->raw_size, block);
            j = r < e->nruns ? (uint64_t)e->runs[r].first + e->runs[r].count : nb;
        }
        CN_FAIL_IF(!ok, &ctx->err, CAIRN_ECORRUPT,
                   "generation %lld: '%s' is stored as changes to a variable generation %lld "
                   "does not hold",
                   (long long)next->h.generation, e->name, (long long)c->h.generation);
    }
    return 0;
}

int api_chain_link(cairn_ctx *ctx, int rank, const api_gen *g, cn_ckpt **out)
{
    return verify_link(ctx, rank, g, out);
}

static void free_kept(api_chain *ch);

void api_chain_close(api_chain *ch)
{
    free_kept(ch);
    for (int i = 0; ch->link && i < ch->n; i++)
        cn_ckpt_close(ch->link[i]);
    free(ch->link);
    ch->link = NULL;
    ch->n = 0;
}

int api_chain_open(cairn_ctx *ctx, int rank, const api_gen *g, const api_gen *all, int n,
                   api_chain *ch)
{
    memset(ch, 0, sizeof *ch);
    ch->broken = -1;
    const api_gen **gens = calloc((size_t)n + 1, sizeof *gens); /* newest first */
    CN_FAIL_IF(!gens, &ctx->err, CAIRN_ENOMEM, "no memory");
    int len = 0;
    for (const api_gen *x = g; x; x = x->parent >= 0 ? api_gen_find(all, n, x->parent) : NULL) {
        if (len == n + 1 || (x != g && x->id >= gens[len - 1]->id)) {
            free(gens);
            ch->broken = g->id;
            return cn_fail(&ctx->err, CAIRN_ECORRUPT, "generation %ld: its chain loops", g->id);
        }
        gens[len++] = x;
    }
    if (gens[len - 1]->parent >= 0) {
        ch->broken = gens[len - 1]->parent;
        free(gens);
        return cn_fail(&ctx->err, CAIRN_ENOENT, "generation %ld needs generation %ld, missing",
                       g->id, ch->broken);
    }
    ch->link = calloc((size_t)len, sizeof *ch->link);
    int rc = ch->link ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    ch->n = len;
    for (int i = 0; i < len && rc == 0; i++) { /* oldest first: a broken base fails fast */
        const api_gen *x = gens[len - 1 - i];
        rc = verify_link(ctx, rank, x, &ch->link[i]);
        const cn_header *prev = i > 0 ? &ch->link[i - 1]->h : NULL;
        const cn_header *h = rc == 0 ? &ch->link[i]->h : NULL;
        if (rc == 0 && prev &&
            (h->parent != prev->generation || h->base != prev->base ||
             h->incr_block != prev->incr_block))
            rc = cn_fail(&ctx->err, CAIRN_ECORRUPT,
                         "generation %lld does not continue generation %lld",
                         (long long)h->generation, (long long)prev->generation);
        if (rc == 0 && prev)
            rc = continues(ctx, ch->link[i - 1], ch->link[i]);
        if (rc < 0) {
            ch->broken = x->id;
            if (x->id != g->id)
                cn_err_prefix(&ctx->err, "generation %ld (incremental, chain from %ld) needs "
                              "generation %ld: ", g->id, g->base, x->id);
        }
    }
    free(gens);
    if (rc < 0)
        api_chain_close(ch);
    return rc;
}

int api_match(cairn_ctx *ctx, long long gen, uint32_t rank, const char *only, size_t n,
              api_stored_fn at, void *arg)
{
    size_t protected = 0, stored = 0;
    api_stored e;
    for (size_t i = 0; i < ctx->nvars; i++)
        protected += ctx->vars[i].kind == CN_KIND_VAR;
    for (size_t i = 0; i < n; i++) {
        at(arg, i, &e);
        stored += e.kind == CN_KIND_VAR;
    }
    CN_FAIL_IF(!only && protected == 0 && stored > 0, &ctx->err, CAIRN_ESTATE,
               "no variable is protected: protect the variables to restore before cairn_restart "
               "(generation %lld holds %zu for rank %u)", gen, stored, rank);
    for (size_t i = 0; i < ctx->nvars; i++) {
        const api_var *v = &ctx->vars[i];
        if (v->kind == CN_KIND_FILE || (only && strcmp(v->name, only) != 0))
            continue; /* routed files are restored if present */
        bool found = false;
        for (size_t j = 0; !found && j < n; j++) {
            at(arg, j, &e);
            found = strcmp(e.name, v->name) == 0;
        }
        if (!found || e.kind != CN_KIND_VAR)
            return cn_fail(&ctx->err, CAIRN_EMISMATCH, "variable '%s' is not in generation %lld",
                           v->name, gen);
        if (e.type != (uint8_t)v->type || e.count != v->count)
            return cn_fail(&ctx->err, CAIRN_EMISMATCH,
                           "variable '%s': protected are %zu elements of type %s, generation "
                           "%lld stores %llu of type %s",
                           v->name, v->count, cn_type_name(v->type), gen,
                           (unsigned long long)e.count, cn_type_name(e.type));
    }
    return 0;
}

/* api_stored_fn over a rank file's entries. */
static void ckpt_entry(void *arg, size_t i, api_stored *out)
{
    const cn_entry *e = &((const cn_ckpt *)arg)->e[i];
    *out = (api_stored){e->name, e->kind, e->type, e->count};
}

int api_chain_match(cairn_ctx *ctx, const api_chain *ch, const char *only)
{
    const cn_ckpt *c = ch->link[ch->n - 1];
    return api_match(ctx, (long long)c->h.generation, c->h.rank, only, c->h.nentries, ckpt_entry,
                     (void *)c);
}

int api_chain_describe(cairn_ctx *ctx, const api_chain *ch, const char *name,
                       cairn_var_info *info)
{
    const cn_ckpt *c = ch->link[ch->n - 1];
    const cn_entry *e = cn_ckpt_find(c, name);
    CN_FAIL_IF(!e, &ctx->err, CAIRN_ENOENT, "generation %lld holds no variable '%s' for rank %u",
               (long long)c->h.generation, name, c->h.rank);
    CN_FAIL_IF(e->kind != CN_KIND_VAR, &ctx->err, CAIRN_ENOENT,
               "generation %lld holds '%s' for rank %u as a routed file, not a variable",
               (long long)c->h.generation, name, c->h.rank);
    memset(info, 0, sizeof *info);
    info->type = (cairn_type)e->type;
    info->count = (size_t)e->count;
    info->ndims = e->ndims;
    for (int d = 0; d < e->ndims; d++)
        info->dims[d] = (size_t)e->dims[d];
    info->bytes = (size_t)e->raw_size;
    info->stored = e->stored_size;
    info->error_bound = e->error_bound;
    return 0;
}

/* Append to D the destination of stream bytes [LO, HI) of a variable whose
 * restored copy is PTR (SIZE bytes): in place up to SIZE, skipped beyond. */
static uint32_t place(cz_dest *d, uint8_t *ptr, uint64_t size, uint64_t lo, uint64_t hi)
{
    uint32_t k = 0;
    uint64_t mid = hi < size ? hi : size < lo ? lo : size;
    if (mid > lo)
        d[k++] = (cz_dest){ptr + lo, mid - lo};
    if (hi > mid)
        d[k++] = (cz_dest){NULL, hi - mid};
    return k;
}

/* Where link C's entries go: variables of the newest link with a place
 * (PTRS, by the newest link's entry index) get their bytes (or blocks) in
 * place; SKIP (by that index, if not NULL) leaves an entry alone (&cz_skip),
 * and so does SKIP_REST any entry without a place; anything else is decoded,
 * checked and dropped. D holds 2 per run (or 2) per entry. */
static void destinations(const cn_ckpt *c, const cn_ckpt *newest, void *const *ptrs,
                         const bool *skip, bool skip_rest, cz_dest *d, cz_dest **dest,
                         uint32_t *ndest)
{
    for (uint32_t i = 0; i < c->h.nentries; i++) {
        const cn_entry *e = &c->e[i];
        const cn_entry *fe = cn_ckpt_find(newest, e->name);
        uint8_t *ptr = fe ? ptrs[fe - newest->e] : NULL;
        dest[i] = d;
        ndest[i] = 0;
        if ((fe && skip && skip[fe - newest->e]) || (!ptr && skip_rest)) {
            dest[i] = (cz_dest *)&cz_skip;
            continue;
        }
        if (!ptr || fe->kind != CN_KIND_VAR || e->kind != CN_KIND_VAR) {
            d[ndest[i]++] = (cz_dest){NULL, cn_entry_stream(e, c->h.incr_block)};
        } else if (!(e->flags & CN_ENTRY_DELTA)) {
            ndest[i] = place(d, ptr, fe->raw_size, 0, e->raw_size);
        } else {
            for (uint32_t r = 0; r < e->nruns; r++) {
                uint64_t lo = (uint64_t)e->runs[r].first * c->h.incr_block;
                uint64_t hi = lo + (uint64_t)e->runs[r].count * c->h.incr_block;
                ndest[i] += place(d + ndest[i], ptr, fe->raw_size, lo,
                                  hi < e->raw_size ? hi : e->raw_size);
            }
        }
        d += ndest[i];
    }
}

/* Apply link C of the chain whose newest link is NEWEST (SKIP and
 * SKIP_REST: destinations). */
static int apply_link(cairn_ctx *ctx, const cn_ckpt *c, const cn_ckpt *newest, void *const *ptrs,
                      const bool *skip, bool skip_rest)
{
    uint32_t n = c->h.nentries;
    size_t nd = 0;
    for (uint32_t i = 0; i < n; i++)
        nd += 2 + 2 * (size_t)c->e[i].nruns;
    cz_dest *d = malloc(sizeof *d * (nd ? nd : 1));
    cz_dest **dest = malloc(sizeof *dest * (n ? n : 1));
    uint32_t *ndest = malloc(sizeof *ndest * (n ? n : 1));
    int rc = d && dest && ndest ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory to restore");
    if (rc == 0) {
        destinations(c, newest, ptrs, skip, skip_rest, d, dest, ndest);
        rc = cz_decode_ckpt(c, (const cz_dest *const *)dest, ndest, api_threads(ctx), &ctx->err);
    }
    free(d), free(dest), free(ndest);
    return rc;
}

/* Variable NAME's block hashes in generation NEWEST, rebuilt over the links
 * (NULL when unknown: a link stored it without hashes). */
static cn_h128 *chain_hashes(const api_chain *ch, const cn_entry *fe)
{
    uint32_t block = ch->link[ch->n - 1]->h.incr_block;
    uint64_t cap = 1; /* room for the most blocks the variable had in any link */
    for (int l = 0; l < ch->n; l++) {
        const cn_entry *e = cn_ckpt_find(ch->link[l], fe->name);
        uint64_t enb = e ? cn_incr_nblocks(e->raw_size, block) : 0;
        cap = enb > cap ? enb : cap;
    }
    cn_h128 *h = NULL;
    for (int l = 0; l < ch->n; l++) {
        const cn_entry *e = cn_ckpt_find(ch->link[l], fe->name);
        if (!e || e->kind != CN_KIND_VAR) {
            free(h);
            h = NULL; /* not in this link: the next one stores it whole */
            continue;
        }
        if (!(e->flags & CN_ENTRY_DELTA)) {
            free(h);
            h = NULL;
            if (e->nhash == 0 || !(h = calloc(cap, sizeof *h)))
                continue;
            memcpy(h, e->hashes, sizeof *h * e->nhash);
            continue;
        }
        if (!h || (e->nhash == 0 && e->nruns > 0)) {
            free(h);
            h = NULL; /* changed blocks without hashes: unknown */
            continue;
        }
        uint32_t k = 0;
        for (uint32_t r = 0; r < e->nruns; r++)
            for (uint32_t b = 0; b < e->runs[r].count; b++)
                h[e->runs[r].first + b] = e->hashes[k++];
    }
    return h;
}

/* The context's parent tables after restoring the chain at LEVEL. */
static void rebuild_tables(cairn_ctx *ctx, const api_chain *ch, int level)
{
    api_incr_reset(ctx);
    const cn_ckpt *newest = ch->link[ch->n - 1];
    if (newest->h.incr_block == 0)
        return;
    incr_tab *t = incr_tab_new(newest->h.generation, newest->h.base, (uint32_t)(ch->n - 1),
                               newest->h.incr_block);
    for (uint32_t i = 0; t && i < newest->h.nentries; i++) {
        const cn_entry *fe = &newest->e[i];
        if (fe->kind == CN_KIND_VAR &&
            incr_tab_add(t, fe->name, fe->raw_size, fe->error_bound, chain_hashes(ch, fe)) < 0) {
            incr_tab_unref(t);
            t = NULL;
        }
    }
    if (!t)
        return; /* out of memory: the next checkpoints are full */
    incr_tab_seal(t);
    for (int l = 1; l <= (level > 3 ? 3 : level); l++)
        ctx->incr[l] = incr_tab_ref(t);
    incr_tab_unref(t);
}

/* Does a link of CH store variable NAME compressed (so that it needs a decode)? */
static bool chain_decodes(const api_chain *ch, const char *name)
{
    for (int l = 0; l < ch->n; l++) {
        const cn_entry *e = cn_ckpt_find(ch->link[l], name);
        if (e && e->kind == CN_KIND_VAR && e->codec != CN_CODEC_RAW)
            return true;
    }
    return false;
}

/* The protected variable newest entry I goes to, if the restore writes it
 * (all, or only ONLY). */
static api_var *restored_var(cairn_ctx *ctx, const cn_ckpt *newest, uint32_t i, const char *only)
{
    api_var *v = api_var_find(ctx, newest->e[i].name);
    return v && v->kind == CN_KIND_VAR && newest->e[i].kind == CN_KIND_VAR &&
                   (!only || strcmp(v->name, only) == 0)
               ? v
               : NULL;
}

static void free_kept(api_chain *ch)
{
    for (uint32_t i = 0; ch->kept && ch->n > 0 && i < ch->link[ch->n - 1]->h.nentries; i++)
        free(ch->kept[i]);
    free(ch->kept);
    ch->kept = NULL;
}

/* The bytes this rank's check may keep: half of the node's free memory,
 * shared by its ranks, so that a restart is never what runs a full node out
 * of memory; a variable past it is decoded again by the restore. */
static uint64_t keep_budget(const cairn_ctx *ctx)
{
    const char *test = getenv("CAIRN_TEST_KEEP_BYTES"); /* tests: a node short of memory */
    if (test && *test)
        return strtoull(test, NULL, 10);
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    uint64_t ranks = ctx->node_size > 0 ? (uint64_t)ctx->node_size : 1;
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 2 / ranks : 0;
}

int api_chain_check(cairn_ctx *ctx, api_chain *ch, const char *only)
{
    const cn_ckpt *newest = ch->link[ch->n - 1];
    uint32_t n = newest->h.nentries;
    free_kept(ch);
    ch->checked = false;
    ch->kept = calloc(n ? n : 1, sizeof *ch->kept); /* none: every frame dropped, decoded again */
    uint64_t budget = keep_budget(ctx);
    for (uint32_t i = 0; ch->kept && i < n; i++)
        if (restored_var(ctx, newest, i, only) && newest->e[i].raw_size > 0 &&
            newest->e[i].raw_size <= budget && chain_decodes(ch, newest->e[i].name) &&
            (ch->kept[i] = malloc((size_t)newest->e[i].raw_size)) != NULL) /* else decoded again */
            budget -= newest->e[i].raw_size;
    for (int l = 0; l < ch->n; l++) {
        const cn_header *h = &ch->link[l]->h;
        int rc = ch->kept ? apply_link(ctx, ch->link[l], newest, ch->kept, NULL, false)
                          : cz_decode_ckpt(ch->link[l], NULL, NULL, api_threads(ctx), &ctx->err);
        if (rc < 0) {
            free_kept(ch);
            char gen[64], name[64];
            cn_gen_dirname(gen, sizeof gen, h->generation);
            cn_rank_filename(name, sizeof name, h->rank);
            cn_err_prefix(&ctx->err, "%s/%s/%s: ", ctx->node_path, gen, name);
            return rc;
        }
    }
    ch->checked = true;
    return 0;
}

int api_chain_apply(cairn_ctx *ctx, const api_chain *ch, void *const *ptrs)
{
    for (int l = 0; l < ch->n; l++)
        CN_TRY(apply_link(ctx, ch->link[l], ch->link[ch->n - 1], ptrs, NULL, false));
    return 0;
}

int api_chain_restore(cairn_ctx *ctx, const api_chain *ch, int level, const char *only)
{
    const cn_ckpt *newest = ch->link[ch->n - 1];
    uint32_t n = newest->h.nentries;
    void **ptrs = calloc(n ? n : 1, sizeof *ptrs);
    bool *skip = calloc(n ? n : 1, sizeof *skip);
    /* routed.c: files/rank-<r>/ holds G's files. Agreed: a rank whose files
     * (or memory) fail must not leave the others writing protected memory. */
    int mine = !ptrs || !skip ? cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory to restore")
               : only         ? 0
                              : api_files_restore(ctx, newest);
    int rc = api_agree(ctx, mine);
    if (rc < 0) {
        free(ptrs), free(skip);
        /* the caller agrees again: let the failing rank's message win */
        return mine < 0 ? rc : api_echo(ctx, rc, "%s", ctx->msg);
    }
    uint64_t copied = 0, left = 0; /* bytes kept by the check, bytes applied from the files */
    bool any = false;               /* a variable left to apply link by link */
    for (uint32_t i = 0; i < n; i++) {
        api_var *v = restored_var(ctx, newest, i, only);
        if (v && ch->checked && ch->kept && ch->kept[i]) { /* decoded by the check */
            memcpy(v->ptr, ch->kept[i], (size_t)newest->e[i].raw_size);
            copied += newest->e[i].raw_size;
            skip[i] = true;
        } else if (v) {
            ptrs[i] = v->ptr;
            left += newest->e[i].raw_size;
            any = true;
        }
    }
    /* the rest link by link; what the check decoded and nothing needs, untouched */
    rc = 0;
    for (int l = 0; (any || !ch->checked) && l < ch->n && rc == 0; l++)
        rc = apply_link(ctx, ch->link[l], newest, ptrs, skip, ch->checked);
    cn_debug("restore: %llu bytes copied as the check decoded them, %llu applied from the files",
             (unsigned long long)copied, (unsigned long long)left);
    free(ptrs), free(skip);
    if (rc < 0) /* after api_chain_check: out of memory, or a file changed under us */
        cn_err_prefix(&ctx->err, "protected memory may be partly overwritten: ");
    CN_TRY(rc);
    rebuild_tables(ctx, ch, level);
    return 0;
}
