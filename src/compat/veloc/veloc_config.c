/*
 * veloc_config.c - VeloC's config file, read and turned into cairn settings.
 *
 * A VeloC config file is "key = value" lines (no sections; '#' or ';'
 * starts a comment line, " ;" an inline comment). Each VeloC key maps to a
 * cairn key of the INI text built here, which VELOC_Init hands to
 * cairn_init; CAIRN_* environment variables still override it, as for any
 * cairn configuration:
 *   scratch             -> store.base (required, as in VeloC)
 *   persistent          -> pfs.dir (each checkpoint also goes to level 4, from
 *                          level 1: pfs.direct = off, as VeloC keeps scratch too)
 *   mode = sync|async   -> daemon.use = off|auto (cairnd raises levels 2-4)
 *   ec_interval N       -> level 3 at most every N s (ckpt.every_3 = Ns, and
 *                          every_2 for jobs too small for level 3);
 *                          0 every checkpoint (the default), < 0 never
 *   persistent_interval -> level 4 likewise (ckpt.every_4 = Ns)
 *   scratch_versions N  -> store.keep (0: "all", cairn's most, 1000)
 *   max_versions N      -> pfs.keep (likewise)
 *   failure_domain X    -> job.node
 *   section.key = value -> that cairn key, given last (so it wins)
 * job.id is "veloc" unless the file (job.id) or CAIRN_JOB sets it. VeloC
 * keys cairn has no use for (watchdog_interval, axl_*, chksum, meta, ...)
 * are accepted and ignored; any other key is an error naming the line.
 * Writes only into the vl_config the caller owns.
 */
#include "veloc_config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LINE_MAX_INI 198 /* cairn's INI line limit */

/* VeloC keys that have no meaning for cairn: accepted, ignored. */
static const char *const IGNORED[] = {
    "watchdog_interval", "axl_type", "axl_config", "chksum", "meta", "log_prefix",
    "threaded", "aggregated", "daos_pool", "daos_cont", "comm_queue", NULL};

typedef struct parsed {
    char scratch[PATH_MAX], persistent[PATH_MAX], domain[256];
    int mode;                /* -1 unset, 0 sync, 1 async */
    bool base, pfs_dir;      /* store.base, pfs.dir given as cairn keys */
    long ec, pfs, keep, pkeep; /* LONG_MIN: unset */
} parsed;

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

static int bad(int rank, const char *path, int line, const char *fmt, const char *a, const char *b)
{
    if (rank == 0) {
        char msg[1024];
        snprintf(msg, sizeof msg, fmt, a, b);
        fprintf(stderr, "veloc: config %s:%d: %s\n", path, line, msg);
    }
    return -1;
}

static int get_long(const char *v, long *out)
{
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || end == v || *end)
        return -1;
    *out = n;
    return 0;
}

/* An absolute path: V itself, or the working directory joined to it. */
static int get_path(const char *v, char *out, size_t len)
{
    char cwd[PATH_MAX];
    int n;
    if (v[0] == '/')
        n = snprintf(out, len, "%s", v);
    else if (getcwd(cwd, sizeof cwd))
        n = snprintf(out, len, "%s/%s", cwd, v);
    else
        return -1;
    return n > 0 && (size_t)n < len ? 0 : -1;
}

static int add(vl_config *c, size_t *used, const char *fmt, const char *a, const char *b)
{
    char line[VL_INI_MAX];
    int n = snprintf(line, sizeof line, fmt, a, b);
    if (n < 0 || (size_t)n + 1 > LINE_MAX_INI + 1 || *used + (size_t)n + 1 >= sizeof c->ini)
        return -1;
    memcpy(c->ini + *used, line, (size_t)n);
    *used += (size_t)n;
    c->ini[(*used)++] = '\n';
    c->ini[*used] = '\0';
    return 0;
}

/* One "key = value" of line LINE: into P, or a cairn key into the INI. */
static int take(parsed *p, vl_config *c, size_t *used, const char *key, const char *v,
                const char *path, int line, int rank)
{
    long n;
    if (strchr(key, '.')) { /* section.key: cairn's own */
        char sec[128];
        const char *dot = strchr(key, '.');
        if ((size_t)(dot - key) >= sizeof sec || dot == key || !dot[1])
            return bad(rank, path, line, "'%s' is not a cairn key (section.key)%s", key, "");
        memcpy(sec, key, (size_t)(dot - key));
        sec[dot - key] = '\0';
        if (strcmp(key, "store.base") == 0)
            p->base = *v != '\0';
        if (strcmp(key, "pfs.dir") == 0)
            p->pfs_dir = *v != '\0';
        if (add(c, used, "[%s]", sec, NULL) || add(c, used, "%s = %s", dot + 1, v))
            return bad(rank, path, line, "'%s': the line is too long for cairn's config "
                       "(set the CAIRN_* variable instead)%s", key, "");
        return 0;
    }
    if (!*v) /* VeloC reads an empty value as unset */
        return 0;
    if (strcmp(key, "scratch") == 0 || strcmp(key, "persistent") == 0) {
        char *dst = key[0] == 's' ? p->scratch : p->persistent;
        if (get_path(v, dst, PATH_MAX))
            return bad(rank, path, line, "%s: the path is too long: '%s'", key, v);
        return 0;
    }
    if (strcmp(key, "mode") == 0) {
        if (strcmp(v, "sync") && strcmp(v, "async"))
            return bad(rank, path, line, "mode '%s' is invalid, must be sync or async%s", v, "");
        p->mode = strcmp(v, "async") == 0;
        return 0;
    }
    if (strcmp(key, "failure_domain") == 0) {
        snprintf(p->domain, sizeof p->domain, "%s", v);
        return 0;
    }
    long *num = strcmp(key, "ec_interval") == 0           ? &p->ec
                : strcmp(key, "persistent_interval") == 0 ? &p->pfs
                : strcmp(key, "scratch_versions") == 0    ? &p->keep
                : strcmp(key, "max_versions") == 0        ? &p->pkeep
                                                          : NULL;
    if (num) {
        if (get_long(v, &n))
            return bad(rank, path, line, "%s: '%s' is not an integer", key, v);
        if ((num == &p->keep || num == &p->pkeep) && (n < 0 || n > 1000))
            return bad(rank, path, line, "%s: %s is not 0..1000 (0 keeps cairn's most, 1000)",
                       key, v);
        *num = n;
        return 0;
    }
    for (int i = 0; IGNORED[i]; i++)
        if (strcmp(key, IGNORED[i]) == 0)
            return 0;
    return bad(rank, path, line, "unknown key '%s' (VeloC's keys: scratch, persistent, mode, "
               "ec_interval, persistent_interval, scratch_versions, max_versions, "
               "failure_domain; cairn's as section.key%s)", key, "");
}

static bool env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* The mapped keys, written before the cairn keys of the file (which win). A
 * path too long for an INI line is left out when its variable is set. */
static int emit(const parsed *p, vl_config *c, char *head, size_t *used)
{
    char num[32];
    size_t n = 0;
    c->ini[0] = '\0';
    if (add(c, &n, "[job]", NULL, NULL) || add(c, &n, "id = veloc", NULL, NULL))
        return -1;
    if (p->domain[0] && add(c, &n, "node = %s", p->domain, NULL))
        return -1;
    if (add(c, &n, "[store]", NULL, NULL) ||
        (p->scratch[0] && add(c, &n, "base = %s", p->scratch, NULL) && !env_set("CAIRN_BASE")))
        return -1;
    snprintf(num, sizeof num, "%ld", p->keep == 0 ? 1000 : p->keep);
    if (p->keep != LONG_MIN && add(c, &n, "keep = %s", num, NULL))
        return -1;
    if (add(c, &n, "[daemon]", NULL, NULL) ||
        add(c, &n, "use = %s", p->mode == 1 ? "auto" : "off", NULL))
        return -1;
    if (p->persistent[0]) {
        snprintf(num, sizeof num, "%ld", p->pkeep == 0 ? 1000 : p->pkeep);
        if (add(c, &n, "[pfs]", NULL, NULL) ||
            (add(c, &n, "dir = %s", p->persistent, NULL) && !env_set("CAIRN_PFS_DIR")) ||
            (p->pkeep != LONG_MIN && add(c, &n, "keep = %s", num, NULL)))
            return -1;
    }
    /* VeloC keeps each checkpoint in scratch, and in persistent too: level 1
     * first, then level 4 from it (not cairn's default, straight to the PFS) */
    if (!env_set("CAIRN_PFS_DIRECT") &&
        (add(c, &n, "[pfs]", NULL, NULL) || add(c, &n, "direct = off", NULL, NULL)))
        return -1;
    if (c->ec && c->ec_interval > 0) { /* level 2 where level 3 is not possible */
        snprintf(num, sizeof num, "%lds", c->ec_interval);
        if (add(c, &n, "[ckpt]", NULL, NULL) || add(c, &n, "every_2 = %s", num, NULL) ||
            add(c, &n, "every_3 = %s", num, NULL))
            return -1;
    }
    if (c->persistent && c->pfs_interval > 0) {
        snprintf(num, sizeof num, "%lds", c->pfs_interval);
        if (add(c, &n, "[ckpt]", NULL, NULL) || add(c, &n, "every_4 = %s", num, NULL))
            return -1;
    }
    if (n + strlen(head) + 1 >= sizeof c->ini)
        return -1;
    memcpy(c->ini + n, head, strlen(head) + 1);
    *used = n + strlen(head);
    return 0;
}

int vl_config_load(const char *path, vl_config *cfg, int rank)
{
    if (!path) {
        if (rank == 0)
            fprintf(stderr, "veloc: VELOC_Init: no config file (NULL)\n");
        return -1;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        if (rank == 0)
            fprintf(stderr, "veloc: cannot open config file %s: %s\n", path, strerror(errno));
        return -1;
    }
    parsed p = {.mode = -1, .ec = LONG_MIN, .pfs = LONG_MIN, .keep = LONG_MIN,
                .pkeep = LONG_MIN};
    vl_config *pass = calloc(1, sizeof *pass); /* the file's cairn keys, in order */
    size_t used = 0;
    char *buf = NULL;
    size_t cap = 0;
    int rc = pass ? 0 : -1, line = 0;
    while (rc == 0 && getline(&buf, &cap, f) >= 0) {
        line++;
        char *s = trim(buf);
        for (char *q = s; *q; q++)
            if (*q == ';' && q > s && (q[-1] == ' ' || q[-1] == '\t')) {
                *q = '\0';
                s = trim(s);
                break;
            }
        if (!*s || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            rc = bad(rank, path, line, "'%s': VeloC's config file has no sections%s", s, "");
            break;
        }
        char *eq = strpbrk(s, "=:");
        if (!eq) {
            rc = bad(rank, path, line, "'%s' is not 'key = value'%s", s, "");
            break;
        }
        *eq = '\0';
        rc = take(&p, pass, &used, trim(s), trim(eq + 1), path, line, rank);
    }
    free(buf);
    fclose(f);
    if (rc == 0 && !p.scratch[0] && !p.base && !env_set("CAIRN_BASE"))
        rc = bad(rank, path, line, "scratch = <node-local directory> is missing%s%s", "", "");
    if (rc == 0) {
        memset(cfg, 0, sizeof *cfg);
        cfg->persistent = p.persistent[0] || p.pfs_dir || env_set("CAIRN_PFS_DIR");
        cfg->ec = p.ec == LONG_MIN || p.ec >= 0;
        cfg->ec_interval = p.ec == LONG_MIN ? 0 : p.ec;
        cfg->pfs_interval = p.pfs == LONG_MIN ? 0 : p.pfs;
        if (p.scratch[0] && !p.base && !env_set("CAIRN_BASE"))
            snprintf(cfg->scratch, sizeof cfg->scratch, "%s", p.scratch);
        if (emit(&p, cfg, pass->ini, &used))
            rc = bad(rank, path, line, "a path is too long for cairn's config (at most %s "
                     "bytes a line; set CAIRN_BASE or CAIRN_PFS_DIR instead)%s", "190", "");
    }
    free(pass);
    return rc;
}
