/*
 * config.c - cairn's settings: one key table drives everything.
 *
 * A setting reaches cn_config in three layers, each overriding the one
 * before: the built-in default, the INI file (parsed by libinih; the one
 * given, else the one CAIRN_CONFIG_FILE names), then the CAIRN_* environment
 * variable; then rules between keys (check_whole). Every key is one row of
 * cn_config_keys (config_keys.c): section, name, environment variable, kind
 * of value with its limits, default as text, the cn_config field it fills,
 * and its description. Defaults, file values
 * and environment values all pass through set_value(), so a default is
 * validated like any other value, and cn_config_reference() prints the
 * documentation from the same rows, so the docs cannot drift.
 *
 * Errors name the source, the line and the key ("config f.ini:7: store.keep:
 * 'abc' is not an integer"); the first one stops loading. inih v55 does not
 * give the handler a line number, so the file goes through a reader that
 * counts lines. That reader also drops leading blanks, so an indented
 * "key = value" is a key and not a continuation of the previous value.
 *
 * Depends on libc, inih, cn_id_ok() (format.c) and cn_interval_parse()
 * (period.c). Allocates nothing; the
 * caller owns the cn_config and the cn_err.
 */
#include "common/config_impl.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define QUOTE_MAX 80 /* longest value quoted in a message */

/* "4K", "1G" or plain bytes. */
static void fmt_size(char *buf, size_t n, long long v)
{
    static const char *const unit[] = {"", "K", "M", "G"};
    int i = 0;
    for (; i < 3 && v > 0 && v % 1024 == 0; i++)
        v /= 1024;
    snprintf(buf, n, "%lld%s", v, unit[i]);
}

/* What K accepts: "1..1000", "4K..1G", "auto, write, pmem", "" for strings. */
static void fmt_accepts(char *buf, size_t n, const key_def *k)
{
    char lo[32], hi[32];
    buf[0] = '\0';
    if (k->kind == K_INT) {
        snprintf(buf, n, "%lld..%lld", k->min, k->max);
    } else if (k->kind == K_SIZE) {
        fmt_size(lo, sizeof lo, k->min);
        fmt_size(hi, sizeof hi, k->max);
        snprintf(buf, n, "%s..%s", lo, hi);
    } else if (k->kind == K_EVERY) {
        snprintf(buf, n, "N, or N followed by s, m, h, d");
    } else if (k->kind == K_DURATION) {
        snprintf(buf, n, "N followed by s, m, h, d");
    } else if (k->kind == K_ENUM) {
        size_t len = 0;
        for (int i = 0; k->words[i] && len < n; i++)
            len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "", k->words[i]);
    }
}

/*
 * Base-10 integer, the whole string; with SIZE, no sign and an optional binary
 * K, M, G, KiB, MiB or GiB (any case). Returns 0, -1 (malformed), -2 (too big).
 */
static int parse_num(const char *v, bool size, long long *out)
{
    static const char *const suffix[] = {"", "K", "M", "G", "", "KiB", "MiB", "GiB"};
    const char *digit = v + (!size && (*v == '-' || *v == '+'));
    if (*digit < '0' || *digit > '9')
        return -1; /* strtoll would skip blanks and take signs */
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    bool over = errno == ERANGE;
    for (int i = 0; i < (size ? 8 : 1); i++) {
        if (strcasecmp(end, suffix[i]) == 0) {
            long long unit = 1LL << (10 * (i % 4));
            if (over || n > LLONG_MAX / unit)
                return -2;
            *out = n * unit;
            return 0;
        }
    }
    return -1;
}

/*
 * Parse V as key K and store it in C. On error, put in WHY the quoted value
 * and the problem ("'abc' is not an integer") and return -1.
 */
static int set_value(cn_config *c, const key_def *k, const char *v, char *why, size_t why_len)
{
    char accepts[128], buf[192];
    const char *bad = NULL;
    long long num = 0;
    cn_interval every = {0, 0};
    int rc = 0;
    fmt_accepts(accepts, sizeof accepts, k);
    switch (k->kind) {
    case K_STR:
        if (strlen(v) >= k->size) {
            snprintf(buf, sizeof buf, "is longer than %zu bytes", k->size - 1);
            bad = buf;
        }
        break;
    case K_INT:
    case K_SIZE:
        rc = parse_num(v, k->kind == K_SIZE, &num);
        if (rc == -1) {
            bad = k->kind == K_INT ? "is not an integer" : "is not a size (use e.g. 64K, 1M)";
        } else if (rc == -2 || num < k->min || num > k->max) {
            snprintf(buf, sizeof buf, "is out of range %s", accepts);
            bad = buf;
        }
        break;
    case K_EVERY:
    case K_DURATION:
        bad = cn_interval_parse(v, k->kind == K_EVERY, &every);
        break;
    case K_ENUM:
        for (num = 0; k->words[num] && strcasecmp(v, k->words[num]) != 0; num++)
            ;
        if (!k->words[num]) {
            snprintf(buf, sizeof buf, "must be one of %s", accepts);
            bad = buf;
        }
        break;
    }
    if (!bad && k->check)
        bad = k->check(v, num);
    if (bad) {
        size_t len = strlen(v);
        snprintf(why, why_len, "'%.*s%s' %s", (int)(len > QUOTE_MAX ? QUOTE_MAX : len), v,
                 len > QUOTE_MAX ? "..." : "", bad);
        return -1;
    }
    char *field = (char *)c + k->off;
    if (k->kind == K_STR) {
        memcpy(field, v, strlen(v) + 1);
    } else if (k->kind == K_EVERY) {
        memcpy(field, &every, sizeof every);
    } else if (k->kind == K_DURATION) {
        memcpy(field, &every.seconds, sizeof every.seconds);
    } else if (k->kind == K_SIZE) {
        uint32_t u = (uint32_t)num;
        memcpy(field, &u, sizeof u);
    } else {
        int i = (int)num;
        memcpy(field, &i, sizeof i);
    }
    return 0;
}

/* ---- INI file ------------------------------------------------------------ */

typedef struct parse_state {
    cn_config *cfg;
    FILE *f;
    int line;            /* lines handed to inih so far */
    int err_line;        /* line of the first error found here, 0 if none */
    int read_errno;      /* a read error, 0 if none */
    char why[CN_MSG_MAX / 2];
} parse_state;

/* inih's fgets-like reader: counts lines, rejects over-long ones, drops leading blanks. */
static char *reader(char *buf, int num, void *user)
{
    parse_state *st = user;
    errno = 0;
    if (st->err_line || !fgets(buf, num, st->f)) {
        if (ferror(st->f))
            st->read_errno = errno ? errno : EIO;
        return NULL; /* end of input: inih stops */
    }
    st->line++;
    size_t len = strlen(buf);
    if (len == (size_t)num - 1 && buf[len - 1] != '\n') {
        int ch = getc(st->f);
        if (ch != EOF) {
            snprintf(st->why, sizeof st->why, "line is longer than %d bytes", num - 2);
            st->err_line = st->line;
            return NULL;
        }
    }
    size_t skip = strspn(buf, " \t");
    memmove(buf, buf + skip, len - skip + 1);
    return buf;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_state *st = user;
    bool known_section = false;
    for (size_t i = 0; i < cn_config_nkeys; i++) {
        const key_def *k = &cn_config_keys[i];
        if (strcmp(section, k->section) != 0)
            continue;
        known_section = true;
        if (strcmp(name, k->name) != 0)
            continue;
        char why[CN_MSG_MAX / 2 - 64];
        if (set_value(st->cfg, k, value, why, sizeof why) == 0)
            return 1;
        snprintf(st->why, sizeof st->why, "%s.%s: %s", section, name, why);
        st->err_line = st->line;
        return 0;
    }
    if (!*section)
        snprintf(st->why, sizeof st->why, "key '%.100s' outside a section", name);
    else if (!known_section)
        snprintf(st->why, sizeof st->why, "unknown section [%.100s]", section);
    else
        snprintf(st->why, sizeof st->why, "unknown key '%.100s.%.100s'", section, name);
    st->err_line = st->line;
    return 0;
}

static int load_file(cn_config *c, const char *path, cn_err *err)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return cn_fail(err, CAIRN_ECONFIG, "config %s: cannot open: %s", path, strerror(errno));
    parse_state st = {.cfg = c, .f = f};
    int rc = ini_parse_stream(reader, &st, handler, &st);
    fclose(f);
    if (rc == -2)
        return cn_fail(err, CAIRN_ENOMEM, "config %s: out of memory", path);
    if (st.read_errno)
        return cn_fail(err, CAIRN_ECONFIG, "config %s: cannot read: %s", path,
                       strerror(st.read_errno));
    /* inih reports the first failing line; if it precedes ours, inih found it. */
    if (rc > 0 && (!st.err_line || rc < st.err_line))
        return cn_fail(err, CAIRN_ECONFIG, "config %s:%d: syntax error", path, rc);
    if (st.err_line)
        return cn_fail(err, CAIRN_ECONFIG, "config %s:%d: %s", path, st.err_line, st.why);
    return 0;
}

/* ---- defaults, environment, entry points ---------------------------------- */

static int load_defaults(cn_config *c, cn_err *err)
{
    char why[CN_MSG_MAX / 2];
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < cn_config_nkeys; i++)
        if (set_value(c, &cn_config_keys[i], cn_config_keys[i].def, why, sizeof why) < 0)
            return cn_fail(err, CAIRN_ECONFIG, "built-in default of %s.%s: %s",
                           cn_config_keys[i].section, cn_config_keys[i].name, why);
    return 0;
}

static int load_env(cn_config *c, cn_err *err)
{
    char why[CN_MSG_MAX / 2];
    for (size_t i = 0; i < cn_config_nkeys; i++) {
        const char *v = getenv(cn_config_keys[i].env);
        if (v && *v && set_value(c, &cn_config_keys[i], v, why, sizeof why) < 0)
            return cn_fail(err, CAIRN_ECONFIG, "environment %s: %s", cn_config_keys[i].env, why);
    }
    return 0;
}

/* Rules between keys, once every layer is in. */
static int check_whole(const cn_config *c, cn_err *err)
{
    bool mtbf = false;
    for (int l = 1; l <= 4; l++)
        mtbf |= c->mtbf[l] > 0;
    if (c->ckpt_auto && !mtbf)
        return cn_fail(err, CAIRN_ECONFIG, "config: ckpt.auto = on needs fail.mtbf_<L> for at "
                       "least one level L (the mean time between the failures level L is for, "
                       "e.g. fail.mtbf_1 = 1d): without one no level is ever due");
    return 0;
}

int cn_config_load(cn_config *cfg, const char *path, cn_err *err)
{
    CN_FAIL_IF(!cfg, err, CAIRN_EINVAL, "cn_config_load: cfg is NULL");
    cn_config c;
    const char *named = getenv(CN_CONFIG_FILE_ENV);
    bool by_env = !path && named && *named;
    int rc = load_defaults(&c, err);
    if (rc == 0 && (path || by_env)) {
        rc = load_file(&c, by_env ? named : path, err);
        if (rc < 0 && by_env)
            cn_err_prefix(err, "%s: ", CN_CONFIG_FILE_ENV);
    }
    if (rc == 0)
        rc = load_env(&c, err);
    if (rc == 0)
        rc = check_whole(&c, err);
    if (rc < 0)
        (void)load_defaults(&c, NULL); /* on error the caller sees defaults, never a mix */
    *cfg = c;
    return rc;
}

void cn_config_reference(void *file)
{
    FILE *f = file;
    fprintf(f, "Each setting is, in increasing priority: the default below, the key in the INI "
               "file given to `cairn_init` (`[section]` then `key = value`; with none given, "
               "the file `%s` names, if set), then the environment "
               "variable (an empty variable counts as unset). In the file, a key given twice "
               "takes its last value; names are case-sensitive, words are not; a line starting "
               "with `;` or `#` is a comment, and so is the rest of a line after ` ;`; a line "
               "holds at most %d bytes (a longer `store.base` must come from `CAIRN_BASE`). "
               "Sizes take a binary suffix: `K`, `M`, `G` (or `KiB`, `MiB`, `GiB`). Times are "
               "a number (`1.5` allowed) and a unit: `s`, `m` (minutes), `h` or `d`.\n\n",
            CN_CONFIG_FILE_ENV, INI_MAX_LINE - 2);
    fprintf(f, "| key | env | type | default | description |\n");
    fprintf(f, "|-----|-----|------|---------|-------------|\n");
    for (size_t i = 0; i < cn_config_nkeys; i++) {
        const key_def *k = &cn_config_keys[i];
        static const char *const kinds[] = {"string", "integer", "size", "one of", "interval",
                                            "duration"};
        char accepts[128];
        fmt_accepts(accepts, sizeof accepts, k);
        fprintf(f, "| `%s.%s` | `%s` | %s%s%s | %s%s%s | %s |\n", k->section, k->name, k->env,
                kinds[k->kind], *accepts ? " " : "", accepts, *k->def ? "`" : "",
                *k->def ? k->def : "(empty)", *k->def ? "`" : "", k->doc);
    }
}

uint64_t cn_config_daemon_key(const cn_config *c)
{
    char buf[9000];
    int n = snprintf(buf, sizeof buf, "%s|%d|%d|%d|%d|%d|%u|%s|%d|%d|%d|%u|%d", c->base, c->keep,
                     c->set_size, c->ec_m, c->ec_w, c->ec_kernel, c->ec_block, c->pfs_dir,
                     c->pfs_keep, c->pfs_group, c->pfs_scheme, c->pfs_block, c->pfs_bandwidth);
    return cn_hash(buf, n > 0 && (size_t)n < sizeof buf ? (size_t)n : sizeof buf);
}
