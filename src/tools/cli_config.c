/*
 * cli_config.c - `cairn config`: print the configuration reference (generated
 * from the key table in src/common/config.c, so it cannot drift), check a
 * configuration file the way cairn_init would load it, or print this host's
 * node name by the rule the library and cairnd use (cn_node_name), which is
 * how the scheduler hooks name the node directory.
 */
#include "tools/tools.h"

#include <getopt.h>

const char cli_config_usage[] =
    "Usage: cairn config --reference\n"
    "       cairn config --check FILE\n"
    "       cairn config --node\n"
    "\n"
    "--reference prints every configuration key: INI section and name, environment\n"
    "variable, type, default and meaning (a Markdown table). --check loads FILE as\n"
    "cairn_init would (defaults, then FILE, then CAIRN_* environment variables)\n"
    "and prints 'ok', or the first problem with its line, exiting 1. --node prints\n"
    "this host's node name as cairn_init and cairnd name it (and the scheduler hooks,\n"
    "which call this): job.node / CAIRN_NODE if set, else SLURMD_NODENAME if set,\n"
    "else the full hostname; a name outside 1-63 of A-Z a-z 0-9 . _ - gets its other\n"
    "characters as '_' and a hash suffix. Emulated nodes (job.ranks_per_node) are\n"
    "node0, node1, ... instead.\n"
    "\n"
    "Options:\n"
    "  -r, --reference     print the key reference\n"
    "  -k, --check FILE    check configuration file FILE\n"
    "  -n, --node          print this host's node name\n"
    "  -h, --help          show this help\n";

int cli_config(int argc, char **argv)
{
    static const struct option opts[] = {
        {"reference", no_argument, NULL, 'r'},
        {"check", required_argument, NULL, 'k'},
        {"node", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *check = NULL;
    bool reference = false, node = false;
    int c;
    while ((c = getopt_long(argc, argv, ":rk:nh", opts, NULL)) != -1) {
        switch (c) {
        case 'r': reference = true; break;
        case 'k': check = optarg; break;
        case 'n': node = true; break;
        case 'h': return cli_help(verb);
        default: return cli_getopt_fail(verb, c, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    if ((int)reference + (check != NULL) + (int)node != 1)
        return cli_usage_error(verb, "give one of --reference, --check FILE or --node");
    if (reference) {
        cn_config_reference(stdout);
        return CLI_EXIT_OK;
    }
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, check, &err) < 0) {
        cli_error(verb, "%s", err.msg);
        return CLI_EXIT_ERROR;
    }
    if (node) {
        char name[CN_JOB_MAX + 1];
        cn_node_name(cfg.node, name, NULL);
        printf("%s\n", name);
        return CLI_EXIT_OK;
    }
    printf("ok\n");
    return CLI_EXIT_OK;
}
