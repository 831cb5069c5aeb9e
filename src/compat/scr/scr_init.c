/*
 * scr_init.c - SCR_Init and SCR_Finalize, the calls that need no dataset
 * (Need_checkpoint, Route_file's dispatch, Config, version, exit, the
 * unsupported Delete and Drop), and the helpers the other files share:
 * messages, agreement across ranks, the staging directory of routed files.
 *
 * SCR_Init reads SCR's parameters (scr_conf.c), opens cairn over
 * MPI_COMM_WORLD and numbers the next checkpoint after the newest
 * generation there is, as SCR numbers datasets after the newest in its
 * index. Messages go to stderr prefixed "cairn-scr: ", errors from the
 * lowest rank that failed, notes from rank 0. Owns cscr (the state).
 */
#include "scr_impl.h"
#include "../compat_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

cscr_state cscr = {.phase = CSCR_NONE, .comm = MPI_COMM_NULL};

static void vsay(const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fprintf(stderr, "cairn-scr: %s\n", msg);
}

/* This process's rank in MPI_COMM_WORLD, before SCR_Init too (0 without MPI). */
static int world_rank(void)
{
    int inited = 0, r = 0;
    if (cscr.phase != CSCR_NONE)
        return cscr.rank;
    MPI_Initialized(&inited);
    if (inited)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

void cscr_say(const char *fmt, ...)
{
    if (world_rank() != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

void cscr_debug(int level, const char *fmt, ...)
{
    if (cscr.rank != 0 || cscr.conf.debug < level)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

void cscr_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsay(fmt, ap);
    va_end(ap);
}

int cscr_agree(int ok, const char *why)
{
    int size = 1, mine, low = 0;
    MPI_Comm_size(cscr.comm, &size);
    mine = ok ? size : cscr.rank;
    if (MPI_Allreduce(&mine, &low, 1, MPI_INT, MPI_MIN, cscr.comm) != MPI_SUCCESS) {
        cscr_error("MPI_Allreduce failed");
        return 0;
    }
    if (low == cscr.rank && why && *why)
        fprintf(stderr, "cairn-scr: %s\n", why);
    return low == size;
}

int cscr_enter(const char *call, int phase)
{
    static const char *const names[] = {"before SCR_Init", "outside a phase",
                                        "inside an output phase", "inside a restart phase"};
    if (cscr.phase == CSCR_NONE) { /* no communicator to agree on: every rank says it */
        cscr_error("%s: SCR_Init has not been called", call);
        return 0;
    }
    char why[256] = "";
    if (cscr.phase != phase)
        snprintf(why, sizeof why, "%s: called %s (it belongs %s)", call, names[cscr.phase],
                 names[phase]);
    return cscr_agree(cscr.phase == phase, why);
}

int cscr_staging_dir(char *dir, size_t len)
{
    static const char probe[] = ".cairn-scr-probe";
    if (cairn_route_file(cscr.ctx, probe, dir, len) != 0) {
        cscr_error("cannot find the directory of routed files: %s", cairn_errmsg(cscr.ctx));
        return 0;
    }
    cairn_unroute_file(cscr.ctx, probe);
    *strrchr(dir, '/') = '\0';
    return 1;
}

void cscr_staging_empty(void)
{
    char dir[SCR_MAX_FILENAME], path[2 * SCR_MAX_FILENAME];
    DIR *d = cscr_staging_dir(dir, sizeof dir) ? opendir(dir) : NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (unlink(path) != 0)
            cscr_error("cannot remove %s", path);
    }
    if (d)
        closedir(d);
}

long cscr_newest_known(void)
{
    cairn_gen_info g;
    cairn_restart_plan plan;
    int n = 0;
    long newest = 0;
    if (cairn_generations(cscr.ctx, &g, 1, &n) == 0 && n > 0 && g.id > newest)
        newest = g.id;
    if (cairn_restart_query(cscr.ctx, CAIRN_LATEST, &plan) == 0 && plan.id > newest)
        newest = plan.id;
    return newest;
}

/* SCR creates its cache directory; so does cairn-scr (compat_private_dir). 1, or 0 with WHY. */
static int make_cache(const char *dir, char *why, size_t wlen)
{
    bool created;
    if (!compat_private_dir(dir, "SCR_Init", "cache directory", &created, why, wlen))
        return 0;
    if (created)
        cscr_say("created the cache directory %s (mode 0700)", dir);
    return 1;
}

CSCR_API int SCR_Init(void)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited || cscr.phase != CSCR_NONE) {
        cscr_say("SCR_Init: %s", inited ? "called twice" : "MPI is not initialized");
        return SCR_FAILURE;
    }
    if (MPI_Comm_dup(MPI_COMM_WORLD, &cscr.comm) != MPI_SUCCESS) {
        cscr_error("SCR_Init: MPI_Comm_dup failed");
        return SCR_FAILURE;
    }
    MPI_Comm_rank(cscr.comm, &cscr.rank);
    char why[1400] = "";
    int ok = cscr_agree(cscr_conf_load(&cscr.conf, why, sizeof why), why);
    if (ok) /* rank by rank: on a node, the first one makes it; the others see it made */
        ok = cscr_agree(make_cache(getenv("CAIRN_BASE"), why, sizeof why), why);
    int rc = ok ? cairn_init(MPI_COMM_WORLD, NULL, &cscr.ctx) : SCR_FAILURE;
    if (ok && rc != 0)
        cscr_say("SCR_Init: cairn_init: %s: %s", cairn_strerror(rc), cairn_errmsg(NULL));
    if (rc != 0) {
        MPI_Comm_free(&cscr.comm);
        return SCR_FAILURE;
    }
    cscr.phase = CSCR_IDLE;
    cscr.bound = CAIRN_LATEST;
    cscr.have_id = -1;
    cscr.restart_done = cscr.current_done = cscr.degraded = 0;
    cscr.next_id = cscr_newest_known() + 1;
    cscr.dataset = cscr.next_id - 1;
    cscr_debug(1, "SCR_Init: checkpoints at level %d%s%d, the next one is generation %ld",
               cscr.conf.level, cscr.conf.flush ? ", at level 4 every " : "",
               cscr.conf.flush, cscr.next_id);
    return SCR_SUCCESS;
}

CSCR_API int SCR_Finalize(void)
{
    if (cscr.phase == CSCR_NONE) {
        cscr_error("SCR_Finalize: SCR_Init has not been called");
        return SCR_FAILURE;
    }
    if (cscr.phase == CSCR_OUTPUT) {
        cscr_say("SCR_Finalize: output phase '%s' never completed: discarded", cscr.out_name);
        cscr_output_abandon();
    } else if (cscr.phase == CSCR_RESTART) {
        cscr_say("SCR_Finalize: restart phase never completed");
        cscr_staging_empty();
    }
    int rc = cairn_finalize(cscr.ctx);
    if (rc != 0)
        cscr_say("SCR_Finalize: %s", cairn_strerror(rc));
    cscr.ctx = NULL;
    MPI_Comm_free(&cscr.comm);
    cscr_bypass_forget();
    free(cscr.routes);
    cscr.routes = NULL;
    cscr.nroutes = cscr.cap = 0;
    cscr.phase = CSCR_NONE;
    return rc == 0 ? SCR_SUCCESS : SCR_FAILURE;
}

CSCR_API int SCR_Need_checkpoint(int *flag)
{
    if (!cscr_enter("SCR_Need_checkpoint", CSCR_IDLE))
        return SCR_FAILURE;
    int level = 0, rc = cairn_need_checkpoint(cscr.ctx, &level);
    if (rc != 0) {
        cscr_say("SCR_Need_checkpoint: %s", cairn_errmsg(cscr.ctx));
        return SCR_FAILURE;
    }
    if (!flag)
        return SCR_FAILURE;
    *flag = cscr.conf.always_need || level > 0;
    return SCR_SUCCESS;
}

CSCR_API int SCR_Route_file(const char *name, char *file)
{
    if (!name || !*name || !file || strlen(name) >= SCR_MAX_FILENAME) {
        cscr_error("SCR_Route_file: %s", !file ? "NULL file buffer"
                                         : !name || !*name ? "no file name"
                                                           : "name longer than SCR_MAX_FILENAME");
        return SCR_FAILURE;
    }
    if (cscr.phase == CSCR_OUTPUT)
        return cscr_route_output(name, file);
    if (cscr.phase == CSCR_RESTART)
        return cscr_route_restart(name, file);
    snprintf(file, SCR_MAX_FILENAME, "%s", name); /* outside a phase: the name as it is */
    return SCR_SUCCESS;
}

CSCR_API const char *SCR_Config(const char *config) { return cscr_conf_call(config, NULL); }

CSCR_API const char *SCR_Configf(const char *format, ...)
{
    char config[4096];
    va_list ap;
    va_start(ap, format);
    int n = vsnprintf(config, sizeof config, format ? format : "", ap);
    va_end(ap);
    if (!format || n < 0 || (size_t)n >= sizeof config) {
        cscr_say("SCR_Configf: %s", format ? "longer than 4095 bytes" : "NULL format");
        return NULL;
    }
    return cscr_conf_call(config, NULL);
}

CSCR_API char *SCR_Get_version(void)
{
    static char version[] = "cairn-scr " CAIRN_VERSION_STRING;
    return version;
}

CSCR_API int SCR_Should_exit(int *flag)
{
    if (!cscr_enter("SCR_Should_exit", cscr.phase) || !flag)
        return SCR_FAILURE;
    *flag = 0; /* cairn has no halt condition (scr_halt, SCR_HALT_SECONDS) */
    return SCR_SUCCESS;
}

static int unsupported(const char *call)
{
    cscr_say("%s is not supported by cairn-scr (nothing changed)", call);
    return SCR_FAILURE;
}

CSCR_API int SCR_Delete(const char *name) { return unsupported("SCR_Delete"); }
CSCR_API int SCR_Drop(const char *name) { return unsupported("SCR_Drop"); }
