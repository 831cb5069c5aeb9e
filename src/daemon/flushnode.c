/*
 * flushnode.c - `cairnd --flush-node`: the epilog's flush of one node's part
 * of a generation to the PFS, with no MPI at all (MPI is never initialized:
 * the job's daemons are gone, and this node's epilog runs alone). Run as the
 * job's user by `cairn flush-node` (src/tools/cli_flushnode.c), which the
 * root epilog (src/tools/cli_hook_epilog.c) calls after dropping to the user.
 *
 *   cairnd --flush-node --job ID --gen G [--node NAME] [--config FILE]
 *
 * One line on stdout says what happened. Exit status: 0 the generation is
 * complete on the PFS (committed here or by another node); 3 this node's part
 * is written but not every node's yet (the line says whose is missing); 1 a
 * failure (the message on stderr); 2 bad arguments.
 */
#include "daemon/daemon.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int d_flush_node_main(int argc, char **argv)
{
    static const struct option opts[] = {{"flush-node", no_argument, NULL, 'f'},
                                         {"job", required_argument, NULL, 'j'},
                                         {"gen", required_argument, NULL, 'g'},
                                         {"node", required_argument, NULL, 'n'},
                                         {"config", required_argument, NULL, 'c'},
                                         {NULL, 0, NULL, 0}};
    const char *job = NULL, *config = NULL, *name = NULL;
    long id = -1;
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        char *end = NULL;
        if (c == 'j')
            job = optarg;
        else if (c == 'c')
            config = optarg;
        else if (c == 'n')
            name = optarg;
        else if (c == 'g') {
            id = strtol(optarg, &end, 10);
            if (!*optarg || *end || id < 0)
                id = -2;
        } else if (c != 'f') {
            return 2;
        }
    }
    if (optind != argc || !job || !cn_id_ok(job) || id < 0 || (name && !cn_id_ok(name))) {
        fprintf(stderr, "usage: cairnd --flush-node --job ID --gen G [--node NAME] "
                        "[--config FILE]\n");
        return 2;
    }
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, config, &err) != 0) {
        fprintf(stderr, "cairnd: configuration: %s\n", err.msg);
        return 1;
    }
    char node[CN_JOB_MAX + 1];
    d_node_log(&cfg, job, name, node);
    char why[1024];
    int rc = api_flush_node(&cfg, job, node, id, why, sizeof why, &err);
    if (rc < 0) {
        fprintf(stderr, "cairnd: flush of generation %ld from node %s failed: %s\n", id, node,
                err.msg);
        return 1;
    }
    if (rc == 0) {
        printf("wrote node %s's part of generation %ld; not committed: %s\n", node, id, why);
        return 3;
    }
    printf("generation %ld is on the PFS: %s\n", id, why);
    return 0;
}
