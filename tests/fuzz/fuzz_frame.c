/*
 * fuzz_frame.c - libFuzzer target for compressed frames (cz_frame_parse,
 * cz_frame_decode and every codec's decoder behind it; src/compress).
 *
 * Input: one selector byte, then bytes. The selector's low bits pick the
 * codec the frames must have (selector % CZ_NCODECS, as the entry's codec).
 *   - bit 7 clear: the bytes are a sequence of frames, parsed and decoded in
 *     turn. A frame that parses must keep parse's promises (codec RAW or
 *     the wanted one, payload inside the input, stored <= raw), and a frame
 *     that decodes must hash to its raw_sum; failures must be
 *     CAIRN_ECORRUPT with a message.
 *   - bit 7 set: the bytes (after a type byte) are raw data, encoded as one
 *     frame with the selected codec, which must parse and decode bit-exact.
 *     The same bytes then go through cz_agg_unframe (a flush's frames lent
 *     to level 4, src/levels/pfs/agg_lend.c) as one variable of the first
 *     frame's type and of the bytes the headers claim: it must succeed or
 *     fail with CAIRN_ECORRUPT and a message.
 * Decoded sizes above FUZZ_MAX_RAW are skipped to keep runs fast; buffers
 * are allocated at their exact sizes so the sanitizers see any overrun.
 * fpzip payloads reach libfpzip only if their XXH3 matches (codec_float.c),
 * which mutations almost never achieve; a crash inside libfpzip on such an
 * input is that library's (known) lack of input checks.
 */
#include "compress/compress.h"
#include "levels/pfs/pfs.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define FUZZ_MAX_RAW (1u << 20)

static void decode_frames(const uint8_t *p, size_t len, int want)
{
    while (len > 0) {
        cz_frame f;
        size_t used = 0;
        cn_err err = {0};
        if (cz_frame_parse(p, len, want, &f, &used, &err) != 0) {
            if (err.code != CAIRN_ECORRUPT || !err.msg[0])
                abort();
            return;
        }
        if (used != CZ_FRAME_HDR + (size_t)f.stored_len || used > len ||
            f.payload != p + CZ_FRAME_HDR || f.stored_len > f.raw_len || f.raw_len == 0 ||
            (f.codec != CZ_RAW && f.codec != want))
            abort();
        if (f.raw_len <= FUZZ_MAX_RAW) {
            uint8_t *dst = malloc(f.raw_len), *scratch = malloc(f.raw_len);
            if (!dst || !scratch)
                abort();
            int rc = cz_frame_decode(&f, dst, scratch, &err);
            if (rc == 0 && cn_hash(dst, f.raw_len) != f.raw_sum)
                abort();
            if (rc != 0 && (rc != CAIRN_ECORRUPT || err.code != rc || !err.msg[0]))
                abort();
            free(dst);
            free(scratch);
        }
        p += used;
        len -= used;
    }
}

static void unframe(const uint8_t *p, size_t len, int want)
{
    uint64_t raw = 0;
    for (size_t at = 0; at + CZ_FRAME_HDR <= len && raw <= FUZZ_MAX_RAW;) {
        uint32_t r = cn_get_u32(p + at + 4), st = cn_get_u32(p + at + 8);
        raw += r;
        at += CZ_FRAME_HDR + (size_t)st;
    }
    if (len < 2 || raw > FUZZ_MAX_RAW || cz_is_lossy(want))
        return;
    uint8_t *dst = malloc(raw ? (size_t)raw : 1);
    if (!dst)
        abort();
    cn_err err = {0};
    int rc = cz_agg_unframe(p, len, (uint8_t)want, p[1], dst, raw, &err);
    if (rc != 0 && (rc != CAIRN_ECORRUPT || err.code != rc || !err.msg[0]))
        abort();
    free(dst);
}

static void round_trip(const uint8_t *p, size_t len, int id)
{
    if (len < 1)
        return;
    uint8_t type = p[0] % (CAIRN_DOUBLE + 1);
    size_t es = cairn_type_size((cairn_type)type);
    size_t n = (len - 1) / es * es;
    if (n == 0 || n > FUZZ_MAX_RAW)
        return;
    uint8_t *raw = malloc(n), *frame = malloc(cz_frame_bound(n)), *scratch = malloc(n);
    uint8_t *out = malloc(n);
    if (!raw || !frame || !scratch || !out)
        abort();
    memcpy(raw, p + 1, n);
    size_t fsize = cz_frame_encode(id, type, 1, raw, n, frame, scratch);
    cz_frame f;
    size_t used = 0;
    cn_err err = {0};
    if (fsize < CZ_FRAME_HDR + 1 || fsize > CZ_FRAME_HDR + n ||
        cz_frame_parse(frame, fsize, id, &f, &used, &err) != 0 || used != fsize ||
        cz_frame_decode(&f, out, scratch, &err) != 0 || memcmp(out, raw, n) != 0)
        abort();
    free(raw);
    free(frame);
    free(scratch);
    free(out);
}

/* The frames after the selector byte parse and decode, each to its raw
 * checksum (a round-trip input, bit 7 set, is always accepted). */
int fuzz_parse(const uint8_t *data, size_t size, cn_err *err)
{
    if (size < 1)
        return cn_fail(err, CAIRN_ECORRUPT, "empty input: no selector byte");
    if (data[0] & 0x80)
        return 0;
    int want = (data[0] & 0x7f) % CZ_NCODECS;
    const uint8_t *p = data + 1;
    size_t len = size - 1;
    while (len > 0) {
        cz_frame f;
        size_t used = 0;
        CN_TRY(cz_frame_parse(p, len, want, &f, &used, err));
        uint8_t *dst = malloc(f.raw_len), *scratch = malloc(f.raw_len);
        int rc = dst && scratch ? cz_frame_decode(&f, dst, scratch, err)
                                : cn_fail(err, CAIRN_ENOMEM, "no memory");
        free(dst), free(scratch);
        CN_TRY(rc);
        p += used, len -= used;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int want = (data[0] & 0x7f) % CZ_NCODECS;
    if (data[0] & 0x80)
        round_trip(data + 1, size - 1, want);
    else
        decode_frames(data + 1, size - 1, want), unframe(data + 1, size - 1, want);
    return 0;
}
