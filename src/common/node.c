/*
 * node.c - node names: the one rule by which the library (cairn_init),
 * cairnd, the CLI (`cairn config --node`) and the scheduler hooks (which
 * call the CLI) name this host's node, and the host identity cairn_init
 * compares to catch one name claimed on two hosts.
 *
 * The rule: job.node (CAIRN_NODE) if set; else SLURMD_NODENAME if set (Slurm
 * sets it for the prolog, the epilog and every task of a job step: Slurm's
 * NodeName, which need not be the hostname); else the full hostname, not cut
 * at its first dot (n1.rack-a and n1.rack-b are two nodes). A name that is
 * not a valid id (1-63 of A-Z a-z 0-9 . _ -, no leading '.') is mapped to
 * one that keeps distinct names distinct: the invalid characters become '_'
 * and a hash of the whole name is appended. Emulated nodes
 * (job.ranks_per_node) are named by their users (ctx.c, cairnd --emulated).
 * Owns nothing; reads the environment and the kernel's names only.
 */
#include "common/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KEEP 54 /* characters kept of a mapped name: 54 + '-' + 8 hex digits = 63 */

void cn_node_map(const char *name, char out[CN_JOB_MAX + 1])
{
    if (cn_id_ok(name)) {
        snprintf(out, CN_JOB_MAX + 1, "%s", name);
        return;
    }
    size_t len = strlen(name), n = 0;
    for (; n < len && n < KEEP; n++) {
        char c = name[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '-' || (c == '.' && n > 0);
        out[n] = ok ? c : '_';
    }
    snprintf(out + n, CN_JOB_MAX + 1 - n, "-%08x", (unsigned)(cn_hash(name, len) & 0xffffffffu));
}

void cn_node_name(const char *configured, char out[CN_JOB_MAX + 1], const char **from)
{
    const char *slurm = getenv("SLURMD_NODENAME"), *src;
    char host[CN_HOST_MAX + 1] = "";
    if (configured && *configured) {
        src = "job.node";
        cn_node_map(configured, out);
    } else if (slurm && *slurm) {
        src = "SLURMD_NODENAME";
        cn_node_map(slurm, out);
    } else {
        src = "hostname";
        if (gethostname(host, sizeof host - 1) != 0 || !host[0])
            snprintf(host, sizeof host, "localhost");
        cn_node_map(host, out);
    }
    if (from)
        *from = src;
}

void cn_host_ident(cn_host *h)
{
    memset(h, 0, sizeof *h);
    if (gethostname(h->name, sizeof h->name - 1) != 0 || !h->name[0])
        snprintf(h->name, sizeof h->name, "localhost");
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(h->boot, sizeof h->boot, f))
            h->boot[0] = '\0';
        h->boot[strcspn(h->boot, "\n")] = '\0';
        fclose(f);
    }
}

bool cn_host_same(const cn_host *a, const cn_host *b)
{
    return strncmp(a->name, b->name, sizeof a->name) == 0 &&
           strncmp(a->boot, b->boot, sizeof a->boot) == 0;
}
