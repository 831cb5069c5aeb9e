/*
 * ctx.c - the context's core: api_agree and api_echo, the collective
 * discipline; the job/rank/node model, encoding sets and the node-local
 * directories that cairn_init (src/api/ctx.c) sets up with them.
 *
 * Nodes: a rank's node is CAIRN_NODE / job.node if set, else rank /
 * job.ranks_per_node if that is set, else SLURMD_NODENAME, else the full
 * hostname (cn_node_name, the rule cairnd and the hooks share). Node names
 * are gathered and numbered by first appearance in rank order, so every rank
 * computes the same rank -> node map. On one machine this emulates many
 * nodes, each with its own node-local directory; but one name on two hosts
 * (different hostnames or boot ids) is refused: a node is one host's storage.
 *
 * Directories: <base>/cairn-<uid>/<job>/<node>, each created 0700 and opened
 * without following symlinks (cn_dir_open). The context owns its fds and the
 * variable table; protected memory stays the application's.
 */
#include "core/core.h"

#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NAP_MAX_NS 250000L /* api_allreduce_napping: a waiting rank's longest nap */


int api_echo(cairn_ctx *ctx, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->err.msg, sizeof ctx->err.msg, fmt, ap);
    va_end(ap);
    ctx->err.code = code;
    ctx->echo = true;
    return code;
}

/* REQ tested until it completes, with naps growing from 1 us. */
static int wait_napping(MPI_Request *req)
{
    for (long ns = 1000;; ns = ns < NAP_MAX_NS / 2 ? 2 * ns : NAP_MAX_NS) {
        int done = 0;
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return CAIRN_EMPI;
        if (done)
            return 0;
        nanosleep(&(struct timespec){.tv_nsec = ns}, NULL);
    }
}

int api_allreduce_napping(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm)
{
    MPI_Request req;
    if (MPI_Iallreduce(in, out, count, type, op, comm, &req) != MPI_SUCCESS)
        return CAIRN_EMPI;
    return wait_napping(&req);
}

int api_gather_napping(const void *in, void *out, int count, MPI_Datatype type, int root,
                       MPI_Comm comm)
{
    MPI_Request req;
    if (MPI_Igather(in, count, type, out, count, type, root, comm, &req) != MPI_SUCCESS)
        return CAIRN_EMPI;
    return wait_napping(&req);
}

int api_allreduce_shared(const cairn_ctx *ctx, const void *in, void *out, int count,
                         MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    if (ctx->core_share > 0)
        return api_allreduce_napping(in, out, count, type, op, comm);
    return MPI_Allreduce(in, out, count, type, op, comm) == MPI_SUCCESS ? 0 : CAIRN_EMPI;
}

/* api_agree; NAP: waiting ranks nap (api_allreduce_napping). */
static int agree(cairn_ctx *ctx, int rc, bool nap)
{
    /* The most negative code of an original failure wins, else of an echo of
     * one ("another member failed"), whatever code the echo carries. */
    int in[2] = {rc, rc < 0 && !ctx->echo ? rc : 0}, min[2];
    nap = nap || ctx->core_share > 0;
    int ok = nap ? api_allreduce_napping(in, min, 2, MPI_INT, MPI_MIN, ctx->comm) == 0
                 : MPI_Allreduce(in, min, 2, MPI_INT, MPI_MIN, ctx->comm) == MPI_SUCCESS;
    if (!ok) {
        snprintf(ctx->msg, sizeof ctx->msg, "rank %d: MPI_Allreduce failed", ctx->rank);
        return CAIRN_EMPI;
    }
    int global = min[1] < 0 ? min[1] : min[0];
    if (global == 0)
        return 0;
    /* Its message: the lowest rank with the code, an original before an echo. */
    int mine = rc != global ? INT_MAX : ctx->echo ? ctx->size + ctx->rank : ctx->rank, root = 0;
    char msg[CN_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", ctx->err.msg[0] ? ctx->err.msg : cairn_strerror(rc));
    if (MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS ||
        MPI_Bcast(msg, sizeof msg, MPI_CHAR, root % ctx->size, ctx->comm) != MPI_SUCCESS) {
        snprintf(ctx->msg, sizeof ctx->msg, "rank %d: MPI error while agreeing", ctx->rank);
        return CAIRN_EMPI;
    }
    root %= ctx->size;
    ctx->echo = false;
    msg[sizeof msg - 1] = '\0';
    snprintf(ctx->msg, sizeof ctx->msg, "rank %d: %s", root, msg);
    return global;
}

int api_agree(cairn_ctx *ctx, int rc) { return agree(ctx, rc, false); }

int api_agree_napping(cairn_ctx *ctx, int rc) { return agree(ctx, rc, true); }

void api_enter(cairn_ctx *ctx)
{
    cn_err_clear(&ctx->err);
    ctx->msg[0] = '\0';
    ctx->echo = false;
}

/* This rank's node name: configured, emulated by rank, or cn_node_name's;
 * *FROM says which, for messages. */
static void own_node_name(cairn_ctx *ctx, char out[CN_JOB_MAX + 1], const char **from)
{
    if (!ctx->cfg.node[0] && ctx->cfg.ranks_per_node > 0) {
        snprintf(out, CN_JOB_MAX + 1, "node%d", ctx->rank / ctx->cfg.ranks_per_node);
        *from = "job.ranks_per_node";
    } else {
        cn_node_name(ctx->cfg.node, out, from);
    }
}

/* Collective over ctx->comm once node_comm is made: do all ranks of each node
 * run on one host? The node leader's host is compared with every member's;
 * the lowest rank on another host names both. */
static int check_one_host(cairn_ctx *ctx, const char *from)
{
    struct {
        cn_host h;
        int rank;
    } mine, lead;
    memset(&mine, 0, sizeof mine);
    cn_host_ident(&mine.h);
    mine.rank = ctx->rank;
    lead = mine;
    if (MPI_Bcast(&lead, (int)sizeof lead, MPI_BYTE, 0, ctx->node_comm) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast of the node leader's host failed");
    int bad = cn_host_same(&mine.h, &lead.h) ? INT_MAX : ctx->rank, first = INT_MAX;
    if (MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, ctx->comm) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allreduce of host checks failed");
    if (first == INT_MAX)
        return 0;
    if (first != ctx->rank)
        return api_echo(ctx, CAIRN_ECONFIG, "a node name is claimed on two hosts");
    bool twin = strcmp(mine.h.name, lead.h.name) == 0; /* same hostname, other boot id */
    return cn_fail(&ctx->err, CAIRN_ECONFIG,
                   "node name '%s' (from %s) is claimed by ranks on different hosts: %.80s "
                   "(rank %d%s%s) and %.80s (rank %d%s%s); a node is one host's node-local "
                   "storage: give each host its own name (job.node / CAIRN_NODE, "
                   "SLURMD_NODENAME, or distinct hostnames)",
                   ctx->node_name, from, lead.h.name, lead.rank, twin ? ", boot id " : "",
                   twin ? lead.h.boot : "", mine.h.name, mine.rank, twin ? ", boot id " : "",
                   twin ? mine.h.boot : "");
}

int api_node_model(cairn_ctx *ctx)
{
    char mine[CN_JOB_MAX + 1] = {0};
    const char *from = "";
    own_node_name(ctx, mine, &from);
    char *all = calloc((size_t)ctx->size, CN_JOB_MAX + 1);
    ctx->rank_node = calloc((size_t)ctx->size, sizeof *ctx->rank_node);
    if (!all || !ctx->rank_node) {
        free(all);
        return cn_fail(&ctx->err, CAIRN_ENOMEM, "no memory for the node map");
    }
    if (MPI_Allgather(mine, CN_JOB_MAX + 1, MPI_CHAR, all, CN_JOB_MAX + 1, MPI_CHAR,
                      ctx->comm) != MPI_SUCCESS) {
        free(all);
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Allgather of node names failed");
    }
    int nnodes = 0;
    for (int r = 0; r < ctx->size; r++) {
        const char *name = all + (size_t)r * (CN_JOB_MAX + 1);
        int found = -1;
        for (int q = 0; q < r && found < 0; q++)
            if (strcmp(name, all + (size_t)q * (CN_JOB_MAX + 1)) == 0)
                found = (int)ctx->rank_node[q];
        ctx->rank_node[r] = (uint32_t)(found >= 0 ? found : nnodes++);
    }
    free(all);
    ctx->nnodes = nnodes;
    ctx->node = (int)ctx->rank_node[ctx->rank];
    snprintf(ctx->node_name, sizeof ctx->node_name, "%s", mine);
    ctx->node_from = from;
    if (MPI_Comm_split(ctx->comm, ctx->node, ctx->rank, &ctx->node_comm) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Comm_split by node failed");
    MPI_Comm_rank(ctx->node_comm, &ctx->node_rank);
    MPI_Comm_size(ctx->node_comm, &ctx->node_size);
    return check_one_host(ctx, from);
}

int api_set_of(int node, int nnodes, int nsets) { return (int)((long)node * nsets / nnodes); }

int api_set_first(int set, int nnodes, int nsets)
{
    return (int)(((long)set * nnodes + nsets - 1) / nsets);
}

/* Node leaders' communicator and the encoding sets over it. */
int api_build_sets(cairn_ctx *ctx)
{
    int nn = ctx->nnodes;
    ctx->nsets = (nn + ctx->cfg.set_size - 1) / ctx->cfg.set_size;
    ctx->set = api_set_of(ctx->node, nn, ctx->nsets);
    ctx->set_member = ctx->node - api_set_first(ctx->set, nn, ctx->nsets);
    ctx->set_n = api_set_first(ctx->set + 1, nn, ctx->nsets) - api_set_first(ctx->set, nn, ctx->nsets);
    ctx->min_set = nn;
    for (int s = 0; s < ctx->nsets; s++) {
        int size = api_set_first(s + 1, nn, ctx->nsets) - api_set_first(s, nn, ctx->nsets);
        if (size < ctx->min_set)
            ctx->min_set = size;
    }
    if (MPI_Comm_split(ctx->comm, ctx->node_rank == 0 ? 0 : MPI_UNDEFINED, ctx->node,
                       &ctx->leaders) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Comm_split of node leaders failed");
    if (ctx->leaders != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(ctx->leaders, MPI_ERRORS_RETURN);
        if (MPI_Comm_split(ctx->leaders, ctx->set, ctx->node, &ctx->set_comm) != MPI_SUCCESS)
            return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Comm_split of encoding sets failed");
        MPI_Comm_set_errhandler(ctx->set_comm, MPI_ERRORS_RETURN);
    }
    return 0;
}

/* The job id: configured, else SLURM_JOB_ID, else generated; rank 0's wins. */
int api_choose_job(cairn_ctx *ctx)
{
    char job[CN_JOB_MAX + 1] = {0};
    const char *slurm = getenv("SLURM_JOB_ID");
    if (ctx->cfg.job[0])
        snprintf(job, sizeof job, "%s", ctx->cfg.job);
    else if (slurm && cn_id_ok(slurm))
        snprintf(job, sizeof job, "%s", slurm);
    else
        snprintf(job, sizeof job, "job-%lld-%d", (long long)time(NULL), (int)getpid());
    if (MPI_Bcast(job, sizeof job, MPI_CHAR, 0, ctx->comm) != MPI_SUCCESS)
        return cn_fail(&ctx->err, CAIRN_EMPI, "MPI_Bcast of the job id failed");
    memcpy(ctx->job, job, sizeof job);
    return 0;
}

/* Before node names kept the whole hostname, host n1.rack-a was node n1. A
 * directory by that older name in the job directory (on this host's storage)
 * is said, so its generations are not missed without a word (untouched). */
static void legacy_node_dir(const cairn_ctx *ctx, int jobfd)
{
    size_t dot = strcspn(ctx->node_name, ".");
    if (ctx->node_rank != 0 || !ctx->node_from || strcmp(ctx->node_from, "hostname") != 0 ||
        !ctx->node_name[dot])
        return;
    char old[CN_JOB_MAX + 1];
    snprintf(old, sizeof old, "%.*s", (int)dot, ctx->node_name);
    struct stat st;
    if (fstatat(jobfd, old, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
        return;
    cn_warn("job %s: directory %s/ holds what an older cairn wrote on this host, which named "
            "nodes by the hostname up to its first dot; this node is now %s (the whole "
            "hostname). To restart from it, rename %s to %s in the job directory before the "
            "restart, on each such node (it is not used, and not removed)", ctx->job, old,
            ctx->node_name, old, ctx->node_name);
}


int api_open_node_dir(cairn_ctx *ctx)
{
    int basefd = cn_dir_open_path(ctx->cfg.base, &ctx->err);
    if (basefd < 0)
        return basefd;
    char user[64];
    cn_user_dirname(user, sizeof user);
    int userfd = cn_dir_open(basefd, user, true, &ctx->err);
    close(basefd);
    if (userfd < 0)
        return cn_err_prefix(&ctx->err, "%s/", ctx->cfg.base), userfd;
    int jobfd = cn_dir_open(userfd, ctx->job, true, &ctx->err);
    close(userfd);
    if (jobfd < 0)
        return jobfd;
    legacy_node_dir(ctx, jobfd);
    ctx->nodefd = cn_dir_open(jobfd, ctx->node_name, true, &ctx->err);
    close(jobfd);
    if (ctx->nodefd < 0)
        return ctx->nodefd;
    snprintf(ctx->node_path, sizeof ctx->node_path, "%s/%s/%s/%s", ctx->cfg.base, user, ctx->job,
             ctx->node_name);
    return 0;
}

int api_open_dirs(cairn_ctx *ctx)
{
    CN_TRY(api_open_node_dir(ctx));
    char rankdir[64];
    snprintf(rankdir, sizeof rankdir, "rank-%d", ctx->rank);
    int filesfd = cn_dir_open(ctx->nodefd, "files", true, &ctx->err);
    if (filesfd < 0)
        return filesfd;
    ctx->filesfd = cn_dir_open(filesfd, rankdir, true, &ctx->err);
    close(filesfd);
    if (ctx->filesfd < 0)
        return ctx->filesfd;
    snprintf(ctx->files_path, sizeof ctx->files_path, "%s/files/%s", ctx->node_path, rankdir);
    return 0;
}

/* Do this host's ranks leave a core free for a checksum thread each? */
/* Cores of this host per rank on it (at least 1). */

void api_ctx_release(cairn_ctx *ctx)
{
    if (ctx->nodefd >= 0)
        close(ctx->nodefd);
    if (ctx->filesfd >= 0)
        close(ctx->filesfd);
    if (ctx->set_comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->set_comm);
    if (ctx->leaders != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->leaders);
    if (ctx->node_comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->node_comm);
    if (ctx->comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->comm);
    free(ctx->rank_node);
    free(ctx->vars);
    free(ctx->pfs_files);
    free(ctx);
}
