/*
 * lossy_bench.c - the lossy codecs of src/compress (the wavelet method and
 * the predictive mode) on three smooth fields: the paper's tables
 * reproduced, then cairn's error-bounded modes against ZFP's fixed-accuracy
 * mode at the same bound, all measured in the same run.
 *
 *   scripts/mpirun.sh 1 build/bench/lossy_bench [--reps N] [--warmup N]
 *       [--heat3d-steps N] [--heat2d-steps N] [--egm96 PATH] [--paper SETS]
 *
 * One rank, one thread (MPI only for bench.h's die); everything in memory.
 *
 * Data sets:
 *   heat3d  2 x 82 x 1156 doubles (the paper's NICAM arrays, 1156 x 82 x 2
 *           read fastest first as Fortran stores them), made by a 3-D heat
 *           stencil: explicit 7-point Laplacian, u += (sum of the 6
 *           neighbours - 6u) / 8, for --heat3d-steps steps (default 400).
 *           heat.c's conditions in every (y, x) plane: row 0 fixed at 1, the
 *           other edges at 0, a fixed hot disc (2.0) of radius min/10 at
 *           (2ny/3, nx/2) in plane 0 and at (ny/3, nx/4) in plane 1; the z
 *           faces insulated (mirror). The free cells start from 40 hot and
 *           cold spots (discs of radius 4..20, values -1..3, seeded), so the
 *           field is smooth but nowhere trivial.
 *   heat2d  examples/heat's own field: its 5-point Jacobi update and fixed
 *           cells on the demo's 1024 x 1024 grid after --heat2d-steps steps
 *           (default 400, the demo's run), the same bit for bit as heat.c on
 *           one rank.
 *   egm96   proj-data's EGM96 geoid grid (721 x 1440 big-endian float32
 *           after a 40-byte header) as host floats, 2-D CAIRN_FLOAT; skipped
 *           with a note if the file is absent.
 *
 * Sections:
 *   paper   (the paper's figs. 8-10, on the --paper sets) cz_wavelet_encode
 *           with d = 64, guarantee off, final pass zlib, for n = 1..128,
 *           both quantizers, with and without the encoding: size as % of
 *           the raw array, mean and max relative error (eq. 4: |x - x'| /
 *           (max x - min x)); against gzip alone (zlib -6 on the raw array).
 *           One timed sample per configuration (sizes and errors are
 *           deterministic; the speeds are for orientation).
 *   bound   at bounds 1e-2, 1e-3, 1e-4 of each field's range: wavelet
 *           (cz_wavelet_defaults, guaranteed), predict, and ZFP 1.0 in
 *           fixed-accuracy mode with tolerance = bound (serial, no header;
 *           its stream size is the stored size). Ratio raw / stored,
 *           compress and decompress MB/s (1e6 raw bytes per second; cairn's
 *           encode includes the reconstruction and error it reports),
 *           observed max |x - x'|. Medians of --reps repetitions after
 *           --warmup discarded ones; each repetition runs the three back to
 *           back in a rotating order; a speed ratio is the median of per-
 *           repetition ratios.
 * A timed sample codes at least 8 MiB: a smaller field is encoded (then
 * decoded) several times in a row, and the time divided.
 * Every decoded array is checked: cairn's decode must equal the
 * reconstruction its encode reported, bit for bit, every element of the
 * guaranteed modes must be within the bound, and the reported max error
 * must be the one observed; any miss aborts the run.
 *
 * Output: `bench: NAME VALUE UNIT ratio=R vs BASELINE` lines:
 *   wavelet.paper.n128.mountain.FIELD  size %          vs gzip (V / gzip-alone %)
 * Lines starting with '#' are details, among them the codecs' payload
 * ratios and speeds against ZFP (`# payload: lossy.ratio.1e-3.FIELD ...`,
 * the cairn mode named on the line above): a payload alone is not what a
 * checkpoint stores, so they are not `bench:` lines (issue 18); the lossy
 * ratio at the checkpoint is lossy_ckpt_bench's.
 *
 * This file owns main, the options and the run's settings (g); the data
 * sets and sections are in bench/lossy/ (lossy_bench.h lists who does what).
 */
#include "lossy/lossy_bench.h"

struct lossy_globals g;

/* ---- main ------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr, "usage: lossy_bench [--reps N] [--warmup N] [--heat3d-steps N] "
                    "[--heat2d-steps N]\n"
                    "                   [--egm96 PATH] [--paper heat3d,egm96,heat2d|none]\n");
}

/* Whether NAME is in the comma-separated LIST. */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (e ? 1 : 0);
    }
    return false;
}

int main(int argc, char **argv)
{
    bench_prog = "lossy_bench";
    long reps = 3, warmup = 1, steps3 = 400, steps2 = 400;
    const char *egm = EGM96_DEFAULT, *paper = "heat3d,egm96,heat2d";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 0;
        } else if (i + 1 < argc && strcmp(a, "--reps") == 0) {
            reps = parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--warmup") == 0) {
            warmup = parse_long(argv[++i], a, 0, 100);
        } else if (i + 1 < argc && strcmp(a, "--heat3d-steps") == 0) {
            steps3 = parse_long(argv[++i], a, 0, 1000000);
        } else if (i + 1 < argc && strcmp(a, "--heat2d-steps") == 0) {
            steps2 = parse_long(argv[++i], a, 0, 1000000);
        } else if (i + 1 < argc && strcmp(a, "--egm96") == 0) {
            egm = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--paper") == 0) {
            paper = argv[++i];
        } else {
            usage();
            die("unknown or incomplete option '%s'", a);
        }
    }

    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    int nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 1)
        die("runs on one rank (it measures one thread), not %d", nranks);
    g.reps = (int)reps, g.warmup = (int)warmup;

    field fs[MAX_FIELDS];
    int nf = 0;
    double t0 = now();
    fs[nf++] = make_heat3d(steps3);
    double t3 = now() - t0;
    t0 = now();
    fs[nf++] = make_heat2d(1024, steps2);
    double t2 = now() - t0;
    bool have_egm = make_egm96(egm, &fs[nf]);
    if (have_egm)
        nf++;
    printf("# lossy: 1 rank, one thread, ZFP %s; %d reps after %d warm-up\n", ZFP_VERSION_STRING,
           g.reps, g.warmup);
    printf("# heat3d: 3-D heat stencil (7-point, dt 1/8), 2 x 82 x 1156 doubles (the paper's "
           "1156 x 82 x 2, fastest first), %ld steps from 40 hot/cold spots and heat.c's "
           "boundaries (%.2f s)\n",
           steps3, t3);
    printf("# heat2d: examples/heat's field, 1024 x 1024 doubles after %ld steps (%.2f s), "
           "%.1f%% of cells exactly 0\n",
           steps2, t2, 100.0 * zero_share(fs[1].p, fs[1].n));
    if (have_egm)
        printf("# egm96: %s, 721 x 1440 float32, big-endian converted to host\n", egm);
    else
        printf("# egm96: %s missing (apt install proj-data): skipped\n", egm);

    /* Buffers for the largest field and the largest payload any method may write. */
    size_t most = 0;
    g.cap = 0;
    for (int s = 0; s < nf; s++) {
        size_t raw = raw_size(&fs[s]);
        most = raw > most ? raw : most;
        size_t c[] = {cz_wavelet_bound(raw), cz_predict_bound(raw),
                      cz_codec_get(CZ_ZLIB)->bound(raw),
                      zfp_bound_tightest(&fs[s])};
        for (size_t k = 0; k < sizeof c / sizeof c[0]; k++)
            g.cap = c[k] > g.cap ? c[k] : g.cap;
    }
    g.dst = xmalloc(g.cap);
    g.recon = xmalloc(most);
    g.dec = xmalloc(most);
    g.scratch = xmalloc(most);
    fflush(stdout);

    for (int s = 0; s < nf; s++)
        if (listed(paper, fs[s].name))
            paper_section(&fs[s]);

    bool met[MAX_FIELDS];
    for (int s = 0; s < nf; s++)
        met[s] = bound_section(&fs[s]);
    printf("# lossy: the target at 1e-3 (>= %.0fx ZFP's ratio at >= %.1fx its compress "
           "speed):",
           TARGET_RATIO, TARGET_SPEED);
    for (int s = 0; s < nf; s++)
        printf("%s %s %s", s ? "," : "", fs[s].name, met[s] ? "met" : "NOT met");
    printf("\n");
    fflush(stdout);

    for (int s = 0; s < nf; s++)
        free(fs[s].p);
    free(g.dst);
    free(g.recon);
    free(g.dec);
    free(g.scratch);
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
