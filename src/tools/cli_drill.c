/*
 * cli_drill.c - `cairn drill`: failure-injection drills. The drills run real
 * MPI jobs, so this verb hands over to scripts/drill.sh (installed as
 * share/cairn/drill.sh), with BUILD set to this program's directory so the
 * script finds cairn, cairnd and the demo application beside it. On a
 * terminal it runs the script as a child instead of becoming it, passes its
 * output through and counts the scenario (or soak trial) rows it prints for
 * the progress line (progress.c): done of total, elapsed, time left.
 */
#include "tools/tools.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_drill_usage[] =
    "Usage: cairn drill --all | --list | SCENARIO... | --soak N [--seed S]\n"
    "\n"
    "Run the demo's application (heat, 8 ranks on 4 emulated nodes, checkpoints at\n"
    "levels 1,4,3,4) under cairn, inject one failure per scenario, restart, and\n"
    "compare the final state byte for byte with an uninterrupted run. Prints a table:\n"
    "scenario, result, the level restored from (1 node-local, 3 decoded, 4 PFS), the\n"
    "generation, the bytes verified and the time. Scenarios: rank-crash,\n"
    "node-loss-1..3 (3 = m + 1: the PFS), flip-/truncate-/manifest-data,\n"
    "flip-/truncate-/manifest-parity, flip-/truncate-/index-pfs,\n"
    "crash-in-checkpoint, daemon-crash, disk-full (root). Exits 1 if any scenario\n"
    "lost data or restored wrong data. CAIRN_DRILL names another script.\n"
    "\n"
    "--soak N: N trials, each a SIGKILL at a random instant (uniform over a\n"
    "checkpoint's measured duration) of one rank, synchronous or with cairnd, or of one\n"
    "cairnd, or a node-local disk filled to a random level (root), at a level 1-4 (each\n"
    "pair of kind and level once, a rank's synchronous kill twice, in an order the seed\n"
    "shuffles, before any comes again); then the nodes that level survives losing are\n"
    "wiped and a new job must restore a generation no older than the last complete one,\n"
    "bit-exact. --seed S repeats a soak.\n"
    "\n"
    "On a terminal, a progress line on stderr counts the scenarios (trials) done,\n"
    "with the time elapsed and left; piped, there is none.\n";

/* What the progress line counts: rows whose first word is one of NAMES (a
 * drill), or a trial number (SOAK). */
typedef struct drill_rows {
    bool soak;
    char **names;
    size_t n;
} drill_rows;

static void drill_tick(cli_progress *p, const char *line, void *arg)
{
    const drill_rows *d = arg;
    if (!line) {
        cli_progress_set(p, p->done);
        return;
    }
    size_t w = strcspn(line, " \t");
    bool row = d->soak && w > 0 && strspn(line, "0123456789") == w;
    for (size_t i = 0; !d->soak && !row && i < d->n; i++)
        row = strlen(d->names[i]) == w && strncmp(line, d->names[i], w) == 0;
    if (row)
        cli_progress_add(p, 1);
}

/* The scenarios SCRIPT --list names (for --all), into D; their count. */
static size_t list_scenarios(const char *script, drill_rows *d)
{
    char cmd[4400], line[256];
    snprintf(cmd, sizeof cmd, "bash '%s' --list", script);
    FILE *f = strchr(script, '\'') ? NULL : popen(cmd, "r");
    size_t cap = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        if (d->n == cap) {
            cap = cap ? 2 * cap : 32;
            char **v = cli_alloc(cap * sizeof *v);
            if (d->n)
                memcpy(v, d->names, d->n * sizeof *v);
            free(d->names);
            d->names = v;
        }
        d->names[d->n++] = cli_strdup(line);
    }
    if (f)
        pclose(f);
    return d->n;
}

/* On a terminal: run ARGV (the script and ARGS) with a progress line; -1 if
 * this is not for one (stderr not a terminal, --list, --help). */
static int run_drawing(const char *verb, const char *script, int argc, char **argv, char **av)
{
    cli_progress p;
    cli_progress_start(&p, verb, NULL, 0);
    const char *a = argv[1];
    if (!p.on || strcmp(a, "--list") == 0 || strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
        return -1;
    drill_rows d = {.soak = strcmp(a, "--soak") == 0};
    uint64_t total = 0;
    if (d.soak)
        total = argc > 2 ? strtoull(argv[2], NULL, 10) : 0;
    else if (strcmp(a, "--all") == 0)
        total = list_scenarios(script, &d);
    else
        d.names = argv + 1, d.n = (size_t)argc - 1, total = d.n;
    cli_progress_start(&p, verb, d.soak ? "trials" : "scenarios", total);
    int rc = cli_progress_run(av, &p, drill_tick, &d);
    cli_progress_end(&p);
    if (strcmp(a, "--all") == 0) {
        for (size_t i = 0; i < d.n; i++)
            free(d.names[i]);
        free(d.names);
    }
    return rc;
}

int cli_drill(int argc, char **argv)
{
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
        return cli_help(argv[0]);
    if (argc < 2)
        return cli_usage_error(argv[0], "give --all, --list, --soak N or scenario names");
    char self[4096], dir[4096], script[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    snprintf(dir, sizeof dir, "%s", self);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    const char *env = getenv("CAIRN_DRILL");
    if (env && *env)
        snprintf(script, sizeof script, "%s", env);
    else {
        snprintf(script, sizeof script, "%s/../share/cairn/drill.sh", dir);
        if (access(script, R_OK) != 0)
            snprintf(script, sizeof script, "%s/../scripts/drill.sh", dir);
    }
    if (access(script, R_OK) != 0) {
        cli_error(argv[0], "cannot find the drill script (%s); set CAIRN_DRILL", script);
        return CLI_EXIT_ERROR;
    }
    setenv("BUILD", dir, 0);
    char **av = cli_alloc((size_t)(argc + 2) * sizeof *av);
    av[0] = "bash";
    av[1] = script;
    for (int i = 1; i < argc; i++)
        av[i + 1] = argv[i];
    av[argc + 1] = NULL;
    int rc = run_drawing(argv[0], script, argc, argv, av);
    if (rc >= 0) {
        free(av);
        return rc;
    }
    fflush(NULL);
    execvp("bash", av);
    cli_error(argv[0], "cannot run bash: %s", strerror(errno));
    free(av);
    return CLI_EXIT_ERROR;
}
