/*
 * t_forge.c - test helper: forge a checkpoint file whose every checksum is
 * right but whose data does not decode, the way a codec bug or a crafted
 * file would look to a restart (tests/mpi/run_mpi.sh, run_incr.sh).
 *
 *   t_forge FILE [ENTRY]
 *
 * In rank file FILE (gen-<id>/rank-<r>.ckpt), take compressed entry ENTRY
 * (default: the last compressed one), flip one bit of the raw checksum in
 * the header of its last frame, then reseal: that entry's block checksums,
 * the table checksum, the header checksum, and the rank's header checksum in
 * the node manifest beside FILE. Every check that reads only stored bytes
 * then passes (cairn verify without decoding, restart's verification); only
 * decoding the frame finds it. Prints "forged ENTRY frame K of N". Built
 * like the MPI test programs (over libcairn's internals), but calls no MPI.
 */
#include "common/common.h"
#include "compress/compress.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int die(const char *what, const cn_err *err)
{
    fprintf(stderr, "t_forge: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    return 1;
}

/* Rewrite the manifest in directory DIR: rank RANK's header checksum is SUM. */
static int reseal_manifest(const char *dir, uint32_t rank, uint64_t sum)
{
    cn_err err = {0};
    int dfd = cn_dir_open_path(dir, &err);
    if (dfd < 0)
        return die(dir, &err);
    uint8_t *buf = NULL, *out = NULL;
    size_t len = 0, olen = 0;
    cn_manifest m = {0};
    int found = 0, rc = cn_read_small(dfd, CN_MANIFEST_NAME, 1u << 30, &buf, &len, &err);
    if (rc == 0)
        rc = cn_manifest_decode(buf, len, &m, &err);
    for (uint32_t i = 0; rc == 0 && i < m.nlocal; i++)
        if (m.local[i].rank == rank)
            m.local[i].header_sum = sum, found = 1;
    if (rc == 0 && !found)
        rc = cn_fail(&err, CAIRN_ENOENT, "rank %u is not in the manifest", rank);
    if (rc == 0)
        rc = cn_manifest_encode(&m, &out, &olen, &err);
    if (rc == 0)
        rc = cn_write_atomic(dfd, CN_MANIFEST_NAME, out, olen, &err);
    cn_manifest_free(&m);
    free(buf), free(out);
    close(dfd);
    return rc == 0 ? 0 : die("manifest", &err);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return die("usage: t_forge FILE [ENTRY]", NULL);
    cn_err err = {0};
    FILE *f = fopen(argv[1], "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0)
        return die(argv[1], NULL);
    size_t len = (size_t)st.st_size;
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf || fread(buf, 1, len, f) != len)
        return die("read", NULL);
    fclose(f);
    cn_ckpt *c = NULL;
    if (cn_ckpt_parse(buf, len, argv[1], &c, &err) != 0 || cn_ckpt_verify(c, argv[1], &err) != 0)
        return die("not a valid checkpoint file", &err);
    cn_entry *e = NULL;
    for (uint32_t i = 0; i < c->h.nentries; i++) {
        cn_entry *x = &c->e[i];
        if (x->kind == CN_KIND_VAR && x->codec != CN_CODEC_RAW && !(x->flags & CN_ENTRY_PACKED) &&
            x->stored_size > 0 && (argc < 3 || strcmp(x->name, argv[2]) == 0))
            e = x;
    }
    if (!e)
        return die("no such compressed entry", NULL);
    uint64_t at = 0, last = 0;
    uint32_t nframes = 0;
    while (at < e->stored_size) { /* find the last frame */
        cz_frame fr;
        size_t used;
        if (cz_frame_parse(buf + e->offset + at, (size_t)(e->stored_size - at), e->codec, &fr,
                           &used, &err) != 0)
            return die("frame", &err);
        last = at;
        at += used;
        nframes++;
    }
    buf[e->offset + last + 16] ^= 0x01; /* raw_sum: header bytes 16..23 */
    uint32_t bs = c->h.block_size;
    for (uint32_t b = 0; b < e->nblocks; b++) {
        uint64_t off = (uint64_t)b * bs;
        uint64_t n = e->stored_size - off < bs ? e->stored_size - off : bs;
        e->block_sums[b] = cn_hash(buf + e->offset + off, (size_t)n);
    }
    cn_header h = c->h;
    cn_table_encode(c->e, h.nentries, buf + CN_HEADER_SIZE);
    h.table_sum = cn_hash(buf + CN_HEADER_SIZE, (size_t)h.table_size);
    cn_header_encode(&h, buf);
    printf("forged %s frame %u of %u\n", e->name, nframes, nframes);
    cn_ckpt_close(c);
    f = fopen(argv[1], "r+b");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0)
        return die("write", NULL);
    free(buf);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", argv[1]);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    return reseal_manifest(dir, h.rank, h.header_sum);
}
