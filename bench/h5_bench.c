/*
 * h5_bench.c - level 4 and routed HDF5 checkpoints: data-aware aggregation
 * (every rank's HDF5 file split into datasets and skeleton, the datasets of
 * the group merged by path and type: cz_h5_split_vars + the aware scheme)
 * against data-agnostic (the whole files' bytes, rank after rank, one zstd
 * stream: the paper's concatenate-then-compress), after mcrEngine (Islam et
 * al.), Table 4 and section 7.3, on cairn's own sample programs.
 *
 *   build/bench/h5_bench --analyze BASE [--group N] [--reps N]
 *
 * BASE holds the level-1 checkpoints bench/run.sh's agg section takes of
 * examples/heat (the 2-D double field), and incr_bench's mat and lu
 * (rankfiles.h loads them). Each rank's variables become that rank's HDF5
 * checkpoint, written in memory through libhdf5's core driver as a program
 * would write it: a group per program with attributes, every variable a
 * contiguous dataset of its type and shape with an attribute. Then, per
 * program, groups of N consecutive ranks (default 32) are aggregated both
 * ways into memory, read back and rebuilt; every file must come back byte
 * for byte or the run dies.
 *
 * Output (V = file bytes / stored bytes over every group of every program;
 * R against agnostic; times are medians of --reps runs over all groups):
 *   bench: agg.h5.aware.gN V x ratio=R vs agnostic
 *   bench: agg.h5.auto.gN V x ratio=R vs agnostic          (pfs.scheme's default)
 *   bench: agg.h5.APP.aware.gN V x ratio=R vs agnostic
 *   bench: agg.h5.ckpt_time.gN V s ratio=R vs agnostic     (split + aggregate)
 *   bench: agg.h5.restart_time.gN V s ratio=R vs agnostic  (parse, decode, rebuild, check)
 * Lines starting with '#' are details. Without libhdf5 it prints a skip line.
 */
#include "bench.h"
#include "rankfiles.h"
#include "levels/pfs/pfs.h"

#ifdef CAIRN_HAVE_HDF5
#include <hdf5.h>

/* ---- the HDF5 checkpoints ------------------------------------------------ */

static hid_t h5_type(uint8_t t)
{
    switch (t) {
    case CAIRN_INT8: return H5T_STD_I8LE;
    case CAIRN_UINT8: return H5T_STD_U8LE;
    case CAIRN_INT16: return H5T_STD_I16LE;
    case CAIRN_UINT16: return H5T_STD_U16LE;
    case CAIRN_INT32: return H5T_STD_I32LE;
    case CAIRN_UINT32: return H5T_STD_U32LE;
    case CAIRN_INT64: return H5T_STD_I64LE;
    case CAIRN_UINT64: return H5T_STD_U64LE;
    case CAIRN_FLOAT: return H5T_IEEE_F32LE;
    case CAIRN_DOUBLE: return H5T_IEEE_F64LE;
    default: return H5T_STD_U8LE;
    }
}

static void attr_long(hid_t obj, const char *name, long v)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(obj, name, H5T_STD_I64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    int64_t x = v;
    H5Awrite(a, H5T_NATIVE_INT64, &x);
    H5Aclose(a);
    H5Sclose(sp);
}

/* Rank R of A as an HDF5 file image (*LEN bytes, malloc'd). */
static uint8_t *h5_file(const app *a, uint32_t r, size_t *len)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 1 << 20, 0);
    char name[128];
    snprintf(name, sizeof name, "%s-rank-%u.h5", a->job, r);
    hid_t f = H5Fcreate(name, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0)
        die("H5Fcreate %s failed", name);
    attr_long(f, "rank", r);
    attr_long(f, "ranks", a->nranks);
    attr_long(f, "generation", a->gen);
    hid_t g = H5Gcreate2(f, a->job, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const rankset *s = &a->r[r];
    for (size_t i = 0; i < s->n; i++) {
        const cz_agg_var *v = &s->v[i];
        if (v->kind != CN_KIND_VAR)
            continue;
        hsize_t dims[CAIRN_MAX_DIMS];
        int nd = v->ndims ? v->ndims : 1;
        for (int d = 0; d < nd; d++)
            dims[d] = v->ndims ? v->dims[d] : v->count;
        hid_t sp = H5Screate_simple(nd, dims, NULL);
        hid_t t = h5_type(v->type);
        hid_t ds = H5Dcreate2(g, v->name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (ds < 0 || H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v->data) < 0)
            die("%s: cannot write dataset %s", name, v->name);
        attr_long(ds, "cairn_type", v->type);
        H5Dclose(ds);
        H5Sclose(sp);
    }
    H5Gclose(g);
    H5Fflush(f, H5F_SCOPE_GLOBAL);
    ssize_t n = H5Fget_file_image(f, NULL, 0);
    uint8_t *p = n > 0 ? malloc((size_t)n) : NULL;
    if (!p || H5Fget_file_image(f, p, (size_t)n) != n)
        die("%s: no file image", name);
    H5Fclose(f);
    H5Pclose(fapl);
    *len = (size_t)n;
    return p;
}

/* ---- one group both ways ------------------------------------------------- */

typedef struct files {
    cz_agg_var *v;   /* one routed file per rank (kind file) */
    uint32_t n;
    uint64_t bytes;
} files;

typedef struct back {
    const files *fs;
    cz_h5_parts *ps;
    uint32_t whole;  /* files that came back whole */
    uint32_t rank;   /* the rank being rebuilt */
} back;

/* Check a file read back (whole, or rebuilt) against the one written. */
static void same(const files *fs, uint32_t rank, const char *name, const uint8_t *p,
                 uint64_t size)
{
    for (uint32_t i = 0; i < fs->n; i++)
        if (fs->v[i].rank == rank && !strcmp(fs->v[i].name, name)) {
            if (fs->v[i].size != size || memcmp(fs->v[i].data, p, size))
                die("rank %u's %s does not come back byte for byte", rank, name);
            return;
        }
    die("rank %u: %s read back but never written", rank, name);
}

static int got_var(void *arg, const cz_agg_var *v)
{
    back *b = arg;
    cn_err err = {0};
    if (v->kind > CN_KIND_FILE) {
        if (cz_h5_parts_keep(b->ps, v, &err))
            die("%s", err.msg);
        return 0;
    }
    uint8_t *copy = malloc(v->size ? v->size : 1); /* as a restart writes it out */
    if (!copy)
        die("out of memory");
    memcpy(copy, v->data, v->size);
    same(b->fs, v->rank, v->name, copy, v->size);
    b->whole++;
    free(copy);
    return 0;
}

static int got_file(void *arg, const char *name, uint8_t *data, uint64_t size)
{
    back *b = arg;
    same(b->fs, b->rank, name, data, size);
    free(data);
    return 0;
}

typedef struct cost {
    uint64_t stored;
    double ckpt, restart;
} cost;

/* FS through SCHEME (with SPLIT: by dataset first) into ST and back, rebuilt and compared. */
static cost one_way(const files *fs, int scheme, bool split, stage *st)
{
    cost c = {0};
    cn_err err = {0};
    cz_h5_split sp = {0};
    cz_agg_opts o = {.scheme = scheme};
    cz_agg_stats s;
    st->len = 0;
    double t0 = now();
    if (split && cz_h5_split_vars(fs->v, fs->n, &sp, &err))
        die("split: %s", err.msg);
    if (cz_agg_write(split ? sp.v : fs->v, split ? sp.n : fs->n, &o, stage_sink, st, &s, &err))
        die("cz_agg_write: %s", err.msg);
    c.ckpt = now() - t0;
    if (split && sp.files != fs->n)
        die("only %u of %u files split as HDF5", sp.files, fs->n);
    cz_h5_split_free(&sp);
    c.stored = st->len;
    t0 = now();
    cz_agg_file *f = NULL;
    back b = {.fs = fs, .ps = cz_h5_parts_new()};
    if (!b.ps || cz_agg_open(st->p, st->len, &f, &err) || cz_agg_read(f, got_var, &b, &err))
        die("read back: %s", err.msg);
    cz_agg_close(f);
    if (split) {
        if (b.whole)
            die("%u files came back whole", b.whole);
        for (uint32_t i = 0; i < fs->n; i++) {
            b.rank = fs->v[i].rank;
            if (cz_h5_parts_join(b.ps, fs->v[i].rank, got_file, &b, &err))
                die("join: %s", err.msg);
        }
    } else if (b.whole != fs->n) {
        die("%u of %u files came back", b.whole, fs->n);
    }
    c.restart = now() - t0;
    cz_h5_parts_free(b.ps);
    return c;
}

static int analyze(const char *base, uint32_t group, int reps)
{
    load_apps(base);
    stage st = {0};
    /* agnostic on the whole files; aware and auto (cairn's default) on the split files */
    static const int scheme[3] = {CZ_AGG_AGNOSTIC, CZ_AGG_AWARE, CZ_AGG_AUTO};
    uint64_t tot_bytes = 0, tot[3] = {0, 0, 0};
    double ckpt[2][64] = {{0}}, restart[2][64] = {{0}};
    for (int k = 0; k < napps; k++) {
        const app *a = apps[k];
        uint64_t bytes = 0, stored[3] = {0, 0, 0};
        size_t skel = 0;
        for (uint32_t g0 = 0; g0 < a->nranks; g0 += group) {
            files fs = {.v = calloc(group, sizeof(cz_agg_var))};
            if (!fs.v)
                die("out of memory");
            for (uint32_t r = g0; r < g0 + group && r < a->nranks; r++) {
                size_t len = 0;
                uint8_t *p = h5_file(a, r, &len);
                fs.v[fs.n++] = (cz_agg_var){.rank = r, .name = "checkpoint.h5",
                                            .kind = CN_KIND_FILE, .type = CAIRN_BYTE,
                                            .count = len, .size = len, .data = p};
                fs.bytes += len;
            }
            cz_h5_split sp;
            cn_err err = {0};
            if (cz_h5_split_vars(fs.v, fs.n, &sp, &err))
                die("%s", err.msg);
            skel += sp.skel;
            cz_h5_split_free(&sp);
            for (int rep = 0; rep < reps; rep++)
                for (int w = 0; w < (rep ? 2 : 3); w++) {
                    cost c = one_way(&fs, scheme[w], w > 0, &st);
                    if (w < 2) {
                        ckpt[w][rep] += c.ckpt;
                        restart[w][rep] += c.restart;
                    }
                    if (rep == 0)
                        stored[w] += c.stored;
                }
            bytes += fs.bytes;
            for (uint32_t i = 0; i < fs.n; i++)
                free((void *)fs.v[i].data);
            free(fs.v);
        }
        double agn = (double)bytes / stored[0], aw = (double)bytes / stored[1];
        printf("# %s: %.1f MB of HDF5 files (%.1f%% skeleton), agnostic %.3f x, aware %.3f x, "
               "auto %.3f x\n", a->job, bytes / 1e6, 100.0 * skel / bytes, agn, aw,
               (double)bytes / stored[2]);
        printf("bench: agg.h5.%s.aware.g%u %.3f x ratio=%.3f vs agnostic\n", a->job, group, aw,
               aw / agn);
        tot_bytes += bytes;
        tot[0] += stored[0];
        tot[1] += stored[1];
        tot[2] += stored[2];
    }
    double agn = (double)tot_bytes / tot[0], aw = (double)tot_bytes / tot[1];
    printf("# all: %.1f MB of HDF5 files -> agnostic %.1f MB, aware %.1f MB\n", tot_bytes / 1e6,
           tot[0] / 1e6, tot[1] / 1e6);
    printf("bench: agg.h5.aware.g%u %.3f x ratio=%.3f vs agnostic\n", group, aw, aw / agn);
    double au = (double)tot_bytes / tot[2];
    printf("bench: agg.h5.auto.g%u %.3f x ratio=%.3f vs agnostic\n", group, au, au / agn);
    double ca = median(ckpt[0], reps), cw = median(ckpt[1], reps);
    double ra = median(restart[0], reps), rw = median(restart[1], reps);
    printf("bench: agg.h5.ckpt_time.g%u %.4f s ratio=%.3f vs agnostic\n", group, cw, cw / ca);
    printf("bench: agg.h5.restart_time.g%u %.4f s ratio=%.3f vs agnostic\n", group, rw, rw / ra);
    printf("# g%u times (median of %d, every group of every program): checkpoint agnostic %.4f, "
           "aware %.4f s; restart agnostic %.4f, aware %.4f s; bytes to the PFS %.1f -> %.1f MB\n",
           group, reps, ca, cw, ra, rw, tot[0] / 1e6, tot[1] / 1e6);
    free(st.p);
    return 0;
}
#endif /* CAIRN_HAVE_HDF5 */

int main(int argc, char **argv)
{
    bench_prog = "h5_bench";
    const char *base = NULL;
    long group = 32, reps = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && !strcmp(a, "--analyze"))
            base = argv[++i];
        else if (i + 1 < argc && !strcmp(a, "--group"))
            group = parse_long(argv[++i], a, 1, MAX_RANKS);
        else if (i + 1 < argc && !strcmp(a, "--reps"))
            reps = parse_long(argv[++i], a, 1, 64);
        else
            die("usage: h5_bench --analyze BASE [--group N] [--reps N]");
    }
    if (!base)
        die("--analyze BASE");
#ifdef CAIRN_HAVE_HDF5
    return analyze(base, (uint32_t)group, (int)reps);
#else
    (void)group, (void)reps;
    printf("# skipped: agg.h5: this build has no libhdf5 (Debian libhdf5-dev; USE_HDF5)\n");
    return 0;
#endif
}
