/*
 * compress.c - which codec stores each variable, and the way back.
 *
 * Out: a variable's codec is its own (cairn_protect_codec) or the configured
 * default (compress.codec). "auto" samples the variable (src/compress
 * choose.c) against this rank's storage bandwidth, as measured by the last
 * checkpoint, and keeps the pick for compress.resample checkpoints. Routed
 * files are stored raw.
 *
 * Back: the verified rank file's compressed entries become read-pipeline
 * streams whose destinations are the protected variables (a pack's members
 * included; stored variables that are not protected are skipped). Raw
 * entries are copied after every frame has decoded, so a stream that fails
 * to decode leaves them untouched.
 *
 * Ownership: the stream and destination arrays live for one restore.
 */
#include "api/api.h"

#include <stdlib.h>
#include <string.h>

static int threads_of(const cairn_ctx *ctx)
{
    return ctx->cfg.z_threads ? ctx->cfg.z_threads : ctx->cores_per_rank;
}

void api_codecs(cairn_ctx *ctx, lvl_src *src, size_t n, cz_opts *z)
{
    *z = (cz_opts){.buf_size = ctx->cfg.z_buffer, .threads = threads_of(ctx),
                   .level = ctx->cfg.z_level};
    cz_env env = {.storage_bps = ctx->storage_bps, .threads = z->threads, .level = z->level,
                  .buf_size = z->buf_size};
    int def = ctx->cfg.codec == CN_CODEC_AUTO ? CZ_AUTO : ctx->cfg.codec;
    for (size_t i = 0; i < n; i++) {
        api_var *v = &ctx->vars[i];
        src[i].codec = CZ_RAW;
        if (v->kind != CN_KIND_VAR || src[i].size == 0)
            continue;
        int id = v->codec >= 0 ? v->codec : def;
        if (id != CZ_AUTO && !cz_codec_accepts(id, src[i].type))
            id = CZ_ZSTD; /* a float-only default for a variable of integers */
        if (id == CZ_AUTO) {
            if (v->chosen < 0 || ctx->nckpt - v->chosen_at >= ctx->cfg.z_resample) {
                v->chosen = cz_choose(src[i].ptr, src[i].size, src[i].type, &env,
                                      &v->chosen_ratio);
                v->chosen_at = ctx->nckpt;
                cn_debug("'%s': auto picked %s (sampled ratio %.3f)", v->name,
                         cz_codec_name(v->chosen), v->chosen_ratio);
            }
            id = v->chosen;
        }
        src[i].codec = (uint8_t)id;
    }
}

void api_codecs_learn(cairn_ctx *ctx, const lvl_written *w)
{
    ctx->nckpt++;
    if (w->stored < (1u << 20) || w->write_s <= 0)
        return; /* too little to time */
    double bps = (double)w->stored / w->write_s;
    ctx->storage_bps = 0.5 * ctx->storage_bps + 0.5 * bps;
}

/* The protected memory for entry E, or NULL to skip it. */
static void *dest_of(cairn_ctx *ctx, const cn_entry *e)
{
    api_var *v = api_var_find(ctx, e->name);
    return v && v->kind == CN_KIND_VAR ? v->ptr : NULL;
}

int api_restore_vars(cairn_ctx *ctx, const cn_ckpt *c)
{
    uint32_t n = c->h.nentries;
    cz_stream *s = calloc(n ? n : 1, sizeof *s);
    cz_dest *d = calloc(n ? n : 1, sizeof *d);
    if (!s || !d) {
        free(s);
        free(d);
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory to restore");
    }
    uint32_t ns = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cn_entry *e = &c->e[i];
        d[i] = (cz_dest){dest_of(ctx, e), e->raw_size};
        if (e->kind != CN_KIND_VAR || e->codec == CN_CODEC_RAW)
            continue;
        if (e->flags & CN_ENTRY_PACKED) {
            s[ns - 1].ndest++; /* format.c checked it follows its owner */
            continue;
        }
        s[ns++] = (cz_stream){.stored = c->map + e->offset, .stored_size = e->stored_size,
                              .codec = e->codec, .type = e->type, .frame_raw = e->frame_raw,
                              .dest = &d[i], .ndest = 1, .name = e->name};
    }
    int rc = cz_read(s, ns, threads_of(ctx), &ctx->err);
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        const cn_entry *e = &c->e[i];
        if (e->kind == CN_KIND_VAR && e->codec == CN_CODEC_RAW && d[i].ptr && e->stored_size)
            memcpy(d[i].ptr, c->map + e->offset, e->stored_size);
    }
    free(s);
    free(d);
    return rc;
}
