/*
 * scr_where.c - for tools: where a cairn-scr program whose SCR prefix is
 * PREFIX keeps its checkpoints, as SCR_Init finds it (scr_conf.c), as cairn
 * settings. The cairn CLI links this file (`cairn ls --scr PREFIX`), with
 * scr_conffile.c (SCR's file format) and scr_jobid.c (the job id): no MPI is
 * called here (the header declares MPI types; only mpi.h's include path is
 * needed). Owns nothing beyond a call: the caller's buffers get the result.
 *
 * SCR_Init's rules, those that say where data lands: the parameters come from
 * the environment, else the configuration file (SCR_CONF_FILE, else
 * <prefix>/.scrconf if it exists); SCR_CACHE_BASE is the node-local base,
 * the prefix the PFS directory, and the job id cscr_job_id's (SCR_JOB_ID,
 * the scheduler's, else one of the prefix). CAIRN_* variables win over all
 * of it in cairn, as they do in the program.
 */
#include "scr_impl.h"
#include "scr_where.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct seen {
    char *cache, *job; /* SCR_CACHE_BASE, SCR_JOB_ID from the file (malloc'ed) */
} seen;

static int take(const char *key, size_t klen, const char *value, const char *path, int line,
                void *arg, char *why, size_t wlen)
{
    (void)path, (void)line, (void)why, (void)wlen;
    seen *s = arg;
    char **to = klen == 14 && strncmp(key, "SCR_CACHE_BASE", 14) == 0 ? &s->cache
                : klen == 10 && strncmp(key, "SCR_JOB_ID", 10) == 0 ? &s->job : NULL;
    if (to) {
        free(*to);
        *to = strdup(value);
    }
    return 1;
}

/* PATH made absolute as cscr_absolute does (relative to the working directory). */
static int absolute(const char *path, char *out, size_t len)
{
    char cwd[PATH_MAX];
    if (path[0] == '/')
        return snprintf(out, len, "%s", path) < (int)len;
    return getcwd(cwd, sizeof cwd) && snprintf(out, len, "%s/%s", cwd, path) < (int)len;
}

static int add(char *ini, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add(char *ini, size_t len, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(ini + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len - *at)
        return 0;
    *at += (size_t)n;
    return 1;
}

int cscr_tool_ini(const char *prefix, char *ini, size_t len, char *why, size_t wlen)
{
    char pre[PATH_MAX], cache[PATH_MAX] = "", dflt[PATH_MAX + 16], id[256];
    if (!*prefix || !absolute(prefix, pre, sizeof pre))
        return snprintf(why, wlen, "%s: not a usable SCR prefix", prefix), 0;
    seen s = {0};
    const char *file = getenv("SCR_CONF_FILE");
    if (!file || !*file) {
        snprintf(dflt, sizeof dflt, "%s/.scrconf", pre);
        file = access(dflt, F_OK) == 0 ? dflt : NULL;
    }
    int ok = !file || cscr_conffile_read(file, take, &s, why, wlen);
    const char *c = getenv("SCR_CACHE_BASE"), *j = getenv("SCR_JOB_ID"), *source = NULL;
    if (!c || !*c)
        c = s.cache;
    if (ok && c && (!*c || !absolute(c, cache, sizeof cache))) {
        snprintf(why, wlen, "SCR_CACHE_BASE=%s: not a usable path", c);
        ok = 0;
    }
    if (ok && !cscr_job_id(j && *j ? j : s.job, pre, id, sizeof id, &source)) {
        snprintf(why, wlen, "SCR_JOB_ID (%s): longer than %zu bytes", source, sizeof id - 1);
        ok = 0;
    }
    free(s.cache);
    free(s.job);
    if (!ok)
        return 0;
    size_t at = 0;
    ok = add(ini, len, &at, "; where a cairn-scr program with prefix %s keeps its data\n", pre) &&
         (!cache[0] || add(ini, len, &at, "[store]\nbase = %s\n", cache)) &&
         add(ini, len, &at, "[pfs]\ndir = %s\n[job]\nid = %s\n", pre, id);
    if (!ok)
        snprintf(why, wlen, "the settings exceed %zu bytes", len);
    return ok;
}
