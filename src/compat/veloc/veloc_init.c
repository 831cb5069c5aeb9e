/*
 * veloc_init.c - the VeloC client's state and its lifetime: VELOC_Init,
 * VELOC_Finalize, the protected regions (VELOC_Mem_protect/unprotect) and
 * the helpers the other files share (messages, agreement, names).
 *
 * Owns the one static vl_state: the cairn context (cairn_init on a cairn
 * INI written from the VeloC config file to a private temporary file, read
 * once and removed), a duplicate of the application's communicator, and the
 * region table (the application's pointers, borrowed). A region is
 * protected in cairn under "mem.<id>" with a type of its element size
 * (1, 2, 4, 8 bytes: unsigned integers, so byte shuffling sees elements;
 * other sizes: bytes), lazily: vl_sync_protect makes cairn protect exactly
 * the regions a checkpoint or a restore needs, and only re-protects a region
 * whose pointer, type or count changed.
 */
#include "veloc_layer.h"
#include "../compat_dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static vl_state S = {.comm = MPI_COMM_NULL};

vl_state *vl_state_get(void) { return &S; }

/* One message, written whole (the launcher forwards stderr in pieces). */
static void say(const char *prefix, const char *fmt, va_list ap)
{
    char msg[2048];
    int n = snprintf(msg, sizeof msg, "%s", prefix);
    if (n >= 0 && (size_t)n < sizeof msg)
        vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    fprintf(stderr, "%s\n", msg);
}

void vl_err(const char *fmt, ...)
{
    char prefix[32];
    snprintf(prefix, sizeof prefix, "veloc: rank %d: ", S.rank);
    va_list ap;
    va_start(ap, fmt);
    say(prefix, fmt, ap);
    va_end(ap);
}

void vl_err0(const char *fmt, ...)
{
    if (S.rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    say("veloc: ", fmt, ap);
    va_end(ap);
}

int vl_cairn_fail(bool all, const char *what, int rc)
{
    const char *msg = cairn_errmsg(S.ctx);
    if (all)
        vl_err0("%s: %s%s%s", what, cairn_strerror(rc), *msg ? ": " : "", msg);
    else
        vl_err("%s: %s%s%s", what, cairn_strerror(rc), *msg ? ": " : "", msg);
    return VELOC_FAILURE;
}

bool vl_all(bool ok)
{
    int mine = ok, every = 0;
    if (MPI_Allreduce(&mine, &every, 1, MPI_INT, MPI_LAND, S.comm) != MPI_SUCCESS)
        return false;
    return every != 0;
}

bool vl_name_ok(const char *call, const char *name)
{
    size_t n = name ? strlen(name) : 0;
    bool ok = n > 0 && n <= VL_NAME_MAX;
    for (size_t i = 0; ok && i < n; i++) {
        char c = name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
             c == '_' || c == '.';
    }
    if (!ok)
        vl_err("%s: checkpoint name '%s' is not 1-%d of [a-zA-Z0-9_.]", call,
               name ? name : "(null)", VL_NAME_MAX);
    return ok;
}

void vl_route_name(char *out, size_t len, const char *name, int rank, int version)
{
    snprintf(out, len, "%s-%d-%d.dat", name, rank, version);
}

void vl_var_name(char *out, size_t len, int id) { snprintf(out, len, "mem.%d", id); }

vl_region *vl_region_find(int id)
{
    for (int i = 0; i < S.nregions; i++)
        if (S.regions[i].id == id)
            return &S.regions[i];
    return NULL;
}

/* Cairn's element type for a region of BASE-byte elements, and the count. */
static cairn_type region_type(const vl_region *r, size_t *count)
{
    static const cairn_type by_size[9] = {CAIRN_BYTE,   CAIRN_UINT8, CAIRN_UINT16,
                                          CAIRN_BYTE,   CAIRN_UINT32, CAIRN_BYTE,
                                          CAIRN_BYTE,   CAIRN_BYTE,  CAIRN_UINT64};
    cairn_type t = r->base <= 8 ? by_size[r->base] : CAIRN_BYTE;
    *count = t == CAIRN_BYTE ? r->count * r->base : r->count;
    return t;
}

int vl_protect_region(vl_region *r)
{
    char name[32];
    size_t count;
    cairn_type t = region_type(r, &count);
    if (r->in_cairn && r->cptr == r->ptr && r->ctype == t && r->ccount == count)
        return 0;
    vl_var_name(name, sizeof name, r->id);
    int rc = cairn_protect(S.ctx, name, r->ptr, t, count, 0, NULL);
    if (rc)
        return vl_cairn_fail(false, "protect", rc);
    r->in_cairn = true;
    r->cptr = r->ptr;
    r->ctype = t;
    r->ccount = count;
    return 0;
}

int vl_unprotect_region(vl_region *r)
{
    char name[32];
    vl_var_name(name, sizeof name, r->id);
    int rc = r->in_cairn ? cairn_unprotect(S.ctx, name) : 0;
    if (rc)
        return vl_cairn_fail(false, "unprotect", rc);
    r->in_cairn = false;
    return 0;
}

int vl_sync_protect(const bool *selected)
{
    for (int i = 0; i < S.nregions; i++) {
        int rc = selected[i] ? vl_protect_region(&S.regions[i])
                             : vl_unprotect_region(&S.regions[i]);
        if (rc)
            return rc;
    }
    return 0;
}

int vl_select(int mode, const int *ids, int n, bool *selected)
{
    if (mode != VELOC_CKPT_ALL && mode != VELOC_CKPT_SOME && mode != VELOC_CKPT_REST)
        return -1;
    if (mode != VELOC_CKPT_ALL && n > 0 && !ids)
        return -1;
    for (int i = 0; i < S.nregions; i++) {
        bool listed = false;
        for (int k = 0; mode != VELOC_CKPT_ALL && k < n; k++)
            listed |= ids[k] == S.regions[i].id;
        selected[i] = mode == VELOC_CKPT_ALL || (mode == VELOC_CKPT_SOME) == listed;
    }
    return 0;
}

/* Write the cairn INI text to a private temporary file; its path into PATH. */
static int write_ini(char *path, size_t len)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, len, "%s/cairn-veloc-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    size_t n = strlen(S.cfg.ini), off = 0;
    while (off < n) {
        ssize_t w = write(fd, S.cfg.ini + off, n - off);
        if (w <= 0) {
            close(fd);
            unlink(path);
            return -1;
        }
        off += (size_t)w;
    }
    return close(fd);
}

/* VeloC creates its scratch directory; so does this layer (compat_private_dir). */
static bool make_scratch(const char *dir)
{
    bool created;
    char why[1200];
    if (!compat_private_dir(dir, "VELOC_Init", "scratch directory", &created, why, sizeof why)) {
        vl_err("%s", why);
        return false;
    }
    if (created)
        vl_err0("created the scratch directory %s (mode 0700)", dir);
    return true;
}

VELOC_CAIRN_EXPORT int VELOC_Init(MPI_Comm comm, const char *cfg_file)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        fprintf(stderr, "veloc: VELOC_Init: call MPI_Init first\n");
        return VELOC_FAILURE;
    }
    if (S.ctx) {
        vl_err0("VELOC_Init: VeloC is initialized already");
        return VELOC_FAILURE;
    }
    if (MPI_Comm_dup(comm, &S.comm) != MPI_SUCCESS) {
        fprintf(stderr, "veloc: VELOC_Init: MPI_Comm_dup failed\n");
        return VELOC_FAILURE;
    }
    MPI_Comm_rank(S.comm, &S.rank);
    char ini[4096] = "";
    bool ok = vl_config_load(cfg_file, &S.cfg, S.rank) == 0;
    if (ok && write_ini(ini, sizeof ini) != 0) {
        vl_err("VELOC_Init: cannot write the cairn settings to %s", ini);
        ok = false;
    }
    if (vl_all(ok)) /* rank by rank: on a node, the first one makes it */
        ok = make_scratch(S.cfg.scratch);
    int rc = CAIRN_ECONFIG;
    if (vl_all(ok))
        rc = cairn_init(S.comm, ini, &S.ctx);
    else
        vl_err0("VELOC_Init: failed (configuration %s)", cfg_file ? cfg_file : "(null)");
    if (ini[0])
        unlink(ini);
    if (ok && rc != 0)
        vl_err0("VELOC_Init: cairn_init: %s: %s (settings from %s)", cairn_strerror(rc),
                cairn_errmsg(NULL), cfg_file);
    if (rc != 0) {
        S.ctx = NULL;
        MPI_Comm_free(&S.comm);
        return VELOC_FAILURE;
    }
    S.phase = VL_IDLE;
    S.max_node_level = CAIRN_LEVEL_ERASURE;
    return VELOC_SUCCESS;
}

VELOC_CAIRN_EXPORT int VELOC_Init_single(unsigned int id, const char *cfg_file)
{
    (void)cfg_file;
    fprintf(stderr, "veloc: VELOC_Init_single(%u): not supported: cairn checkpoints the ranks "
            "of a communicator together; use VELOC_Init(MPI_COMM_SELF, ...) with a job id of "
            "the process's own (CAIRN_JOB)\n", id);
    return VELOC_FAILURE;
}

VELOC_CAIRN_EXPORT int VELOC_Finalize(int drain)
{
    (void)drain; /* cairn_checkpoint returned once the checkpoint was complete */
    if (!S.ctx) {
        fprintf(stderr, "veloc: VELOC_Finalize: VeloC is not initialized\n");
        return VELOC_FAILURE;
    }
    int rc = cairn_finalize(S.ctx);
    S.ctx = NULL;
    MPI_Comm_free(&S.comm);
    free(S.regions);
    free(S.sel_ids);
    memset(&S, 0, sizeof S);
    S.comm = MPI_COMM_NULL;
    if (rc) {
        fprintf(stderr, "veloc: VELOC_Finalize: %s\n", cairn_strerror(rc));
        return VELOC_FAILURE;
    }
    return VELOC_SUCCESS;
}

VELOC_CAIRN_EXPORT int VELOC_Mem_protect(int id, void *ptr, size_t count, size_t base_size)
{
    if (!S.ctx) {
        fprintf(stderr, "veloc: VELOC_Mem_protect: VeloC is not initialized\n");
        return VELOC_FAILURE;
    }
    if (count == 0) /* VeloC: count 0 deregisters the region */
        return vl_region_find(id) ? VELOC_Mem_unprotect(id) : VELOC_SUCCESS;
    size_t bytes;
    if (!ptr || base_size == 0 || __builtin_mul_overflow(count, base_size, &bytes)) {
        vl_err("VELOC_Mem_protect(%d): %s", id,
               !ptr ? "NULL pointer" : base_size == 0 ? "base_size is 0" : "size overflows");
        return VELOC_FAILURE;
    }
    vl_region *r = vl_region_find(id);
    if (!r) {
        if (S.nregions == S.cap) {
            int cap = S.cap ? 2 * S.cap : 8;
            vl_region *t = realloc(S.regions, (size_t)cap * sizeof *t);
            if (!t) {
                vl_err("VELOC_Mem_protect(%d): out of memory", id);
                return VELOC_FAILURE;
            }
            S.regions = t;
            S.cap = cap;
        }
        r = &S.regions[S.nregions++];
        memset(r, 0, sizeof *r);
        r->id = id;
    }
    r->ptr = ptr;
    r->count = count;
    r->base = base_size;
    return VELOC_SUCCESS;
}

VELOC_CAIRN_EXPORT int VELOC_Mem_unprotect(int id)
{
    vl_region *r = S.ctx ? vl_region_find(id) : NULL;
    if (!r) {
        if (S.ctx)
            vl_err("VELOC_Mem_unprotect(%d): no region %d is protected", id, id);
        else
            fprintf(stderr, "veloc: VELOC_Mem_unprotect: VeloC is not initialized\n");
        return VELOC_FAILURE;
    }
    if (r->in_cairn) {
        char name[32];
        vl_var_name(name, sizeof name, id);
        int rc = cairn_unprotect(S.ctx, name);
        if (rc)
            return vl_cairn_fail(false, "VELOC_Mem_unprotect", rc);
    }
    *r = S.regions[--S.nregions];
    return VELOC_SUCCESS;
}
