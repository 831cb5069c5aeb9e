/*
 * ckpt.c - the read pipeline over a checkpoint file's entry table: every
 * compressed entry (with the members packed into it) becomes one stream.
 * Used by restart (destinations: protected memory) and by `cairn verify`
 * (no destinations: decode and check every frame, keep nothing).
 *
 * Ownership: the stream and destination arrays live for one call.
 */
#include "compress/compress.h"

#include <stdlib.h>

int cz_decode_ckpt(const cn_ckpt *c, void *const *dest, int threads, cn_err *err)
{
    uint32_t n = c->h.nentries;
    cz_stream *s = calloc(n ? n : 1, sizeof *s);
    cz_dest *d = calloc(n ? n : 1, sizeof *d);
    if (!s || !d) {
        free(s);
        free(d);
        return cn_fail(err, CAIRN_ENOMEM, "no memory to decompress");
    }
    uint32_t ns = 0;
    for (uint32_t i = 0; i < n; i++) {
        const cn_entry *e = &c->e[i];
        d[i] = (cz_dest){dest ? dest[i] : NULL, e->raw_size};
        if (e->kind != CN_KIND_VAR || e->codec == CN_CODEC_RAW)
            continue;
        if (e->flags & CN_ENTRY_PACKED) {
            s[ns - 1].ndest++; /* format.c checked that it follows its owner */
            continue;
        }
        s[ns++] = (cz_stream){.stored = c->map + e->offset, .stored_size = e->stored_size,
                              .codec = e->codec, .type = e->type, .frame_raw = e->frame_raw,
                              .dest = &d[i], .ndest = 1, .name = e->name};
    }
    int rc = cz_read(s, ns, threads, err);
    free(s);
    free(d);
    return rc;
}
