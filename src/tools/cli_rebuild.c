/*
 * cli_rebuild.c - `cairn rebuild`: rebuilding needs every node's daemon or
 * rank at once (it decodes across nodes), so this verb launches the MPI
 * program cairn-rebuild (installed beside cairn) with the job's rank count,
 * through CAIRN_LAUNCHER if set (e.g. "srun"), else mpirun.
 */
#include "tools/tools.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cli_rebuild_usage[] =
    "Usage: cairn rebuild --np RANKS [--gen N] [--config FILE]\n"
    "\n"
    "Rebuild what lost or replaced nodes are missing of the newest generation\n"
    "that can be made whole (or of generation N): from partner copies (level 2)\n"
    "or by decoding parity (level 3); lost copies and parity are made anew.\n"
    "Nothing is restored. Runs cairn-rebuild on RANKS ranks (the job's rank\n"
    "count) with $CAIRN_LAUNCHER (e.g. \"srun\"), else mpirun; the job is named\n"
    "by CAIRN_JOB and node emulation by CAIRN_RANKS_PER_NODE / CAIRN_NODE, as\n"
    "for the job itself. Exit status as listed below; 4 means more nodes were\n"
    "lost than the generation's level survives.\n"
    "\n"
    "Options:\n"
    "  -n, --np RANKS      ranks of the job\n"
    "  -g, --gen N         rebuild generation N only\n"
    "  -c, --config FILE   the job's configuration file\n"
    "  -h, --help          show this help\n";

int cli_rebuild(int argc, char **argv)
{
    static const struct option opts[] = {
        {"np", required_argument, NULL, 'n'},
        {"gen", required_argument, NULL, 'g'},
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *np = NULL, *gen = NULL, *config = NULL;
    int c;
    while ((c = getopt_long(argc, argv, ":n:g:c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'n': np = optarg; break;
        case 'g': gen = optarg; break;
        case 'c': config = optarg; break;
        case 'h': return cli_help(verb);
        default: return cli_getopt_fail(verb, c, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    if (!np || atoi(np) < 1)
        return cli_usage_error(verb, "give the job's rank count with --np RANKS");
    /* cairn-rebuild sits beside this binary. */
    char self[PATH_MAX], prog[PATH_MAX + 32];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    snprintf(prog, sizeof prog, "%.*s/cairn-rebuild", slash ? (int)(slash - self) : 1,
             slash ? self : ".");
    char *args[64];
    int k = 0;
    char launcher[512];
    snprintf(launcher, sizeof launcher, "%s", getenv("CAIRN_LAUNCHER") ? getenv("CAIRN_LAUNCHER")
                                                                        : "mpirun");
    for (char *tok = strtok(launcher, " "); tok && k < 48; tok = strtok(NULL, " "))
        args[k++] = tok;
    args[k++] = "-n";
    args[k++] = (char *)np;
    args[k++] = prog;
    if (gen)
        args[k++] = "--gen", args[k++] = (char *)gen;
    if (config)
        args[k++] = "--config", args[k++] = (char *)config;
    args[k] = NULL;
    fflush(stdout);
    execvp(args[0], args);
    cli_error(verb, "cannot run %s: %s", args[0], strerror(errno));
    return CLI_EXIT_ERROR;
}
