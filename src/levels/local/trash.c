/*
 * trash.c - remove pruned generations off the critical path.
 *
 * Removing a large generation from tmpfs costs time proportional to its size
 * (about a quarter of writing it), so cairn_checkpoint only renames the
 * generations it drops to ".trash-*" and a background thread removes every
 * ".trash-*" entry of the node directory. One thread at a time per context;
 * cairn_finalize waits for it. A crash leaves ".trash-*" behind, which the
 * next removal (or `cairn init` of the next job) finishes. The PFS prune
 * after a flush (levels/pfs/pfs.c) does the same in the PFS job directory, on a
 * second thread, so that level 4 does not wait for its removals either;
 * every flush empties that trash, a crashed run's included.
 */
#include "core/core.h"
#include "levels/local/local.h"

#include <dirent.h>
#include <string.h>
#include <unistd.h>

static void *empty_trash(void *arg)
{
    int nodefd = (int)(intptr_t)arg;
    DIR *d = fdopendir(nodefd);
    if (!d) {
        close(nodefd);
        return NULL;
    }
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        if (strncmp(de->d_name, API_TRASH_PREFIX, strlen(API_TRASH_PREFIX)) != 0)
            continue;
        cn_err err = {0};
        if (cn_rmtree_at(dirfd(d), de->d_name, &err) < 0)
            cn_warn("removing pruned generation: %s", err.msg);
    }
    closedir(d);
    return NULL;
}

/* Remove DIRFD's trash on thread *T (RUNNING: one is there to wait for). */
static void empty_at(pthread_t *t, bool *running, int dirfd, bool wait)
{
    if (*running) {
        pthread_join(*t, NULL);
        *running = false;
    }
    int fd = cn_dir_listing_fd(dirfd);
    if (fd < 0)
        return;
    if (pthread_create(t, NULL, empty_trash, (void *)(intptr_t)fd) != 0) {
        empty_trash((void *)(intptr_t)fd); /* no thread: do it now */
        return;
    }
    *running = true;
    if (wait) {
        pthread_join(*t, NULL);
        *running = false;
    }
}

void api_trash_empty(cairn_ctx *ctx, bool wait)
{
    empty_at(&ctx->trash_thread, &ctx->trash_running, ctx->nodefd, wait);
}

void api_trash_empty_pfs(cairn_ctx *ctx, int jobfd)
{
    empty_at(&ctx->pfs_trash_thread, &ctx->pfs_trash_running, jobfd, false);
}

void api_trash_wait(cairn_ctx *ctx)
{
    if (ctx->trash_running)
        pthread_join(ctx->trash_thread, NULL);
    if (ctx->pfs_trash_running)
        pthread_join(ctx->pfs_trash_thread, NULL);
    ctx->trash_running = ctx->pfs_trash_running = false;
}
