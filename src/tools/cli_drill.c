/*
 * cli_drill.c - `cairn drill`: failure-injection drills. The drills run real
 * MPI jobs, so this verb hands over to scripts/drill.sh (installed as
 * share/cairn/drill.sh), with BUILD set to this program's directory so the
 * script finds cairn, cairnd and the demo application beside it.
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
    "--soak N: N trials, each a SIGKILL at a random instant (uniform over a checkpoint's\n"
    "measured duration) of one rank, synchronous or with cairnd, or of one cairnd, or a\n"
    "node-local disk filled to a random level (root), at a random level 1-4; then the\n"
    "nodes that level survives losing are wiped and a new job must restore a generation\n"
    "no older than the last complete one, bit-exact. --seed S repeats a soak.\n";

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
    fflush(NULL);
    execvp("bash", av);
    cli_error(argv[0], "cannot run bash: %s", strerror(errno));
    free(av);
    return CLI_EXIT_ERROR;
}
