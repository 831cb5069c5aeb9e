/*
 * ckpt.c - the read pipeline over a checkpoint file's entry table: every
 * compressed entry (with the members packed into it) becomes one stream
 * whose destinations are the caller's, in order; raw entries are copied.
 * Used by restart (destinations: protected memory; a delta entry's are the
 * places of its changed blocks) and by `cairn verify` (no destinations:
 * decode and check every frame, keep nothing).
 *
 * Frames are decoded first (in parallel), raw entries copied only after
 * every frame decoded, so a stream that fails to decode leaves them alone.
 * An entry the caller marks &cz_skip is neither decoded nor copied (restart:
 * its check already decoded it, chain.c).
 *
 * Ownership: the stream and destination arrays live for one call.
 */
#include "compress/compress.h"

#include <stdlib.h>
#include <string.h>

/* Copy raw entry E's stream into its destinations. */
static void copy_raw(const cn_ckpt *c, const cn_entry *e, const cz_dest *d, uint32_t nd)
{
    const uint8_t *p = c->map + e->offset;
    for (uint32_t k = 0; k < nd; p += d[k].len, k++)
        if (d[k].ptr && d[k].len)
            memcpy(d[k].ptr, p, (size_t)d[k].len);
}

const cz_dest cz_skip = {NULL, 0};

/* Entry I's destinations in DEST (its given ones, or one dropping its stream). */
static uint32_t ndest_of(const cz_dest *const *dest, const uint32_t *ndest, uint32_t i)
{
    return dest && dest[i] && dest[i] != &cz_skip ? ndest[i] : 1;
}

int cz_decode_ckpt(const cn_ckpt *c, const cz_dest *const *dest, const uint32_t *ndest,
                   int threads, cn_err *err)
{
    uint32_t n = c->h.nentries;
    size_t nd = 0;
    for (uint32_t i = 0; i < n; i++)
        nd += ndest_of(dest, ndest, i);
    cz_stream *s = calloc(n ? n : 1, sizeof *s);
    cz_dest *d = calloc(nd ? nd : 1, sizeof *d);
    bool *live = calloc(n ? n : 1, sizeof *live); /* per stream: an entry not skipped */
    if (!s || !d || !live) {
        free(s);
        free(d);
        free(live);
        return cn_fail(err, CAIRN_ENOMEM, "no memory to decompress");
    }
    /* Entries' destinations one after another, so a pack's owner and members
     * make one contiguous list. */
    uint32_t ns = 0;
    size_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cn_entry *e = &c->e[i];
        uint32_t k = ndest_of(dest, ndest, i);
        bool skip = dest && dest[i] == &cz_skip;
        if (dest && dest[i] && !skip)
            memcpy(&d[at], dest[i], sizeof *d * k);
        else
            d[at] = (cz_dest){NULL, cn_entry_stream(e, c->h.incr_block)};
        if (e->kind == CN_KIND_VAR && e->codec != CN_CODEC_RAW) {
            if (e->flags & CN_ENTRY_PACKED) {
                s[ns - 1].ndest += k; /* format.c checked that it follows its owner */
            } else {
                s[ns] = (cz_stream){.stored = c->map + e->offset, .stored_size = e->stored_size,
                                    .codec = e->codec, .type = e->type,
                                    .frame_raw = e->frame_raw, .dest = &d[at], .ndest = k,
                                    .name = e->name};
                live[ns++] = false;
            }
            live[ns - 1] = live[ns - 1] || !skip;
        }
        at += k;
    }
    uint32_t nlive = 0; /* the streams to decode, in order */
    for (uint32_t j = 0; j < ns; j++)
        if (live[j])
            s[nlive++] = s[j];
    int rc = cz_read(s, nlive, threads, err);
    at = 0;
    for (uint32_t i = 0; i < n && rc == 0; i++) {
        const cn_entry *e = &c->e[i];
        uint32_t k = ndest_of(dest, ndest, i);
        if (e->kind == CN_KIND_VAR && e->codec == CN_CODEC_RAW)
            copy_raw(c, e, &d[at], k); /* a skipped entry's one destination is NULL */
        at += k;
    }
    free(s);
    free(d);
    free(live);
    return rc;
}
