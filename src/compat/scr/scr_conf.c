/*
 * scr_conf.c - SCR's parameters, read as SCR reads them and handed to cairn.
 *
 * Sources, the first that sets a key wins (SCR's order): the SCR_* environment
 * variable, the user configuration file (SCR_CONF_FILE, else <prefix>/.scrconf
 * if it exists; read by scr_conffile.c), then SCR_Config calls made before
 * SCR_Init. Each key of KEYS is checked
 * (bad values name the key and where it came from) and then either kept in
 * cscr_conf (copy type, flush, debug, current) or written to the CAIRN_*
 * variable of its cairn setting, unless the user set that variable: cairn's
 * own settings always win. Keys that ask for what cairn-scr cannot do are
 * refused; keys without meaning here are accepted and ignored (docs/scr.md). Owns the SCR_Config table (strings it allocates).
 */
#include "scr_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum kind { INT, WORD, PATH, TEXT, IGNORED, REFUSED_IF_NOT_0 };

typedef struct key {
    const char *name;
    enum kind kind;
    long min, max;   /* INT */
    const char *env; /* the CAIRN_* variable it becomes, NULL if cairn-scr keeps it */
} key;

static const key KEYS[] = {
    {"SCR_COPY_TYPE", WORD, 0, 0, NULL},
    {"SCR_CACHE_BASE", PATH, 0, 0, "CAIRN_BASE"},
    {"SCR_CACHE_SIZE", INT, 1, 1000, "CAIRN_KEEP"},
    {"SCR_SET_SIZE", INT, 2, 1024, "CAIRN_SET_SIZE"},
    {"SCR_SET_FAILURES", INT, 1, 32, NULL},
    {"SCR_PREFIX", PATH, 0, 0, "CAIRN_PFS_DIR"},
    {"SCR_PREFIX_SIZE", INT, 0, 1000, "CAIRN_PFS_KEEP"},
    {"SCR_FLUSH", INT, 0, INT_MAX, NULL},
    {"SCR_CHECKPOINT_INTERVAL", INT, 0, INT_MAX, NULL},
    {"SCR_CHECKPOINT_SECONDS", INT, 0, INT_MAX, NULL},
    {"SCR_DEBUG", INT, 0, INT_MAX, NULL},
    {"SCR_JOB_ID", TEXT, 0, 0, NULL},
    {"SCR_CACHE_BYPASS", INT, 0, 1, NULL},
    {"SCR_CURRENT", TEXT, 0, 0, NULL},
    {"SCR_CHECKPOINT_OVERHEAD", REFUSED_IF_NOT_0, 0, 0, NULL},
    {"SCR_GLOBAL_RESTART", REFUSED_IF_NOT_0, 0, 0, NULL},
    {"SCR_CACHE_PURGE", REFUSED_IF_NOT_0, 0, 0, NULL},
    {"SCR_PREFIX_PURGE", REFUSED_IF_NOT_0, 0, 0, NULL},
    {"SCR_ENABLE", IGNORED, 0, 0, NULL},
    {"SCR_CNTL_BASE", IGNORED, 0, 0, NULL},
    {"SCR_GROUP", IGNORED, 0, 0, NULL},
    {"SCR_FLUSH_ASYNC", IGNORED, 0, 0, NULL},
    {"SCR_FLUSH_TYPE", IGNORED, 0, 0, NULL},
    {"SCR_FLUSH_WIDTH", IGNORED, 0, 0, NULL},
    {"SCR_FLUSH_ON_RESTART", IGNORED, 0, 0, NULL},
    {"SCR_FLUSH_POSTSTAGE", IGNORED, 0, 0, NULL},
    {"SCR_FETCH", IGNORED, 0, 0, NULL},
    {"SCR_FETCH_BYPASS", IGNORED, 0, 0, NULL},
    {"SCR_FETCH_WIDTH", IGNORED, 0, 0, NULL},
    {"SCR_DISTRIBUTE", IGNORED, 0, 0, NULL},
    {"SCR_HALT_EXIT", IGNORED, 0, 0, NULL},
    {"SCR_HALT_SECONDS", IGNORED, 0, 0, NULL},
    {"SCR_RUNS", IGNORED, 0, 0, NULL},
    {"SCR_MIN_NODES", IGNORED, 0, 0, NULL},
    {"SCR_EXCLUDE_NODES", IGNORED, 0, 0, NULL},
    {"SCR_MPI_BUF_SIZE", IGNORED, 0, 0, NULL},
    {"SCR_FILE_BUF_SIZE", IGNORED, 0, 0, NULL},
    {"SCR_WATCHDOG_TIMEOUT", IGNORED, 0, 0, NULL},
    {"SCR_WATCHDOG_TIMEOUT_PFS", IGNORED, 0, 0, NULL},
    {"SCR_USER_NAME", IGNORED, 0, 0, NULL},
    {"SCR_JOB_NAME", IGNORED, 0, 0, NULL},
    {"SCR_CLUSTER_NAME", IGNORED, 0, 0, NULL},
    {"SCR_LOG_ENABLE", IGNORED, 0, 0, NULL},
    {"SCR_LOG_TXT_ENABLE", IGNORED, 0, 0, NULL},
    {"SCR_LOG_SYSLOG_ENABLE", IGNORED, 0, 0, NULL},
    {"SCR_LOG_DB_ENABLE", IGNORED, 0, 0, NULL},
};
#define NKEYS (sizeof KEYS / sizeof KEYS[0])

/* Values set by SCR_Config before SCR_Init (malloc'ed; NULL unset). */
static char *configured[NKEYS];

typedef struct found {
    char *value[NKEYS];
    char from[NKEYS][160]; /* "environment", "file F:N", "SCR_Config" */
} found;

static int find_key(const char *name, size_t len)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strlen(KEYS[i].name) == len && strncmp(KEYS[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

static void put(found *f, int k, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(found *f, int k, const char *value, const char *fmt, ...)
{
    free(f->value[k]);
    f->value[k] = strdup(value);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->from[k], sizeof f->from[k], fmt, ap);
    va_end(ap);
}

/* cscr_conffile_read's callback: a simple KEY=VALUE line of the file. */
static int from_file(const char *name, size_t klen, const char *value, const char *path,
                     int line, void *arg, char *why, size_t wlen)
{
    int k = find_key(name, klen);
    if (k < 0)
        cscr_say("%s:%d: unknown SCR parameter %.*s, ignored", path, line, (int)klen, name);
    else
        put(arg, k, value, "%s:%d", path, line);
    return 1;
}

int cscr_absolute(const char *path, char *out, size_t len)
{
    if (path[0] == '/')
        return snprintf(out, len, "%s", path) < (int)len;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return 0;
    return snprintf(out, len, "%s/%s", cwd, path) < (int)len;
}

/* Set cairn's variable ENV to VALUE unless the user set it. */
static void to_cairn(const char *env, const char *value, const char *why)
{
    const char *have = getenv(env);
    if (have && *have) {
        cscr_debug(1, "%s: %s=%s is set, kept", why, env, have);
        return;
    }
    setenv(env, value, 1);
    cscr_debug(1, "%s -> %s=%s", why, env, value);
}

/* Check every value of F and act on it; 0 with WHY on the first bad one. */
static int apply(found *f, cscr_conf *conf, char *why, size_t wlen)
{
    long num[NKEYS] = {0};
    char abs[PATH_MAX];
    memset(conf, 0, sizeof *conf);
    conf->level = CAIRN_LEVEL_ERASURE; /* SCR's default copy type: XOR */
    conf->flush = 10;                  /* SCR's default */
    int m = 1, d = find_key("SCR_DEBUG", strlen("SCR_DEBUG"));
    cscr.conf.debug = f->value[d] ? atoi(f->value[d]) : 0; /* for cscr_debug (checked below) */
    for (size_t k = 0; k < NKEYS; k++) {
        const char *v = f->value[k], *name = KEYS[k].name, *from = f->from[k];
        if (!v)
            continue;
        char *end = NULL;
        errno = 0;
        switch (KEYS[k].kind) {
        case INT:
            num[k] = strtol(v, &end, 10);
            if (!*v || *end || errno || num[k] < KEYS[k].min || num[k] > KEYS[k].max) {
                snprintf(why, wlen, "%s=%s (%s): not an integer in %ld..%ld", name, v, from,
                         KEYS[k].min, KEYS[k].max);
                return 0;
            }
            break;
        case PATH:
            if (!*v || !cscr_absolute(v, abs, sizeof abs)) {
                snprintf(why, wlen, "%s=%s (%s): not a usable path", name, v, from);
                return 0;
            }
            break;
        case WORD:
            if (strcasecmp(v, "SINGLE") == 0)
                conf->level = CAIRN_LEVEL_LOCAL;
            else if (strcasecmp(v, "PARTNER") == 0)
                conf->level = CAIRN_LEVEL_PARTNER;
            else if (strcasecmp(v, "XOR") == 0 || strcasecmp(v, "RS") == 0)
                conf->level = CAIRN_LEVEL_ERASURE, m = strcasecmp(v, "RS") == 0 ? 2 : 1;
            else {
                snprintf(why, wlen, "%s=%s (%s): cairn-scr takes SINGLE, PARTNER, XOR or RS%s",
                         name, v, from,
                         strcasecmp(v, "FILE") == 0 ? " (checkpoint descriptors are not "
                                                      "supported)" : "");
                return 0;
            }
            break;
        case REFUSED_IF_NOT_0:
            if (strtod(v, NULL) != 0) {
                snprintf(why, wlen, "%s=%s (%s) is not supported by cairn-scr%s", name, v, from,
                         strcmp(name, "SCR_CHECKPOINT_OVERHEAD") == 0
                             ? ": use SCR_CHECKPOINT_INTERVAL or SECONDS, or cairn's ckpt.auto"
                             : "");
                return 0;
            }
            break;
        case IGNORED:
            cscr_debug(1, "%s=%s (%s): no meaning with cairn, ignored", name, v, from);
            break;
        case TEXT:
            break;
        }
    }
#define HAS(name) (f->value[find_key(name, strlen(name))] != NULL)
#define NUM(name) (num[find_key(name, strlen(name))])
    int interval = HAS("SCR_CHECKPOINT_INTERVAL") && NUM("SCR_CHECKPOINT_INTERVAL") > 0;
    int seconds = HAS("SCR_CHECKPOINT_SECONDS") && NUM("SCR_CHECKPOINT_SECONDS") > 0;
    if (interval && seconds) {
        snprintf(why, wlen, "SCR_CHECKPOINT_INTERVAL and SCR_CHECKPOINT_SECONDS together are not "
                 "supported by cairn-scr: set one");
        return 0;
    }
    if (HAS("SCR_FLUSH"))
        conf->flush = (int)NUM("SCR_FLUSH");
    if (HAS("SCR_DEBUG"))
        conf->debug = (int)NUM("SCR_DEBUG");
    if (HAS("SCR_CACHE_BYPASS"))
        conf->bypass = (int)NUM("SCR_CACHE_BYPASS");
    int cur = find_key("SCR_CURRENT", strlen("SCR_CURRENT"));
    if (f->value[cur])
        snprintf(conf->current, sizeof conf->current, "%s", f->value[cur]);
    if (HAS("SCR_SET_FAILURES") && m == 2)
        m = (int)NUM("SCR_SET_FAILURES");
    cscr.conf.debug = conf->debug;

    char text[64];
    for (size_t k = 0; k < NKEYS; k++) {
        if (!f->value[k] || !KEYS[k].env)
            continue;
        char why_key[256];
        snprintf(why_key, sizeof why_key, "%s (%s)", KEYS[k].name, f->from[k]);
        const char *v = f->value[k];
        if (KEYS[k].kind == PATH && cscr_absolute(v, abs, sizeof abs)) /* checked above */
            v = abs;
        if (strcmp(KEYS[k].name, "SCR_PREFIX_SIZE") == 0 && num[k] == 0)
            v = "1000"; /* SCR: 0 keeps all; cairn's most */
        to_cairn(KEYS[k].env, v, why_key);
    }
    char prefix[PATH_MAX] = "";
    if (HAS("SCR_PREFIX")) /* checked above */
        cscr_absolute(f->value[find_key("SCR_PREFIX", strlen("SCR_PREFIX"))], prefix,
                      sizeof prefix);
    else if (getcwd(prefix, sizeof prefix)) /* SCR's prefix defaults to the working directory */
        to_cairn("CAIRN_PFS_DIR", prefix, "SCR_PREFIX (default: the working directory)");
    else
        prefix[0] = '\0';
    /* The job id by SCR's rules (scr_jobid.c), said once; CAIRN_JOB (or a cairn
     * configuration file, which may name job.id) wins over it. */
    const char *job = getenv("CAIRN_JOB"), *source = NULL;
    int jk = find_key("SCR_JOB_ID", strlen("SCR_JOB_ID"));
    char id[256];
    if (!cscr_job_id(f->value[jk], prefix, id, sizeof id, &source)) {
        snprintf(why, wlen, "SCR_JOB_ID (%s): longer than %zu bytes", source, sizeof id - 1);
        return 0;
    }
    if (job && *job)
        cscr_say("job id %s (CAIRN_JOB, which wins; SCR's rules give %s: %s)", job, id,
                 f->value[jk] ? "SCR_JOB_ID" : source);
    else if (getenv("CAIRN_CONFIG_FILE") && !f->value[jk] && !getenv("SCR_JOB_ID") &&
             strncmp(id, "scr-defjobid-", 13) == 0)
        cscr_say("job id: the one of CAIRN_CONFIG_FILE (job.id), else cairn's");
    else {
        setenv("CAIRN_JOB", id, 1);
        cscr_say("job id %s (%s)", id, f->value[jk] ? "SCR_JOB_ID" : source);
    }
    if (conf->level == CAIRN_LEVEL_ERASURE) {
        snprintf(text, sizeof text, "%d", m);
        to_cairn("CAIRN_EC_M", text, m == 1 ? "SCR_COPY_TYPE=XOR" : "SCR_COPY_TYPE=RS");
    }
    if (interval || seconds) {
        long n = interval ? NUM("SCR_CHECKPOINT_INTERVAL") : NUM("SCR_CHECKPOINT_SECONDS");
        snprintf(text, sizeof text, "%ld%s", n, seconds ? "s" : "");
        to_cairn("CAIRN_CKPT_EVERY_1", text,
                 interval ? "SCR_CHECKPOINT_INTERVAL" : "SCR_CHECKPOINT_SECONDS");
    }
    if (conf->debug > 0)
        to_cairn("CAIRN_LOG_LEVEL", conf->debug > 1 ? "debug" : "info", "SCR_DEBUG");
    /* No interval anywhere: SCR_Need_checkpoint says yes every time, as SCR does. */
    conf->always_need = 1;
    const char *auto_on = getenv("CAIRN_CKPT_AUTO");
    if (getenv("CAIRN_CONFIG_FILE") || (auto_on && *auto_on && strcmp(auto_on, "off") != 0))
        conf->always_need = 0;
    for (int l = 1; l <= 4; l++) {
        snprintf(text, sizeof text, "CAIRN_CKPT_EVERY_%d", l);
        if (getenv(text) && *getenv(text))
            conf->always_need = 0;
    }
    return 1;
#undef HAS
#undef NUM
}

int cscr_conf_load(cscr_conf *conf, char *why, size_t wlen)
{
    found f;
    memset(&f, 0, sizeof f);
    int ok = 1;
    for (size_t k = 0; k < NKEYS; k++) /* lowest first: SCR_Config, the file, the environment */
        if (configured[k])
            put(&f, (int)k, configured[k], "SCR_Config");
    const char *file = getenv("SCR_CONF_FILE");
    char dflt[PATH_MAX + 16];
    if (!file || !*file) {
        const char *prefix = getenv("SCR_PREFIX");
        int p = find_key("SCR_PREFIX", strlen("SCR_PREFIX"));
        if (!prefix || !*prefix)
            prefix = configured[p];
        char abs[PATH_MAX];
        if (cscr_absolute(prefix && *prefix ? prefix : ".", abs, sizeof abs)) {
            snprintf(dflt, sizeof dflt, "%s/.scrconf", abs);
            if (access(dflt, F_OK) == 0)
                file = dflt;
        }
    }
    if (file && *file)
        ok = cscr_conffile_read(file, from_file, &f, why, wlen);
    for (size_t k = 0; ok && k < NKEYS; k++) {
        const char *v = getenv(KEYS[k].name);
        if (v)
            put(&f, (int)k, v, "environment");
    }
    if (ok)
        ok = apply(&f, conf, why, wlen);
    for (size_t k = 0; k < NKEYS; k++)
        free(f.value[k]);
    return ok;
}

/* SCR_Config: KEY=VALUE sets (before SCR_Init), KEY= unsets, KEY queries. */
const char *cscr_conf_call(const char *config)
{
    if (!config) {
        cscr_say("SCR_Config: NULL");
        return NULL;
    }
    const char *eq = strchr(config, '=');
    size_t klen = eq ? (size_t)(eq - config) : strlen(config);
    int k = find_key(config, klen);
    if (k < 0) {
        cscr_say("SCR_Config(\"%s\"): %s", config,
                   cscr_is_descriptor(config, klen) ? "descriptors are not supported by cairn-scr"
                                               : "unknown parameter");
        return NULL;
    }
    if (!eq) { /* a query: the value the next (or last) SCR_Init takes */
        const char *v = getenv(KEYS[k].name);
        if (!v)
            v = configured[k];
        return v ? strdup(v) : NULL;
    }
    if (cscr.phase != CSCR_NONE) {
        cscr_say("SCR_Config(\"%s\"): parameters are set before SCR_Init", config);
        return NULL;
    }
    free(configured[k]);
    configured[k] = eq[1] ? cscr_expand(eq + 1) : NULL;
    return NULL;
}
