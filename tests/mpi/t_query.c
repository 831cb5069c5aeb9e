/*
 * t_query.c - the MPI test application behind tests/mpi/run_query.sh: the
 * restart-side API a porting application uses (cairn_restart_query,
 * cairn_var_query, cairn_restart_var, cairn_label, cairn_errmsg).
 *
 *   save N LEVEL        checkpoint ids T_FIRST (1).. at LEVEL, each labelled
 *                       "gen G" (T_SALT: "gen G salt S"), routed file notes.txt
 *                       with it; cairn_generations must then report the label
 *                       and the seconds of the newest
 *   query MAX STATUS [ID LEVEL REBUILD LOST GENS]
 *                       cairn_restart_query(MAX; -1 = CAIRN_LATEST) must say
 *                       STATUS (NONE, READY, or an error name for UNUSABLE)
 *                       and, for each argument not "x", that id, level,
 *                       rebuild and nodes lost; GENS is what cairn_generations
 *                       says before. READY: raw and label checked too. Then
 *                       (unless T_QUERY_ONLY) the restart (CAIRN_LATEST, or
 *                       the plan's id when MAX is given) must agree: the same
 *                       id restored bit-exact, routed file and all, at that
 *                       level; or the plan's code with memory unchanged
 *   var ID              one variable at a time, generation ID (CAIRN_LATEST)
 *   noprot CODE         cairn_restart with nothing protected must give CODE
 *                       (CAIRN_ESTATE, or 0 for a generation of files only)
 *   label               cairn_label and cairn_errmsg: refusals change nothing,
 *                       a label is for one checkpoint, a success leaves ""
 *   setup {BASE PFS LEVELS}...
 *                       one job in each node-local base and PFS directory
 *                       ("-": none): ids 1, 2, ... at LEVELS ("4,1")
 *   cases {NAME BASE PFS STATUS ID LEVEL REBUILD LOST}...
 *                       query (MAX -1) then restart in each, as query mode
 *                       (the matrix of levels and losses: many in one job)
 * With T_NOVARS, save protects nothing (a generation of routed files only).
 * Data are a function of (rank, generation, T_SALT); a few blocks of each
 * variable change per generation, so incremental chains store deltas. Ranks
 * agree on pass/fail; rank 0 prints "PASS mode" or "FAIL mode: why".
 */
#include "cairn.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NF 1000 /* field: 20 x 50 doubles */
#define NI 333  /* ids: int32 */
#define NR 4097 /* raw: bytes */
#define SENT 0x5A

static int rank, nranks;
static long salt;
static double field[NF];
static int32_t *ids; /* allocated by the var mode from cairn_var_query */
static int32_t ids_own[NI];
static uint8_t rawv[NR];
static char why[1400];

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    if (why[0])
        return 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fprintf(stderr, "rank %d: %s\n", rank, why);
    return 0;
}

static double fv(long g, int i) { return rank * 1e3 + salt * 7 + (i < 100 ? g : 0) + i * 0.5; }
static int32_t iv(long g, int i) { return rank * 100000 + (int32_t)salt * 1000 + (i % 50 ? 0 : (int32_t)g) + i; }
static uint8_t rv(long g, int i) { return (uint8_t)(rank * 31 + salt * 5 + i * 7 + (i < 64 ? g : 0)); }

/* Do all ranks still pass? Every rank calls it at the same points, so a
 * local failure never leaves the others in a collective call alone. */
static bool agreed(void)
{
    int ok = !why[0], all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all;
}
#define SYNC()                                                                                    \
    do {                                                                                          \
        if (!agreed())                                                                            \
            return;                                                                               \
    } while (0)

static void fill(long g)
{
    for (int i = 0; i < NF; i++)
        field[i] = fv(g, i);
    for (int i = 0; i < NI; i++)
        ids[i] = iv(g, i);
    for (int i = 0; i < NR; i++)
        rawv[i] = rv(g, i);
}

static void sentinel(void)
{
    memset(field, SENT, sizeof field), memset(ids, SENT, NI * 4), memset(rawv, SENT, NR);
}

/* Which variable is not the data of generation G: "field", ... or NULL. */
static const char *differs(long g, bool f, bool i, bool r)
{
    for (int k = 0; f && k < NF; k++)
        if (memcmp(&field[k], &(double){fv(g, k)}, 8) != 0)
            return "field";
    for (int k = 0; i && k < NI; k++)
        if (ids[k] != iv(g, k))
            return "ids";
    for (int k = 0; r && k < NR; k++)
        if (rawv[k] != rv(g, k))
            return "raw";
    return NULL;
}

static bool all_sentinel(const void *p, size_t n)
{
    for (size_t k = 0; k < n; k++)
        if (((const uint8_t *)p)[k] != SENT)
            return false;
    return true;
}

static int protect(cairn_ctx *ctx, bool f, bool i, bool r)
{
    int rc = 0;
    if (f)
        rc |= cairn_protect(ctx, "field", field, CAIRN_DOUBLE, NF, 2, (size_t[]){20, 50});
    if (i)
        rc |= cairn_protect(ctx, "ids", ids, CAIRN_INT32, NI, 1, (size_t[]){NI});
    if (r)
        rc |= cairn_protect(ctx, "raw", rawv, CAIRN_UINT8, NR, 0, NULL);
    return rc;
}

static int notes(long g, char *out, size_t len)
{
    return snprintf(out, len, "rank %d gen %ld salt %ld\n", rank, g, salt);
}

static int write_notes(cairn_ctx *ctx, long g)
{
    char path[4096], text[128];
    if (cairn_route_file(ctx, "notes.txt", path, sizeof path) != 0)
        return -1;
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs((notes(g, text, sizeof text), text), f);
    return fclose(f);
}

/* files/rank-<r>/NAME into GOT (256 bytes); false if there is no such file. */
static bool read_staged(cairn_ctx *ctx, const char *name, char *got)
{
    char path[4096];
    got[0] = '\0';
    if (cairn_route_file(ctx, name, path, sizeof path) != 0)
        return false;
    cairn_unroute_file(ctx, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    size_t n = fread(got, 1, 255, f);
    fclose(f);
    got[n] = '\0';
    return true;
}

/* Does files/rank-<r>/NAME hold TEXT (NULL: no such file)? */
static bool staged(cairn_ctx *ctx, const char *name, const char *text)
{
    char got[256];
    bool there = read_staged(ctx, name, got);
    return text ? there && strcmp(got, text) == 0 : !there;
}

static int code_of(const char *name)
{
#define T_X(n, v, m)                                                                              \
    if (strcmp(name, #n) == 0)                                                                    \
        return v;
    CAIRN_ERROR_LIST(T_X)
#undef T_X
    return strcmp(name, "0") == 0 ? 0 : 1;
}

static int gens(cairn_ctx *ctx, cairn_gen_info *info, int max)
{
    int count = -1, rc = cairn_generations(ctx, info, max, &count);
    return rc == 0 ? count : rc;
}

static void mode_save(cairn_ctx *ctx, long n, int level)
{
    long first = getenv("T_FIRST") ? atol(getenv("T_FIRST")) : 1, g = first;
    if (!getenv("T_NOVARS") && protect(ctx, true, true, true) != 0)
        fail("protect: %s", cairn_errmsg(ctx));
    for (; !why[0] && g < first + n; g++) {
        char label[64];
        snprintf(label, sizeof label, salt ? "gen %ld salt %ld" : "gen %ld", g, salt);
        fill(g);
        int rc = write_notes(ctx, g) | cairn_label(ctx, label);
        if (rc == 0)
            rc = cairn_checkpoint(ctx, g, level);
        if (rc != 0)
            fail("checkpoint %ld: %s: %s", g, cairn_strerror(rc), cairn_errmsg(ctx));
        else if (cairn_errmsg(ctx)[0])
            fail("checkpoint %ld succeeded, yet errmsg says '%s'", g, cairn_errmsg(ctx));
    }
    cairn_gen_info info[4];
    int count = gens(ctx, info, 4);
    char want[64];
    snprintf(want, sizeof want, salt ? "gen %ld salt %ld" : "gen %ld", g - 1, salt);
    if (!why[0] && (count < 1 || info[0].id != g - 1 || strcmp(info[0].label, want) != 0 ||
                    !(info[0].seconds > 0) || !(info[0].seconds < 600)))
        fail("generations: count %d, newest %ld labelled '%s' took %g s; expected %ld '%s'",
             count, count > 0 ? info[0].id : -1L, count > 0 ? info[0].label : "",
             count > 0 ? info[0].seconds : -1.0, g - 1, want);
}

/* The query (MAX) must say WANT and ARG (id level rebuild lost gens, "x":
 * any); then the restart must do what it said (see the header). */
static void query_case(cairn_ctx *ctx, long max, const char *want, const char *const arg[5])
{
    protect(ctx, true, true, true);
    sentinel();
    cairn_gen_info info[16];
    int before = gens(ctx, info, 16);
    cairn_restart_plan p;
    memset(&p, 0x77, sizeof p);
    int rc = cairn_restart_query(ctx, max < 0 ? CAIRN_LATEST : max, &p);
    const char *st = p.status == CAIRN_RESTART_NONE    ? "NONE"
                     : p.status == CAIRN_RESTART_READY ? "READY"
                                                       : cairn_strerror(p.code);
    if (rank == 0)
        printf("plan: rc %d status %d (%s) code %d id %ld level %d rebuild %d lost %d raw %llu "
               "label '%s' gens-before %d errmsg '%s'\n", rc, p.status, st, p.code, p.id,
               p.level, p.rebuild, p.nodes_lost, (unsigned long long)p.raw, p.label, before,
               cairn_errmsg(ctx));
    bool ready = p.status == CAIRN_RESTART_READY, unusable = p.status == CAIRN_RESTART_UNUSABLE;
    if (rc != 0)
        fail("query: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
    else if (strcmp(want, "NONE") == 0 ? p.status != CAIRN_RESTART_NONE
             : strcmp(want, "READY") == 0 ? !ready
                                          : !unusable || p.code != code_of(want))
        fail("query says status %d code %s, expected %s", p.status, cairn_strerror(p.code), want);
    else if ((strcmp(arg[0], "x") && p.id != atol(arg[0])) ||
             (strcmp(arg[1], "x") && p.level != atoi(arg[1])) ||
             (strcmp(arg[2], "x") && p.rebuild != atoi(arg[2])) ||
             (strcmp(arg[3], "x") && p.nodes_lost != atoi(arg[3])) ||
             (strcmp(arg[4], "x") && before != atoi(arg[4])))
        fail("query: id %ld level %d rebuild %d lost %d (generations before: %d); expected "
             "%s %s %s %s %s", p.id, p.level, p.rebuild, p.nodes_lost, before, arg[0], arg[1],
             arg[2], arg[3], arg[4]);
    else if (unusable != (cairn_errmsg(ctx)[0] != '\0'))
        fail("query: errmsg '%s' with status %d", cairn_errmsg(ctx), p.status);
    else if (!ready && p.id != -1)
        fail("query: id %ld without a generation to restore", p.id);
    else if (!all_sentinel(field, sizeof field) || !all_sentinel(ids, NI * 4) ||
             !all_sentinel(rawv, NR))
        fail("the query wrote protected memory");
    SYNC();
    if (ready) { /* the plan's bytes and label */
        char text[128], label[64];
        unsigned long long raw = NF * 8 + NI * 4 + NR + (unsigned)notes(p.id, text, sizeof text);
        unsigned long long total = 0;
        MPI_Allreduce(&raw, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        snprintf(label, sizeof label, salt ? "gen %ld salt %ld" : "gen %ld", p.id, salt);
        if (p.raw != total || (strcmp(p.label, label) != 0 && !getenv("T_NOLABEL")))
            fail("plan raw %llu label '%s', expected %llu '%s'", (unsigned long long)p.raw,
                 p.label, total, label);
    }
    SYNC();
    if (getenv("T_QUERY_ONLY"))
        return;
    long got = -2;
    rc = cairn_restart(ctx, max < 0 || !ready ? CAIRN_LATEST : p.id, &got);
    int want_rc = ready ? 0 : unusable ? p.code : CAIRN_ENOENT;
    char text[128];
    notes(p.id, text, sizeof text);
    if (rc != want_rc)
        fail("restart gave %s (%s), the plan said %s", cairn_strerror(rc), cairn_errmsg(ctx),
             cairn_strerror(want_rc));
    else if (!ready && (!all_sentinel(field, sizeof field) || !all_sentinel(rawv, NR)))
        fail("the restart failed yet wrote protected memory");
    else if (ready && (got != p.id || differs(got, true, true, true)))
        fail("restart restored %ld (%s differs), the plan said %ld", got,
             differs(got, true, true, true), p.id);
    else if (ready && !staged(ctx, "notes.txt", text))
        fail("the routed file of generation %ld was not restored", got);
    SYNC();
    if (!ready)
        return;
    int count = gens(ctx, info, 16);
    for (int k = 0; k < count && k < 16; k++)
        /* cairn_generations gives the highest level reached: 4 once on the PFS,
         * though the restart read the node-local copy (the plan's level) */
        if (info[k].id == got && p.level <= 3 && info[k].level != p.level &&
            info[k].level != CAIRN_LEVEL_PFS)
            fail("generation %ld restored at level %d, the plan said %d", got, info[k].level,
                 p.level);
}

static void mode_query(cairn_ctx *ctx, int argc, char **argv)
{
    const char *arg[5] = {"x", "x", "x", "x", "x"};
    for (int k = 0; k < 5 && 4 + k < argc; k++)
        arg[k] = argv[4 + k];
    query_case(ctx, atol(argv[2]), argv[3], arg);
}

/* Use the node-local base BASE and the PFS directory PFS ("-": none) for
 * the next cairn_init. */
static void use_dirs(const char *base, const char *pfs)
{
    setenv("CAIRN_BASE", base, 1);
    if (strcmp(pfs, "-") == 0)
        unsetenv("CAIRN_PFS_DIR");
    else
        setenv("CAIRN_PFS_DIR", pfs, 1);
}

/* setup {BASE PFS LEVELS}...: in each pair of directories, one job each,
 * checkpoint ids 1, 2, ... at the levels LEVELS lists ("4,1": id 1 at
 * level 4, id 2 at level 1), each labelled "gen G". */
static void mode_setup(int argc, char **argv)
{
    for (int c = 2; c + 2 < argc && !why[0]; c += 3) {
        use_dirs(argv[c], argv[c + 1]);
        cairn_ctx *ctx = NULL;
        int rc = cairn_init(MPI_COMM_WORLD, NULL, &ctx);
        if (rc != 0 || protect(ctx, true, true, true) != 0)
            fail("setup %s: init/protect: %s", argv[c + 2], cairn_errmsg(ctx));
        long g = 1;
        for (const char *l = argv[c + 2]; !why[0] && *l; l += l[1] == ',' ? 2 : 1, g++) {
            char label[64];
            snprintf(label, sizeof label, "gen %ld", g);
            fill(g);
            rc = write_notes(ctx, g) | cairn_label(ctx, label);
            if (rc == 0)
                rc = cairn_checkpoint(ctx, g, *l - '0');
            if (rc != 0)
                fail("setup %s: checkpoint %ld: %s: %s", argv[c + 2], g, cairn_strerror(rc),
                     cairn_errmsg(ctx));
        }
        cairn_finalize(ctx);
        if (!agreed() && !why[0])
            snprintf(why, sizeof why, "(another rank)");
    }
}

/* cases {NAME BASE PFS STATUS ID LEVEL REBUILD LOST}...: query mode's
 * query and restart (MAX -1) in each pair of directories, one cairn_init
 * each; every case runs, each failed one named. */
static void mode_cases(int argc, char **argv)
{
    int failed = 0, cases = 0;
    char first[sizeof why] = "";
    for (int c = 2; c + 7 < argc; c += 8, cases++) {
        use_dirs(argv[c + 1], argv[c + 2]);
        cairn_ctx *ctx = NULL;
        int rc = cairn_init(MPI_COMM_WORLD, NULL, &ctx);
        if (rc != 0)
            fail("init: %s: %s", cairn_strerror(rc), cairn_errmsg(NULL));
        if (agreed()) {
            const char *arg[5] = {argv[c + 4], argv[c + 5], argv[c + 6], argv[c + 7], "x"};
            query_case(ctx, -1, argv[c + 3], arg);
        }
        cairn_finalize(ctx);
        if (!agreed() && !why[0]) /* every rank leaves the loop together */
            snprintf(why, sizeof why, "(another rank)");
        if (rank == 0)
            printf("case %s: %s\n", argv[c], why[0] ? "FAILED" : "ok");
        if (why[0] && !failed++)
            snprintf(first, sizeof first, "%s: %.1300s", argv[c], why);
        why[0] = '\0';
    }
    if (failed)
        snprintf(why, sizeof why, "%d of %d cases failed; the first: %s", failed, cases, first);
}

static void mode_var(cairn_ctx *ctx, long id)
{
    protect(ctx, true, false, false);
    sentinel();
    char path[4096], text[128];
    FILE *f = cairn_route_file(ctx, "marker.txt", path, sizeof path) == 0 ? fopen(path, "w") : NULL;
    if (!f || fputs("mine\n", f) < 0 || fclose(f) != 0)
        fail("cannot write the marker file");
    SYNC();
    cairn_unroute_file(ctx, "marker.txt");
    char was[256]; /* what an earlier restart left there, if anything */
    bool had = read_staged(ctx, "notes.txt", was);
    cairn_var_info vi, fi;
    int rc = cairn_var_query(ctx, id, "ids", &vi);
    if (rc != 0)
        fail("var_query ids: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
    SYNC();
    rc = cairn_var_query(ctx, id, "field", &fi);
    if (rc != 0 || cairn_errmsg(ctx)[0] ||
        vi.type != CAIRN_INT32 || vi.count != NI || vi.ndims != 1 || vi.dims[0] != NI ||
        vi.bytes != NI * 4 || vi.stored == 0 || vi.error_bound != 0 || fi.type != CAIRN_DOUBLE ||
        fi.ndims != 2 || fi.dims[0] != 20 || fi.dims[1] != 50 || fi.bytes != NF * 8)
        fail("var_query: ids %d x%zu (%d dims, %zu bytes, %llu stored, bound %g); "
             "field %d, %d dims %zux%zu: %s", vi.type, vi.count, vi.ndims, vi.bytes,
             (unsigned long long)vi.stored, vi.error_bound, fi.type, fi.ndims,
             fi.dims[0], fi.dims[1], cairn_errmsg(ctx));
    SYNC();
    ids = malloc(vi.bytes); /* what a porting application does: allocate, protect, restore */
    memset(ids, SENT, vi.bytes);
    rc = cairn_protect(ctx, "ids", ids, vi.type, vi.count, vi.ndims, vi.dims);
    long got = -2;
    if (rc == 0)
        rc = cairn_restart_var(ctx, id, "ids", &got);
    notes(got, text, sizeof text);
    if (rc != 0)
        fail("restart_var ids: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
    SYNC();
    if ((id != CAIRN_LATEST && got != id) || differs(got, false, true, false) ||
        cairn_errmsg(ctx)[0])
        fail("restart_var restored %ld, ids %s", got,
             differs(got, false, true, false) ? "differ" : "right");
    SYNC();
    if (!all_sentinel(field, sizeof field) || !all_sentinel(rawv, NR))
        fail("restart_var of ids wrote other protected memory");
    SYNC();
    if (!staged(ctx, "marker.txt", "mine\n") || !staged(ctx, "notes.txt", had ? was : NULL))
        fail("restart_var changed the routed files directory");
    SYNC();
    /* refusals: nothing written, a message naming the reason */
    if ((rc = cairn_var_query(ctx, id, "nosuch", &vi)) != CAIRN_ENOENT)
        fail("var_query nosuch gave %s", cairn_strerror(rc));
    SYNC();
    if ((rc = cairn_var_query(ctx, id, "notes.txt", &vi)) != CAIRN_ENOENT)
        fail("var_query of a routed file gave %s", cairn_strerror(rc));
    SYNC();
    if ((rc = cairn_restart_var(ctx, id, "raw", NULL)) != CAIRN_EINVAL)
        fail("restart_var of an unprotected variable gave %s", cairn_strerror(rc));
    SYNC();
    static int16_t wrong[NR / 2];
    memset(wrong, SENT, sizeof wrong);
    cairn_protect(ctx, "raw", wrong, CAIRN_INT16, NR / 2, 0, NULL);
    rc = cairn_restart_var(ctx, id, "raw", NULL);
    if (rc != CAIRN_EMISMATCH || !strstr(cairn_errmsg(ctx), "type int16") ||
        !strstr(cairn_errmsg(ctx), "type uint8") || !all_sentinel(wrong, sizeof wrong))
        fail("restart_var of a mistyped variable: %s: '%s'", cairn_strerror(rc),
             cairn_errmsg(ctx));
    SYNC();
    if (rank == 0)
        printf("message: %s\n", cairn_errmsg(ctx));
    protect(ctx, false, false, true); /* now right: everything, as cairn_restart */
    if ((rc = cairn_restart(ctx, id, &got)) != 0 || cairn_errmsg(ctx)[0] ||
        differs(got, true, true, true) || !staged(ctx, "notes.txt", text))
        fail("restart after restart_var: %s: %s", cairn_strerror(rc), cairn_errmsg(ctx));
}

static void mode_label(cairn_ctx *ctx)
{
    char longest[CAIRN_LABEL_MAX + 2];
    memset(longest, 'x', sizeof longest - 1), longest[sizeof longest - 1] = '\0';
    const char *bad[] = {"", longest, "tab\there", "caf\xc3\xa9"};
    protect(ctx, true, true, true);
    fill(1);
    if (cairn_label(ctx, "kept") != 0 || cairn_errmsg(ctx)[0])
        fail("label 'kept' refused: %s", cairn_errmsg(ctx));
    SYNC();
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int rc = cairn_label(ctx, bad[k]);
        if (rc != CAIRN_EINVAL || !strstr(cairn_errmsg(ctx), "label"))
            fail("bad label %zu gave %s: '%s'", k, cairn_strerror(rc),
                 cairn_errmsg(ctx));
        SYNC();
        if (rank == 0)
            printf("message: %s\n", cairn_errmsg(ctx));
    }
    longest[CAIRN_LABEL_MAX] = '\0'; /* the longest that fits */
    if (cairn_checkpoint(ctx, 1, 1) != 0 || cairn_label(ctx, longest) != 0 ||
        cairn_checkpoint(ctx, 2, 1) != 0 || cairn_label(ctx, "dropped") != 0 ||
        cairn_label(ctx, NULL) != 0 || cairn_checkpoint(ctx, 3, 1) != 0)
        fail("checkpoints: %s", cairn_errmsg(ctx));
    SYNC();
    if (cairn_label(ctx, "after the refusal") != 0 || cairn_errmsg(ctx)[0])
        fail("errmsg after a successful cairn_label: '%s'", cairn_errmsg(ctx));
    SYNC();
    int rc = cairn_checkpoint(ctx, 3, 1); /* refused for its id: the label stays */
    if (rc != CAIRN_EINVAL || !cairn_errmsg(ctx)[0])
        fail("checkpoint 3 again gave %s", cairn_strerror(rc));
    SYNC();
    if (cairn_checkpoint(ctx, 5, 1) != 0 || cairn_errmsg(ctx)[0] ||
        cairn_unprotect(ctx, "nosuch") != CAIRN_EINVAL || !cairn_errmsg(ctx)[0] ||
        cairn_checkpoint(ctx, 4, 1) != CAIRN_EINVAL ||
        cairn_protect(ctx, "field", field, CAIRN_DOUBLE, NF, 0, NULL) != 0 ||
        cairn_errmsg(ctx)[0])
        fail("errmsg not cleared by a success: '%s'", cairn_errmsg(ctx));
    SYNC();
    cairn_gen_info info[8];
    int count = gens(ctx, info, 8);
    const char *want[] = {"after the refusal", "", longest, "kept"}; /* 5, 3, 2, 1 */
    for (int k = 0; k < 4; k++)
        if (count != 4 || strcmp(info[k].label, want[k]) != 0 || !(info[k].seconds > 0))
            fail("generation %ld labelled '%s' (%g s), expected '%s'",
                 count > k ? info[k].id : -1L, count > k ? info[k].label : "",
                 count > k ? info[k].seconds : 0.0, want[k]);
    SYNC();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    salt = getenv("T_SALT") ? atol(getenv("T_SALT")) : 0;
    ids = ids_own;
    const char *mode = argc > 1 ? argv[1] : "";
    bool many = strcmp(mode, "setup") == 0 || strcmp(mode, "cases") == 0; /* their own inits */
    cairn_ctx *ctx = NULL;
    int rc = many ? 0 : cairn_init(MPI_COMM_WORLD, NULL, &ctx);
    if (strcmp(mode, "setup") == 0 && argc >= 5 && (argc - 2) % 3 == 0)
        mode_setup(argc, argv);
    else if (strcmp(mode, "cases") == 0 && argc >= 10 && (argc - 2) % 8 == 0)
        mode_cases(argc, argv);
    else if (many)
        fail("usage: t_query setup {BASE PFS LEVELS}... | cases {NAME BASE PFS STATUS ID LEVEL "
             "REBUILD LOST}...");
    else if (rc != 0)
        fail("init: %s: %s", cairn_strerror(rc), cairn_errmsg(NULL));
    else if (strcmp(mode, "save") == 0 && argc == 4)
        mode_save(ctx, atol(argv[2]), atoi(argv[3]));
    else if (strcmp(mode, "query") == 0 && argc >= 4)
        mode_query(ctx, argc, argv);
    else if (strcmp(mode, "var") == 0 && argc == 3)
        mode_var(ctx, atol(argv[2]) < 0 ? CAIRN_LATEST : atol(argv[2]));
    else if (strcmp(mode, "noprot") == 0 && argc == 3) {
        long got = -2;
        rc = cairn_restart(ctx, CAIRN_LATEST, &got);
        if (rank == 0)
            printf("message: %s\n", cairn_errmsg(ctx));
        if (rc != code_of(argv[2]) || (rc == 0) != (cairn_errmsg(ctx)[0] == '\0'))
            fail("restart with nothing protected gave %s: '%s'", cairn_strerror(rc),
                 cairn_errmsg(ctx));
        char text[128];
        notes(got, text, sizeof text);
        if (rc == 0 && !staged(ctx, "notes.txt", text))
            fail("generation %ld's routed file was not restored", got);
    } else if (strcmp(mode, "label") == 0)
        mode_label(ctx);
    else if (!many)
        fail("usage: t_query save N LEVEL | query MAX STATUS [ID LEVEL REBUILD LOST GENS] | "
             "var ID | noprot CODE | label");
    int ok = !why[0], all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (rank == 0)
        printf(all ? "PASS %s\n" : "FAIL %s: %s\n", mode, ok ? "(another rank)" : why);
    if (ctx)
        cairn_finalize(ctx);
    if (ids != ids_own)
        free(ids);
    MPI_Finalize();
    return all ? 0 : 1;
}
