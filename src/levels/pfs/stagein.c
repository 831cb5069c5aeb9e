/*
 * stagein.c - level 4 on the way back, through node-local files: a PFS
 * generation split back to the ranks as node-local files, so that a restart
 * that asks about one variable, or for one, proceeds as from level 1 (a full
 * restart reads the PFS straight into memory: pfsrestore.c). Also: which
 * PFS generation is the newest, and where to read it.
 *
 * The first rank finds the newest complete PFS generation (its index decodes
 * and names this job) and tells everyone. Then each node leader reads its
 * ranks' variables (pfsread.c: only its share of each aggregated file, every
 * part verified by its checksum before use, routed HDF5 files joined back;
 * a generation stored as an increment through its chain on the PFS, applied
 * from its full base), writes each of its ranks a full rank file (raw, no
 * chain) into a fresh gen-<G>/, and writes the node manifest (level 1,
 * target 4). A generation can come back to a job of the
 * same rank count on any node layout. Nothing node-local is touched before
 * every leader has read its files.
 *
 * Generations of another rank count are passed over (and noted, for
 * restart's CAIRN_EMISMATCH), and a node-local generation another layout
 * wrote is never written over. After a restore from node-local storage,
 * api_pfs_check reads the newest PFS generation back (with every link of its
 * chain) and warns if it is damaged: the fallback the job counts on would
 * fail it.
 *
 * Ownership: the variables of one leader's ranks are copied out of the mapped
 * files and freed when the rank files are written.
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Write this node's rank files and manifest of generation ID (index X) from C. */
static int write_local(cairn_ctx *ctx, long id, const cn_pindex *x, api_rvars *local)
{
    char gen[64], gen_path[4500];
    cn_gen_dirname(gen, sizeof gen, id);
    snprintf(gen_path, sizeof gen_path, "%s/%s", ctx->node_path, gen);
    CN_TRY(api_may_replace(ctx, id));
    CN_TRY(cn_rmtree_at(ctx->nodefd, gen, &ctx->err));
    int genfd = cn_dir_open(ctx->nodefd, gen, true, &ctx->err);
    CN_TRY(genfd);
    cn_manifest m = {.level = CAIRN_LEVEL_LOCAL, .target = CAIRN_LEVEL_PFS, .flags = CN_MF_PFS,
                     .generation = id, .parent = -1, .base = id, .nranks = (uint32_t)ctx->nranks,
                     .nnodes = (uint32_t)ctx->nnodes, .node = (uint32_t)ctx->node,
                     .nlocal = (uint32_t)ctx->node_size, .rank_node = ctx->rank_node};
    memcpy(m.job, ctx->job, sizeof m.job);
    memcpy(m.node_name, ctx->node_name, sizeof m.node_name);
    memcpy(m.label, x->label, sizeof m.label);
    m.seconds = x->seconds;
    m.local = calloc((size_t)ctx->node_size, sizeof *m.local);
    int rc = m.local ? 0 : cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory");
    uint32_t k = 0;
    for (int r = 0; rc == 0 && r < ctx->nranks; r++) {
        if ((int)ctx->rank_node[r] != ctx->node)
            continue;
        cn_header proto = {.level = CAIRN_LEVEL_LOCAL, .generation = id, .rank = (uint32_t)r,
                           .nranks = (uint32_t)ctx->nranks, .node = (uint32_t)ctx->node,
                           .nnodes = (uint32_t)ctx->nnodes, .block_size = ctx->cfg.block_size,
                           .parent = -1, .base = id, .incr_block = 0};
        memcpy(proto.job, ctx->job, sizeof proto.job);
        char name[64];
        cn_rank_filename(name, sizeof name, (uint32_t)r);
        cz_opts z = {.buf_size = ctx->cfg.z_buffer, .threads = 0, .level = ctx->cfg.z_level};
        lvl_written w = {0};
        api_rvars *rv = &local[r];
        rc = lvl_local_write(genfd, gen_path, name, &proto, rv->src, (uint32_t)rv->n,
                             CN_IO_WRITE, &z, &w, &ctx->err);
        if (rc == 0 && k < m.nlocal)
            m.local[k++] = (cn_manifest_rank){(uint32_t)r, w.file_size, w.header_sum, w.full,
                                              w.full};
        api_rvars_free(rv);
    }
    if (rc == 0)
        rc = cn_dir_sync(genfd, &ctx->err);
    if (rc == 0)
        rc = api_write_manifest(ctx, genfd, &m);
    free(m.local);
    close(genfd);
    if (rc < 0) {
        cn_err ignored = {0};
        cn_rmtree_at(ctx->nodefd, gen, &ignored);
    }
    return rc;
}

/* The stage copy of JOB's generations cairn-prolog made on this node, or -1. */
static int open_stage(cairn_ctx *ctx, const char *job, char *path, size_t len)
{
    snprintf(path, len, "%s/stage", ctx->node_path);
    cn_err ignored = {0};
    return lvl_pfs_open(path, job, false, &ignored);
}

/* Is every index of generation ID's chain under JOBFD? (Each is renamed into
 * place after its files: an index there is a generation staged whole.) */
static bool chain_there(int jobfd, long id)
{
    cn_err err = {0};
    long *ids = NULL;
    int n = 0;
    if (id < 0 || lvl_pfs_chain(jobfd, id, &ids, &n, &err) < 0)
        return false;
    free(ids);
    return true;
}

int api_pfs_source(cairn_ctx *ctx, const char *job, long id, cn_err *err)
{
    char stage[sizeof ctx->node_path + 16];
    int fd = open_stage(ctx, job, stage, sizeof stage);
    if (fd >= 0 && chain_there(fd, id))
        return fd;
    if (fd >= 0)
        close(fd);
    return lvl_pfs_open(ctx->cfg.pfs_dir, job, false, err);
}

long api_pfs_find(cairn_ctx *ctx, const char *job, long bound, uint32_t nranks, cn_pindex *x,
                  lvl_pfs_skip *skip, cn_err *err)
{
    char stage[sizeof ctx->node_path + 16];
    int fds[2] = {open_stage(ctx, job, stage, sizeof stage), -1};
    if (ctx->cfg.pfs_dir[0])
        fds[1] = lvl_pfs_open(ctx->cfg.pfs_dir, job, false, err);
    long best = -1;
    for (int i = 0; i < 2; i++) {
        if (fds[i] < 0)
            continue;
        cn_pindex y;
        lvl_pfs_skip s;
        cn_err ignored = {0};
        long g = lvl_pfs_newest(fds[i], job, bound, nranks, &y, &s, i ? err : &ignored);
        if (i == 0 && g >= 0 && !chain_there(fds[i], g)) { /* staged without its chain */
            cn_pindex_free(&y);
            g = -1;
        }
        close(fds[i]);
        if (skip && (i == 1 || fds[1] < 0)) /* the PFS says what it passed over */
            *skip = s;
        if (g > best) {
            if (best >= 0)
                cn_pindex_free(x);
            *x = y, best = g;
        } else if (g >= 0) {
            cn_pindex_free(&y);
        }
    }
    return best;
}

/* Where api_pfs_source finds generation ID of JOB, for messages. */
static void source_path(cairn_ctx *ctx, const char *job, long id, char *out, size_t len)
{
    char user[64];
    cn_user_dirname(user, sizeof user);
    cn_err ignored = {0};
    int fd = api_pfs_source(ctx, job, id, &ignored), staged = 0;
    if (fd >= 0) {
        struct stat a, b;
        char stage[sizeof ctx->node_path + 16];
        int sfd = open_stage(ctx, job, stage, sizeof stage);
        staged = sfd >= 0 && fstat(fd, &a) == 0 && fstat(sfd, &b) == 0 &&
                 a.st_ino == b.st_ino && a.st_dev == b.st_dev;
        if (sfd >= 0)
            close(sfd);
        close(fd);
    }
    snprintf(out, len, "%.4200s%s/%s/%s", staged ? ctx->node_path : ctx->cfg.pfs_dir,
             staged ? "/stage" : "", user, job);
}

/* Rank 0: the newest complete generation <= BOUND of JOB and this run's rank
 * count, or -1. What it passes over is noted for restart: a newer generation
 * of another rank count (ctx->pfs_note), a damaged index (api_note_lost). */
static long newest_of(cairn_ctx *ctx, const char *job, long bound)
{
    cn_err err = {0};
    cn_pindex x;
    lvl_pfs_skip skip = {.damaged = -1, .foreign = -1};
    long id = api_pfs_find(ctx, job, bound, (uint32_t)ctx->nranks, &x, &skip, &err);
    if (id >= 0)
        cn_pindex_free(&x);
    if (skip.foreign > id && !ctx->pfs_note[0]) {
        char was[96], now[96];
        api_layout_str(was, sizeof was, (int)skip.nranks, (int)skip.nnodes);
        api_layout_str(now, sizeof now, ctx->nranks, ctx->nnodes);
        snprintf(ctx->pfs_note, sizeof ctx->pfs_note,
                 "PFS generation %ld%s%s was written by %s; this run has %s", skip.foreign,
                 strcmp(job, ctx->job) ? " of job " : "", strcmp(job, ctx->job) ? job : "", was,
                 now);
        cn_info("%s", ctx->pfs_note);
    }
    if (skip.damaged > id)
        api_note_lost(ctx, skip.damaged, CAIRN_ECORRUPT, "%s", skip.why);
    return id;
}

long api_pfs_newest(cairn_ctx *ctx, long bound, int *rc)
{
    long id = -1;
    *rc = 0;
    if (!ctx->cfg.pfs_dir[0] && !ctx->cfg.restart_from[0])
        return -1;
    char job[CN_JOB_MAX + 1];
    snprintf(job, sizeof job, "%s", ctx->job);
    if (ctx->rank == 0) {
        id = newest_of(ctx, job, bound);
        if (id < 0 && ctx->cfg.restart_from[0]) { /* a new job restarting an earlier one */
            snprintf(job, sizeof job, "%s", ctx->cfg.restart_from);
            id = newest_of(ctx, job, bound);
        }
    }
    if (MPI_Bcast(&id, 1, MPI_LONG, 0, ctx->comm) != MPI_SUCCESS ||
        MPI_Bcast(job, sizeof job, MPI_CHAR, 0, ctx->comm) != MPI_SUCCESS ||
        MPI_Bcast(ctx->pfs_note, sizeof ctx->pfs_note, MPI_CHAR, 0, ctx->comm) != MPI_SUCCESS)
        *rc = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast failed");
    memcpy(ctx->pfs_job, job, sizeof job);
    return id;
}

int api_pfs_open_gen(cairn_ctx *ctx, long id, cn_pindex *x)
{
    int jobfd = api_pfs_source(ctx, ctx->pfs_job, id, &ctx->err);
    int rc = jobfd < 0 ? jobfd : lvl_pfs_index(jobfd, id, x, &ctx->err);
    if (rc == 0 && (x->nranks != (uint32_t)ctx->nranks || strcmp(x->job, ctx->pfs_job) != 0))
        rc = cn_fail(&ctx->err, CAIRN_EMISMATCH, "PFS generation %ld is of job %s with %u ranks",
                     id, x->job, x->nranks);
    if (rc < 0 && jobfd >= 0)
        close(jobfd);
    return rc < 0 ? rc : jobfd;
}

static int stage_leader(cairn_ctx *ctx, long id)
{
    api_rvars *local = calloc((size_t)ctx->nranks, sizeof *local);
    CN_FAIL_IF(!local, &ctx->err, CAIRN_ENOMEM, "no memory");
    cn_pindex x = {0};
    int jobfd = api_pfs_open_gen(ctx, id, &x);
    int rc = jobfd < 0 ? jobfd : api_pfs_read(ctx, jobfd, &x, api_rank_on_node, ctx, local);
    int worst = rc;
    if (MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MIN, ctx->leaders) != MPI_SUCCESS)
        rc = worst = cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce among node leaders failed");
    if (rc == 0 && worst < 0)
        rc = api_echo(ctx, worst, "reading the PFS failed on another node");
    if (rc == 0)
        rc = write_local(ctx, id, &x, local);
    for (int r = 0; r < ctx->nranks; r++)
        api_rvars_free(&local[r]);
    free(local);
    cn_pindex_free(&x);
    if (jobfd >= 0)
        close(jobfd);
    return rc;
}

int api_stage_in(cairn_ctx *ctx, long id)
{
    return api_agree(ctx, ctx->node_rank == 0 ? stage_leader(ctx, id) : 0);
}

/* Node leader: check the files of link LINK of PFS generation ID's chain (ID
 * itself first) that this node answers for, warning of damage. False once
 * the link cannot be read (its index): the chain is not followed further. */
static bool check_link(cairn_ctx *ctx, int jobfd, long id, long link, long restored,
                       long *parent)
{
    cn_err err = {0};
    cn_pindex x = {0};
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, link);
    int genfd = -1;
    *parent = -1;
    if (lvl_pfs_index(jobfd, link, &x, &err) == 0)
        genfd = cn_dir_open(jobfd, gen, false, &err);
    char where[4400], what[96] = "";
    source_path(ctx, ctx->pfs_job, id, where, sizeof where);
    if (link != id)
        snprintf(what, sizeof what, " (generation %ld, a link of its chain)", link);
    const char *hint = id == restored ? "generation restored from node-local storage, which "
                                        "holds it intact; only a newer flush makes the PFS a "
                                        "usable fallback again"
                                      : "it is the newest PFS generation: losing more nodes "
                                        "than levels 1-3 survive would lose the checkpoint";
    for (uint32_t f = 0; genfd >= 0 && f < x.nfiles; f++) {
        uint32_t first = f * x.group;
        if (first >= (uint32_t)ctx->nranks || (int)ctx->rank_node[first] != ctx->node)
            continue;
        char name[64];
        cn_agg_filename(name, sizeof name, f);
        const uint8_t *map = NULL;
        cn_err why = {0};
        if (lvl_pfs_map(genfd, name, &x.files[f], &map, &why) < 0)
            cn_warn("the PFS copy of generation %ld is damaged%s: %s/%s/%s; %s", id, what,
                    where, gen, why.msg, hint);
        lvl_pfs_unmap(map, &x.files[f]);
    }
    bool ok = genfd >= 0;
    if (!ok && link != id)
        cn_warn("the PFS copy of generation %ld is damaged%s: %s; %s", id, what, err.msg, hint);
    else if (!ok && err.msg[0] && err.code != -ENOENT)
        cn_warn("the PFS copy of generation %ld cannot be checked: %s", id, err.msg);
    *parent = ok && x.parent < link ? x.parent : -1;
    cn_pindex_free(&x);
    if (genfd >= 0)
        close(genfd);
    return ok;
}

/* Node leader: check the files of PFS generation ID (of ctx->pfs_job), and
 * of every link of its chain, that this node answers for (those whose first
 * rank is here), warning of damage. */
static void check_leader(cairn_ctx *ctx, long id, long restored)
{
    cn_err err = {0};
    int jobfd = api_pfs_source(ctx, ctx->pfs_job, id, &err);
    long link = id, parent = -1;
    while (jobfd >= 0 && link >= 0 && check_link(ctx, jobfd, id, link, restored, &parent))
        link = parent;
    if (jobfd >= 0)
        close(jobfd);
}

void api_pfs_check(cairn_ctx *ctx, long id)
{
    int rc = 0;
    cn_err saved = ctx->err;
    long p = api_pfs_newest(ctx, id, &rc);
    if (rc == 0 && p >= 0 && ctx->node_rank == 0)
        check_leader(ctx, p, id);
    ctx->err = saved;
}
