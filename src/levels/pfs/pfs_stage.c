/*
 * pfs_stage.c - level 4 without MPI: a generation written node by node into
 * a staging directory of the PFS job directory, and committed by the node
 * that finds every node's part there (the epilog's flush, src/levels/pfs/flushnode.c).
 *
 *   <job>/.part-gen-<G>/agg-<rank>.cz   one file per rank (index group 1)
 *   <job>/.part-gen-<G>/node-<k>.done   node k's record (cn_pnode), atomic
 *   <job>/.part-gen-<G>/commit          the committing node's claim (O_EXCL)
 *   <job>/.part-gen-<G>/index           written last, then the directory is
 *                                       renamed gen-<G> (RENAME_NOREPLACE)
 *
 * The staging name is no generation's (cn_gen_list takes "gen-<id>" only):
 * restart, ls and prune never see a part. Every node writes its record, then
 * lists the directory: of two nodes writing their records at the same time,
 * the later to list sees both, so the last record is always followed by a
 * complete listing. The claim is made only with every record there; a claim
 * older than the claimant's own record is a dead attempt's (its records were
 * written again since) and is replaced. The committing node trusts nothing
 * it reads back: each record is decoded as hostile input, must agree with the
 * others and with the job, and every rank's file must have the size and
 * XXH3-64 its record names. A record or file that fails is taken for one an
 * earlier attempt left (its node has not written it again yet): the claim
 * is withdrawn and the commit left to that node, which lists after writing
 * (never an error: the node may be gone, and then no commit is right). It owns the staging directory from the claim on;
 * each node owns its files and record before. lvl_pfs_stage_prune removes
 * parts at or below the newest complete generation.
 */
#include "levels/pfs/pfs.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define COMMIT_NAME "commit"
#define RECORD_MAX (64u << 20)

int lvl_pfs_stage_open(int jobfd, long id, cn_err *err)
{
    char name[64];
    cn_pstage_dirname(name, sizeof name, id);
    int fd = cn_dir_open(jobfd, name, false, err);
    if (fd != -ENOENT)
        return fd;
    *err = (cn_err){0};
    fd = cn_dir_open(jobfd, name, true, err);
    if (fd >= 0 && cn_dir_sync(jobfd, err) < 0) { /* durable before anything goes in */
        close(fd);
        return err->code;
    }
    return fd;
}

int lvl_pfs_stage_record(int stagefd, const cn_pnode *rec, cn_err *err)
{
    char name[64];
    cn_pnode_filename(name, sizeof name, rec->node);
    uint8_t *buf = NULL;
    size_t len = 0;
    CN_TRY(cn_pnode_encode(rec, &buf, &len, err));
    int rc = cn_write_atomic(stagefd, name, buf, len, err); /* tmp, fsync, rename, dir fsync */
    free(buf);
    return rc;
}

/* Is PFS generation ID complete (its index reads, of JOB)? */
static bool complete(int jobfd, long id, const char *job)
{
    cn_pindex x;
    cn_err err = {0};
    if (lvl_pfs_index(jobfd, id, &x, &err) < 0)
        return false;
    bool ok = strcmp(x.job, job) == 0;
    cn_pindex_free(&x);
    return ok;
}

/* Read and check every record of the part at STAGEFD into X (the index). */
static int build_index(int stagefd, long id, const char *job, uint32_t nnodes, cn_pindex *x,
                       cn_err *err)
{
    cn_pnode first = {0};
    uint8_t *owner = NULL;
    int rc = 0;
    for (uint32_t k = 0; rc == 0 && k < nnodes; k++) {
        char name[64];
        uint8_t *buf = NULL;
        size_t len = 0;
        cn_pnode p;
        cn_pnode_filename(name, sizeof name, k);
        rc = cn_read_small(stagefd, name, RECORD_MAX, &buf, &len, err);
        if (rc == 0)
            rc = cn_pnode_decode(buf, len, &p, err);
        free(buf);
        if (rc < 0) {
            cn_err_prefix(err, "node %u's record: ", k);
            break;
        }
        if (k == 0) {
            first = p;
            first.rank = NULL;
            owner = calloc(p.nranks, 1);
            x->files = calloc(p.nranks, sizeof *x->files);
        }
        const char *why = strcmp(p.job, job) != 0 ? "another job's"
                          : p.generation != id ? "another generation's"
                          : p.node != k ? "another node's"
                          : p.nnodes != nnodes || p.nranks != first.nranks || p.map != first.map
                              ? "of another job layout"
                          : p.scheme != first.scheme ? "written with another scheme"
                          : !owner || !x->files ? "(no memory)" : NULL;
        for (uint32_t i = 0; !why && i < p.nlocal; i++) {
            const cn_pnode_rank *r = &p.rank[i];
            if (owner[r->rank]++) {
                why = "naming a rank another node's record names";
                break;
            }
            x->files[r->rank] = r->file;
            x->raw += r->raw, x->stored += r->file.size, x->source += r->source;
        }
        if (why)
            rc = cn_fail(err, CAIRN_ECORRUPT, "node %u's record is %s", k, why);
        cn_pnode_free(&p);
    }
    for (uint32_t r = 0; rc == 0 && r < first.nranks; r++)
        if (!owner[r])
            rc = cn_fail(err, CAIRN_ECORRUPT, "no node's record names rank %u", r);
    for (uint32_t r = 0; rc == 0 && r < first.nranks; r++) { /* the files as recorded */
        char name[64];
        const uint8_t *map = NULL;
        cn_agg_filename(name, sizeof name, r);
        rc = lvl_pfs_map(stagefd, name, &x->files[r], &map, err);
        lvl_pfs_unmap(map, &x->files[r]);
    }
    free(owner);
    if (rc < 0) {
        cn_pindex_free(x);
        return rc;
    }
    x->scheme = first.scheme, x->generation = id, x->nranks = first.nranks;
    x->nnodes = nnodes, x->group = 1, x->nfiles = first.nranks;
    x->parent = -1, x->base = id, x->seconds = first.seconds;
    memcpy(x->job, first.job, sizeof x->job);
    memcpy(x->label, first.label, sizeof x->label);
    return 0;
}

/* GEN, in the way of the part's rename (no index, or one that does not read):
 * an unfinished flush is removed, a damaged index set aside (as flush.c). */
static int clear_way(int jobfd, long id, cn_err *err)
{
    char gen[64], aside[128];
    cn_pindex x;
    cn_err why = {0};
    cn_gen_dirname(gen, sizeof gen, id);
    if (lvl_pfs_index(jobfd, id, &x, &why) == 0) {
        cn_pindex_free(&x);
        return cn_fail(err, CAIRN_EMISMATCH, "PFS generation %ld exists, another job's", id);
    }
    if (why.code == CAIRN_ENOENT || why.code == -ENOENT)
        return cn_rmtree_at(jobfd, gen, err);
    CN_TRY(cn_set_aside_as(jobfd, id, CN_DAMAGED_PREFIX, aside, sizeof aside, err));
    cn_warn("%s: set aside as %s in the PFS job directory", why.msg, aside);
    return 0;
}

/* The claimant's part: index, clean-up, rename, sync. */
static int commit(int jobfd, int stagefd, long id, const char *job, uint32_t nnodes,
                  cn_pindex *out, bool *invalid, cn_err *err)
{
    cn_pindex x = {0};
    *invalid = build_index(stagefd, id, job, nnodes, &x, err) < 0;
    if (*invalid)
        return err->code;
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = cn_pindex_encode(&x, &buf, &len, err);
    if (rc == 0)
        rc = cn_write_atomic(stagefd, CN_PINDEX_NAME, buf, len, err);
    free(buf);
    for (uint32_t k = 0; rc == 0 && k < nnodes; k++) { /* only the data and index stay */
        char name[64];
        cn_pnode_filename(name, sizeof name, k);
        unlinkat(stagefd, name, 0);
    }
    if (rc == 0 && unlinkat(stagefd, COMMIT_NAME, 0) == 0)
        rc = cn_dir_sync(stagefd, err);
    char part[64], gen[64];
    cn_pstage_dirname(part, sizeof part, id);
    cn_gen_dirname(gen, sizeof gen, id);
    for (int tries = 0; rc == 0 && tries < 2; tries++) {
        if (renameat2(jobfd, part, jobfd, gen, RENAME_NOREPLACE) == 0)
            break;
        if (errno != EEXIST && errno != ENOTEMPTY)
            rc = cn_fail_errno(err, errno, "cannot rename %s to %s on the PFS", part, gen);
        else if (complete(jobfd, id, job)) /* done meanwhile: ours is not needed */
            rc = cn_rmtree_at(jobfd, part, err) < 0 ? err->code : 1;
        else if (tries == 0)
            rc = clear_way(jobfd, id, err);
        else
            rc = cn_fail(err, CAIRN_EIO, "%s stays in the way of %s on the PFS", gen, part);
    }
    if (rc == 0) /* the new entry durable before any older generation goes */
        rc = cn_dir_sync(jobfd, err);
    if (rc >= 0)
        *out = x;
    else
        cn_pindex_free(&x);
    return rc < 0 ? rc : 0;
}

int lvl_pfs_stage_commit(int jobfd, long id, const char *job, uint32_t me, uint32_t nnodes,
                         cn_pindex *out, char *why, size_t len, cn_err *err)
{
    memset(out, 0, sizeof *out);
    why[0] = '\0';
    char part[64];
    cn_pstage_dirname(part, sizeof part, id);
    if (complete(jobfd, id, job)) {
        cn_rmtree_at(jobfd, part, err);
        *err = (cn_err){0};
        snprintf(why, len, "generation %ld is on the PFS already", id);
        return 1;
    }
    int stagefd = cn_dir_open(jobfd, part, false, err);
    if (stagefd < 0) /* gone: renamed by another node just now, or removed */
        return complete(jobfd, id, job) ? (*err = (cn_err){0}, 1) : stagefd;
    size_t n = 0;
    n += (size_t)snprintf(why + n, len - n, "no record of node");
    int missing = 0;
    struct stat st, mine = {0};
    for (uint32_t k = 0; k < nnodes; k++) {
        char name[64];
        cn_pnode_filename(name, sizeof name, k);
        if (fstatat(stagefd, name, k == me ? &mine : &st, AT_SYMLINK_NOFOLLOW) == 0)
            continue;
        if (n < len)
            n += (size_t)snprintf(why + n, len - n, "%s %u", missing ? "," : "", k);
        missing++;
    }
    if (missing) {
        if (n < len)
            snprintf(why + n, len - n, " (of %u) yet", nnodes);
        close(stagefd);
        return 0;
    }
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 2; tries++) {
        fd = openat(stagefd, COMMIT_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0600);
        if (fd >= 0 || errno != EEXIST)
            break;
        if (fstatat(stagefd, COMMIT_NAME, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            (st.st_mtim.tv_sec < mine.st_mtim.tv_sec ||
             (st.st_mtim.tv_sec == mine.st_mtim.tv_sec &&
              st.st_mtim.tv_nsec < mine.st_mtim.tv_nsec)))
            unlinkat(stagefd, COMMIT_NAME, 0); /* a dead attempt's claim */
        else
            break;
    }
    if (fd < 0) {
        int e = errno;
        close(stagefd);
        if (e != EEXIST)
            return cn_fail_errno(err, e, "cannot create %s/%s on the PFS", part, COMMIT_NAME);
        snprintf(why, len, "another node commits generation %ld", id);
        return 0;
    }
    close(fd);
    bool invalid = false;
    int rc = commit(jobfd, stagefd, id, job, nnodes, out, &invalid, err);
    if (rc < 0) /* the claim goes: a later attempt may commit */
        unlinkat(stagefd, COMMIT_NAME, 0);
    close(stagefd);
    if (rc < 0 && complete(jobfd, id, job)) { /* another node committed under us */
        *err = (cn_err){0};
        snprintf(why, len, "generation %ld is on the PFS already", id);
        return 1;
    }
    if (invalid) { /* an earlier attempt's record or file, not yet written again by its node */
        snprintf(why, len, "%.900s (left by an earlier attempt? its node's epilog writes it "
                 "again and commits)", err->msg);
        *err = (cn_err){0};
        return 0;
    }
    if (rc < 0)
        cn_err_prefix(err, "PFS %s: ", part);
    return rc < 0 ? rc : 1;
}

void lvl_pfs_stage_prune(int jobfd, long newest)
{
    int fd = cn_dir_listing_fd(jobfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t pl = strlen(CN_PSTAGE_PREFIX);
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (strncmp(de->d_name, CN_PSTAGE_PREFIX, pl) != 0)
            continue;
        int64_t id = cn_parse_gen_dirname(de->d_name + pl - strlen(CN_GEN_PREFIX));
        cn_err err = {0};
        if (id >= 0 && id <= newest && cn_rmtree_at(jobfd, de->d_name, &err) < 0)
            cn_warn("cannot remove %s from the PFS: %s", de->d_name, err.msg);
    }
    closedir(d);
}
