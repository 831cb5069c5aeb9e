/*
 * cairnd.c - the node daemon's main: one cairnd per node of a job, started
 * together by `cairn start` (through mpirun or srun), ended by `cairn stop`
 * once the queued work is done, or by SIGTERM/SIGINT once it and a drain of
 * the newest complete generation to the PFS are done. Its work runs at idle
 * priority unless someone waits for it (prio.c).
 *
 *   cairnd --job ID [--config FILE] [--emulated]
 *   cairnd --flush-node --job ID --gen G [--node NAME] [--config FILE]
 *     (the epilog's flush of this node's part, without MPI: flushnode.c)
 *
 * The node is named like the application's ranks name theirs: job.node if
 * set, else "node<rank>" with --emulated (one daemon per emulated node, as
 * job.ranks_per_node emulates them), else SLURMD_NODENAME, else the full
 * hostname (cn_node_name: the rule the library and the hooks share). Once
 * every daemon serves, rank 0 prints "cairnd: ready: ..." to the launcher's
 * output (cairn start waits for it). Exit status: 0 after
 * a clean stop, 1 on a start-up error (with a message), 2 on bad arguments.
 */
#include "daemon/daemon.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t d_signalled;

static void on_signal(int sig)
{
    (void)sig;
    d_signalled = 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cairnd --job ID [--config FILE] [--emulated]\n"
               "  the node daemon of cairn; start it with `cairn start`\n");
}

static int startup_error(int rank, const char *what, const char *msg)
{
    if (rank == 0)
        fprintf(stderr, "cairnd: %s: %s\n", what, msg);
    MPI_Finalize();
    return 1;
}

void d_node_log(const cn_config *cfg, const char *job, const char *given,
                char node[CN_JOB_MAX + 1])
{
    if (given)
        snprintf(node, CN_JOB_MAX + 1, "%s", given);
    else
        cn_node_name(cfg->node, node, NULL);
    char prefix[128];
    snprintf(prefix, sizeof prefix, "cairnd %s node %s", job, node);
    cn_log_setup(cfg->log_level, prefix);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--flush-node") == 0) /* no MPI: flushnode.c */
        return d_flush_node_main(argc, argv);
    static const struct option opts[] = {{"job", required_argument, NULL, 'j'},
                                         {"config", required_argument, NULL, 'c'},
                                         {"emulated", no_argument, NULL, 'e'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *job = NULL, *config = NULL;
    bool emulated = false;
    for (int c; (c = getopt_long(argc, argv, "j:c:eh", opts, NULL)) != -1;) {
        if (c == 'j')
            job = optarg;
        else if (c == 'c')
            config = optarg;
        else if (c == 'e')
            emulated = true;
        else
            return usage(c == 'h' ? stdout : stderr), c == 'h' ? 0 : 2;
    }
    if (optind != argc || !job || !cn_id_ok(job))
        return usage(stderr), 2;
    int provided = 0, rank = 0;
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "cairnd: MPI_Init_thread failed\n");
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    cn_config cfg;
    cn_err err = {0};
    if (cn_config_load(&cfg, config, &err) != 0)
        return startup_error(rank, "configuration", err.msg);
    char node[CN_JOB_MAX + 1], emu[32];
    snprintf(emu, sizeof emu, "node%d", rank);
    d_node_log(&cfg, job, emulated ? emu : NULL, node);

    cairn_ctx *ctx = NULL;
    if (api_dctx_open(MPI_COMM_WORLD, &cfg, job, node, &ctx, &err) != 0)
        return startup_error(rank, "node directory", err.msg);
    d_state st = {.done = -1, .flushed = -1, .listen_fd = -1, .dirfd = -1, .wake = {-1, -1},
                  .key = cn_config_daemon_key(&cfg)};
    pthread_mutex_init(&st.mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st.asked, &ca);
    pthread_condattr_destroy(&ca);
    snprintf(st.job, sizeof st.job, "%s", job);
    snprintf(st.node, sizeof st.node, "%s", node);
    st.seen.id = -1;
    d_resume(&st, ctx);
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int rc = api_agree(ctx, d_prio_init(&st, cfg.daemon_boost_after, cfg.daemon_share, cfg.daemon_burst,
                                        ctx->size, &ctx->err));
    if (rc == 0)
        rc = api_agree(ctx, d_serve_start(&st, ctx->nodefd, &ctx->err));
    if (rc == 0)
        rc = api_agree(ctx, d_serve_go(&st, &ctx->err));
    if (rc == 0)
        d_prio_start(&st); /* the work at idle priority from here on, unless waited for */
    if (rc != 0) {
        char msg[sizeof ctx->msg];
        snprintf(msg, sizeof msg, "%s", ctx->msg);
        d_serve_stop(&st, ctx->nodefd);
        d_prio_free(&st);
        api_ctx_free(ctx);
        return startup_error(rank, "socket", msg);
    }
    cn_info("serving %s/%s (pid %d)", ctx->node_path, CN_SOCK_NAME, (int)getpid());
    if (rank == 0) { /* to the launcher's output: the machine cairn start ran on sees it */
        printf("cairnd: ready: %d daemon(s) serve job %s\n", ctx->size, job);
        fflush(stdout);
    }
    d_run(&st, ctx);
    d_serve_stop(&st, ctx->nodefd);
    for (size_t i = 0; i < st.ndrain; i++)
        close(st.drain_fds[i]);
    free(st.drain_fds);
    free(st.queue);
    d_prio_free(&st);
    cn_info("stopped after generation %lld", (long long)st.done);
    api_ctx_free(ctx);
    MPI_Finalize();
    return 0;
}
