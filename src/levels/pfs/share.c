/*
 * share.c - each writer's share of the PFS, measured (pfs.bandwidth 0): the
 * bytes/s level 4's codec model weighs compression against.
 *
 * A straight level 4's files are written by every rank at once, and the
 * ranks on one host share its CPUs, its memory and its link to the PFS. One
 * writer probing alone measured what none of them gets: on a RAM disk with
 * twice as many ranks as cores, or a disk that four writers share, a half or
 * a quarter of it. So there the ranks on the first rank's host probe
 * together (probe.c, each its own file of LVL_PFS_PROBE_BYTES), right before
 * they write the generation themselves, and the mean of their figures is the
 * share each writer counts on.
 * A flush's node leaders, and cairnd's daemons above all, write later and
 * under other load than at the probe, and a low figure makes them compress
 * on little CPU (a daemon's share of a core): on a disk busy with other
 * writeback, 4 daemons probing at once read 16 MiB/s each (3 with 4 MiB
 * each), the model had them compress, and the flush took 5.5 s where raw it
 * took 1.6 s. Their first leader probes alone (LEADERS), as before: its
 * figure errs high, towards storing raw, which costs them no CPU.
 * Writers on other hosts wait. What the PFS's servers give when every host
 * writes at once is not measured (it would take every writer's probe);
 * pfs.bandwidth says it where it is known.
 * Collective over the writers' communicator; once per context
 * (ctx->pfs_probed). Ownership: nothing outlives the call.
 */
#include "core/core.h"
#include "levels/pfs/pfs.h"

/* This host's identity (cn_host_ident: its name and boot), hashed, never 0. */
static uint64_t host_hash(void)
{
    cn_host h;
    cn_host_ident(&h);
    return cn_hash(&h, sizeof h) | 1;
}

void api_pfs_probe_share(cairn_ctx *ctx, int dirfd, bool leaders, bool first)
{
    if (ctx->cfg.pfs_bandwidth > 0 || ctx->pfs_probed != 0)
        return; /* the same on every writer */
    MPI_Comm comm = leaders ? ctx->leaders : ctx->comm;
    /* Every rank: the first one's host, then how many ranks it has; the ranks
     * nap meanwhile, so that spinning ones do not slow the probes on their
     * host. Leaders: the first alone. */
    int on = first, k = 1;
    if (!leaders) {
        uint64_t mine = host_hash(), host = first ? mine : 0, root_host = 0;
        on = k = 0;
        if (api_allreduce_napping(&host, &root_host, 1, MPI_UINT64_T, MPI_MAX, comm) == 0) {
            on = mine == root_host;
            if (api_allreduce_napping(&on, &k, 1, MPI_INT, MPI_SUM, comm) != 0)
                on = k = 0;
        }
    }
    cn_err err = {0};
    double bps = 0, in[3] = {0, 0, 0}, sum[3] = {0, 0, 0}; /* figures, writers, failures */
    if (on && lvl_pfs_probe(dirfd, LVL_PFS_PROBE_BYTES, &bps, &err) == 0)
        in[0] = bps, in[1] = 1;
    else if (on)
        in[2] = 1, cn_debug("probing the PFS (%s): %s", ctx->cfg.pfs_dir, err.msg);
    if (k == 0 || api_allreduce_napping(in, sum, 3, MPI_DOUBLE, MPI_SUM, comm) != 0)
        sum[2] = 1;
    ctx->pfs_probed = sum[2] == 0 && sum[1] > 0 ? sum[0] / sum[1] : -1;
    if (first && ctx->pfs_probed < 0)
        cn_warn("the PFS's write bandwidth could not be measured (%s): level 4's codec model "
                "takes compress.bandwidth's %d MiB/s (set pfs.bandwidth to say it)",
                err.msg[0] ? err.msg : "a writer's probe failed", ctx->cfg.z_bandwidth);
    else if (first)
        cn_debug("the PFS (%s) writes %.0f MiB/s per writer, %d of them writing at once on "
                 "this host, as measured: level 4's codec model takes it",
                 ctx->cfg.pfs_dir, ctx->pfs_probed / 1048576.0, k);
}
