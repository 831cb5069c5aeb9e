/*
 * cli_config.c - `cairn config`: print the configuration reference (generated
 * from the key table in src/common/config.c, so it cannot drift), or check a
 * configuration file the way cairn_init would load it.
 */
#include "tools/tools.h"

#include <getopt.h>

const char cli_config_usage[] =
    "Usage: cairn config --reference\n"
    "       cairn config --check FILE\n"
    "\n"
    "--reference prints every configuration key: INI section and name, environment\n"
    "variable, type, default and meaning (a Markdown table). --check loads FILE as\n"
    "cairn_init would (defaults, then FILE, then CAIRN_* environment variables)\n"
    "and prints 'ok', or the first problem with its line, exiting 1.\n"
    "\n"
    "Options:\n"
    "  -r, --reference     print the key reference\n"
    "  -k, --check FILE    check configuration file FILE\n"
    "  -h, --help          show this help\n";

int cli_config(int argc, char **argv)
{
    static const struct option opts[] = {
        {"reference", no_argument, NULL, 'r'},
        {"check", required_argument, NULL, 'k'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *check = NULL;
    bool reference = false;
    int c;
    while ((c = getopt_long(argc, argv, ":rk:h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': reference = true; break;
        case 'k': check = optarg; break;
        case 'h': return cli_help(verb);
        default: return cli_getopt_fail(verb, c, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    if (reference == (check != NULL))
        return cli_usage_error(verb, "give one of --reference or --check FILE");
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
    printf("ok\n");
    return CLI_EXIT_OK;
}
