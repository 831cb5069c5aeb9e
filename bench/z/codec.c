/*
 * codec.c - z_bench's codec table (every codec of a type on each data set:
 * ratio, compress and decompress speed) and the automatic choice (cz_choose's
 * pick against raw and every fixed codec, and the model of a slower store).
 * Owned by z_bench (bench/z_bench.c).
 */
#include "z_bench.h"

/* ---- codec table ------------------------------------------------------------ */

typedef struct zcodec {
    int id, level;
    char label[32];
} zcodec;

/* zlib -6 first (the baseline), then every other codec that takes TYPE, and
 * zstd at level 3 after zstd's default. */
static int codec_list(uint8_t type, zcodec *c)
{
    int n = 0;
    c[n++] = (zcodec){CZ_ZLIB, 6, "zlib"};
    for (int id = CZ_ZLIB + 1; id < CZ_NCODECS; id++) {
        if (!cz_codec_accepts(id, type) || cz_is_lossy(id)) /* lossy: bench/lossy_bench.c */
            continue;
        c[n] = (zcodec){id, 0, ""};
        snprintf(c[n].label, sizeof c[n].label, "%s", cz_codec_name(id));
        n++;
        if (id == CZ_ZSTD)
            c[n++] = (zcodec){CZ_ZSTD, 3, "zstd3"};
    }
    return n;
}

void codec_section(const dset *d, frames *f)
{
    zcodec c[MAX_METHODS];
    int nc = codec_list(d->type, c), reps = g.reps;
    static double ct[MAX_METHODS][MAX_REPS], dt[MAX_METHODS][MAX_REPS];
    static double cs[MAX_METHODS][MAX_REPS], ds[MAX_METHODS][MAX_REPS];
    double ratio[MAX_METHODS];
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < nc; k++) {
            ct[k][r] = encode_all(f, d, c[k].id, c[k].level, BUF);
            ratio[k] = (double)d->size / (double)f->used;
            dt[k][r] = decode_all(f, d, c[k].id);
            cs[k][r] = (double)d->size / 1e6 / ct[k][r];
            ds[k][r] = (double)d->size / 1e6 / dt[k][r];
        }
    printf("# codec %s: %.2f MiB of %s in 1 MiB frames, one thread, median of %d; zlib at "
           "level 6, others at their default (zstd 1), zstd3 = zstd at level 3\n",
           d->name, (double)d->size / MIB, d->type == CAIRN_DOUBLE  ? "double"
                                           : d->type == CAIRN_FLOAT ? "float"
                                                                    : "uint8",
           reps);
    printf("#   %-13s %8s %10s %12s\n", "codec", "ratio", "comp MB/s", "decomp MB/s");
    for (int k = 0; k < nc; k++)
        printf("#   %-13s %8.3f %10.0f %12.0f\n", c[k].label, ratio[k], med(cs[k], reps),
               med(ds[k], reps));
    for (int k = 0; k < nc; k++) {
        printf("bench: codec.%s.%s.ratio %.3f x ratio=%.2f vs zlib6\n", d->name, c[k].label,
               ratio[k], ratio[k] / ratio[0]);
        printf("bench: codec.%s.%s.comp %.0f MB/s ratio=%.2f vs zlib6\n", d->name, c[k].label,
               med(cs[k], reps), med_ratio(cs[k], cs[0], reps));
        printf("bench: codec.%s.%s.decomp %.0f MB/s ratio=%.2f vs zlib6\n", d->name, c[k].label,
               med(ds[k], reps), med_ratio(ds[k], ds[0], reps));
    }
    fflush(stdout);
}

/* ---- automatic choice ---------------------------------------------------------- */

/* Modelled pipelined time (eq. 3): the slower of compress / threads and write. */
static double model(double compress_s, double stored, double bps)
{
    double w = stored / bps, c = compress_s / THREADS;
    return c > w ? c : w;
}

aresult auto_section(const dset *d)
{
    int reps = g.reps;
    cz_opts o = {.buf_size = BUF, .threads = THREADS, .level = 0};

    /* The store's bandwidth, as cz_choose is told it. */
    double traw[MAX_REPS];
    for (int r = -g.warmup; r < reps; r++) {
        double t = write_raw(d);
        if (r >= 0)
            traw[r] = t;
    }
    double bps = (double)d->size / med(traw, reps);
    cz_env env = {.storage_bps = bps, .threads = THREADS, .level = 0, .buf_size = BUF};

    /* Methods: raw, every fixed codec, then auto (the last). */
    int id[MAX_METHODS], nm = 0;
    id[nm++] = CZ_RAW;
    for (int c = CZ_ZLIB; c < CZ_NCODECS; c++)
        if (cz_codec_accepts(c, d->type) && !cz_is_lossy(c))
            id[nm++] = c;
    int nfixed = nm, am = nm++;
    static double t[MAX_METHODS][MAX_REPS], cs[MAX_METHODS][MAX_REPS];
    double stored[MAX_METHODS] = {0}, tchoose[MAX_REPS], sampled = 1;
    int pick[MAX_REPS];
    bool verified[CZ_NCODECS] = {false};
    for (int r = -g.warmup; r < reps; r++) {
        for (int i = 0; i < nm; i++) {
            int m = (i + (r < 0 ? 0 : r)) % nm; /* rotate the order from rep to rep */
            int codec = id[m < nfixed ? m : 0];
            double tc = 0;
            if (m == am) {
                double t0 = now();
                codec = cz_choose(d->p, d->size, d->type, NULL, &env, &sampled);
                tc = now() - t0;
            }
            cz_stats st;
            double tp = pipe_file(d, codec, &o, r >= 0 && !verified[codec], &st);
            if (r < 0)
                continue;
            verified[codec] = true;
            t[m][r] = tp + tc; /* auto's time includes sampling and choosing */
            cs[m][r] = st.compress_s;
            if (m == am)
                tchoose[r] = tc, pick[r] = codec;
            else
                stored[m] = (double)st.stored;
        }
    }

    int best = 0;
    for (int m = 1; m < nfixed; m++)
        if (med(t[m], reps) < med(t[best], reps))
            best = m;
    double slow_bps = bps / SLOW, mod_fast[MAX_METHODS], mod_slow[MAX_METHODS];
    int mbest = 0;
    for (int m = 0; m < nfixed; m++) {
        double c = m == 0 ? 0 : med(cs[m], reps);
        mod_fast[m] = model(c, stored[m], bps);
        mod_slow[m] = model(c, stored[m], slow_bps);
        if (mod_slow[m] < mod_slow[mbest])
            mbest = m;
    }

    printf("# auto %s: store B = %.2f GB/s (pwrite of the raw %.2f MiB into a fresh file, "
           "median); %d threads, 1 MiB buffers, median of %d after %d warm-up\n",
           d->name, bps / 1e9, (double)d->size / MIB, THREADS, reps, g.warmup);
    printf("#   %-13s %9s %11s %10s %12s %15s\n", "codec", "time s", "stored MiB", "vs best",
           "model(B) s", "model(B/10) s");
    for (int m = 0; m < nfixed; m++)
        printf("#   %-13s %9.4f %11.2f %10.2f %12.4f %15.4f%s\n", cz_codec_name(id[m]),
               med(t[m], reps), stored[m] / MIB, med_ratio(t[m], t[best], reps), mod_fast[m],
               mod_slow[m], m == best ? "  <- best fixed" : "");
    char picks[256] = "";
    size_t at = 0;
    for (int r = 0; r < reps && at < sizeof picks - 32; r++)
        at += (size_t)snprintf(picks + at, sizeof picks - at, "%s%s", r ? " " : "",
                               cz_codec_name(pick[r]));
    printf("#   %-13s %9.4f %11s %10.2f   cz_choose picked: %s (sampled stored/raw %.3f); "
           "cz_choose took %.2f ms (median, included in its time)\n",
           "auto", med(t[am], reps), "", med_ratio(t[am], t[best], reps), picks, sampled,
           1e3 * med(tchoose, reps));
    /* Modelled only: the same choice against a store SLOW times slower. */
    cz_env slow_env = env;
    slow_env.storage_bps = slow_bps;
    int slow_pick = cz_choose(d->p, d->size, d->type, NULL, &slow_env, NULL);
    int sp = 0;
    for (int m = 0; m < nfixed; m++)
        if (id[m] == slow_pick)
            sp = m;
    printf("#   modelled, not measured: with a store at B/%.0f = %.0f MB/s (NVMe, a loaded PFS) "
           "cz_choose picks %s; eq. 3 with this run's compress times and sizes gives it "
           "%.4f s, the best fixed there is %s at %.4f s (ratio %.2f), raw %.4f s\n",
           SLOW, slow_bps / 1e6, cz_codec_name(slow_pick), mod_slow[sp],
           cz_codec_name(id[mbest]), mod_slow[mbest], mod_slow[sp] / mod_slow[mbest],
           mod_slow[0]);
    printf("bench: codec.auto.%s %.4f s ratio=%.2f vs best_fixed\n", d->name, med(t[am], reps),
           med_ratio(t[am], t[best], reps));
    fflush(stdout);
    return (aresult){med(t[am], reps), med(t[best], reps)};
}
