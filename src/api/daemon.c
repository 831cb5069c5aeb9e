/*
 * daemon.c - the library's side of cairnd, the node daemon.
 *
 * With daemon.use = auto every node leader looks for cairnd's socket in its
 * node directory when the context starts and before each checkpoint while it
 * has none. The job goes asynchronous only if a daemon of the same job, node
 * and configuration answers on every node (else it stays synchronous and,
 * if only some nodes have one, says so). After a generation is committed at
 * level 1 the leaders hand it over (GEN) and wait only for the daemon's OK;
 * the ranks agree on the answers napping (api_allreduce_napping): a rank
 * spinning in MPI would keep the answering thread, in the daemons' nice-19
 * autogroup (daemon/prio.c), off the core for a slice of 0.01-0.15 s.
 * A daemon that does not answer within daemon.timeout, or refuses, makes the
 * whole job fall back to synchronous mode with a warning; level 1 is never
 * touched by the daemon, so nothing is lost. A daemon that refuses a
 * generation (it finished one at or above it: the job went back) says why,
 * and the library raises that one itself. Before the library removes or
 * rewrites generation directories, a node leader holds the daemons (HOLD on
 * a connection of its own, ctx->hold_fd, closed to release them: also when
 * the application dies). The context owns ctx->dfd and ctx->hold_fd.
 */
#include "api/api.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void api_daemon_release(cairn_ctx *ctx)
{
    if (ctx->hold_fd >= 0)
        close(ctx->hold_fd);
    ctx->hold_fd = -1;
}

/* Has the peer of FD closed the connection (the daemon died)? */
static bool peer_gone(int fd)
{
    char c;
    ssize_t n = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

int api_daemon_hold(cairn_ctx *ctx)
{
    if (ctx->hold_fd >= 0)
        return 0;
    cn_err err = {0};
    int fd = cn_sock_connect(ctx->nodefd, CN_SOCK_NAME, &err);
    if (fd < 0)
        return 0; /* no daemon listens here: none can be at work on this node */
    char line[CN_PROTO_LINE];
    int n = cn_req_format(&(cn_req){.kind = CN_REQ_HOLD}, line), wait_s = 30 * ctx->cfg.daemon_timeout;
    int rc = cn_line_write(fd, line, (size_t)n, &err);
    if (rc == 0)
        rc = n = cn_line_read(fd, line, wait_s * 1000, &err);
    cn_rep rep = {0};
    if (rc >= 0)
        rc = cn_rep_parse(line, (size_t)n, &rep, &err);
    if (rc == 0 && rep.kind == CN_REP_OK) {
        ctx->hold_fd = fd;
        return 0;
    }
    bool gone = rc < 0 && peer_gone(fd);
    close(fd);
    if (gone) /* it died: nothing of it works on this node any more */
        return 0;
    if (rc == 0)
        return cn_fail(&ctx->err, CAIRN_EIO, "cairnd on node %s would not hold its work: %s",
                       ctx->node_name, rep.kind == CN_REP_ERR ? rep.text : "answered out of turn");
    return cn_fail(&ctx->err, CAIRN_EIO, "cairnd on node %s did not pause its work within %d s "
                   "(%s); generation directories it may hold are left alone", ctx->node_name,
                   wait_s, err.msg);
}

static void disconnect(cairn_ctx *ctx)
{
    if (ctx->dfd >= 0)
        close(ctx->dfd);
    ctx->dfd = -1;
    ctx->daemon = false;
}

#define REFUSED "cairnd refused: "

/* Send REQ and read the reply; 0 for OK, else CAIRN_EIO with a message
 * (beginning with REFUSED if the daemon answered ERR). */
static int ask(cairn_ctx *ctx, const cn_req *req)
{
    char line[CN_PROTO_LINE];
    int n = cn_req_format(req, line);
    if (n < 0)
        return cn_fail(&ctx->err, CAIRN_EINVAL, "request out of range");
    CN_TRY(cn_line_write(ctx->dfd, line, (size_t)n, &ctx->err));
    n = cn_line_read(ctx->dfd, line, ctx->cfg.daemon_timeout * 1000, &ctx->err);
    if (n < 0)
        return n;
    cn_rep rep;
    CN_TRY(cn_rep_parse(line, (size_t)n, &rep, &ctx->err));
    if (rep.kind == CN_REP_ERR)
        return cn_fail(&ctx->err, CAIRN_EIO, REFUSED "%s", rep.text);
    if (rep.kind != CN_REP_OK)
        return cn_fail(&ctx->err, CAIRN_EIO, "cairnd answered out of turn");
    return 0;
}

static int hello(cairn_ctx *ctx)
{
    cn_err err = {0};
    ctx->dfd = cn_sock_connect(ctx->nodefd, CN_SOCK_NAME, &err);
    if (ctx->dfd < 0)
        return ctx->dfd == -ENOENT || ctx->dfd == -ECONNREFUSED ? 1 : (ctx->err = err, -1);
    cn_req req = {.kind = CN_REQ_HELLO, .version = CN_PROTO_VERSION,
                  .key = cn_config_daemon_key(&ctx->cfg)};
    snprintf(req.job, sizeof req.job, "%s", ctx->job);
    snprintf(req.node, sizeof req.node, "%s", ctx->node_name);
    int rc = ask(ctx, &req);
    if (rc < 0)
        disconnect(ctx);
    return rc < 0 ? -1 : 0;
}

void api_daemon_connect(cairn_ctx *ctx)
{
    if (ctx->cfg.daemon_use != 0 || ctx->async) /* the same on every rank */
        return;
    /* a leader: 0 connected, 1 no daemon here, -1 one that failed */
    int mine = ctx->node_rank == 0 ? hello(ctx) : 0;
    int flags[2] = {ctx->node_rank == 0 && mine == 0, ctx->node_rank == 0 && mine != 0}, any[2];
    char why[CN_MSG_MAX];
    snprintf(why, sizeof why, "%s", mine < 0 ? ctx->err.msg : "");
    if (MPI_Allreduce(flags, any, 2, MPI_INT, MPI_LOR, ctx->comm) != MPI_SUCCESS)
        any[0] = 0, any[1] = 1;
    if (!any[1]) { /* no leader lacks one */
        ctx->daemon = ctx->node_rank == 0;
        ctx->async = true;
        ctx->daemon_warned = false;
        if (ctx->rank == 0) /* one line per job; each node's at debug */
            cn_info("cairnd serves all %d nodes of job %s: levels 2-4 run in the background",
                    ctx->nnodes, ctx->job);
        cn_debug("cairnd serves node %s", ctx->node_name);
        return;
    }
    disconnect(ctx);
    ctx->async = false;
    if (ctx->daemon_warned)
        return;
    ctx->daemon_warned = mine < 0 || any[0];
    if (mine < 0)
        cn_warn("cairnd on node %s: %s; checkpoints stay synchronous", ctx->node_name, why);
    else if (any[0] && ctx->rank == 0)
        cn_warn("cairnd does not serve every node of job %s; checkpoints stay synchronous",
                ctx->job);
}

int api_daemon_gen(cairn_ctx *ctx, long id, int level, bool flush)
{
    int rc = 0;
    bool refused = false;
    if (ctx->node_rank == 0) {
        cn_req req = {.kind = CN_REQ_GEN, .gen = id, .level = level, .flush = flush};
        cn_fault_point("daemon.gen", id, ctx->rank);
        rc = ask(ctx, &req);
        refused = rc < 0 && strncmp(ctx->err.msg, REFUSED, strlen(REFUSED)) == 0;
    }
    int worst = rc; /* napping: the ranks answered first leave the cores to the daemons */
    if (api_allreduce_napping(&rc, &worst, 1, MPI_INT, MPI_MIN, ctx->comm) != 0)
        worst = CAIRN_EMPI;
    if (worst == 0)
        return 0;
    if (rc < 0 && refused)
        cn_warn("cairnd on node %s: %s; this checkpoint takes generation %ld to level %d%s "
                "itself", ctx->node_name, ctx->err.msg, id, level, flush ? " and the PFS" : "");
    else if (rc < 0)
        cn_warn("cairnd on node %s: %s; falling back to synchronous checkpoints (generation "
                "%ld is safe at level 1)", ctx->node_name, ctx->err.msg, id);
    cn_err_clear(&ctx->err);
    disconnect(ctx);
    ctx->async = false;
    return worst;
}

void api_daemon_close(cairn_ctx *ctx)
{
    disconnect(ctx);
    api_daemon_release(ctx);
}
