/*
 * cli_report.c - `cairn report --job ID --svg FILE`: a picture of a job's
 * life, one column per generation (oldest on the left) in three panels:
 * the wall time its checkpoint took, the bytes it stores by level, and its
 * compression ratio (bytes of state / bytes stored).
 *
 * Everything comes from what `cairn ls` reads (cli_lsdata.c): the node
 * manifests (the seconds, the level, the bytes of state; the rank files'
 * sizes) and the PFS index (seconds, state and stored bytes). The time is
 * the duration of the checkpoint the manifests (version 4 on) and the index
 * (version 2 on) record; generations written by an older cairn have none
 * and draw no bar (data-seconds="0"). Each generation is one <g
 * class="gen"> whose data-* attributes hold its numbers (docs/json.md names
 * them), so a program can read the picture back.
 *
 * The file is written whole to a new temporary file in FILE's directory
 * (O_EXCL, O_NOFOLLOW: never through a link), synced and renamed over FILE:
 * a link at FILE is replaced, not followed; a reader never sees half a file.
 */
#include "tools/tools.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char cli_report_usage[] =
    "Usage: cairn report --job ID --svg FILE [--base DIR] [--config FILE] [--pfs DIR]\n"
    "       cairn report --fti FILE | --scr PREFIX | --veloc FILE --svg FILE [--job ID] [--pfs DIR]\n"
    "\n"
    "Draw job ID's generations into an SVG picture, one column per generation\n"
    "(oldest left): the seconds each checkpoint took (as the manifests and the PFS\n"
    "index record it; none for generations an older cairn wrote), the bytes it\n"
    "stores by level (its rank files at the level its node manifests record; its\n"
    "aggregated files on the PFS at level 4) and its compression ratio (bytes of\n"
    "state / bytes stored, node-local if there, else on the PFS). Each generation\n"
    "is an element <g class=\"gen\" data-gen=...> whose data-* attributes hold the\n"
    "numbers drawn (docs/json.md). FILE is written to a temporary file beside it\n"
    "and renamed over it (a symlink at FILE is replaced, never followed).\n"
    "\n"
    "Options:\n"
    "  -j, --job ID        the job (needed)\n"
    "  -s, --svg FILE      where to write the picture (needed)\n"
    "  -b, --base DIR      node-local base directory (default: CAIRN_BASE, else\n"
    "                      store.base of --config, else /dev/shm)\n"
    "  -c, --config FILE   read store.base and pfs.dir from this INI file\n"
    "  -p, --pfs DIR       the PFS directory (pfs.dir) to look in for level 4\n"
    CLI_COMPAT_HELP
    "  -h, --help          show this help\n"
    "\n"
    "report exits 0 when it wrote FILE, 3 for no such job or one without\n"
    "generations, 1 if FILE could not be written (nothing is then left behind).\n";

/* One column of the picture. */
typedef struct col {
    int64_t gen;
    uint32_t level, local_level;
    double seconds, ratio;
    uint64_t bytes[5]; /* [1..4]: bytes stored at that level */
    uint64_t state;
} col;

static void fill(const cli_gen_row *r, col *c)
{
    const cli_gen_sum *s = r->s;
    const cli_pfs_gen *p = r->p;
    memset(c, 0, sizeof *c);
    c->gen = r->id;
    c->level = cli_row_level(r);
    c->seconds = s && s->labeled && s->seconds > 0 ? s->seconds : p && p->complete ? p->seconds : 0;
    if (s && s->level >= 1 && s->level <= 3) {
        c->local_level = s->level;
        c->bytes[s->level] = s->bytes;
    }
    if (p && p->complete)
        c->bytes[4] = p->stored;
    c->state = s && s->raw ? s->raw : p && p->complete ? p->raw : 0;
    uint64_t stored = c->local_level ? c->bytes[c->local_level] : c->bytes[4];
    c->ratio = c->state && stored ? (double)c->state / (double)stored : 0;
}

/* TEXT with XML's five special characters escaped. */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
    }
}

#define PANEL_H 150
#define TOP 40
#define LEFT 90
#define COL_W 28
static const char *const LEVEL_COLOR[5] = {"#999", "#4c72b0", "#55a868", "#c44e52", "#8172b2"};

static void panel(FILE *f, int i, const char *title, const char *max, size_t n)
{
    int y0 = TOP + i * (PANEL_H + 40);
    fprintf(f, "<text x=\"10\" y=\"%d\" font-weight=\"bold\">", y0 - 8);
    xml_text(f, title);
    fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", LEFT - 6,
            y0 + 12, max);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", LEFT - 6, y0 + PANEL_H);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#333\"/>\n", LEFT,
            y0 + PANEL_H, LEFT + (int)n * COL_W, y0 + PANEL_H);
}

/* Height in pixels of V on a panel whose top is MAX. */
static double h_of(double v, double max) { return max > 0 ? v / max * (PANEL_H - 10) : 0; }

static void draw(FILE *f, const char *job, const col *c, size_t n)
{
    double maxs = 0, maxb = 0, maxr = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t b = c[i].bytes[1] + c[i].bytes[2] + c[i].bytes[3] + c[i].bytes[4];
        maxs = c[i].seconds > maxs ? c[i].seconds : maxs;
        maxb = (double)b > maxb ? (double)b : maxb;
        maxr = c[i].ratio > maxr ? c[i].ratio : maxr;
    }
    int w = LEFT + (int)n * COL_W + 150, h = TOP + 3 * (PANEL_H + 40);
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"11\" data-job=\"", w, h);
    xml_text(f, job);
    fprintf(f, "\" data-generations=\"%zu\">\n<title>cairn report: job ", n);
    xml_text(f, job);
    fprintf(f, "</title>\n");
    char ms[32], mb[32], mr[32];
    snprintf(ms, sizeof ms, "%.3g s", maxs);
    cli_human((uint64_t)maxb, mb, sizeof mb);
    snprintf(mr, sizeof mr, "%.3g x", maxr);
    panel(f, 0, "checkpoint time (s)", ms, n);
    panel(f, 1, "bytes stored by level", mb, n);
    panel(f, 2, "compression ratio (state / stored)", mr, n);
    for (int l = 1; l <= 4; l++)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"%d\">level %d</text>\n", w - 130, TOP + PANEL_H + 40 + 16 * l,
                LEVEL_COLOR[l], w - 115, TOP + PANEL_H + 49 + 16 * l, l);
    for (size_t k = n; k-- > 0;) { /* the rows are newest first: draw oldest left */
        const col *g = &c[k];
        int x = LEFT + (int)(n - 1 - k) * COL_W + 4;
        fprintf(f, "<g class=\"gen\" data-gen=\"%lld\" data-level=\"%u\" data-seconds=\"%.6f\" "
                   "data-bytes-l1=\"%llu\" data-bytes-l2=\"%llu\" data-bytes-l3=\"%llu\" "
                   "data-bytes-l4=\"%llu\" data-state-bytes=\"%llu\" data-ratio=\"%.6f\">\n"
                   "<title>generation %lld, level %u</title>\n",
                (long long)g->gen, g->level, g->seconds, (unsigned long long)g->bytes[1],
                (unsigned long long)g->bytes[2], (unsigned long long)g->bytes[3],
                (unsigned long long)g->bytes[4], (unsigned long long)g->state, g->ratio,
                (long long)g->gen, g->level);
        int base0 = TOP + PANEL_H, base1 = TOP + 2 * PANEL_H + 40, base2 = TOP + 3 * PANEL_H + 80;
        double hs = h_of(g->seconds, maxs);
        fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#4c72b0\"/>\n", x,
                base0 - hs, COL_W - 8, hs);
        double y = base1;
        for (int l = 1; l <= 4; l++) {
            double hb = h_of((double)g->bytes[l], maxb);
            if (g->bytes[l] == 0)
                continue;
            fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\" "
                       "data-level=\"%d\"/>\n", x, y - hb, COL_W - 8, hb, LEVEL_COLOR[l], l);
            y -= hb;
        }
        double hr = h_of(g->ratio, maxr);
        fprintf(f, "<circle cx=\"%d\" cy=\"%.1f\" r=\"4\" fill=\"#dd8452\"/>\n", x + COL_W / 2 - 4,
                base2 - hr);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%lld</text>\n</g>\n",
                x + COL_W / 2 - 4, base2 + 14, (long long)g->gen);
    }
    fprintf(f, "</svg>\n");
}

/* Write BUF (LEN bytes) as PATH: a new temporary file in its directory,
 * synced, renamed over PATH. 0, or -1 after a message for VERB. */
static int write_safely(const char *verb, const char *path, const char *buf, size_t len)
{
    char *d = cli_strdup(path), *b = cli_strdup(path);
    const char *dir = dirname(d), *name = basename(b);
    int rc = -1, fd = -1, dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char tmp[300] = "";
    if (dfd < 0 || !*name || strcmp(name, "/") == 0 || strcmp(name, ".") == 0 ||
        strcmp(name, "..") == 0 || strlen(name) > 255) {
        cli_error(verb, "%s: %s", path, dfd < 0 ? strerror(errno) : "not a file name");
        goto out;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    for (unsigned i = 0; i < 100 && fd < 0; i++) {
        snprintf(tmp, sizeof tmp, ".%.200s.%ld.%lx.%u", name, (long)getpid(), (long)ts.tv_nsec, i);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        cli_error(verb, "%s: cannot create a file in %s: %s", path, dir, strerror(errno));
        goto out;
    }
    cn_err err = {0};
    if (cn_pwrite_all(fd, buf, len, 0, path, &err) < 0 || fsync(fd) != 0 || close(fd) != 0 ||
        renameat(dfd, tmp, dfd, name) != 0) {
        cli_error(verb, "%s: %s", path, err.code ? err.msg : strerror(errno));
        unlinkat(dfd, tmp, 0);
        goto out;
    }
    fsync(dfd);
    rc = 0;
out:
    if (dfd >= 0)
        close(dfd);
    free(d);
    free(b);
    return rc;
}

int cli_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"base", required_argument, NULL, 'b'}, {"config", required_argument, NULL, 'c'},
        {"job", required_argument, NULL, 'j'},  {"pfs", required_argument, NULL, 'p'},
        {"svg", required_argument, NULL, 's'},  {"help", no_argument, NULL, 'h'},
        CLI_COMPAT_OPTIONS,                     {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *base = NULL, *config = NULL, *job = NULL, *pfs = NULL,
               *svg = NULL;
    cli_compat cc = {.fd = -1};
    int c;
    while ((c = getopt_long(argc, argv, ":b:c:j:p:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'b': base = optarg; break;
        case 'c': config = optarg; break;
        case 'p': pfs = optarg; break;
        case 'j': job = optarg; break;
        case 's': svg = optarg; break;
        case 'h': return cli_help(verb);
        default: {
            int r = cli_compat_opt(verb, &cc, c, argv);
            if (r >= 0)
                return r;
        }
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    if ((!job && !cc.kind) || !svg)
        return cli_usage_error(verb, "--job ID (or --fti, --scr, --veloc) and --svg FILE are needed");
    cli_store st = {.fd = -1};
    cli_jobview v;
    int rc = cli_compat_apply(verb, &cc, &config, &job);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_open(verb, base, config, &st);
    if (rc == CLI_EXIT_OK)
        rc = cli_store_pfs(verb, pfs, &st);
    if (rc == CLI_EXIT_OK)
        rc = cli_jobview_open(verb, &st, job, &v);
    if (rc != CLI_EXIT_OK) {
        cli_store_close(&st);
        cli_compat_close(&cc);
        return rc;
    }
    col *cols = cli_alloc(sizeof *cols * v.nrows);
    for (size_t i = 0; i < v.nrows; i++)
        fill(&v.row[i], &cols[i]);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        cli_error(verb, "out of memory");
        exit(CLI_EXIT_ERROR);
    }
    draw(f, v.j.name, cols, v.nrows);
    fclose(f);
    rc = write_safely(verb, svg, buf, len) == 0 ? CLI_EXIT_OK : CLI_EXIT_ERROR;
    free(buf);
    free(cols);
    cli_jobview_close(&v);
    cli_store_close(&st);
    cli_compat_close(&cc);
    return rc;
}
