/*
 * fti_conf.c - FTI's configuration file, read and checked, turned into cairn
 * settings, and the restart state written back into it.
 *
 * The file is read as FTI's iniparser reads it: sections and keys are
 * case-insensitive, '#' or ';' starts a comment (also after a value), a value
 * may be quoted. Unlike iniparser, a bad value is an error naming the file,
 * line and key (FTI would read "abc" as 0), and nothing is changed. KEYS lists
 * the keys the layer maps and those FTI knows that cairn has no use for
 * (accepted silently); any other key is warned about and ignored.
 *
 * FTI keeps its restart state in the file itself: [restart] failure (0 a
 * fresh run, 1 a run that checkpointed and did not finish, 2 a finished run
 * whose last checkpoint keep_last_ckpt kept) and exec_id (the execution's
 * id; the cairn job id here). cfti_conf_mark() rewrites just those two lines.
 *
 * Only rank 0 calls these (fti_init.c broadcasts the result). Nothing here
 * allocates beyond one line buffer and the file's lines while marking.
 */
#include "fti_conf.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CFTI_INCR_MIN 1024u       /* cairn's incr.block_size: powers of two in this range */
#define CFTI_INCR_MAX (64u << 20)

enum kind { K_INT, K_BOOL, K_LONG, K_DIR, K_STR, K_ID, K_IGNORED };

typedef struct key_def {
    const char *section, *key;
    enum kind kind;
    size_t off; /* K_INT, K_BOOL: int field; K_LONG: long; K_DIR, K_STR, K_ID: char array */
    int min, max;
} key_def;

#define INT_KEY(s, k, f, lo, hi) {s, k, K_INT, offsetof(cfti_conf, f), lo, hi}
#define ANY_INT(s, k, f) {s, k, K_INT, offsetof(cfti_conf, f), INT_MIN, INT_MAX}
#define BOOL_KEY(s, k, f) {s, k, K_BOOL, offsetof(cfti_conf, f), 0, 1}
#define STR_KEY(s, k, f) {s, k, K_STR, offsetof(cfti_conf, f), 0, 0}
#define IGNORED(s, k) {s, k, K_IGNORED, 0, 0, 0}

/* Every key FTI 1.6 reads (its conf.c), with FTI's types: integers as
 * iniparser_getint takes them (any int; FTI's own limits are checked after
 * the file is read, with FTI's reasons), booleans as iniparser_getboolean. */
static const key_def KEYS[] = {
    {"basic", "ckpt_dir", K_DIR, offsetof(cfti_conf, ckpt_dir), 0, 0},
    {"basic", "glbl_dir", K_DIR, offsetof(cfti_conf, glbl_dir), 0, 0},
    STR_KEY("basic", "meta_dir", meta_dir),
    ANY_INT("basic", "head", head),
    INT_KEY("basic", "node_size", node_size, 1, 1000000),
    ANY_INT("basic", "group_size", group_size),
    ANY_INT("basic", "ckpt_l1", ckpt_l[1]),
    ANY_INT("basic", "ckpt_l2", ckpt_l[2]),
    ANY_INT("basic", "ckpt_l3", ckpt_l[3]),
    ANY_INT("basic", "ckpt_l4", ckpt_l[4]),
    ANY_INT("basic", "dcp_l4", dcp_l4),
    ANY_INT("basic", "inline_l2", inline_l[2]),
    ANY_INT("basic", "inline_l3", inline_l[3]),
    ANY_INT("basic", "inline_l4", inline_l[4]),
    BOOL_KEY("basic", "enable_staging", staging),
    BOOL_KEY("basic", "keep_heads_alive", keep_heads),
    BOOL_KEY("basic", "enable_dcp", dcp),
    ANY_INT("basic", "dcp_mode", dcp_mode),
    ANY_INT("basic", "dcp_block_size", dcp_block),
    ANY_INT("basic", "dcp_stack_size", dcp_stack),
    ANY_INT("basic", "cacheddcp", cached_dcp),
    ANY_INT("basic", "verbosity", verbosity),
    ANY_INT("basic", "keep_last_ckpt", keep_last),
    BOOL_KEY("basic", "keep_l4_ckpt", keep_l4),
    ANY_INT("basic", "max_sync_intv", max_sync),
    ANY_INT("basic", "ckpt_io", ckpt_io),
    STR_KEY("basic", "h5_single_file_dir", h5_dir),
    STR_KEY("basic", "h5_single_file_prefix", h5_prefix),
    BOOL_KEY("basic", "h5_single_file_keep", h5_keep),
    BOOL_KEY("basic", "h5_single_file_enable", h5_enable),
    INT_KEY("restart", "failure", failure, 0, 3),
    {"restart", "exec_id", K_ID, offsetof(cfti_conf, exec_id), 0, 0},
    ANY_INT("injection", "rank", inj_rank),
    ANY_INT("injection", "index", inj_index),
    ANY_INT("injection", "position", inj_position),
    ANY_INT("injection", "number", inj_number),
    ANY_INT("injection", "frequency", inj_frequency),
    ANY_INT("advanced", "block_size", block_kb),
    ANY_INT("advanced", "transfer_size", transfer_mb),
    ANY_INT("advanced", "ckpt_tag", ckpt_tag),
    ANY_INT("advanced", "stage_tag", stage_tag),
    ANY_INT("advanced", "final_tag", final_tag),
    ANY_INT("advanced", "general_tag", general_tag),
    ANY_INT("advanced", "local_test", local_test),
    {"advanced", "gpu_host_bufsize", K_LONG, offsetof(cfti_conf, gpu_bufsize), 0, 0},
    /* FTI's, with no meaning here: MPI tags of FTI 1.2, Lustre striping (FTI
     * reads them misspelt "stiping"; its template spells them right), keys of
     * FTI's development versions */
    IGNORED("advanced", "mpi_tag"),
    IGNORED("advanced", "lustre_stiping_unit"), IGNORED("advanced", "lustre_stiping_factor"),
    IGNORED("advanced", "lustre_stiping_offset"), IGNORED("advanced", "lustre_striping_unit"),
    IGNORED("advanced", "lustre_striping_factor"), IGNORED("advanced", "lustre_striping_offset"),
    IGNORED("basic", "suffix"), IGNORED("basic", "h5_single_file_inline"),
    IGNORED("basic", "enable_icp"), IGNORED("basic", "gpu_host_bufsize"),
    IGNORED("basic", "transfer_size"), IGNORED("basic", "keep_last_ckpt_dir"),
    IGNORED("advanced", "block_size_kb"),
};

static int quiet; /* cfti_conf_read_quiet: no warnings (FTI_GetConfig) */

void cfti_conf_defaults(cfti_conf *c)
{
    memset(c, 0, sizeof *c);
    c->head = c->node_size = c->group_size = c->local_test = -1;
    for (int l = 1; l <= 4; l++)
        c->ckpt_l[l] = -1, c->inline_l[l] = 1;
    c->verbosity = 2;
    c->dcp_block = c->dcp_mode = c->max_sync = c->block_kb = c->transfer_mb = -1;
    c->dcp_stack = 5;
    c->ckpt_tag = 711, c->stage_tag = 406, c->final_tag = 3107, c->general_tag = 2612;
    c->gpu_bufsize = 32L << 20;
    c->ckpt_io = 1; /* FTI's template's (POSIX); a file without the key is warned */
    c->inj_frequency = -1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static void lower(char *s)
{
    for (; *s; s++)
        *s = (char)tolower((unsigned char)*s);
}

/* The value after '=': quoted, or up to a comment, trimmed. NULL if a quote
 * is not closed. */
static char *value_of(char *v)
{
    v = trim(v);
    if (*v == '"' || *v == '\'') {
        char *end = strchr(v + 1, *v);
        if (!end)
            return NULL;
        *end = '\0';
        return v + 1;
    }
    v[strcspn(v, "#;")] = '\0';
    return trim(v);
}

static int id_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 63 || s[0] == '.')
        return 0;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* One "key = value" of SECTION into C. */
static int set_key(cfti_conf *c, const char *section, const char *key, const char *v,
                   const char *where, char *msg, size_t msg_len)
{
    const key_def *k = NULL;
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0] && !k; i++)
        if (strcmp(KEYS[i].section, section) == 0 && strcmp(KEYS[i].key, key) == 0)
            k = &KEYS[i];
    if (!k) {
        if (!quiet)
            fprintf(stderr, "cairn-fti: warning: %s: [%s] %s is not a key of FTI's "
                    "configuration; ignored\n", where, section, key);
        return 0;
    }
    char *field = (char *)c + k->off;
    if (k->kind == K_BOOL) { /* as iniparser_getboolean: by the first character */
        int b = strchr("yYtT1", *v) && *v ? 1 : strchr("nNfF0", *v) && *v ? 0 : -1;
        if (b < 0)
            return snprintf(msg, msg_len, "%s: %s: '%s' is not a boolean (1, 0, y, n, t, f)",
                            where, key, v), -1;
        *(int *)(void *)field = b;
    } else if (k->kind == K_LONG) {
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (!*v || *end || errno)
            return snprintf(msg, msg_len, "%s: %s: '%s' is not an integer", where, key, v), -1;
        *(long *)(void *)field = n;
    } else if (k->kind == K_STR) {
        snprintf(field, CFTI_ID_MAX, "%s", v);
    } else if (k->kind == K_INT) {
        char *end;
        errno = 0;
        long n = strtol(v, &end, 10);
        if (!*v || *end || errno)
            return snprintf(msg, msg_len, "%s: %s: '%s' is not an integer", where, key, v), -1;
        if (n < k->min || n > k->max)
            return snprintf(msg, msg_len, "%s: %s: %ld is out of range (%d..%d)", where, key, n,
                            k->min, k->max), -1;
        *(int *)(void *)field = (int)n;
    } else if (k->kind == K_DIR && *v) {
        char abs[PATH_MAX];
        if (v[0] == '/') {
            snprintf(abs, sizeof abs, "%s", v);
        } else {
            char cwd[PATH_MAX];
            if (!getcwd(cwd, sizeof cwd))
                return snprintf(msg, msg_len, "%s: %s: getcwd: %s", where, key, strerror(errno)),
                       -1;
            while (v[0] == '.' && v[1] == '/')
                v += 2;
            if (snprintf(abs, sizeof abs, "%s/%s", cwd, strcmp(v, ".") == 0 ? "" : v) >=
                (int)sizeof abs)
                abs[CFTI_PATH_MAX + 1] = '\0'; /* too long: refused below */
        }
        size_t n = strlen(abs);
        while (n > 1 && abs[n - 1] == '/')
            abs[--n] = '\0';
        if (strstr(abs, " ;") || strpbrk(abs, "\n\r"))
            return snprintf(msg, msg_len, "%s: %s: '%s' cannot be handed to cairn in an INI file "
                            "(give it as CAIRN_%s instead)", where, key, abs,
                            strcmp(key, "ckpt_dir") == 0 ? "BASE" : "PFS_DIR"), -1;
        if (n > CFTI_PATH_MAX)
            return snprintf(msg, msg_len, "%s: %s: '%s' is longer than %d bytes (give it as "
                            "CAIRN_%s instead)", where, key, abs, CFTI_PATH_MAX,
                            strcmp(key, "ckpt_dir") == 0 ? "BASE" : "PFS_DIR"), -1;
        memcpy(field, abs, n + 1);
    } else if (k->kind == K_ID) {
        snprintf(field, sizeof c->exec_id, "%s", v); /* checked with failure, below */
    }
    return 0;
}

/* What FTI itself refuses (FTI_TestConfig), with FTI's reasons; then the
 * keys cairn does differently, warned about once (rank 0 reads the file once). */
static int fti_checks(const char *path, cfti_conf *c, char *msg, size_t msg_len)
{
    const char *why = NULL;
    int l3 = c->ckpt_l[3] > 0, l2 = c->ckpt_l[2] > 0;
    if (c->head != -1 && c->head != 0 && c->head != 1)
        why = "head: the number of heads needs to be set to 0 or 1";
    else if (c->group_size >= 32 && l3)
        why = "group_size: the group size must be lower than 32 (ckpt_l3 is set)";
    else if (c->group_size != -1 && c->group_size < 2 && (l2 || l3))
        why = "group_size: the group size must be at least 2 (ckpt_l2 or ckpt_l3 is set)";
    else if (c->verbosity < 1 || c->verbosity > 3)
        why = "verbosity needs to be set to 1, 2 or 3";
    else if (c->block_kb != -1 && (c->block_kb < 1 || c->block_kb > 2048))
        why = "[advanced] block_size needs to be set between 1 and 2048 (KiB)";
    else if (c->keep_heads && c->head != 1)
        why = "keep_heads_alive = 1 needs the head feature, but head = 0";
    else if (c->local_test != -1 && c->local_test != 0 && c->local_test != 1)
        why = "[advanced] local_test needs to be set to 0 or 1";
    else if (c->keep_last != 0 && c->keep_last != 1)
        why = "keep_last_ckpt needs to be set to 0 or 1";
    if (why)
        return snprintf(msg, msg_len, "%s: %s (FTI refuses it too)", path, why), -1;
    for (int l = 2; l <= 4; l++)
        if (c->inline_l[l] != 0)
            c->inline_l[l] = 1; /* as FTI: anything but 0 or 1 is 1 */
    if (quiet)
        return 0;
    static const char *const io[] = {"POSIX", "MPI-IO", "FTI-FF", "SIONlib", "HDF5", "IME"};
    if (c->ckpt_io < 1 || c->ckpt_io > 6)
        fprintf(stderr, "cairn-fti: warning: %s: ckpt_io = %d is not one of FTI's I/O modes "
                "(1-6; FTI takes POSIX): cairn writes its own checkpoint files\n", path,
                c->ckpt_io);
    else if (c->ckpt_io != 1)
        fprintf(stderr, "cairn-fti: warning: %s: ckpt_io = %d (%s): cairn writes its own "
                "checkpoint files, not FTI's %s ones\n", path, c->ckpt_io, io[c->ckpt_io - 1],
                io[c->ckpt_io - 1]);
    if (c->staging)
        fprintf(stderr, "cairn-fti: warning: %s: enable_staging = 1: staging (FTI_SendFile) is "
                "not supported\n", path);
    if (c->h5_enable)
        fprintf(stderr, "cairn-fti: warning: %s: h5_single_file_enable = 1: FTI's single HDF5 "
                "file (level FTI_L4_H5_SINGLE) is not supported\n", path);
    if (c->inj_number > 0)
        fprintf(stderr, "cairn-fti: warning: %s: [injection] number = %d: bit-flip injection "
                "(FTI_BitFlip) is not supported\n", path, c->inj_number);
    if (c->dcp_l4 > 0)
        fprintf(stderr, "cairn-fti: warning: %s: dcp_l4 = %d: no interval of its own here; with "
                "enable_dcp = 1 every level's checkpoints are incremental\n", path, c->dcp_l4);
    if (c->group_size > 64)
        fprintf(stderr, "cairn-fti: warning: %s: group_size = %d: level 3 sets of at most 64 "
                "nodes here (erasure.m at most 32)\n", path, c->group_size);
    return 0;
}

int cfti_conf_read_quiet(const char *path, cfti_conf *c, char *msg, size_t msg_len)
{
    quiet = 1;
    int rc = cfti_conf_read(path, c, msg, msg_len);
    quiet = 0;
    return rc;
}

int cfti_conf_read(const char *path, cfti_conf *c, char *msg, size_t msg_len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return snprintf(msg, msg_len, "cannot read FTI configuration file %s: %s", path,
                        strerror(errno)), -1;
    char line[4096], section[64] = "", where[4200];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        if (!strchr(line, '\n') && !feof(f)) {
            rc = -1, snprintf(msg, msg_len, "%s: line longer than %zu bytes", where,
                              sizeof line - 2);
            break;
        }
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            char *end = strchr(s, ']');
            if (!end || end - s - 1 >= (long)sizeof section) {
                rc = -1, snprintf(msg, msg_len, "%s: bad section header '%s'", where, s);
                break;
            }
            *end = '\0';
            snprintf(section, sizeof section, "%s", trim(s + 1));
            lower(section);
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
            rc = -1, snprintf(msg, msg_len, "%s: '%s' is not 'key = value'", where, s);
            break;
        }
        *eq = '\0';
        char *key = trim(s), *v = value_of(eq + 1);
        lower(key);
        if (!v) {
            rc = -1, snprintf(msg, msg_len, "%s: %s: unclosed quote", where, key);
            break;
        }
        rc = set_key(c, section, key, v, where, msg, msg_len);
    }
    if (rc == 0 && ferror(f))
        rc = -1, snprintf(msg, msg_len, "cannot read %s: %s", path, strerror(errno));
    fclose(f);
    if (rc == 0)
        rc = fti_checks(path, c, msg, msg_len);
    if (rc == 0 && c->failure == 3) { /* FTI: without HDF5 I/O, a fresh start */
        if (!quiet)
            fprintf(stderr, "cairn-fti: warning: %s: [restart] failure = 3 (FTI's restart on "
                    "another process count, from its HDF5 files) is not supported: a fresh "
                    "start, as FTI does without ckpt_io = 5\n", path);
        c->failure = 0;
    }
    if (rc == 0 && c->failure != 0 && !id_ok(c->exec_id))
        rc = -1, snprintf(msg, msg_len, "%s: [restart] failure = %d, but exec_id '%s' is not a "
                          "valid execution id (1-63 of A-Z a-z 0-9 . _ -)", path, c->failure,
                          c->exec_id);
    return rc;
}

/* Append "LINE\n" to BUF. */
static int add(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= len - *at)
        return -1;
    *at += (size_t)n;
    return 0;
}

int cfti_conf_ini(const cfti_conf *c, const char *job, char *ini, size_t ini_len, char *msg,
                  size_t msg_len)
{
    size_t at = 0;
    int rc = add(ini, ini_len, &at, "; cairn settings made by the FTI layer (libcairn-fti) from "
                 "FTI's configuration file\n");
    if (c->ckpt_dir[0])
        rc |= add(ini, ini_len, &at, "[store]\n");
    if (c->ckpt_dir[0])
        rc |= add(ini, ini_len, &at, "base = %s\n", c->ckpt_dir);
    rc |= add(ini, ini_len, &at, "[job]\n");
    if (job[0])
        rc |= add(ini, ini_len, &at, "id = %s\n", job);
    if (c->local_test == 1 && c->node_size > 0)
        rc |= add(ini, ini_len, &at, "ranks_per_node = %d\n", c->node_size);
    rc |= add(ini, ini_len, &at, "[pfs]\n");
    if (c->glbl_dir[0])
        rc |= add(ini, ini_len, &at, "dir = %s\n", c->glbl_dir);
    if (c->keep_l4 == 1)
        rc |= add(ini, ini_len, &at, "keep = 1000\n");
    /* FTI's inline level 4 writes straight to glbl_dir: so does pfs.direct */
    rc |= add(ini, ini_len, &at, "direct = %s\n", c->inline_l[4] == 0 ? "off" : "on");
    if (c->group_size >= 2) { /* FTI's level 3 survives the loss of half a group */
        int g = c->group_size > 64 ? 64 : c->group_size;
        rc |= add(ini, ini_len, &at, "[erasure]\nset_size = %d\nm = %d\n", g, g / 2);
    }
    rc |= add(ini, ini_len, &at, "[ckpt]\n");
    for (int l = 1; l <= 4; l++)
        if (c->ckpt_l[l] > 0)
            rc |= add(ini, ini_len, &at, "every_%d = %dm\n", l, c->ckpt_l[l]);
    int async = c->inline_l[2] == 0 || c->inline_l[3] == 0 || c->inline_l[4] == 0;
    rc |= add(ini, ini_len, &at, "[daemon]\nuse = %s\n", async ? "auto" : "off");
    rc |= add(ini, ini_len, &at, "[log]\nlevel = %s\n", c->verbosity == 1 ? "debug" : "warn");
    if (c->dcp == 1) {
        rc |= add(ini, ini_len, &at, "[incr]\nmode = on\n");
        if (c->dcp_block > 0) { /* FTI takes any; cairn a power of two, 1 KiB to 64 MiB */
            unsigned b = CFTI_INCR_MIN;
            while (b * 2 <= (unsigned)c->dcp_block && b * 2 <= CFTI_INCR_MAX)
                b *= 2;
            if (b != (unsigned)c->dcp_block && !quiet)
                fprintf(stderr, "cairn-fti: warning: dcp_block_size = %d: cairn's incremental "
                        "blocks are powers of two from 1 KiB to 64 MiB: %u bytes\n",
                        c->dcp_block, b);
            rc |= add(ini, ini_len, &at, "block_size = %u\n", b);
        }
    }
    if (rc)
        return snprintf(msg, msg_len, "the cairn settings exceed %zu bytes", ini_len), -1;
    return 0;
}

int cfti_conf_mark(const char *path, int failure, const char *exec_id, char *msg,
                   size_t msg_len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return snprintf(msg, msg_len, "cannot read %s: %s", path, strerror(errno)), -1;
    struct stat st;
    if (fstat(fileno(f), &st) != 0)
        st.st_mode = 0644;
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.cairn-fti.%d", path, (int)getpid());
    FILE *out = fopen(tmp, "w");
    if (!out) {
        int e = errno;
        fclose(f);
        return snprintf(msg, msg_len, "cannot write %s: %s", tmp, strerror(e)), -1;
    }
    char line[4096], section[64] = "";
    int done_failure = 0, done_id = 0, in_restart = 0, last_nl = 1;
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line); /* 0 for a line that starts with a NUL byte */
        last_nl = len > 0 && line[len - 1] == '\n';
        char copy[4096], *s;
        snprintf(copy, sizeof copy, "%s", line);
        s = trim(copy);
        if (*s == '[' && strchr(s, ']')) {
            if (in_restart) { /* leaving [restart]: add what it lacked */
                if (!done_failure)
                    fprintf(out, "failure = %d\n", failure);
                if (!done_id)
                    fprintf(out, "exec_id = %s\n", exec_id);
                done_failure = done_id = 1;
            }
            *strchr(s, ']') = '\0';
            snprintf(section, sizeof section, "%s", trim(s + 1));
            lower(section);
            in_restart = strcmp(section, "restart") == 0;
            fputs(line, out);
            continue;
        }
        char *eq = in_restart && *s != '#' && *s != ';' ? strchr(s, '=') : NULL;
        if (eq) {
            *eq = '\0';
            char key[64];
            snprintf(key, sizeof key, "%s", trim(s));
            char low[64];
            snprintf(low, sizeof low, "%s", key);
            lower(low);
            if (strcmp(low, "failure") == 0) {
                fprintf(out, "%s = %d\n", key, failure), done_failure = 1, last_nl = 1;
                continue;
            }
            if (strcmp(low, "exec_id") == 0) {
                fprintf(out, "%s = %s\n", key, exec_id), done_id = 1, last_nl = 1;
                continue;
            }
        }
        fputs(line, out);
    }
    if (!last_nl && (!done_failure || !done_id))
        fputc('\n', out);
    if (!in_restart && !done_failure)
        fprintf(out, "\n[restart]\n");
    if (!done_failure)
        fprintf(out, "failure = %d\n", failure);
    if (!done_id)
        fprintf(out, "exec_id = %s\n", exec_id);
    int bad = ferror(f) || ferror(out);
    fclose(f);
    bad |= fflush(out) != 0 || fsync(fileno(out)) != 0;
    bad |= fclose(out) != 0;
    if (bad || chmod(tmp, st.st_mode & 07777) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return snprintf(msg, msg_len, "cannot rewrite %s: %s", path, strerror(e)), -1;
    }
    return 0;
}

int cfti_conf_tool_ini(const char *path, char *ini, size_t ini_len, char *msg, size_t msg_len)
{
    cfti_conf c;
    cfti_conf_defaults(&c);
    if (cfti_conf_read(path, &c, msg, msg_len) != 0)
        return -1;
    if (!c.exec_id[0])
        return snprintf(msg, msg_len, "%s: no [restart] exec_id: no run has used this file yet",
                        path), -1;
    return cfti_conf_ini(&c, c.exec_id, ini, ini_len, msg, msg_len);
}
