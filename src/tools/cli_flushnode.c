/*
 * cli_flushnode.c - `cairn flush --node-only`: this node's part of a
 * generation to the PFS, without daemons and without MPI (the epilog's flush
 * once the job's daemons are gone). The work is the library's own level-4
 * code, in cairnd --flush-node (src/daemon/flushnode.c: this program links no
 * library code that reads rank files), which this verb execs: its line on
 * stdout and its exit status are this verb's.
 */
#include "tools/tools.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_flush_node(int argc, char **argv)
{
    static const struct option opts[] = {{"node-only", no_argument, NULL, 'o'},
                                         {"job", required_argument, NULL, 'j'},
                                         {"gen", required_argument, NULL, 'g'},
                                         {"node", required_argument, NULL, 'n'},
                                         {"config", required_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *job = getenv("CAIRN_JOB"), *gen = NULL, *node = NULL, *config = NULL;
    for (int c; (c = getopt_long(argc, argv, "h", opts, NULL)) != -1;) {
        if (c == 'j')
            job = optarg;
        else if (c == 'g')
            gen = optarg;
        else if (c == 'n')
            node = optarg;
        else if (c == 'c')
            config = optarg;
        else if (c == 'h')
            return cli_help("flush");
        else if (c != 'o')
            return cli_getopt_fail("flush", c, argv);
    }
    if (optind != argc)
        return cli_usage_error("flush", "unexpected argument '%s'", argv[optind]);
    if (!job || !cn_id_ok(job))
        return cli_usage_error("flush", "--node-only needs a job id (--job or CAIRN_JOB)");
    char *end = NULL;
    long id = gen ? strtol(gen, &end, 10) : -1;
    if (!gen || !*gen || *end || id < 0)
        return cli_usage_error("flush", "--node-only needs --gen G, a generation id");
    if (node && !cn_id_ok(node))
        return cli_usage_error("flush", "bad node name '%s'", node);
    char cairnd[4096];
    cli_daemon_path(cairnd, sizeof cairnd);
    char *av[12];
    int n = 0;
    av[n++] = cairnd;
    av[n++] = "--flush-node";
    av[n++] = "--job", av[n++] = (char *)job;
    av[n++] = "--gen", av[n++] = (char *)gen;
    if (node)
        av[n++] = "--node", av[n++] = (char *)node;
    if (config)
        av[n++] = "--config", av[n++] = (char *)config;
    av[n] = NULL;
    fflush(NULL);
    execv(cairnd, av);
    cli_error("flush", "cannot run %s: %s", cairnd, strerror(errno));
    return CLI_EXIT_ERROR;
}
