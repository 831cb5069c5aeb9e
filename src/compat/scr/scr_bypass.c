/*
 * scr_bypass.c - SCR's cache bypass (SCR_CACHE_BYPASS=1) and the shared
 * files it allows. In bypass mode SCR_Route_file gives a file's own path
 * (NAME made absolute, its directories created) and the application writes
 * it there, on the prefix's file system; several ranks may route the same
 * name and each write its part of one shared file. The files are never in
 * cairn: the generation of such a checkpoint holds, on each rank, a record
 * (scr_record.c) of the files that rank routed, with the size and XXH3-64
 * of each file, hashed once by the lowest rank that routed it. A restart
 * restores the record (from any level cairn can rebuild it at), checks each
 * file against it on its checking rank, and then routes NAME to the file's
 * path again; a file changed since (a later checkpoint written over it under
 * the same name, a crash half-way through that) fails the restart on every
 * rank, so SCR_Have_restart offers an older checkpoint, never changed bytes.
 * The files of a bypass checkpoint are the application's: cairn-scr never
 * removes them (not when the dataset is discarded, not when cairn prunes the
 * generation). Owns cscr.byp (the restored record's paths).
 */
#include "scr_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Every rank's routed final paths, NUL-separated, rank by rank (collective). ALL and
 * its offsets OFF[0..size] are malloc'ed; 0 on failure (on every rank). */
static int gather_paths(char **all, int **off)
{
    int size = 1, mine = 0, ok = 1;
    *all = NULL;
    MPI_Comm_size(cscr.comm, &size);
    for (size_t i = 0; i < cscr.nroutes; i++)
        mine += (int)strlen(cscr.routes[i].final) + 1;
    char *buf = malloc((size_t)mine + 1);
    int *len = malloc(sizeof *len * (size_t)size), *o = malloc(sizeof *o * ((size_t)size + 1));
    ok = buf && len && o;
    for (size_t i = 0, at = 0; ok && i < cscr.nroutes; i++) {
        size_t n = strlen(cscr.routes[i].final) + 1;
        memcpy(buf + at, cscr.routes[i].final, n);
        at += n;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, cscr.comm);
    long long total = 0;
    if (ok && MPI_Allgather(&mine, 1, MPI_INT, len, 1, MPI_INT, cscr.comm) == MPI_SUCCESS) {
        for (int r = 0; r < size; r++)
            o[r] = (int)total, total += len[r];
        o[size] = (int)total;
        *all = total < INT_MAX ? malloc((size_t)total + 1) : NULL;
        ok = *all != NULL;
        MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, cscr.comm);
        if (ok && MPI_Allgatherv(buf, mine, MPI_CHAR, *all, len, o, MPI_CHAR, cscr.comm) !=
                      MPI_SUCCESS)
            ok = 0;
    } else
        ok = 0;
    free(buf), free(len);
    if (!ok) {
        free(o), free(*all);
        *all = NULL;
        return 0;
    }
    *off = o;
    return 1;
}

/* The lowest rank and how many ranks routed PATH. */
static int first_rank(const char *all, const int *off, int size, const char *path, int *nranks)
{
    int first = -1;
    *nranks = 0;
    for (int r = 0; r < size; r++)
        for (int at = off[r]; at < off[r + 1]; at += (int)strlen(all + at) + 1)
            if (strcmp(all + at, path) == 0) {
                if (first < 0)
                    first = r;
                ++*nranks;
                break;
            }
    return first;
}

int cscr_bypass_complete(void)
{
    char *all = NULL, why[PATH_MAX + 200] = "";
    int *off = NULL, size = 1, ok = 1;
    MPI_Comm_size(cscr.comm, &size);
    if (!gather_paths(&all, &off))
        return cscr_agree(0, "SCR_Complete_output: cannot gather the routed files' names");
    char rec[SCR_MAX_FILENAME];
    FILE *f = NULL;
    if (cairn_route_file(cscr.ctx, CSCR_RECORD, rec, sizeof rec) != 0 ||
        !(f = fopen(rec, "w")) || fputs(cscr_record_header(), f) == EOF) {
        snprintf(why, sizeof why, "SCR_Complete_output: cannot write the bypass record: %s",
                 f ? strerror(errno) : cairn_errmsg(cscr.ctx));
        ok = 0;
    }
    for (size_t i = 0; ok && i < cscr.nroutes; i++) {
        const char *path = cscr.routes[i].final;
        int n, owner = first_rank(all, off, size, path, &n) == cscr.rank, e = 0;
        long long bytes = 0;
        unsigned long long hash = 0;
        char line[SCR_MAX_FILENAME + 64];
        if (owner && (e = cscr_file_hash(path, &bytes, &hash)) != 0)
            snprintf(why, sizeof why, "SCR_Complete_output: cannot read %s: %s", path,
                     strerror(-e));
        else if (!cscr_record_line(line, sizeof line, path, owner, bytes, hash) ||
                 fputs(line, f) == EOF)
            snprintf(why, sizeof why, "SCR_Complete_output: cannot record %s", path);
        else if (owner)
            cscr_debug(2, "bypass file %s: %lld bytes, routed by %d rank%s", path, bytes, n,
                       n == 1 ? "" : "s");
        ok = !*why;
    }
    if (f && (fclose(f) != 0) && ok) {
        snprintf(why, sizeof why, "SCR_Complete_output: cannot write %s", rec);
        ok = 0;
    }
    free(all), free(off);
    return cscr_agree(ok, why);
}

void cscr_shared_explain(void)
{
    char *all = NULL;
    int *off = NULL, size = 1;
    MPI_Comm_size(cscr.comm, &size);
    if (!gather_paths(&all, &off))
        return;
    for (size_t i = 0; i < cscr.nroutes; i++) {
        int n, first = first_rank(all, off, size, cscr.routes[i].final, &n);
        if (n > 1 && first == cscr.rank && !cscr.routes[i].bypass)
            cscr_error("%s was routed by %d ranks: in cache mode each rank's file is its own "
                       "(SCR keeps files shared by ranks only with SCR_CACHE_BYPASS=1)",
                       cscr.routes[i].final, n);
    }
    free(all), free(off);
    /* said before any rank returns: a program that aborts on the failed
     * checkpoint (as SCR's examples do) would otherwise kill the job first */
    MPI_Barrier(cscr.comm);
}

void cscr_bypass_forget(void)
{
    free(cscr.byp);
    cscr.byp = NULL;
    cscr.nbyp = cscr.bypcap = 0;
}

/* cscr_record_parse's callback: keep PATH, check it if this rank is its checker. */
static int restored(const char *path, int owner, long long size, unsigned long long hash,
                    void *arg, char *why, size_t wlen)
{
    (void)arg;
    if (cscr.nbyp == cscr.bypcap) {
        size_t cap = cscr.bypcap ? 2 * cscr.bypcap : 8;
        void *bigger = realloc(cscr.byp, cap * sizeof *cscr.byp);
        if (!bigger) {
            snprintf(why, wlen, "out of memory");
            return 0;
        }
        cscr.byp = bigger, cscr.bypcap = cap;
    }
    snprintf(cscr.byp[cscr.nbyp++], SCR_MAX_FILENAME, "%s", path);
    if (!owner)
        return 1;
    long long now_size = 0;
    unsigned long long now_hash = 0;
    int e = cscr_file_hash(path, &now_size, &now_hash);
    if (e != 0)
        snprintf(why, wlen, "%s: %s", path, strerror(-e));
    else if (now_size != size || now_hash != hash)
        snprintf(why, wlen, "%s has changed since the checkpoint was written (%lld bytes, "
                 "XXH3-64 %016llx; recorded %lld bytes, %016llx)", path, now_size, now_hash,
                 size, hash);
    return e == 0 && now_size == size && now_hash == hash;
}

int cscr_bypass_load(void)
{
    char dir[SCR_MAX_FILENAME], path[SCR_MAX_FILENAME + 32], why[3 * SCR_MAX_FILENAME] = "";
    cscr_bypass_forget();
    int ok = cscr_staging_dir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/" CSCR_RECORD, dir);
    FILE *f = ok ? fopen(path, "r") : NULL;
    int here = f != NULL, anywhere = 0;
    MPI_Allreduce(&here, &anywhere, 1, MPI_INT, MPI_LOR, cscr.comm);
    if (!anywhere) /* a checkpoint of cached files only */
        return 1;
    char *buf = NULL;
    size_t len = 0;
    if (!f)
        snprintf(why, sizeof why, "the bypass record of this rank is missing");
    else {
        struct stat st;
        ok = fstat(fileno(f), &st) == 0 && st.st_size < (1 << 26) &&
             (buf = malloc((size_t)st.st_size + 1)) != NULL &&
             fread(buf, 1, (size_t)st.st_size, f) == (size_t)st.st_size;
        len = ok ? (size_t)st.st_size : 0;
        if (!ok)
            snprintf(why, sizeof why, "cannot read %s", path);
        else if (!cscr_record_parse(buf, len, restored, NULL, why, sizeof why))
            ok = 0;
        fclose(f);
    }
    free(buf);
    char msg[sizeof why + 200];
    snprintf(msg, sizeof msg, "SCR_Start_restart: checkpoint '%s': %s", cscr.have_name, why);
    ok = cscr_agree(!*why, msg);
    if (!ok)
        cscr_bypass_forget();
    return ok;
}

int cscr_bypass_route(const char *name, char *file)
{
    char abs[PATH_MAX];
    const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
    int have_abs = cscr_absolute(name, abs, sizeof abs);
    for (size_t i = 0; have_abs && i < cscr.nbyp; i++)
        if (strcmp(cscr.byp[i], abs) == 0) {
            snprintf(file, SCR_MAX_FILENAME, "%s", cscr.byp[i]);
            return 1;
        }
    for (size_t i = 0; !slash && i < cscr.nbyp; i++) /* SCR's older use: the file name alone */
        if (strcmp(strrchr(cscr.byp[i], '/') + 1, base) == 0) {
            snprintf(file, SCR_MAX_FILENAME, "%s", cscr.byp[i]);
            return 1;
        }
    return 0;
}
