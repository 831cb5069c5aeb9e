/*
 * scr_output.c - SCR's output phase: SCR_Start_output, SCR_Route_file inside
 * it, SCR_Complete_output, and the older SCR_Start/Complete_checkpoint.
 *
 * A checkpoint dataset (SCR_FLAG_CHECKPOINT) becomes one cairn generation:
 * each routed file NAME is routed in cairn by its last path component (as
 * SCR's cache keeps it; two files of one dataset with the same last
 * component are refused), SCR_Complete_output labels the generation with
 * the dataset's name and writes it with cairn_checkpoint at the level of
 * SCR_COPY_TYPE, or at level 4 every SCR_FLUSH-th checkpoint (by id) and
 * for a dataset that is also SCR_FLAG_OUTPUT. An output-only dataset never
 * becomes a generation (a restart must not find it): its files are written
 * beside their final paths as NAME.cairn-scr-part and renamed into place
 * once every rank is done. SCR_FLAG_OUTPUT files of a checkpoint are copied
 * to their final paths before cairn takes them in.
 *
 * Invalid on any rank (VALID 0, or a routed file that cannot be read): the
 * dataset is discarded on every rank, as SCR does after its allreduce:
 * cairn_checkpoint is not called, the routes are ended (cairn_unroute_file)
 * and the files written for it removed, so that nothing of it reaches a
 * later checkpoint; the previous checkpoint stays the newest. Owns the route
 * table (cscr.routes, the final-path strings it allocates).
 */
#include "scr_impl.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PART ".cairn-scr-part"

static int printable(const char *s)
{
    for (; *s; s++)
        if (!isprint((unsigned char)*s))
            return 0;
    return 1;
}

CSCR_API int SCR_Start_output(const char *name, int flags)
{
    if (!cscr_enter("SCR_Start_output", CSCR_IDLE))
        return SCR_FAILURE;
    char nm[SCR_MAX_FILENAME], root[SCR_MAX_FILENAME], why[SCR_MAX_FILENAME + 200] = "";
    long dset = cscr.dataset + 1;
    int ckpt = flags & SCR_FLAG_CHECKPOINT, root_flags = flags;
    if (name && strlen(name) >= SCR_MAX_FILENAME)
        snprintf(why, sizeof why, "SCR_Start_output: the name is longer than SCR_MAX_FILENAME");
    if (name && *name)
        snprintf(nm, sizeof nm, "%s", name);
    else
        snprintf(nm, sizeof nm, "scr.dataset.%ld", dset);
    memcpy(root, nm, sizeof root);
    if (MPI_Bcast(root, sizeof root, MPI_CHAR, 0, cscr.comm) != MPI_SUCCESS ||
        MPI_Bcast(&root_flags, 1, MPI_INT, 0, cscr.comm) != MPI_SUCCESS)
        snprintf(why, sizeof why, "SCR_Start_output: MPI_Bcast failed");
    else if (strcmp(root, nm) != 0 || root_flags != flags)
        snprintf(why, sizeof why, "SCR_Start_output('%.200s', %d): rank 0 gave ('%.200s', %d); "
                 "name and flags must be the same on every rank", nm, flags, root, root_flags);
    else if (flags & ~(SCR_FLAG_CHECKPOINT | SCR_FLAG_OUTPUT) || flags == SCR_FLAG_NONE)
        snprintf(why, sizeof why, "SCR_Start_output('%.200s', %d): flags must be "
                 "SCR_FLAG_CHECKPOINT, SCR_FLAG_OUTPUT or both", nm, flags);
    else if (ckpt && (strlen(nm) > CAIRN_LABEL_MAX || !printable(nm)))
        snprintf(why, sizeof why, "SCR_Start_output('%.100s'): a checkpoint's name is its "
                 "cairn label: 1..%d printable bytes", nm, CAIRN_LABEL_MAX);
    if (!cscr_agree(!*why, why))
        return SCR_FAILURE;
    cscr.dataset = dset;
    snprintf(cscr.out_name, sizeof cscr.out_name, "%s", nm);
    cscr.out_flags = flags;
    cscr.out_id = ckpt ? cscr.next_id : -1;
    cscr.nroutes = 0;
    cscr.have_id = -1; /* a restart not taken by now is not taken (SCR forgets it too) */
    cscr.restart_done = 1;
    cscr.phase = CSCR_OUTPUT;
    cscr_debug(2, "dataset %ld '%s' started (%s%s)", dset, nm, ckpt ? "checkpoint" : "",
               flags & SCR_FLAG_OUTPUT ? (ckpt ? "+output" : "output") : "");
    return SCR_SUCCESS;
}

CSCR_API int SCR_Start_checkpoint(void) { return SCR_Start_output(NULL, SCR_FLAG_CHECKPOINT); }

/* mkdir -p of the directory part of PATH (which is absolute). */
static int make_parents(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST)
            return 0;
        *p = '/';
    }
    return 1;
}

int cscr_route_output(const char *name, char *file)
{
    char final[PATH_MAX];
    if (!cscr_absolute(name, final, sizeof final)) {
        cscr_error("SCR_Route_file('%s'): the path is too long", name);
        return SCR_FAILURE;
    }
    const char *base = strrchr(final, '/') + 1;
    if (!*base || strlen(base) > CAIRN_NAME_MAX || strcmp(base, ".") == 0 ||
        strcmp(base, "..") == 0) {
        cscr_error("SCR_Route_file('%s'): not a file name (its last component must be 1..%d "
                   "bytes, not . or ..)", name, CAIRN_NAME_MAX);
        return SCR_FAILURE;
    }
    if (strcmp(base, CSCR_RECORD) == 0 || strcmp(base, ".cairn-scr-probe") == 0) {
        cscr_error("SCR_Route_file('%s'): the name %s is cairn-scr's own", name, base);
        return SCR_FAILURE;
    }
    int bypass = cscr.conf.bypass;
    for (size_t i = 0; i < cscr.nroutes; i++) {
        cscr_route *r = &cscr.routes[i];
        if (bypass ? strcmp(r->final, final) != 0 : strcmp(r->base, base) != 0)
            continue;
        if (strcmp(r->final, final) != 0) {
            cscr_error("SCR_Route_file('%s'): this rank routed %s in this dataset already; "
                       "cairn-scr keeps a dataset's files by their last path component, as "
                       "SCR's cache does, so they must differ", name, r->final);
            return SCR_FAILURE;
        }
        snprintf(file, SCR_MAX_FILENAME, "%s", r->path);
        return SCR_SUCCESS;
    }
    if (cscr.nroutes == cscr.cap) {
        size_t cap = cscr.cap ? 2 * cscr.cap : 16;
        cscr_route *bigger = realloc(cscr.routes, cap * sizeof *bigger);
        if (!bigger) {
            cscr_error("SCR_Route_file: out of memory");
            return SCR_FAILURE;
        }
        cscr.routes = bigger, cscr.cap = cap;
    }
    cscr_route *r = &cscr.routes[cscr.nroutes];
    memset(r, 0, sizeof *r);
    snprintf(r->base, sizeof r->base, "%s", base);
    r->bypass = bypass;
    if (bypass) { /* SCR's bypass: the file's own path, on the prefix's file system */
        if (strlen(final) >= sizeof r->path || !make_parents(final)) {
            cscr_error("SCR_Route_file('%s'): cannot create the directory of %s: %s", name,
                       final, strerror(errno));
            return SCR_FAILURE;
        }
        snprintf(r->path, sizeof r->path, "%s", final);
    } else if (cscr.out_flags & SCR_FLAG_CHECKPOINT) {
        if (cairn_route_file(cscr.ctx, base, r->path, sizeof r->path) != 0) {
            cscr_error("SCR_Route_file('%s'): %s", name, cairn_errmsg(cscr.ctx));
            return SCR_FAILURE;
        }
    } else if (snprintf(r->path, sizeof r->path, "%s" PART, final) >= (int)sizeof r->path ||
               !make_parents(final)) {
        cscr_error("SCR_Route_file('%s'): cannot create the directory of %s: %s", name, final,
                   strerror(errno));
        return SCR_FAILURE;
    }
    if (!(r->final = strdup(final))) {
        if (cscr.out_flags & SCR_FLAG_CHECKPOINT && !bypass)
            cairn_unroute_file(cscr.ctx, base);
        cscr_error("SCR_Route_file: out of memory");
        return SCR_FAILURE;
    }
    cscr.nroutes++;
    snprintf(file, SCR_MAX_FILENAME, "%s", r->path);
    return SCR_SUCCESS;
}

/* End the open dataset's routes and remove what was written for it. */
static void drop_routes(void)
{
    for (size_t i = 0; i < cscr.nroutes; i++) {
        cscr_route *r = &cscr.routes[i];
        if (r->bypass) { /* the application's file at its own path: never removed */
            free(r->final);
            continue;
        }
        if (cscr.out_flags & SCR_FLAG_CHECKPOINT)
            cairn_unroute_file(cscr.ctx, r->base); /* CAIRN_EINVAL if cairn ended it: fine */
        if (unlink(r->path) != 0 && errno != ENOENT)
            cscr_error("cannot remove %s: %s", r->path, strerror(errno));
        free(r->final);
    }
    cscr.nroutes = 0;
}

void cscr_output_abandon(void)
{
    drop_routes();
    cscr.phase = CSCR_IDLE;
}

/* Copy SRC to DST whole (through DST.cairn-scr-part, renamed). */
static int copy_file(const char *src, const char *dst, char *why, size_t wlen)
{
    char part[PATH_MAX + sizeof PART];
    snprintf(part, sizeof part, "%s" PART, dst);
    int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, ok = in >= 0 && make_parents(dst);
    if (ok)
        ok = (out = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) >= 0;
    char buf[1 << 16];
    for (ssize_t n; ok && (n = read(in, buf, sizeof buf)) != 0;)
        ok = n > 0 && write(out, buf, (size_t)n) == n;
    if (out >= 0 && close(out) != 0)
        ok = 0;
    if (in >= 0)
        close(in);
    if (ok)
        ok = rename(part, dst) == 0;
    if (!ok) {
        snprintf(why, wlen, "cannot copy %s to %s: %s", src, dst, strerror(errno));
        unlink(part);
    }
    return ok;
}

/* SCR_FLAG_OUTPUT: every routed file to its final path; agreed. */
static int publish(void)
{
    char why[3 * PATH_MAX] = "";
    int ok = 1;
    for (size_t i = 0; ok && i < cscr.nroutes; i++) {
        cscr_route *r = &cscr.routes[i];
        if (r->bypass)
            continue; /* written at its final path already */
        if (cscr.out_flags & SCR_FLAG_CHECKPOINT)
            ok = copy_file(r->path, r->final, why, sizeof why);
        else if (!(ok = rename(r->path, r->final) == 0))
            snprintf(why, sizeof why, "cannot rename %s to %s: %s", r->path, r->final,
                     strerror(errno));
    }
    return cscr_agree(ok, why);
}

/* SCR_FLAG_CHECKPOINT: the dataset becomes generation out_id. */
static int checkpoint(void)
{
    long id = cscr.out_id;
    int level = cscr.degraded ? cscr.degraded : cscr.conf.level;
    if ((cscr.conf.flush > 0 && id % cscr.conf.flush == 0) || cscr.out_flags & SCR_FLAG_OUTPUT)
        level = CAIRN_LEVEL_PFS;
    int rc;
    for (;;) {
        rc = cairn_label(cscr.ctx, cscr.out_name);
        if (rc == 0)
            rc = cairn_checkpoint(cscr.ctx, id, level);
        if (rc != CAIRN_ECONFIG || (level != CAIRN_LEVEL_PARTNER && level != CAIRN_LEVEL_ERASURE))
            break;
        /* Refused for this job's nodes (too few for a partner or a set): one level lower. */
        cscr_say("SCR_COPY_TYPE asks for level %d, which this job cannot do (%s): checkpoints "
                 "are kept at level %d", level, cairn_errmsg(cscr.ctx), level - 1);
        cscr.degraded = --level;
    }
    cscr.next_id = id + 1; /* cairn's ids only grow, whatever came of this one */
    if (rc != 0) {
        cscr_say("SCR_Complete_output: checkpoint '%s' (generation %ld, level %d): %s",
                 cscr.out_name, id, level, cairn_errmsg(cscr.ctx));
        return 0;
    }
    cscr_debug(1, "checkpoint '%s' is generation %ld, level %d", cscr.out_name, id, level);
    return 1;
}

CSCR_API int SCR_Complete_output(int valid)
{
    if (!cscr_enter("SCR_Complete_output", CSCR_OUTPUT))
        return SCR_FAILURE;
    char why[PATH_MAX + 200] = "";
    int mine = valid != 0;
    for (size_t i = 0; mine && i < cscr.nroutes; i++)
        if (access(cscr.routes[i].path, R_OK) != 0) {
            snprintf(why, sizeof why, "SCR_Complete_output: %s (routed as %s) cannot be read: "
                     "%s", cscr.routes[i].path, cscr.routes[i].final, strerror(errno));
            mine = 0;
        }
    int ok = cscr_agree(mine, why);
    if (!ok) {
        cscr_shared_explain();
        cscr_say("dataset '%s' is not valid on every rank: discarded", cscr.out_name);
    }
    if (ok && cscr.out_flags & SCR_FLAG_OUTPUT)
        ok = publish();
    if (ok && cscr.out_flags & SCR_FLAG_CHECKPOINT && cscr.conf.bypass)
        ok = cscr_bypass_complete();
    if (ok && cscr.out_flags & SCR_FLAG_CHECKPOINT)
        ok = checkpoint();
    drop_routes(); /* after a checkpoint: nothing left to remove */
    cscr.phase = CSCR_IDLE;
    return ok ? SCR_SUCCESS : SCR_FAILURE;
}

CSCR_API int SCR_Complete_checkpoint(int valid) { return SCR_Complete_output(valid); }
