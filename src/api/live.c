/*
 * live.c - the application's mark for `cairn prune` (common/live.c has the
 * protocol): each node leader keeps <node>/app.lock open from cairn_init to
 * cairn_finalize, read-locked at CN_LIVE_ALIVE, and names in it the parents
 * of its next checkpoints (ctx->incr). A checkpoint and a restart, which
 * change the node directory and the parents, run with CN_LIVE_BUSY
 * read-locked (api_live_begin/api_live_end): a prune write-locks it, so it
 * holds the application while it removes, and never takes the generation
 * the application's next increment diffs against.
 * Without the mark (a file system without OFD locks, a symlink in its
 * place) the application runs as ever, with a warning: prune then cannot
 * see it. The context owns ctx->live_fd.
 */
#include "api/api.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* How long a checkpoint waits for a prune to end before it goes on anyway. */
static int wait_ms(const cairn_ctx *ctx) { return 30 * 1000 * ctx->cfg.daemon_timeout; }

static void publish(cairn_ctx *ctx)
{
    long parent[3];
    for (int l = 1; l <= 3; l++)
        parent[l - 1] = ctx->incr[l] ? (long)ctx->incr[l]->gen : -1;
    int rc = cn_live_write(ctx->live_fd, (long)getpid(), parent);
    if (rc < 0)
        cn_warn("%s/%s: cannot write (%s): cairn prune cannot see this run's parents",
                ctx->node_path, CN_LIVE_NAME, cairn_strerror(rc));
}

void api_live_open(cairn_ctx *ctx)
{
    api_live_close(ctx);
    if (ctx->node_rank != 0 || ctx->nodefd < 0)
        return;
    int fd = cn_live_open(ctx->nodefd, true);
    int rc = fd < 0 ? fd : cn_live_lock(fd, CN_LIVE_ALIVE, false, 0);
    if (rc < 0) {
        cn_warn("%s/%s: %s: cairn prune cannot see this run", ctx->node_path, CN_LIVE_NAME,
                strerror(-rc));
        if (fd >= 0)
            close(fd);
        return;
    }
    ctx->live_fd = fd;
    publish(ctx);
}

void api_live_close(cairn_ctx *ctx)
{
    if (ctx->live_fd >= 0)
        close(ctx->live_fd); /* the locks go with it */
    ctx->live_fd = -1;
    ctx->live_busy = false;
}

void api_live_begin(cairn_ctx *ctx)
{
    if (ctx->live_fd < 0 || ctx->live_busy)
        return;
    int rc = cn_live_lock(ctx->live_fd, CN_LIVE_BUSY, false, wait_ms(ctx));
    if (rc == -EAGAIN)
        cn_warn("a cairn prune has held node %s for %d s: going on", ctx->node_name,
                wait_ms(ctx) / 1000);
    else if (rc < 0)
        cn_warn("%s/%s: %s", ctx->node_path, CN_LIVE_NAME, strerror(-rc));
    ctx->live_busy = rc == 0;
}

void api_live_end(cairn_ctx *ctx)
{
    if (ctx->live_fd < 0)
        return;
    publish(ctx);
    if (ctx->live_busy)
        cn_live_unlock(ctx->live_fd, CN_LIVE_BUSY);
    ctx->live_busy = false;
}
