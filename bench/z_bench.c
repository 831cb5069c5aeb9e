/*
 * z_bench.c - the compression layer (src/compress) on three in-memory data
 * sets: every codec against zlib -6, the write pipeline against its slowest
 * stage and against compress-then-write, and the automatic choice against
 * the best fixed codec, all measured in the same run.
 *
 *   scripts/mpirun.sh 1 build/bench/z_bench [--size MiB] [--reps N] [--warmup N]
 *       [--heat-steps N] [--scale-size MiB] [--egm96 PATH] [--pipe-codec NAME]
 *   build/bench/z_bench --heat-only FILE [--size MiB] [--heat-steps N]
 *
 * One rank (MPI only for bench.h's die); files go to $CAIRN_BASE (default
 * /dev/shm), a fresh file per run, unlinked after it.
 *
 * Data sets:
 *   heat    examples/heat's field: its 5-point Jacobi update and fixed cells
 *           (top edge 1, other edges 0, a disc of 2) on a SIDE x SIDE grid of
 *           doubles, SIDE = sqrt(SIZE / 8), after --heat-steps steps (default
 *           1600: about the share of cells still exactly 0 that the demo's
 *           1024 x 1024 field has after its 400 steps; printed). Only cells
 *           that can be nonzero yet are updated, which changes no bit:
 *           --heat-only writes the field for `cmp` against examples/heat --out
 *           (--size 8 is the demo's 1024 x 1024).
 *   egm96   proj-data's EGM96 geoid grid (721 x 1440 big-endian float32 after
 *           a 40-byte header) as host floats; skipped with a note if absent.
 *   random  SIZE MiB of xorshift bytes (CAIRN_UINT8): incompressible.
 *
 * Sections (figures are medians over --reps repetitions; a ratio is the
 * median of per-repetition ratios of runs made side by side; pipeline and
 * auto runs come after --warmup discarded repetitions):
 *   codec     1 MiB frames, one thread, cz_frame_encode then cz_frame_parse +
 *             cz_frame_decode (checksum included, as on restart); ratio is
 *             raw / stored with frame headers; MB/s are 1e6 raw bytes per
 *             second. Every decode is compared with the data. Then egm96
 *             through cz_write with fpzip as a plain array and with its 2-D
 *             shape (frames of whole rows), both read back and compared.
 *   pipeline  heat through cz_write (zstd, 2 threads, 1 MiB buffers) into a
 *             file, against its slowest stage run alone (compress: the same
 *             cz_write into a sink that drops the bytes; write: the same
 *             frames pwritten one by one) and against the serial way (encode
 *             everything in one thread into memory, then write it). Then a
 *             table over buffer sizes and thread counts on the middle
 *             --scale-size MiB of heat.
 *   auto      per data set, the checkpoint time (cz_write into a file, 2
 *             threads, 1 MiB) with cz_choose's pick against raw and every
 *             fixed codec; auto's time includes the time cz_choose took
 *             (sampling and choosing); the storage bandwidth cz_choose is
 *             told is this run's pwrite of the raw data set into a file. The same choice
 *             against a 10x slower store is reported as a model only (eq. 3
 *             of the paper with this run's compress times and sizes).
 * Every file a pipeline wrote is read back once per codec and data set and
 * decoded with cz_read; a mismatch aborts the run.
 *
 * Output: `bench: NAME VALUE UNIT ratio=R vs BASELINE` lines:
 *   codec.SET.CODEC.{ratio x, comp MB/s, decomp MB/s}   vs zlib6,
 *   codec.egm96.fpzip.shape x (through cz_write with its 2-D shape) vs fpzip_1d,
 *   pipeline.time s vs slowest, pipeline.serial s vs serial,
 *   pipeline.buffer.best KiB vs 1MiB, codec.auto.SET s vs best_fixed (per data
 *   set), then codec.auto s vs best_fixed (summed over the sets).
 * Lines starting with '#' are details.
 *
 * This file owns main, the options, the data sets and the run's settings
 * (g); the sections are in bench/z/ (z_bench.h lists who does what).
 */
#include "z/z_bench.h"

struct z_globals g;

/* ---- main ------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: z_bench [--size MiB] [--reps N] [--warmup N] [--heat-steps N]\n"
            "               [--scale-size MiB] [--egm96 PATH] [--pipe-codec NAME]\n"
            "       z_bench --heat-only FILE [--size MiB] [--heat-steps N]\n");
}

int main(int argc, char **argv)
{
    bench_prog = "z_bench";
    long size_mib = 64, reps = 5, warmup = 1, steps = 1600, scale_mib = 16;
    const char *egm = EGM96_DEFAULT, *heat_only = NULL;
    int pipe_codec = CZ_ZSTD;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage();
            return 0;
        } else if (i + 1 < argc && strcmp(a, "--size") == 0) {
            size_mib = parse_long(argv[++i], a, 1, 4096);
        } else if (i + 1 < argc && strcmp(a, "--reps") == 0) {
            reps = parse_long(argv[++i], a, 1, MAX_REPS);
        } else if (i + 1 < argc && strcmp(a, "--warmup") == 0) {
            warmup = parse_long(argv[++i], a, 0, 100);
        } else if (i + 1 < argc && strcmp(a, "--heat-steps") == 0) {
            steps = parse_long(argv[++i], a, 0, 1000000);
        } else if (i + 1 < argc && strcmp(a, "--scale-size") == 0) {
            scale_mib = parse_long(argv[++i], a, 1, 4096);
        } else if (i + 1 < argc && strcmp(a, "--egm96") == 0) {
            egm = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--heat-only") == 0) {
            heat_only = argv[++i];
        } else if (i + 1 < argc && strcmp(a, "--pipe-codec") == 0) {
            pipe_codec = cz_codec_parse(argv[++i]);
            if (pipe_codec <= CZ_RAW || pipe_codec >= CZ_NCODECS ||
                !cz_codec_accepts(pipe_codec, CAIRN_DOUBLE))
                die("--pipe-codec: expected a codec that takes doubles (%s), got '%s'",
                    cz_codec_list(), argv[i]);
        } else {
            usage();
            die("unknown or incomplete option '%s'", a);
        }
    }
    if (!heat_only && scale_mib > size_mib)
        die("--scale-size %ld MiB is larger than --size %ld MiB", scale_mib, size_mib);

    check_mpi(MPI_Init(&argc, &argv), "MPI_Init");
    int nranks = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &bench_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 1)
        die("runs on one rank (it measures one process's pool), not %d", nranks);
    g.reps = (int)reps, g.warmup = (int)warmup;
    g.base = getenv("CAIRN_BASE");
    if (!g.base || !g.base[0])
        g.base = "/dev/shm";

    long side = 1;
    while ((side + 1) * (side + 1) * 8 <= size_mib * (long)MIB)
        side++;
    if (heat_only) {
        double *u = heat_field(side, steps);
        FILE *f = fopen(heat_only, "wb");
        size_t n = (size_t)side * (size_t)side;
        if (!f || fwrite(u, sizeof *u, n, f) != n || fclose(f) != 0)
            die("%s: %s", heat_only, strerror(errno));
        printf("# heat: %ld x %ld after %ld steps written to %s\n", side, side, steps, heat_only);
        free(u);
        check_mpi(MPI_Finalize(), "MPI_Finalize");
        return 0;
    }

    printf("# z: 1 rank, %d pool threads, files in %s, %d reps after %d warm-up\n", THREADS,
           g.base, g.reps, g.warmup);
    dset sets[MAX_SETS];
    int ns = 0;
    double t0 = now();
    double *u = heat_field(side, steps);
    double t_heat = now() - t0;
    sets[ns++] = (dset){"heat", (uint8_t *)u, (size_t)side * (size_t)side * sizeof *u,
                        CAIRN_DOUBLE};
    uint32_t rows = 0, cols = 0;
    float *egv = load_egm96(egm, &rows, &cols);
    bool have_egm = egv != NULL;
    if (have_egm)
        sets[ns++] = (dset){"egm96", (uint8_t *)egv, (size_t)rows * cols * sizeof *egv,
                            CAIRN_FLOAT};
    size_t rsize = (size_t)size_mib * MIB;
    uint8_t *rnd = xmalloc(rsize);
    fill(rnd, rsize, 0);
    sets[ns++] = (dset){"random", rnd, rsize, CAIRN_UINT8};

    size_t most = 0;
    for (int s = 0; s < ns; s++)
        most = sets[s].size > most ? sets[s].size : most;
    g.dst = xmalloc(most);
    g.back_cap = (most / BUF + 1) * cz_frame_bound(BUF) + (4u << 20);
    g.back = xmalloc(g.back_cap);
    g.scratch = xmalloc(CZ_MAX_BUF);
    /* How the heat field compares with the demo's own checkpoint. */
    double *demo = heat_field(1024, 400);
    dset dd = {"heat-demo", (uint8_t *)demo, 1024 * 1024 * sizeof *demo, CAIRN_DOUBLE};
    frames f;
    frames_alloc(&f, most > dd.size ? most : dd.size, BUF);
    encode_all(&f, &dd, CZ_ZSTD, 0, BUF);
    double demo_ratio = (double)dd.size / (double)f.used;
    encode_all(&f, &sets[0], CZ_ZSTD, 0, BUF);
    printf("# heat: %ld x %ld doubles (%.2f MiB) after %ld steps (%.1f s): %.1f%% of cells "
           "exactly 0, zstd ratio %.2f; the demo's field (1024 x 1024, 400 steps): %.1f%%, "
           "zstd ratio %.2f\n",
           side, side, (double)sets[0].size / MIB, steps, t_heat,
           100 * zero_share(u, (size_t)side * (size_t)side),
           (double)sets[0].size / (double)f.used, 100 * zero_share(demo, 1024 * 1024),
           demo_ratio);
    free(demo);
    if (have_egm)
        printf("# egm96: %s, %u x %u float32 (%.2f MiB), big-endian converted to host\n", egm,
               rows, cols, (double)sets[1].size / MIB);
    else
        printf("# egm96: %s missing (apt install proj-data)\n", egm);
    printf("# random: %.2f MiB of xorshift bytes (uint8)\n", (double)rsize / MIB);
    fflush(stdout);

    for (int s = 0; s < ns; s++)
        codec_section(&sets[s], &f);
    frames_free(&f);
    if (have_egm)
        fpzip_shape_section(&sets[1], rows, cols);

    pipeline_section(&sets[0], pipe_codec, (size_t)scale_mib * MIB);

    double sum_auto = 0, sum_best = 0;
    for (int s = 0; s < ns; s++) {
        aresult a = auto_section(&sets[s]);
        sum_auto += a.auto_s;
        sum_best += a.best_s;
    }
    printf("# auto: all %d data sets (sum of the medians)\n", ns);
    printf("bench: codec.auto %.4f s ratio=%.2f vs best_fixed\n", sum_auto, sum_auto / sum_best);
    fflush(stdout);

    for (int s = 0; s < ns; s++)
        free(sets[s].p);
    free(g.dst);
    free(g.back);
    free(g.scratch);
    check_mpi(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
