/*
 * cli_config.c - `cairn config`: print the configuration reference (generated
 * from the key table in src/common/config.c, so it cannot drift), check a
 * configuration file the way cairn_init would load it, print this host's
 * node name by the rule the library and cairnd use (cn_node_name), which is
 * how the scheduler hooks name the node directory, or print each level's
 * checkpoint interval as cairn_need_checkpoint would compute it
 * (cli_intervals: configured, or Young/Daly from costs given on the command
 * line and fail.mtbf_<L>, with the formula of src/common/period.c), or
 * measure a PFS directory's write bandwidth as level 4 does (probe.c).
 */
#include "tools/tools.h"
#include "levels/pfs/pfs.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

const char cli_config_usage[] =
    "Usage: cairn config --reference\n"
    "       cairn config --check FILE\n"
    "       cairn config --node [--config FILE]\n"
    "       cairn config --intervals [--config FILE] [--cost LEVEL=SECONDS]...\n"
    "       cairn config --probe-pfs DIR\n"
    "\n"
    "--reference prints every configuration key: INI section and name, environment\n"
    "variable, type, default and meaning (a Markdown table). --check loads FILE as\n"
    "cairn_init would (defaults, then FILE, then CAIRN_* environment variables)\n"
    "and prints 'ok', or the first problem with its line, exiting 1. --node prints\n"
    "this host's node name as cairn_init and cairnd name it (and the scheduler hooks,\n"
    "which call this): job.node / CAIRN_NODE if set, else SLURMD_NODENAME if set,\n"
    "else the full hostname; a name outside 1-63 of A-Z a-z 0-9 . _ - gets its other\n"
    "characters as '_' and a hash suffix. Emulated nodes (job.ranks_per_node) are\n"
    "node0, node1, ... instead. --intervals prints, per level, when\n"
    "cairn_need_checkpoint says it is due: ckpt.every_<L>, or with ckpt.auto = on\n"
    "Daly's interval for a checkpoint cost C (--cost; a level without one takes the\n"
    "nearest lower level's, as the library does) and M = fail.mtbf_<L>:\n"
    "  T = sqrt(2CM) (1 + sqrt(C/2M)/3 + (C/2M)/9) - C  for C < 2M, else T = M.\n"
    "--probe-pfs measures DIR's write bandwidth as level 4 does once per job when\n"
    "pfs.bandwidth is 0: 16 MiB of noise written to a probe file (unlinked at once,\n"
    "nothing left behind) and synced, timed, twice (emptied in between); it prints\n"
    "the faster pass's MiB/s, the figure level 4's codec model weighs compression\n"
    "against.\n"
    "Without --config, the file CAIRN_CONFIG_FILE names is read, if set.\n"
    "\n"
    "Options:\n"
    "  -r, --reference     print the key reference\n"
    "  -k, --check FILE    check configuration file FILE\n"
    "  -n, --node          print this host's node name\n"
    "  -i, --intervals     print each level's checkpoint interval\n"
    "  -c, --config FILE   the configuration (--node, --intervals)\n"
    "  -C, --cost L=S      a level-L checkpoint costs S seconds (--intervals; repeatable)\n"
    "  -p, --probe-pfs DIR measure DIR's write bandwidth\n"
    "  -h, --help          show this help\n";

/* --probe-pfs DIR: its write bandwidth, as level 4 measures it. */
static int probe_pfs(const char *verb, const char *dir)
{
    cn_err err = {0};
    int fd = cn_dir_open_path(dir, &err);
    double bps = 0;
    if (fd >= 0 && lvl_pfs_probe(fd, LVL_PFS_PROBE_BYTES, &bps, &err) == 0) {
        close(fd);
        printf("%s: writes %.0f MiB/s (%u MiB written and synced, the faster of %d passes)\n", dir,
               bps / 1048576.0, LVL_PFS_PROBE_BYTES >> 20, LVL_PFS_PROBE_PASSES);
        return CLI_EXIT_OK;
    }
    if (fd >= 0)
        close(fd);
    cli_error(verb, "%s: %s", dir, err.msg);
    return CLI_EXIT_ERROR;
}

void cli_intervals(FILE *f, const cn_config *cfg, const double cost[5])
{
    cli_table t;
    cli_table_init(&t, "rll");
    cli_table_add(&t, "LEVEL");
    cli_table_add(&t, "INTERVAL");
    cli_table_add(&t, "FROM");
    for (int l = 1; l <= 4; l++) {
        const cn_interval *iv = &cfg->ckpt_every[l];
        char a[32], b[32];
        double c = 0;
        int from = l;
        while (from > 1 && !(cost[from] > 0))
            from--;
        c = cost[from];
        cli_table_add(&t, "%d", l);
        if (l == CAIRN_LEVEL_PFS && !cfg->pfs_dir[0]) {
            cli_table_add(&t, "never");
            cli_table_add(&t, "no pfs.dir");
        } else if (iv->iters > 0 || iv->seconds > 0) {
            if (iv->iters > 0)
                cli_table_add(&t, "every %ld iterations", iv->iters);
            else
                cli_table_add(&t, "every %.6f s (%s)", iv->seconds,
                              cn_seconds_str(a, sizeof a, iv->seconds));
            cli_table_add(&t, "ckpt.every_%d", l);
        } else if (!cfg->ckpt_auto || !(cfg->mtbf[l] > 0)) {
            cli_table_add(&t, "never");
            if (cfg->ckpt_auto)
                cli_table_add(&t, "ckpt.every_%d and fail.mtbf_%d unset", l, l);
            else
                cli_table_add(&t, "ckpt.every_%d unset, ckpt.auto = off", l);
        } else if (!(c > 0)) {
            cli_table_add(&t, "unknown");
            cli_table_add(&t, "Young/Daly: no cost (--cost %d=SECONDS), fail.mtbf_%d = %s", l, l,
                          cn_seconds_str(b, sizeof b, cfg->mtbf[l]));
        } else {
            double s = cn_daly_interval(c, cfg->mtbf[l]);
            cli_table_add(&t, "every %.6f s (%s)", s, cn_seconds_str(a, sizeof a, s));
            cli_table_add(&t, "Young/Daly: cost %.6g s%s, fail.mtbf_%d = %s", c,
                          from == l ? "" : " (a lower level's)", l,
                          cn_seconds_str(b, sizeof b, cfg->mtbf[l]));
        }
    }
    cli_table_print(&t, f);
    cli_table_free(&t);
}

/* "L=SECONDS" into COST[L]; false if malformed. */
static bool parse_cost(const char *arg, double cost[5])
{
    char *end;
    if (arg[0] < '1' || arg[0] > '4' || arg[1] != '=' || !arg[2] || arg[2] == ' ')
        return false;
    double s = strtod(arg + 2, &end);
    if (*end || !isfinite(s) || !(s > 0))
        return false;
    cost[arg[0] - '0'] = s;
    return true;
}

int cli_config(int argc, char **argv)
{
    static const struct option opts[] = {
        {"reference", no_argument, NULL, 'r'},
        {"check", required_argument, NULL, 'k'},
        {"node", no_argument, NULL, 'n'},
        {"intervals", no_argument, NULL, 'i'},
        {"config", required_argument, NULL, 'c'},
        {"cost", required_argument, NULL, 'C'},
        {"probe-pfs", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *verb = argv[0], *check = NULL, *config = NULL, *probe = NULL;
    bool reference = false, node = false, intervals = false, costs = false;
    double cost[5] = {0};
    int c;
    while ((c = getopt_long(argc, argv, ":rk:nic:C:p:h", opts, NULL)) != -1) {
        switch (c) {
        case 'r': reference = true; break;
        case 'k': check = optarg; break;
        case 'n': node = true; break;
        case 'i': intervals = true; break;
        case 'c': config = optarg; break;
        case 'p': probe = optarg; break;
        case 'C':
            if (!parse_cost(optarg, cost))
                return cli_usage_error(verb, "--cost takes LEVEL=SECONDS, LEVEL 1..4 and "
                                       "SECONDS more than 0 (e.g. 2=1.5), not '%.80s'", optarg);
            costs = true;
            break;
        case 'h': return cli_help(verb);
        default: return cli_getopt_fail(verb, c, argv);
        }
    }
    if (optind < argc)
        return cli_usage_error(verb, "unexpected argument '%s'", argv[optind]);
    if ((int)reference + (check != NULL) + (int)node + (int)intervals + (probe != NULL) != 1)
        return cli_usage_error(verb, "give one of --reference, --check FILE, --node, "
                               "--intervals or --probe-pfs DIR");
    if (config && !node && !intervals)
        return cli_usage_error(verb, "--config goes with --node or --intervals");
    if (costs && !intervals)
        return cli_usage_error(verb, "--cost goes with --intervals");
    if (reference) {
        cn_config_reference(stdout);
        return CLI_EXIT_OK;
    }
    if (probe)
        return probe_pfs(verb, probe);
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, check ? check : config, &err) < 0) {
        cli_error(verb, "%s", err.msg);
        return CLI_EXIT_ERROR;
    }
    if (node) {
        char name[CN_JOB_MAX + 1];
        cn_node_name(cfg.node, name, NULL);
        printf("%s\n", name);
        return CLI_EXIT_OK;
    }
    if (intervals) {
        cli_intervals(stdout, &cfg, cost);
        return CLI_EXIT_OK;
    }
    printf("ok\n");
    return CLI_EXIT_OK;
}
