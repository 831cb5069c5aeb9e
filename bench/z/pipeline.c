/*
 * pipeline.c - z_bench's pipeline section: cz_write's threaded pipeline
 * against the serial way (compress everything, then write it), and the
 * table over buffer sizes and thread counts. Owned by z_bench
 * (bench/z_bench.c).
 */
#include "z_bench.h"

/* ---- pipeline ---------------------------------------------------------------- */

typedef struct ptimes {
    double pipe[MAX_REPS], comp[MAX_REPS], write[MAX_REPS], slowest[MAX_REPS];
} ptimes;

/*
 * The table: pipelined, compress-only and write-only times of D with CODEC
 * for every buffer size in BUFS (THREADS threads) and every thread count in
 * THR (1 MiB buffers). Each repetition runs every configuration once, so
 * drift on a shared machine hits them alike.
 */
static void pipe_table(const dset *d, int codec, const uint32_t *bufs, int nb, const int *thr,
                       int nt, ptimes *pt, double *ratio)
{
    frames fb[MAX_METHODS];
    int one_mib = -1;
    for (int b = 0; b < nb; b++) {
        frames_alloc(&fb[b], d->size, bufs[b]);
        encode_all(&fb[b], d, codec, 0, bufs[b]);
        ratio[b] = (double)d->size / (double)fb[b].used;
        if (bufs[b] == BUF)
            one_mib = b;
    }
    if (one_mib < 0)
        die("the table has no 1 MiB buffer");
    for (int r = -g.warmup; r < g.reps; r++) {
        for (int c = 0; c < nb + nt; c++) {
            cz_opts o = {.buf_size = c < nb ? bufs[c] : BUF, .threads = c < nb ? THREADS
                                                                             : thr[c - nb]};
            const frames *f = &fb[c < nb ? c : one_mib];
            cz_stats st;
            double tc = pipe_drop(d, codec, &o, &st);
            double tw = write_frames(f);
            double tp = pipe_file(d, codec, &o, r == 0, &st);
            if (st.stored != f->used)
                die("%s: %s: the pipeline stored %llu bytes, the same frames one by one %zu",
                    d->name, cz_codec_name(codec), (unsigned long long)st.stored, f->used);
            if (r < 0)
                continue;
            pt[c].comp[r] = tc, pt[c].write[r] = tw, pt[c].pipe[r] = tp;
            pt[c].slowest[r] = tc > tw ? tc : tw;
        }
    }
    for (int b = 0; b < nb; b++)
        frames_free(&fb[b]);
}

void pipeline_section(const dset *heat, int codec, size_t scale_size)
{
    int reps = g.reps;
    const char *cn = cz_codec_name(codec);
    cz_opts o = {.buf_size = BUF, .threads = THREADS, .level = 0};

    /* The headline: pipelined vs slowest stage vs the serial way, side by side. */
    frames f;
    frames_alloc(&f, heat->size, BUF);
    double tp[MAX_REPS], tc[MAX_REPS], tw[MAX_REPS], tsc[MAX_REPS], slow[MAX_REPS],
        serial[MAX_REPS];
    cz_stats st;
    for (int r = -g.warmup; r < reps; r++) {
        double c = pipe_drop(heat, codec, &o, &st);
        double sc = encode_all(&f, heat, codec, 0, BUF);
        double w = write_frames(&f);
        double p = pipe_file(heat, codec, &o, r == 0, &st);
        if (st.stored != f.used)
            die("heat: the pipeline stored %llu bytes, the serial way %zu",
                (unsigned long long)st.stored, f.used);
        if (r < 0)
            continue;
        tc[r] = c, tsc[r] = sc, tw[r] = w, tp[r] = p;
        slow[r] = c > w ? c : w;
        serial[r] = sc + w;
    }
    printf("# pipeline: heat (%.2f MiB), %s (ratio %.2f), %d threads, 1 MiB buffers, a fresh "
           "file in %s per run; median of %d after %d warm-up\n",
           (double)heat->size / MIB, cn, (double)heat->size / (double)f.used, THREADS, g.base,
           reps, g.warmup);
    printf("#   compress only (cz_write, %d threads, sink drops)  %.3f s\n", THREADS,
           med(tc, reps));
    printf("#   write only (the same frames, pwrite each)       %.3f s\n", med(tw, reps));
    printf("#   slowest stage                                   %.3f s\n", med(slow, reps));
    printf("#   pipelined (cz_write into the file)              %.3f s\n", med(tp, reps));
    printf("#   serial: compress in one thread into memory %.3f s + write %.3f s = %.3f s\n",
           med(tsc, reps), med(tw, reps), med(serial, reps));
    printf("#   the pool's speedup (serial compress / compress only): %.2fx on %d threads\n",
           med_ratio(tsc, tc, reps), THREADS);
    printf("bench: pipeline.time %.3f s ratio=%.2f vs slowest\n", med(tp, reps),
           med_ratio(tp, slow, reps));
    printf("bench: pipeline.serial %.3f s ratio=%.2f vs serial\n", med(tp, reps),
           med_ratio(tp, serial, reps));
    fflush(stdout);
    frames_free(&f);

    /* The table: buffer sizes at THREADS threads, then thread counts at 1 MiB. */
    if (scale_size > heat->size)
        scale_size = heat->size / 8 * 8;
    size_t off = (heat->size - scale_size) / 2 / 8 * 8;
    dset mid = {"heat-mid", heat->p + off, scale_size, heat->type};
    static const uint32_t bufs[] = {1u << 10, 4u << 10, 16u << 10, 64u << 10, 256u << 10,
                                    1u << 20, 4u << 20};
    static const int thr[] = {0, 1, 2, 4};
    enum { NB = sizeof bufs / sizeof bufs[0], NT = sizeof thr / sizeof thr[0] };
    static ptimes pt[NB + NT];
    double ratio[NB];
    pipe_table(&mid, codec, bufs, NB, thr, NT, pt, ratio);
    int one_mib = 0, best = 0;
    for (int b = 0; b < NB; b++) {
        if (bufs[b] == BUF)
            one_mib = b;
        if (med(pt[b].pipe, reps) < med(pt[best].pipe, reps))
            best = b;
    }
    printf("# pipeline table: the middle %.0f MiB of heat, %s; median of %d after %d warm-up, "
           "every configuration once per repetition; vs slowest = pipelined / max(compress "
           "only, write only)\n",
           (double)scale_size / MIB, cn, reps, g.warmup);
    printf("#   %8s %7s %6s %12s %11s %9s %11s %9s\n", "buffer", "threads", "ratio",
           "pipelined s", "compress s", "write s", "vs slowest", "vs 1 MiB");
    for (int c = 0; c < NB + NT; c++) {
        const ptimes *p = &pt[c];
        int b = c < NB ? c : one_mib;
        printf("#   %4u KiB %7d %6.2f %12.4f %11.4f %9.4f %11.2f %9.2f\n", bufs[b] >> 10,
               c < NB ? THREADS : thr[c - NB], ratio[b], med(p->pipe, reps), med(p->comp, reps),
               med(p->write, reps), med_ratio(p->pipe, p->slowest, reps),
               med_ratio(p->pipe, pt[one_mib].pipe, reps));
    }
    printf("bench: pipeline.buffer.best %u KiB ratio=%.2f vs 1MiB\n", bufs[best] >> 10,
           med_ratio(pt[best].pipe, pt[one_mib].pipe, reps));
    fflush(stdout);
}
