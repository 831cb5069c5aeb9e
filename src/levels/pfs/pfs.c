/*
 * pfs.c - level 4: generations on the parallel file system.
 *
 *   <pfs.dir>/cairn-<uid>/<job>/gen-<G>/agg-<i>.cz   aggregated files
 *   <pfs.dir>/cairn-<uid>/<job>/gen-<G>/index        written last
 *
 * Directories are created 0700 and never followed through symlinks (as on
 * node-local storage). An aggregated file is written through a throttle (the
 * aggregator's share of the file system's bandwidth), as NAME.tmp, synced,
 * and renamed into place (the generation directory synced); its size and
 * XXH3-64 go into the index. A directory this creates on the way to the job
 * directory is synced into its parent at once (open_durable); the flush
 * syncs the job directory once the index is written, before any older
 * generation goes (flush.c). A
 * generation without an index is incomplete: never offered for restart, and
 * removed by a later prune. Prune never removes what another layout wrote
 * (another rank count), nor, unless asked, generations newer than the run's
 * newest (an abandoned timeline). The api layer decides who writes what;
 * nothing here talks to other processes.
 */
#include "levels/pfs/pfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define INDEX_MAX (64u << 20)

/* Directory NAME under DIRFD, created if CREATE and not there; a directory
 * created here is made durable in DIRFD (fsync) before it is used, so that
 * what goes into it never hangs on an entry a crash can lose. */
static int open_durable(int dirfd, const char *name, bool create, cn_err *err)
{
    int fd = cn_dir_open(dirfd, name, false, err);
    if (fd != -ENOENT || !create)
        return fd;
    *err = (cn_err){0};
    fd = cn_dir_open(dirfd, name, true, err);
    if (fd >= 0 && cn_dir_sync(dirfd, err) < 0) {
        close(fd);
        return err->code;
    }
    return fd;
}

int lvl_pfs_open(const char *pfs_dir, const char *job, bool create, cn_err *err)
{
    CN_FAIL_IF(!pfs_dir[0], err, CAIRN_ECONFIG,
               "level 4 needs a PFS directory: set pfs.dir (or CAIRN_PFS_DIR)");
    int basefd = cn_dir_open_path(pfs_dir, err);
    if (basefd < 0)
        return cn_err_prefix(err, "pfs.dir: "), basefd;
    char user[64];
    cn_user_dirname(user, sizeof user);
    int userfd = open_durable(basefd, user, create, err);
    close(basefd);
    if (userfd < 0)
        return cn_err_prefix(err, "%s/", pfs_dir), userfd;
    int jobfd = open_durable(userfd, job, create, err);
    close(userfd);
    if (jobfd < 0)
        cn_err_prefix(err, "%s/%s/", pfs_dir, user);
    return jobfd;
}

int lvl_pfs_index(int jobfd, long id, cn_pindex *x, cn_err *err)
{
    char gen[64];
    cn_gen_dirname(gen, sizeof gen, id);
    int genfd = cn_dir_open(jobfd, gen, false, err);
    if (genfd < 0)
        return genfd;
    uint8_t *buf = NULL;
    size_t len = 0;
    int rc = cn_read_small(genfd, CN_PINDEX_NAME, INDEX_MAX, &buf, &len, err);
    close(genfd);
    if (rc == 0)
        rc = cn_pindex_decode(buf, len, x, err);
    free(buf);
    if (rc == 0 && x->generation != id) {
        cn_pindex_free(x);
        rc = cn_fail(err, CAIRN_ECORRUPT, "its index names generation %lld",
                     (long long)x->generation);
    }
    if (rc < 0)
        cn_err_prefix(err, "PFS generation %ld: ", id);
    return rc;
}

void lvl_pfs_links_free(cn_pindex *links, int n)
{
    for (int i = 0; i < n; i++)
        cn_pindex_free(&links[i]);
    free(links);
}

int lvl_pfs_links(int jobfd, const cn_pindex *x, cn_pindex **links, int *n, cn_err *err)
{
    *links = NULL, *n = 0;
    cn_pindex *out = NULL;
    int len = 0, cap = 0, rc = 0;
    long below = x->generation; /* the link read last: each one goes down */
    for (long at = x->parent; at >= 0 && rc == 0;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 8;
            cn_pindex *more = realloc(out, sizeof *more * (size_t)cap);
            if (!more) {
                rc = cn_fail(err, CAIRN_ENOMEM, "no memory");
                break;
            }
            out = more;
        }
        cn_pindex *y = &out[len];
        cn_err why = {0};
        if (at >= below) { /* a loop, or a forged index */
            rc = cn_fail(err, CAIRN_ECORRUPT, "PFS generation %ld names %ld as its parent",
                         below, at);
            break;
        }
        if (lvl_pfs_index(jobfd, at, y, &why) < 0) {
            bool gone = why.code == CAIRN_ENOENT || why.code == -ENOENT;
            rc = cn_fail(err, CAIRN_ECORRUPT, "its link %ld is %s (%s)", at,
                         gone ? "missing" : "damaged", why.msg);
            break;
        }
        len++;
        if (strcmp(y->job, x->job) != 0 || y->nranks != x->nranks || y->base != x->base)
            rc = cn_fail(err, CAIRN_ECORRUPT,
                         "PFS generation %ld does not continue its chain (job %s, %u ranks, "
                         "base %lld)", at, y->job, y->nranks, (long long)y->base);
        below = at;
        at = y->parent;
    }
    if (rc == 0 && below != x->base)
        rc = cn_fail(err, CAIRN_ECORRUPT, "PFS generation %ld is not the full generation "
                     "its chain starts at", below);
    if (rc < 0) {
        lvl_pfs_links_free(out, len);
        return rc;
    }
    for (int i = 0; i < len / 2; i++) { /* oldest first */
        cn_pindex t = out[i];
        out[i] = out[len - 1 - i], out[len - 1 - i] = t;
    }
    *links = out, *n = len;
    return 0;
}

int lvl_pfs_chain(int jobfd, long id, long **ids, int *n, cn_err *err)
{
    *ids = NULL, *n = 0;
    cn_pindex x, *links = NULL;
    int nl = 0;
    int rc = lvl_pfs_index(jobfd, id, &x, err);
    if (rc < 0)
        return rc;
    rc = lvl_pfs_links(jobfd, &x, &links, &nl, err);
    long *out = rc == 0 ? malloc(sizeof *out * (size_t)(nl + 1)) : NULL;
    if (rc == 0 && !out)
        rc = cn_fail(err, CAIRN_ENOMEM, "no memory");
    if (rc == 0) {
        out[0] = id;
        for (int i = 0; i < nl; i++)
            out[1 + i] = links[nl - 1 - i].generation;
        *ids = out, *n = nl + 1;
    }
    if (rc < 0)
        cn_err_prefix(err, "PFS generation %ld: ", id);
    lvl_pfs_links_free(links, nl);
    cn_pindex_free(&x);
    return rc;
}

/* No index file (or no directory): a generation not (yet) complete. */
static bool no_index(int code) { return code == CAIRN_ENOENT || code == -ENOENT; }

/* Remember what lvl_pfs_newest passes over (the newest of each kind). */
static void skip_damaged(lvl_pfs_skip *skip, long id, const char *msg)
{
    if (skip && skip->damaged < 0) {
        skip->damaged = id;
        snprintf(skip->why, sizeof skip->why, "%.500s", msg);
    }
}

long lvl_pfs_newest(int jobfd, const char *job, long bound, uint32_t nranks, cn_pindex *x,
                    lvl_pfs_skip *skip, cn_err *err)
{
    long *ids = NULL, found = -1;
    int n = 0;
    if (skip)
        *skip = (lvl_pfs_skip){.damaged = -1, .foreign = -1};
    if (cn_gen_list(jobfd, &ids, &n, err) < 0)
        return -1;
    for (int i = 0; i < n && found < 0; i++) {
        if (ids[i] > bound)
            continue;
        cn_err why = {0};
        if (lvl_pfs_index(jobfd, ids[i], x, &why) < 0) {
            if (!no_index(why.code)) { /* an index that is there but does not read */
                cn_warn("%s", why.msg);
                skip_damaged(skip, ids[i], why.msg);
            }
            continue; /* incomplete (no index yet) or damaged */
        }
        if (strcmp(x->job, job) != 0) {
            cn_warn("PFS generation %ld belongs to job %s, not %s", ids[i], x->job, job);
            cn_pindex_free(x);
            continue;
        }
        if (nranks && x->nranks != nranks) { /* another layout's: not ours to use */
            if (skip && skip->foreign < 0)
                skip->foreign = ids[i], skip->nranks = x->nranks, skip->nnodes = x->nnodes;
            cn_pindex_free(x);
            continue;
        }
        found = ids[i];
    }
    free(ids);
    return found;
}

/*
 * Prune: only generations this job's run of NRANKS ranks may judge. Complete
 * ones of this job and rank count up to NEWEST beyond the KEEP newest go, and
 * those above NEWEST (an abandoned timeline) with ABANDONED; a directory
 * without an index goes when a complete generation is newer (a flush that
 * died). Never touched: another rank count's or job's generations, one whose
 * index is there but does not read (it may be either), anything else above
 * NEWEST, and every link of the chain of a generation that stays (an
 * increment needs its parent, down to its full base): KEEP counts the
 * generations a restart can take, and their chains stay with them.
 */
void lvl_pfs_prune(int jobfd, const char *job, uint32_t nranks, long newest, int keep,
                   bool abandoned)
{
    long *ids = NULL, *parent = NULL;
    int n = 0, kept = 0;
    cn_err err = {0};
    if (cn_gen_list(jobfd, &ids, &n, &err) < 0)
        return;
    bool *go = calloc((size_t)n + 1, sizeof *go);
    parent = calloc((size_t)n + 1, sizeof *parent);
    if (!go || !parent) {
        free(go), free(parent), free(ids);
        return; /* out of memory: nothing removed */
    }
    for (int i = 0; i < n; i++) { /* newest first */
        cn_pindex x;
        cn_err why = {0};
        int rc = lvl_pfs_index(jobfd, ids[i], &x, &why);
        bool ours = rc == 0 && strcmp(x.job, job) == 0 && x.nranks == nranks;
        parent[i] = rc == 0 ? x.parent : -1;
        if (rc == 0)
            cn_pindex_free(&x);
        if (rc == 0 && !ours)
            continue; /* another layout's or job's */
        if (rc < 0 && !no_index(why.code))
            continue; /* damaged index: whose it is cannot be told */
        if (ids[i] > newest) {
            go[i] = ours && abandoned;
        } else if (ours && kept < keep) {
            kept++;
        } else {
            go[i] = ours || kept > 0; /* no index and newer than every complete one: maybe
                                       * being written */
        }
    }
    for (int i = 0; i < n; i++) /* newest first: a staying link keeps its parent */
        for (int j = i + 1; !go[i] && parent[i] >= 0 && j < n; j++)
            if (ids[j] == parent[i])
                go[j] = false;
    for (int i = 0; i < n; i++) {
        if (!go[i])
            continue;
        char gen[64];
        cn_gen_dirname(gen, sizeof gen, ids[i]);
        if (cn_trash_gen(jobfd, ids[i]) < 0 && cn_rmtree_at(jobfd, gen, &err) < 0) /* now */
            cn_warn("cannot remove PFS generation %ld: %s", ids[i], err.msg);
        else if (ids[i] > newest)
            cn_info("removed PFS generation %ld of an abandoned timeline (store.prune_abandoned)",
                    ids[i]);
    }
    free(go), free(parent), free(ids);
    lvl_pfs_stage_prune(jobfd, newest); /* the epilog's parts (pfs_stage.c) it makes old */
}

int lvl_pfs_abandon(int jobfd, const char *job, uint32_t nranks, long newest, bool remove)
{
    long *ids = NULL;
    int n = 0, done = 0;
    cn_err err = {0};
    if (cn_gen_list(jobfd, &ids, &n, &err) < 0)
        return 0;
    for (int i = 0; i < n && ids[i] > newest; i++) { /* newest first */
        cn_pindex x;
        cn_err why = {0};
        if (lvl_pfs_index(jobfd, ids[i], &x, &why) < 0)
            continue; /* no index: not a generation (yet); damaged: whose is unknown */
        bool ours = strcmp(x.job, job) == 0 && x.nranks == nranks;
        cn_pindex_free(&x);
        if (!ours)
            continue;
        char gen[64], aside[128];
        cn_gen_dirname(gen, sizeof gen, ids[i]);
        if (remove ? cn_rmtree_at(jobfd, gen, &err) < 0
                   : cn_set_aside(jobfd, ids[i], aside, sizeof aside, &err) < 0) {
            cn_warn("PFS: %s", err.msg);
            continue;
        }
        done++;
        if (remove)
            cn_info("removed PFS generation %ld of an abandoned timeline (store.prune_abandoned)",
                    ids[i]);
        else
            cn_warn("PFS generation %ld is newer than generation %ld, the newest this run "
                    "keeps (an abandoned timeline): set aside as %s, never staged in; 'cairn "
                    "prune --abandoned' removes it", ids[i], newest, aside);
    }
    free(ids);
    return done;
}

/* ---- writing one aggregated file ---------------------------------------- */

/* Every write to the file starts and ends on a multiple of STAGE bytes (a
 * page, a file system block) but the last: appends are cut there, and what
 * lies between two cuts (a frame's header, the tail of its payload) waits in
 * the stage, copied, for the next append or the commit. A write that began
 * or ended inside a page made the file system copy that page in two calls,
 * and a frame's header put every page of the payload after it off its
 * boundary: one writer to a tmpfs spent 2.5-4.5% more on a level-4 file (issue 31). */
#define STAGE 4096u

struct lvl_pfs_file {
    int fd;
    char name[64], tmp[72];
    uint64_t size;                /* bytes appended */
    uint64_t off;                 /* bytes written: size - staged, a multiple of STAGE */
    uint64_t started;             /* bytes whose writeback was started */
    double bps, t0;               /* throttle: bytes/s (0 = none), start time */
    size_t staged;                /* bytes in stage, waiting for the next cut */
    uint8_t stage[STAGE];
};

/* Writeback is started every WRITEBACK bytes as the file grows, so that the
 * device writes while the writer still copies or compresses: left to the
 * kernel, nothing of a file smaller than the dirty limits (a tenth of memory)
 * would be written before the commit's sync, which would then wait for all of
 * it. */
#define WRITEBACK (8u << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int lvl_pfs_create(int genfd, const char *name, int mib_per_s, lvl_pfs_file **out, cn_err *err)
{
    lvl_pfs_file *f = calloc(1, sizeof *f);
    CN_FAIL_IF(!f, err, CAIRN_ENOMEM, "no memory");
    snprintf(f->name, sizeof f->name, "%s", name);
    snprintf(f->tmp, sizeof f->tmp, "%s.tmp", name);
    unlinkat(genfd, f->tmp, 0);
    f->fd = openat(genfd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (f->fd < 0) {
        int rc = cn_fail_errno(err, errno, "cannot create %s on the PFS", f->tmp);
        free(f);
        return rc;
    }
    f->bps = (double)mib_per_s * (1 << 20);
    f->t0 = now();
    *out = f;
    return 0;
}

/* LEN bytes at P written at the file's end of written bytes. */
static int put(lvl_pfs_file *f, const void *p, size_t len, cn_err *err)
{
    CN_TRY(cn_pwrite_all(f->fd, p, len, f->off, f->tmp, err));
    f->off += len;
    return 0;
}

int lvl_pfs_append(void *arg, const void *buf, size_t len, cn_err *err)
{
    lvl_pfs_file *f = arg;
    const uint8_t *p = buf;
    size_t left = len;
    if (f->staged) { /* the stage filled up to its cut first */
        size_t take = left < STAGE - f->staged ? left : STAGE - f->staged;
        memcpy(f->stage + f->staged, p, take);
        f->staged += take, p += take, left -= take;
        if (f->staged == STAGE) {
            CN_TRY(put(f, f->stage, STAGE, err));
            f->staged = 0;
        }
    }
    size_t whole = left & ~(size_t)(STAGE - 1); /* from a cut to a cut: straight */
    if (whole)
        CN_TRY(put(f, p, whole, err));
    if (left > whole) { /* nothing staged now: the stage was written or not begun */
        memcpy(f->stage, p + whole, left - whole);
        f->staged = left - whole;
    }
    f->size += len;
    if (f->off - f->started >= WRITEBACK) { /* a failure here is the sync's to report */
        sync_file_range(f->fd, (off_t)f->started, (off_t)(f->off - f->started),
                        SYNC_FILE_RANGE_WRITE);
        f->started = f->off;
    }
    if (f->bps > 0) { /* not faster than the share: sleep off any lead */
        double lead = (double)f->size / f->bps - (now() - f->t0);
        if (lead > 0) {
            struct timespec ts = {(time_t)lead, (long)((lead - (double)(time_t)lead) * 1e9)};
            while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
            }
        }
    }
    return 0;
}

int lvl_pfs_commit(lvl_pfs_file *f, int genfd, uint64_t sum, cn_pfile *out, cn_err *err)
{
    int rc = f->staged ? put(f, f->stage, f->staged, err) : 0;
    if (rc == 0 && fdatasync(f->fd) != 0)
        rc = cn_fail_errno(err, errno, "cannot sync %s on the PFS", f->tmp);
    if (close(f->fd) != 0 && rc == 0)
        rc = cn_fail_errno(err, errno, "cannot close %s on the PFS", f->tmp);
    if (rc == 0 && renameat(genfd, f->tmp, genfd, f->name) != 0)
        rc = cn_fail_errno(err, errno, "cannot rename %s on the PFS", f->tmp);
    if (rc < 0)
        unlinkat(genfd, f->tmp, 0);
    else
        *out = (cn_pfile){f->size, sum};
    free(f);
    return rc;
}

void lvl_pfs_abort(lvl_pfs_file *f, int genfd)
{
    if (!f)
        return;
    close(f->fd);
    unlinkat(genfd, f->tmp, 0);
    free(f);
}

static int map_file(int genfd, const char *name, const cn_pfile *pf, bool whole,
                    const uint8_t **map, cn_err *err)
{
    *map = NULL;
    int fd = openat(genfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    CN_FAIL_IF(fd < 0, err, errno == ENOENT ? CAIRN_ENOENT : CAIRN_EIO, "%s is missing (%s)",
               name, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != pf->size)
        rc = cn_fail(err, CAIRN_ECORRUPT, "%s: %lld bytes, the index says %llu", name,
                     (long long)st.st_size, (unsigned long long)pf->size);
    void *p = rc == 0 ? mmap(NULL, pf->size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (rc == 0 && p == MAP_FAILED)
        rc = cn_fail_errno(err, errno, "cannot map %s", name);
    uint64_t sum = 0;
    if (rc == 0 && whole) {
        rc = cz_agg_sum(p, pf->size, &sum, err); /* a payload against its frame's checksum */
        if (rc < 0)
            cn_err_prefix(err, "%s: ", name);
        else if (sum != pf->sum)
            rc = cn_fail(err, CAIRN_ECORRUPT, "%s: checksum does not match the index", name);
        if (rc < 0)
            munmap(p, pf->size);
    }
    if (rc == 0)
        *map = p;
    return rc;
}

int lvl_pfs_map(int genfd, const char *name, const cn_pfile *pf, const uint8_t **map,
                cn_err *err)
{
    return map_file(genfd, name, pf, true, map, err);
}

int lvl_pfs_map_part(int genfd, const char *name, const cn_pfile *pf, const uint8_t **map,
                     cn_err *err)
{
    return map_file(genfd, name, pf, false, map, err);
}

void lvl_pfs_unmap(const uint8_t *map, const cn_pfile *pf)
{
    if (map)
        munmap((void *)map, pf->size);
}
