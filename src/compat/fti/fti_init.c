/*
 * fti_init.c - FTI_Init, FTI_Status, FTI_Finalize and FTI_Protect of the FTI
 * layer.
 *
 * FTI_Init: rank 0 reads FTI's configuration file (fti_conf.c) and picks the
 * job: CAIRN_JOB if the user set it (then the file's [restart] section is
 * neither read nor written, and a run restarts whenever its job has a
 * checkpoint), else, as FTI does, the file's exec_id when [restart] failure
 * is 1 or 2 (a restart), else a new execution id. Every rank then writes the
 * cairn settings made from the file to a private temporary INI file, which
 * cairn_init reads (CAIRN_* variables still win over it) and which is
 * removed at once. cairn_restart_query says whether a checkpoint can be
 * recovered: that is FTI_Status; if so, the checkpoint is read at once
 * (fti_stage.c: FTI_RecoverVar is local). A checkpoint that exists but cannot be used
 * is left as it is: with the file's exec_id the run starts afresh under a new
 * one (FTI_NREC, the old job named), with CAIRN_JOB FTI_Init refuses.
 *
 * The restart state goes back into the file as FTI keeps it: failure = 0 and
 * the execution id at a fresh start, 1 after the first checkpoint, and at
 * FTI_Finalize 0 (a next run starts afresh) or 2 (keep_last_ckpt = 1 and a
 * checkpoint exists: a next run recovers it).
 *
 * Owns cfti (the process-wide state) and its table of protected variables.
 */
#include "fti_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

FTI_EXPORT MPI_Comm FTI_COMM_WORLD = MPI_COMM_WORLD;

cfti_state cfti = {.plan_gen = -1, .cur_gen = -1, .last_gen = 0};

/* The keys cfti_once has said, this process. */
static char **said;
static int nsaid;

void cfti_once(const char *key, const char *fmt, ...)
{
    for (int i = 0; i < nsaid; i++)
        if (strcmp(said[i], key) == 0)
            return;
    char **n = realloc(said, (size_t)(nsaid + 1) * sizeof *n);
    if (n && (n[nsaid] = strdup(key)) != NULL)
        said = n, nsaid++;
    else if (n)
        said = n;
    char line[CFTI_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cairn-fti: rank %d: %s: %s\n", cfti.rank, key, line);
    fflush(stderr);
}

void cfti_say(int level, const char *fmt, ...)
{
    if (cfti.rank != 0 || (level == FTI_INFO && cfti.verbosity > 2) ||
        (level == FTI_DBUG && cfti.verbosity > 1))
        return;
    char line[CFTI_INI_MAX + CFTI_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (level >= FTI_WARN) {
        fprintf(stderr, "cairn-fti: %s: %s\n", level == FTI_WARN ? "warning" : "error", line);
        fflush(stderr);
    } else {
        printf("cairn-fti: %s\n", line);
        fflush(stdout);
    }
}

void cfti_name(int id, char name[32]) { snprintf(name, 32, "fti-%d", id); }

cfti_var *cfti_var_find(int id)
{
    for (int i = 0; i < cfti.nvars; i++)
        if (cfti.vars[i].id == id)
            return &cfti.vars[i];
    return NULL;
}

/* The job, for messages: the execution id, else CAIRN_JOB. */
static const char *job_name(const char *job)
{
    const char *env = getenv("CAIRN_JOB");
    return job[0] ? job : env && *env ? env : "(cairn's default job id)";
}

/* What rank 0 decided, for every rank. */
typedef struct boot {
    int rc, flow, expect;
    cfti_conf conf;
    char job[64];
    char msg[CFTI_MSG_MAX];
} boot;

static void new_exec_id(char id[64])
{
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y-%m-%d_%H-%M-%S", &tm);
    snprintf(id, 64, "%s.%d", stamp, (int)getpid()); /* FTI's form, made unique */
}

static void boot_rank0(boot *b, const char *path)
{
    cfti_conf_defaults(&b->conf);
    if (path && cfti_conf_read(path, &b->conf, b->msg, sizeof b->msg) != 0) {
        b->rc = -1;
        return;
    }
    const char *env_job = getenv("CAIRN_JOB");
    b->flow = path && !(env_job && *env_job);
    if (b->flow && b->conf.failure != 0) {
        snprintf(b->job, sizeof b->job, "%.63s", b->conf.exec_id); /* checked: 1-63 bytes */
        b->expect = b->conf.failure;
    } else if (b->flow) {
        new_exec_id(b->job);
        b->conf.failure = -1; /* the file gets failure = 0 and the new id */
    }
    if (b->conf.head == 1)
        fprintf(stderr, "cairn-fti: warning: %s: head = 1 (a process per node set aside for FTI) "
                "is not supported: every rank computes, as with head = 0; levels set inline = 0 "
                "are handed to cairnd when `cairn start` runs one on every node\n", path);
}

/* Append the cairn INI file USER (CAIRN_CONFIG_FILE) to FD after INI, so that
 * its settings win over those made from FTI's file. 1, or 0 (said). */
static int append_user_ini(int fd, const char *user, const char *ini)
{
    int lines = 1;
    for (const char *p = ini; *p; p++)
        lines += *p == '\n';
    char head[4300], buf[8192];
    int n = snprintf(head, sizeof head, "; ---- CAIRN_CONFIG_FILE=%s, its line N being line N + %d "
                     "here; its settings win over the ones above\n", user, lines);
    FILE *f = fopen(user, "r");
    int ok = f && n > 0 && write(fd, head, (size_t)n) == n;
    size_t got;
    while (ok && (got = fread(buf, 1, sizeof buf, f)) > 0)
        ok = write(fd, buf, got) == (ssize_t)got;
    if (f && ferror(f))
        ok = 0;
    if (!ok)
        fprintf(stderr, "cairn-fti: error: rank %d: CAIRN_CONFIG_FILE: cannot read %s: %s\n",
                cfti.rank, user, strerror(errno));
    if (f)
        fclose(f);
    return ok;
}

/* Collective: write INI (or nothing) to a private temporary file on every
 * rank and open cairn with it. 0, or a cairn code (message printed). */
static int open_cairn(MPI_Comm comm, const cfti_conf *conf, const char *job, int have_file,
                      cairn_ctx **ctx)
{
    char ini[CFTI_INI_MAX], msg[CFTI_MSG_MAX], path[4200] = "";
    int ok = 1;
    if (have_file) {
        if (cfti_conf_ini(conf, job, ini, sizeof ini, msg, sizeof msg) != 0) {
            cfti_say(FTI_EROR, "%s", msg);
            return CAIRN_ECONFIG;
        }
        cfti_say(FTI_DBUG, "cairn settings (CAIRN_* variables override them):\n%s", ini);
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/cairn-fti-XXXXXX.ini", tmp && *tmp ? tmp : "/tmp");
        int fd = mkstemps(path, 4);
        size_t n = strlen(ini);
        ok = fd >= 0 && write(fd, ini, n) == (ssize_t)n;
        const char *user = getenv("CAIRN_CONFIG_FILE");
        if (ok && user && *user)
            ok = append_user_ini(fd, user, ini);
        else if (!ok)
            fprintf(stderr, "cairn-fti: error: rank %d: cannot write %s: %s\n", cfti.rank, path,
                    strerror(errno));
        if (fd >= 0 && close(fd) != 0)
            ok = 0;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm);
    int rc = ok ? cairn_init(comm, have_file ? path : NULL, ctx) : CAIRN_EIO;
    if (have_file)
        unlink(path);
    if (ok && rc != 0)
        cfti_say(FTI_EROR, "cairn_init: %s: %s", cairn_strerror(rc), cairn_errmsg(NULL));
    return rc;
}

/* The FTI id a generation was written for (its label), else the generation. */
static int fti_id_of(const cairn_restart_plan *p)
{
    int id;
    return sscanf(p->label, "FTI checkpoint %d", &id) == 1 ? id : (int)p->id;
}

static void mark(int failure)
{
    if (!cfti.file_flow || cfti.file_failure == failure)
        return;
    char msg[CFTI_MSG_MAX];
    if (cfti.rank == 0 && cfti_conf_mark(cfti.cfg_path, failure, cfti.job, msg, sizeof msg))
        cfti_say(FTI_WARN, "cannot record the restart state (failure = %d, exec_id = %s): %s; "
                 "to restart this run, set CAIRN_JOB=%s", failure, cfti.job, msg, cfti.job);
    cfti.file_failure = failure;
}

static const char *rebuild_words(const cairn_restart_plan *p, char *buf, size_t len)
{
    if (p->rebuild == 2)
        snprintf(buf, len, ", after restoring %d lost node(s) from partner copies", p->nodes_lost);
    else if (p->rebuild == 3)
        snprintf(buf, len, ", after rebuilding %d lost node(s) by decoding parity",
                 p->nodes_lost);
    else
        buf[0] = '\0';
    return buf;
}

FTI_EXPORT int FTI_Init(const char *configFile, MPI_Comm globalComm)
{
    if (cfti.ctx) {
        cfti_say(FTI_WARN, "FTI_Init: FTI is already initialized");
        return FTI_NSCS;
    }
    cfti_state fresh = {.plan_gen = -1, .cur_gen = -1, .comm = globalComm};
    cfti = fresh;
    MPI_Comm_rank(globalComm, &cfti.rank);
    boot *b = calloc(1, sizeof *b);
    if (!b)
        return FTI_NSCS;
    if (cfti.rank == 0)
        boot_rank0(b, configFile);
    MPI_Bcast(b, (int)sizeof *b, MPI_BYTE, 0, globalComm);
    cfti.verbosity = b->conf.verbosity;
    cfti.keep_last = b->conf.keep_last == 1;
    if (b->rc != 0) {
        cfti_say(FTI_EROR, "%s", b->msg);
        free(b);
        return FTI_NSCS;
    }
    if (b->conf.ckpt_dir[0] && !(getenv("CAIRN_BASE") && *getenv("CAIRN_BASE")))
        mkdir(b->conf.ckpt_dir, 0777); /* as FTI does; cairn_init says if it is unusable */
    if (cfti.rank == 0 && b->conf.glbl_dir[0] &&
        !(getenv("CAIRN_PFS_DIR") && *getenv("CAIRN_PFS_DIR")))
        mkdir(b->conf.glbl_dir, 0777);
    int result = FTI_SCES;
    cairn_restart_plan plan;
    for (int attempt = 0;; attempt++) {
        int rc = open_cairn(globalComm, &b->conf, b->job, configFile != NULL, &cfti.ctx);
        if (rc == 0) {
            rc = cairn_restart_query(cfti.ctx, CAIRN_LATEST, &plan);
            if (rc != 0)
                cfti_say(FTI_EROR, "cairn_restart_query: %s: %s", cairn_strerror(rc),
                         cairn_errmsg(cfti.ctx));
        }
        if (rc != 0) {
            cairn_finalize(cfti.ctx);
            cfti.ctx = NULL;
            free(b);
            return FTI_NSCS;
        }
        if (plan.status != CAIRN_RESTART_UNUSABLE)
            break;
        cfti_say(FTI_EROR, "job %s holds a checkpoint this run cannot use (%s: %s); it is left "
                 "as it is", job_name(b->job), cairn_strerror(plan.code),
                 cairn_errmsg(cfti.ctx));
        cairn_finalize(cfti.ctx);
        cfti.ctx = NULL;
        if (!b->flow || attempt > 0) {
            free(b);
            return FTI_NSCS;
        }
        if (cfti.rank == 0)
            new_exec_id(b->job);
        MPI_Bcast(b->job, sizeof b->job, MPI_CHAR, 0, globalComm);
        cfti_say(FTI_WARN, "starting afresh under the new execution id %s", b->job);
        b->expect = 0;
        b->conf.failure = -1; /* the file must be rewritten */
        result = FTI_NREC;
    }
    cfti.file_flow = b->flow;
    cfti.file_failure = b->conf.failure;
    snprintf(cfti.cfg_path, sizeof cfti.cfg_path, "%s", configFile ? configFile : "");
    snprintf(cfti.job, sizeof cfti.job, "%s", b->job);
    FTI_COMM_WORLD = globalComm;

    cairn_gen_info newest;
    int count = 0;
    if (cairn_generations(cfti.ctx, &newest, 1, &count) == 0 && count > 0)
        cfti.last_gen = newest.id;
    if (plan.status == CAIRN_RESTART_READY) {
        cfti.reco = b->flow && b->expect == 2 ? 2 : 1;
        cfti.plan_gen = cfti.cur_gen = plan.id;
        cfti.plan_level = plan.level;
        cfti.plan_rebuild = plan.rebuild;
        cfti.plan_lost = plan.nodes_lost;
        cfti.plan_fti_id = fti_id_of(&plan);
        cfti.ckpt_cnt = cfti.plan_fti_id + 1;
        if (plan.id > cfti.last_gen)
            cfti.last_gen = plan.id;
        char words[128];
        cfti_say(FTI_INFO, "job %s: restart from checkpoint %d (generation %ld, level %d%s)",
                 job_name(b->job), cfti.plan_fti_id, plan.id, plan.level,
                 rebuild_words(&plan, words, sizeof words));
        cfti_stage_in(plan.id); /* every rank's variables, read once: FTI_RecoverVar is local */
    } else {
        cfti.ckpt_cnt = 1;
        if (b->expect) {
            cfti_say(FTI_WARN, "the configuration file says failure = %d, but job %s holds no "
                     "checkpoint: starting afresh", b->expect, b->job);
            result = FTI_NREC;
        }
        cfti_say(FTI_INFO, "job %s: fresh start", job_name(b->job));
    }
    mark(cfti.reco);
    free(b);
    return result;
}

FTI_EXPORT int FTI_Status(void) { return cfti.ctx ? cfti.reco : 0; }

FTI_EXPORT int FTI_Protect(int id, void *ptr, int32_t count, fti_id_t type)
{
    if (!cfti.ctx) {
        cfti_say(FTI_WARN, "FTI_Protect: FTI is not initialized");
        return FTI_NSCS;
    }
    int tsize = cfti_type_size(type);
    if (count < 0 || tsize < 1) {
        fprintf(stderr, "cairn-fti: warning: rank %d: FTI_Protect(%d): %s\n", cfti.rank, id,
                tsize < 1 ? "the type is not an FTI type (FTI_InitType makes one)"
                          : "the count is negative");
        return FTI_NSCS;
    }
    char name[32];
    cfti_name(id, name);
    cairn_type ct = cfti_type_ctype(type);
    size_t elems = ct == CAIRN_BYTE ? (size_t)count * (size_t)tsize : (size_t)count;
    int rc = cairn_protect(cfti.ctx, name, ptr, ct, elems, 0, NULL);
    if (rc != 0) {
        fprintf(stderr, "cairn-fti: warning: rank %d: FTI_Protect(%d): %s: %s\n", cfti.rank, id,
                cairn_strerror(rc), cairn_errmsg(cfti.ctx));
        return FTI_NSCS;
    }
    cfti_var *v = cfti_var_find(id);
    if (!v) {
        if (cfti.nvars == cfti.cap) {
            int cap = cfti.cap ? 2 * cfti.cap : 16;
            cfti_var *vars = realloc(cfti.vars, (size_t)cap * sizeof *vars);
            if (!vars) {
                cairn_unprotect(cfti.ctx, name);
                return FTI_NSCS;
            }
            cfti.vars = vars, cfti.cap = cap;
        }
        v = &cfti.vars[cfti.nvars++];
    }
    *v = (cfti_var){.id = id, .ptr = ptr, .count = count, .type = type, .ctype = ct,
                    .elems = elems};
    return FTI_SCES;
}

FTI_EXPORT int FTI_Finalize(void)
{
    if (!cfti.ctx) {
        cfti_say(FTI_WARN, "FTI_Finalize: FTI is not initialized");
        return FTI_NSCS;
    }
    mark(cfti.keep_last && cfti.cur_gen >= 0 ? 2 : 0);
    int rc = cairn_finalize(cfti.ctx);
    if (rc != 0)
        cfti_say(FTI_EROR, "cairn_finalize: %s", cairn_strerror(rc));
    free(cfti.vars);
    cfti_stage_drop();
    free(cfti.known);
    cfti_state fresh = {.plan_gen = -1, .cur_gen = -1, .rank = cfti.rank,
                        .verbosity = cfti.verbosity};
    cfti = fresh;
    return rc == 0 ? FTI_SCES : FTI_NSCS;
}
