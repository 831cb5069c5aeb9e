/*
 * trash.c - remove pruned generations off the critical path.
 *
 * Removing a large generation from tmpfs costs time proportional to its size
 * (about a quarter of writing it), so cairn_checkpoint only renames the
 * generations it drops to ".trash-*" and a background thread removes every
 * ".trash-*" entry of the node directory. One thread at a time per context;
 * cairn_finalize waits for it. A crash leaves ".trash-*" behind, which the
 * next removal (or `cairn init` of the next job) finishes.
 */
#include "api/api.h"

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

void api_trash_empty(cairn_ctx *ctx, bool wait)
{
    if (ctx->trash_running) {
        pthread_join(ctx->trash_thread, NULL);
        ctx->trash_running = false;
    }
    int fd = cn_dir_listing_fd(ctx->nodefd);
    if (fd < 0)
        return;
    if (pthread_create(&ctx->trash_thread, NULL, empty_trash, (void *)(intptr_t)fd) != 0) {
        empty_trash((void *)(intptr_t)fd); /* no thread: do it now */
        return;
    }
    ctx->trash_running = true;
    if (wait) {
        pthread_join(ctx->trash_thread, NULL);
        ctx->trash_running = false;
    }
}
