/*
 * mkcorpus.c - regenerate the seeds of the format fuzz targets for the
 * current format versions (tests/fuzz/corpus/<target>/):
 *
 *   mkcorpus DIR       writes DIR/fuzz_ckpt, fuzz_manifest, fuzz_parity, fuzz_pindex, fuzz_pnode, fuzz_layout,
 *                      fuzz_h5map, fuzz_pdelta, and fuzz_agg's seeds of split HDF5 files
 *   mkcorpus --previous FILE...   rewrites each node manifest or PFS index
 *                      FILE in the oldest format version that this build
 *                      still reads (manifest 3, PFS index 1: cairn 0.2.0),
 *                      for the tests of checkpoints an older release wrote
 *
 * Valid seeds are written by the real writers: checkpoint files by
 * lvl_local_write (raw, every codec, packs, lossy, incremental), manifests,
 * parity metadata and PFS indexes by their encoders. Each bad-* seed is one
 * valid seed with one precise mutation, resealed wherever a checksum would
 * otherwise catch it first, so that the parser refuses it for the field its
 * name gives (replay.c checks that the message says so). Run it after a
 * format change and commit the result; the replay's valid-* checks fail
 * until then. Old seeds of other names are left alone: valid-v3-* and
 * valid-v4-* manifests and valid-v1-* and valid-v2-* PFS indexes are what earlier versions
 * wrote (kept from their corpus): they must still decode, and re-encode to
 * the same bytes; valid-v3-* rank files are version 3 checkpoint files
 * (data at a 4 KiB page; valid-v3-lossy's predict frames are payload
 * version 1, Huffman-coded), which must still parse.
 */
#include "mkcorpus/mkcorpus.h"
#include "levels/pfs/pfs.h"

static const char *outdir;

_Noreturn void die(const char *what, const cn_err *err)
{
    fprintf(stderr, "mkcorpus: %s%s%s\n", what, err ? ": " : "", err ? err->msg : "");
    exit(1);
}

void put(const char *target, const char *name, const uint8_t *buf, size_t len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", outdir, target);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/%s", outdir, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, len, f) != len || fclose(f) != 0)
        die(path, NULL);
}

void reseal_tail(uint8_t *b, size_t len)
{
    cn_put_u64(b + len - 8, cn_hash(b, len - 8));
}

static int previous(const char *path)
{
    uint8_t *buf = NULL, *out = NULL;
    size_t len = 0, olen = 0;
    cn_err err = {0};
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    const char *name = slash ? slash + 1 : path;
    if (slash)
        *slash = '\0';
    int dfd = cn_dir_open_path(slash ? dir : ".", &err);
    int rc = dfd < 0 ? dfd : cn_read_small(dfd, name, 1u << 26, &buf, &len, &err);
    if (rc == 0 && len >= 8 && memcmp(buf, CN_MANIFEST_MAGIC, 8) == 0) {
        cn_manifest m;
        if ((rc = cn_manifest_decode(buf, len, &m, &err)) == 0) {
            m.version = CN_MANIFEST_VERSION_OLD;
            rc = cn_manifest_encode(&m, &out, &olen, &err);
            cn_manifest_free(&m);
        }
    } else if (rc == 0 && len >= 8 && memcmp(buf, CN_PINDEX_MAGIC, 8) == 0) {
        cn_pindex x;
        if ((rc = cn_pindex_decode(buf, len, &x, &err)) == 0) {
            x.version = CN_PINDEX_VERSION_OLD;
            rc = cn_pindex_encode(&x, &out, &olen, &err);
            cn_pindex_free(&x);
        }
    } else if (rc == 0) {
        rc = cn_fail(&err, CAIRN_EINVAL, "neither a node manifest nor a PFS index");
    }
    if (rc == 0)
        rc = cn_write_atomic(dfd, name, out, olen, &err);
    if (rc < 0)
        fprintf(stderr, "mkcorpus: %s: %s\n", path, err.msg);
    if (dfd >= 0)
        close(dfd);
    free(buf), free(out);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--previous") == 0) {
        int bad = 0;
        for (int i = 2; i < argc; i++)
            bad |= previous(argv[i]) != 0;
        return bad || argc < 3;
    }
    if (argc != 2) {
        fprintf(stderr, "usage: mkcorpus DIR (e.g. tests/fuzz/corpus) | mkcorpus --previous "
                        "FILE...\n");
        return 2;
    }
    outdir = argv[1];
    ckpt_seeds();
    manifest_seeds();
    parity_seeds();
    pindex_seeds();
    pnode_seeds();
    pdelta_seeds();
    layout_seeds();
    h5map_seeds();
    agg_h5_seeds();
    printf("mkcorpus: seeds for checkpoint format %d, manifest %d, PFS index %d written under "
           "%s\n", CN_FORMAT_VERSION, CN_MANIFEST_VERSION, CN_PINDEX_VERSION, outdir);
    return 0;
}
