/*
 * cli_compat.c - find a job from a program's own configuration: `--fti
 * config.fti`, `--scr PREFIX` and `--veloc file.cfg` on ls, inspect, verify
 * and report.
 *
 * The compatibility layer's own reader turns the file into the cairn
 * settings its program runs with (cfti_conf_tool_ini of fti_conf.c,
 * cscr_tool_ini of scr_where.c, which takes the job id from scr_jobid.c as
 * SCR_Init does, vl_config_load of veloc_config.c: none calls MPI),
 * the same INI text the layer hands cairn_init. It is kept in an anonymous
 * file (memfd) named /proc/self/fd/N and read with cn_config_load, as
 * cairn_init reads it, CAIRN_* variables winning as they do in the program:
 * store.base, pfs.dir and job.id are then where the program put its
 * checkpoints. Nothing is written to disk; cli_compat_close closes the file.
 */
#include "tools/tools.h"
#include "compat/fti/fti_conf.h"
#include "compat/scr/scr_where.h"
#include "compat/veloc/veloc_config.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int cli_compat_opt(const char *verb, cli_compat *cc, int c, char **argv)
{
    if (c != CLI_COMPAT_FTI && c != CLI_COMPAT_SCR && c != CLI_COMPAT_VELOC)
        return cli_getopt_fail(verb, c, argv);
    return cli_compat_set(verb, cc, c, optarg);
}

int cli_compat_set(const char *verb, cli_compat *c, int kind, const char *arg)
{
    if (c->kind)
        return cli_usage_error(verb, "give one of --fti, --scr and --veloc, once");
    c->kind = kind;
    c->arg = arg;
    return -1;
}

static const char *layer_option(const cli_compat *c)
{
    return c->kind == CLI_COMPAT_FTI ? "fti" : c->kind == CLI_COMPAT_SCR ? "scr" : "veloc";
}

/* The INI text of C's layer into a malloc'd string; NULL after a message. */
static char *layer_ini(const char *verb, const cli_compat *c)
{
    if (c->kind == CLI_COMPAT_FTI) {
        char *ini = cli_alloc(CFTI_INI_MAX), msg[CFTI_MSG_MAX];
        if (cfti_conf_tool_ini(c->arg, ini, CFTI_INI_MAX, msg, sizeof msg) == 0)
            return ini;
        cli_error(verb, "--fti %s: %s", c->arg, msg);
        free(ini);
        return NULL;
    }
    if (c->kind == CLI_COMPAT_SCR) {
        char *ini = cli_alloc(8192), why[1024];
        if (cscr_tool_ini(c->arg, ini, 8192, why, sizeof why))
            return ini;
        cli_error(verb, "--scr %s: %s", c->arg, why);
        free(ini);
        return NULL;
    }
    vl_config *cfg = cli_alloc(sizeof *cfg);
    char *ini = NULL;
    if (vl_config_load(c->arg, cfg, 0) == 0) /* else it said why, naming the file and line */
        ini = cli_strdup(cfg->ini);
    else
        cli_error(verb, "--veloc %s: not a usable VeloC config file", c->arg);
    free(cfg);
    return ini;
}

int cli_compat_apply(const char *verb, cli_compat *c, const char **config, const char **job)
{
    c->fd = -1;
    if (!c->kind)
        return CLI_EXIT_OK;
    if (*config)
        return cli_usage_error(verb, "--config with --%s: the settings come from %s",
                               layer_option(c), c->arg);
    char *ini = layer_ini(verb, c);
    if (!ini)
        return CLI_EXIT_ERROR;
    c->fd = memfd_create("cairn-compat-ini", MFD_CLOEXEC);
    size_t n = strlen(ini);
    if (c->fd < 0 || write(c->fd, ini, n) != (ssize_t)n) {
        cli_error(verb, "cannot keep the settings of %s: %s", c->arg, strerror(errno));
        free(ini);
        return CLI_EXIT_ERROR;
    }
    free(ini);
    snprintf(c->path, sizeof c->path, "/proc/self/fd/%d", c->fd);
    *config = c->path;
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, c->path, &err) != 0) {
        cli_error(verb, "the settings %s gives: %s", c->arg, err.msg);
        return CLI_EXIT_ERROR;
    }
    snprintf(c->base, sizeof c->base, "%s", cfg.base);
    snprintf(c->pfs, sizeof c->pfs, "%s", cfg.pfs_dir);
    snprintf(c->job, sizeof c->job, "%s", cfg.job);
    if (!*job) {
        if (!c->job[0]) {
            cli_error(verb, "%s names no job (give --job ID)", c->arg);
            return CLI_EXIT_ERROR;
        }
        *job = c->job;
    }
    return CLI_EXIT_OK;
}

void cli_compat_close(cli_compat *c)
{
    if (c->kind && c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

int cli_compat_where(const char *verb, cli_compat *c)
{
    const char *config = NULL, *job = NULL;
    int rc = cli_compat_apply(verb, c, &config, &job);
    if (rc == CLI_EXIT_OK) {
        printf("%-8s%s\n%-8s%s\n%-8s%s\n", "job:", job, "base:", c->base, "pfs:",
               c->pfs[0] ? c->pfs : "-");
        printf("%-8s%s (read as the layer of --%s reads it)\n", "from:", c->arg, layer_option(c));
    }
    cli_compat_close(c);
    return rc;
}
