/*
 * ctx.c - cairn_init and cairn_finalize: the context set up (configuration,
 * the job/rank/node model and node-local directories: src/core/ctx.c), then
 * what the levels and the daemon keep in it started (the trash, the live
 * mark, the daemons), and ended again when it is freed.
 */
#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char init_msg[CN_MSG_MAX + 64]; /* cairn_errmsg(NULL): why cairn_init failed */

int api_reopen_dirs(cairn_ctx *ctx)
{
    if (ctx->nodefd >= 0)
        close(ctx->nodefd);
    if (ctx->filesfd >= 0)
        close(ctx->filesfd);
    ctx->nodefd = ctx->filesfd = -1;
    /* The daemon's socket is in the old directory: every rank (this is
     * collective) drops the connection, and the next checkpoint connects to
     * the daemon of the directory as it is now (api_daemon_connect). */
    api_daemon_close(ctx);
    ctx->async = false;
    int rc = api_open_dirs(ctx);
    api_live_open(ctx); /* the mark goes with the node directory */
    return rc;
}

/* The host's cores for each rank on it: whole ones (at least 1), and
 * *SHARE, the share of one core when the ranks outnumber the cores (else 0:
 * whole cores). */
static int cores_per_rank(cairn_ctx *ctx, double *share)
{
    MPI_Comm host;
    int on_host = ctx->size;
    if (MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host) ==
        MPI_SUCCESS) {
        MPI_Comm_size(host, &on_host);
        MPI_Comm_free(&host);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *share = cpus > 0 && cpus < on_host ? (double)cpus / on_host : 0;
    return cpus >= 2L * on_host ? (int)(cpus / on_host) : 1;
}

void api_ctx_free(cairn_ctx *ctx)
{
    api_trash_wait(ctx);
    api_daemon_close(ctx);
    api_live_close(ctx);
    api_incr_reset(ctx);
    api_pfs_free(ctx);
    api_ctx_release(ctx);
}

CAIRN_EXPORT int cairn_init(MPI_Comm comm, const char *config_path, cairn_ctx **out)
{
    init_msg[0] = '\0';
    int inited = 0;
    MPI_Initialized(&inited);
    if (!out || !inited) {
        snprintf(init_msg, sizeof init_msg, "%s", !out ? "ctx pointer is NULL"
                                                       : "MPI is not initialized");
        return !out ? CAIRN_EINVAL : CAIRN_ESTATE;
    }
    *out = NULL;
    if (comm == MPI_COMM_NULL) { /* e.g. cairn_init_f given a handle MPI does not know */
        snprintf(init_msg, sizeof init_msg, "the communicator is MPI_COMM_NULL");
        return CAIRN_EINVAL;
    }
    cairn_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) {
        snprintf(init_msg, sizeof init_msg, "out of memory");
        return CAIRN_ENOMEM;
    }
    ctx->nodefd = ctx->filesfd = ctx->dfd = ctx->hold_fd = ctx->live_fd = -1;
    ctx->node_comm = ctx->leaders = ctx->set_comm = MPI_COMM_NULL;
    ctx->last_id = -1;
    if (MPI_Comm_dup(comm, &ctx->comm) != MPI_SUCCESS) {
        free(ctx);
        snprintf(init_msg, sizeof init_msg, "MPI_Comm_dup failed");
        return CAIRN_EMPI;
    }
    MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    ctx->nranks = ctx->size;

    int rc = api_agree(ctx, cn_config_load(&ctx->cfg, config_path, &ctx->err));
    if (rc == 0) {
        char host[64] = "?", prefix[128];
        gethostname(host, sizeof host - 1);
        snprintf(prefix, sizeof prefix, "rank %d host %s", ctx->rank, host);
        cn_log_setup(ctx->cfg.log_level, prefix);
        rc = api_agree(ctx, api_node_model(ctx));
    if (rc == 0)
        rc = api_agree(ctx, api_build_sets(ctx));
    }
    if (rc == 0)
        rc = api_agree(ctx, api_choose_job(ctx));
    if (rc == 0)
        rc = api_agree(ctx, api_open_dirs(ctx));
    if (rc == 0) {
        ctx->io = ctx->cfg.io != CN_IO_AUTO ? ctx->cfg.io : lvl_local_probe_io(ctx->node_path);
        ctx->cores_per_rank = cores_per_rank(ctx, &ctx->core_share);
        ctx->hash_thread = ctx->cores_per_rank >= 2;
        api_need_start(ctx);
        if (ctx->node_rank == 0)
            api_trash_empty(ctx, false); /* leftovers of a crashed job */
        api_live_open(ctx); /* for cairn prune: this run, and its parents */
        api_daemon_connect(ctx);
        /* info: one line per job (rank 0's); every rank's at debug */
        cn_log(ctx->rank == 0 ? CN_LOG_INFO : CN_LOG_DEBUG,
               "job %s, %d ranks on %d nodes; rank %d on node %s (%d of %d), directory %s, io %s",
               ctx->job, ctx->nranks, ctx->nnodes, ctx->rank, ctx->node_name, ctx->node,
               ctx->nnodes, ctx->node_path, ctx->io == CN_IO_PMEM ? "pmem" : "write");
    }
    if (rc < 0) {
        snprintf(init_msg, sizeof init_msg, "%s", ctx->msg);
        api_ctx_free(ctx);
        return rc;
    }
    *out = ctx;
    return 0;
}

CAIRN_EXPORT int cairn_finalize(cairn_ctx *ctx)
{
    if (!ctx)
        return 0;
    int rc = MPI_Barrier(ctx->comm) == MPI_SUCCESS ? 0 : CAIRN_EMPI;
    api_ctx_free(ctx);
    return rc;
}

CAIRN_EXPORT const char *cairn_errmsg(const cairn_ctx *ctx) { return ctx ? ctx->msg : init_msg; }