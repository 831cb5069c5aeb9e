/*
 * cli.c - the cairn command-line tool: main, the verb table, help, and the
 * small helpers every verb shares (messages, exit statuses, sizes, tables).
 *
 * `cairn VERB ARGS...` runs the verb's function from VERBS (generated from
 * CLI_VERB_LIST in tools.h) with argv[0] = VERB. Help and version go to
 * stdout with status 0; a bad verb or option is status 2 with the message on
 * stderr. The verbs themselves live one per file (cli_ls.c, ...).
 */
#include "tools/tools.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct cli_verb {
    const char *name;
    const char *summary;
    const char *usage;
    int (*run)(int argc, char **argv);
} cli_verb;

static const cli_verb VERBS[] = {
#define CLI_X_ROW(name, summary) {#name, summary, cli_##name##_usage, cli_##name},
    CLI_VERB_LIST(CLI_X_ROW)
#undef CLI_X_ROW
};
#define NVERBS (sizeof VERBS / sizeof VERBS[0])

static const cli_verb *find_verb(const char *name)
{
    for (size_t i = 0; i < NVERBS; i++)
        if (strcmp(VERBS[i].name, name) == 0)
            return &VERBS[i];
    return NULL;
}

/* ---- exit statuses and messages ---------------------------------------- */

int cli_exit_worst(int a, int b)
{
    /* The values are ordered by seriousness: 4 corrupt > 3 missing > 2 usage > 1 error. */
    return a > b ? a : b;
}

int cli_exit_for(int rc)
{
    if (rc >= 0)
        return CLI_EXIT_OK;
    if (rc == CAIRN_ENOENT || rc == -ENOENT)
        return CLI_EXIT_MISSING;
    if (rc == CAIRN_ECORRUPT || rc == CAIRN_EFORMAT)
        return CLI_EXIT_CORRUPT;
    return CLI_EXIT_ERROR;
}

void cli_print_exit_codes(FILE *f)
{
    fprintf(f, "Exit status:\n");
#define CLI_X_PRINT(name, value, meaning) fprintf(f, "  %d  %s\n", value, meaning);
    CLI_EXIT_LIST(CLI_X_PRINT)
#undef CLI_X_PRINT
}

static void verror(const char *verb, const char *fmt, va_list ap)
{
    char msg[CN_MSG_MAX + 256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (verb)
        fprintf(stderr, "cairn: %s: %s\n", verb, msg);
    else
        fprintf(stderr, "cairn: %s\n", msg);
}

void cli_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(verb, fmt, ap);
    va_end(ap);
}

int cli_usage_error(const char *verb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(verb, fmt, ap);
    va_end(ap);
    if (verb)
        fprintf(stderr, "Try 'cairn help %s'.\n", verb);
    else
        fprintf(stderr, "Try 'cairn --help'.\n");
    return CLI_EXIT_USAGE;
}

void cli_getopt_reset(void)
{
    optind = 0; /* glibc: full reinitialization */
    opterr = 0;
}

int cli_getopt_fail(const char *verb, int c, char **argv)
{
    const char *arg = argv[optind - 1];
    if (c == ':')
        return cli_usage_error(verb, "option '%s' requires an argument", arg);
    if (optopt && strncmp(arg, "--", 2) != 0)
        return cli_usage_error(verb, "unknown option '-%c'", optopt);
    /* An unknown long option, or one given an argument it does not take. */
    const char *eq = strchr(arg, '=');
    if (eq)
        return cli_usage_error(verb, "unknown option or unexpected argument '%s'", arg);
    return cli_usage_error(verb, "unknown option '%s'", arg);
}

int cli_help(const char *verb)
{
    const cli_verb *v = find_verb(verb);
    if (!v)
        return cli_usage_error(NULL, "no verb '%s'", verb);
    fputs(v->usage, stdout);
    putchar('\n');
    cli_print_exit_codes(stdout);
    return CLI_EXIT_OK;
}

const char *cli_msg_after(const cn_err *err, const char *path)
{
    const char *m = err->msg;
    for (;;) {
        size_t n = strlen(path);
        if (strncmp(m, path, n) == 0 && m[n] == ':' && m[n + 1] == ' ')
            m += n + 2;
        else
            break;
    }
    return *m ? m : cairn_strerror(err->code);
}

/* ---- output helpers ----------------------------------------------------- */

void *cli_alloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p) {
        cli_error(NULL, "out of memory");
        exit(CLI_EXIT_ERROR);
    }
    return p;
}

char *cli_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(cli_alloc(n), s, n);
}

void cli_path_join(char *out, size_t len, const char *dir, const char *name)
{
    int n = snprintf(out, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len) {
        cli_error(NULL, "path too long: %s/%s", dir, name);
        exit(CLI_EXIT_ERROR);
    }
}

const char *cli_human(uint64_t bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%llu B", (unsigned long long)bytes);
        return buf;
    }
    double v = (double)bytes;
    int u = 0;
    while (v >= 1024 && u < 6) {
        v /= 1024;
        u++;
    }
    snprintf(buf, len, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

const char *cli_type_name(int type) { return cn_type_name(type); }

const char *cli_level_name(uint32_t level)
{
    static const char *const names[] = {"?", "local", "partner", "erasure", "pfs"};
    return level <= 4 ? names[level] : "?";
}

void cli_table_init(cli_table *t, const char *align)
{
    memset(t, 0, sizeof *t);
    t->align = align;
    t->ncols = strlen(align);
}

void cli_table_add(cli_table *t, const char *fmt, ...)
{
    if (t->ncells == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        char **cells = cli_alloc(cap * sizeof *cells);
        if (t->ncells)
            memcpy(cells, t->cells, t->ncells * sizeof *cells);
        free(t->cells);
        t->cells = cells;
        t->cap = cap;
    }
    char cell[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cell, sizeof cell, fmt, ap);
    va_end(ap);
    t->cells[t->ncells++] = cli_strdup(cell);
}

void cli_table_print(const cli_table *t, FILE *f)
{
    size_t *w = cli_alloc(t->ncols * sizeof *w);
    for (size_t i = 0; i < t->ncells; i++) {
        size_t n = strlen(t->cells[i]);
        if (n > w[i % t->ncols])
            w[i % t->ncols] = n;
    }
    size_t cap = 2; /* one row, without trailing blanks (an empty last cell) */
    for (size_t c = 0; c < t->ncols; c++)
        cap += w[c] + 2;
    char *row = cli_alloc(cap);
    size_t n = 0;
    for (size_t i = 0; i < t->ncells; i++) {
        size_t col = i % t->ncols;
        bool last = col == t->ncols - 1 || i == t->ncells - 1;
        if (t->align[col] == 'r')
            n += (size_t)snprintf(row + n, cap - n, "%*s", (int)w[col], t->cells[i]);
        else
            n += (size_t)snprintf(row + n, cap - n, "%-*s", last ? 0 : (int)w[col], t->cells[i]);
        if (!last) {
            n += (size_t)snprintf(row + n, cap - n, "  ");
            continue;
        }
        while (n > 0 && row[n - 1] == ' ')
            n--;
        fprintf(f, "%.*s\n", (int)n, row);
        n = 0;
    }
    free(row);
    free(w);
}

void cli_table_free(cli_table *t)
{
    for (size_t i = 0; i < t->ncells; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

/* ---- main --------------------------------------------------------------- */

static void print_usage(FILE *f)
{
    fprintf(f, "Usage: cairn VERB [OPTIONS] [ARGS]\n"
               "       cairn help [VERB] | --help | --version\n"
               "\n"
               "Inspect and check the node-local checkpoints that libcairn writes under\n"
               "<base>/cairn-<uid>/<job>/<node>/gen-<id>/ (base: --base, CAIRN_BASE or\n"
               "store.base, default /dev/shm), and run a job's node daemons (cairnd), which\n"
               "take levels 2-4 off the application.\n"
               "\n"
               "Verbs:\n");
    for (size_t i = 0; i < NVERBS; i++)
        fprintf(f, "  %-9s%s\n", VERBS[i].name, VERBS[i].summary);
    fprintf(f, "\nRun 'cairn help VERB' or 'cairn VERB --help' for a verb's options.\n\n");
    cli_print_exit_codes(f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "--help") == 0 || strcmp(first, "-h") == 0 ||
        (strcmp(first, "help") == 0 && argc == 2)) {
        print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        printf("cairn %s (checkpoint format version %d)\n", CAIRN_VERSION_STRING,
               CN_FORMAT_VERSION);
        return CLI_EXIT_OK;
    }
    if (strcmp(first, "help") == 0) {
        if (argc > 3)
            return cli_usage_error(NULL, "help takes one verb");
        return cli_help(argv[2]);
    }
    if (first[0] == '-')
        return cli_usage_error(NULL, "unknown option '%s'", first);
    const cli_verb *v = find_verb(first);
    if (!v)
        return cli_usage_error(NULL, "unknown verb '%s'", first);
    cli_getopt_reset();
    return v->run(argc - 1, argv + 1);
}
