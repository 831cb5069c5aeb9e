/*
 * h5split.c - a routed file read as HDF5 (libhdf5, optional at build time:
 * CAIRN_HAVE_HDF5), so that level 4 can aggregate its datasets across ranks
 * the way mcrEngine does (Islam et al., section 3.1: variables of the same
 * group path, name and type from every process merged, then compressed by
 * type). Only finds the datasets; h5map.c cuts and rebuilds the bytes.
 *
 * The file image (already in memory) is opened read-only through the core
 * driver; nothing touches a disk. Every object is visited once (H5Ovisit, so
 * a dataset with two links counts once); a dataset is taken out of the file
 * when its layout is CONTIGUOUS, its storage is allocated in the file (not
 * external), at least CZ_H5_MIN_DSET bytes, and its path fits a cairn name.
 * Chunked, compact and filtered datasets (filters need chunks) stay in the
 * skeleton, as does everything else in the file. The dataset's type decides
 * how level 4 compresses it: little-endian IEEE float/double as CAIRN_FLOAT
 * or CAIRN_DOUBLE (the float codecs), little-endian integers of 1-8 bytes as
 * the integer types, everything else (strings, compounds, arrays, enums,
 * big-endian) as bytes. A shape of 1-3 dims is kept when it covers the
 * storage exactly.
 *
 * A file that is not HDF5 (no signature at offset 0: files with a user block
 * are kept whole), or that libhdf5 cannot open, gives no datasets, and no
 * message: libhdf5's automatic error printing is switched off for the call
 * and put back as it was (the application may use libhdf5 itself).
 *
 * Not thread-safe (serial libhdf5): called by the flush, one thread.
 * Ownership: the dataset array and its names belong to the caller
 * (cz_h5_dsets_free).
 */
#include "levels/pfs/agg_impl.h"

#include <stdlib.h>
#include <string.h>

#ifdef CAIRN_HAVE_HDF5
#include <dlfcn.h>
#include <hdf5.h>
#include <pthread.h>
/* hdf5.h's flag macros (H5F_ACC_RDONLY) call H5check() and H5open() by name;
 * here the library is not linked, and h5_load opens it. */
#undef H5CHECK
#define H5CHECK
#undef H5OPEN
#define H5OPEN
#endif

void cz_h5_dsets_free(cz_h5_dset *d, size_t n)
{
    for (size_t i = 0; d && i < n; i++)
        free(d[i].name);
    free(d);
}

#ifndef CAIRN_HAVE_HDF5

bool cz_h5_available(void) { return false; }

int cz_h5_scan(const uint8_t *p, size_t len, cz_h5_dset **out, size_t *n, cn_err *err)
{
    (void)p, (void)len, (void)err;
    *out = NULL;
    *n = 0;
    return 0;
}

#else

/*
 * libhdf5 is opened the first time a routed file is scanned (dlopen), not
 * linked: linked, it and what it needs (libcurl, GnuTLS, Kerberos, LDAP, ...:
 * some 40 libraries) would load into every process that links cairn, every
 * rank at every start, for a feature most jobs never use. The soname is the
 * one the build found (CAIRN_HDF5_SONAME); the calls go through H5 below.
 * Without the library at run time, routed HDF5 files are stored whole, as in
 * a build without HDF5, and the flush says so once.
 */
#if H5_VERSION_GE(1, 12, 0)
#define H5_OVISIT(X) X(H5Ovisit3)
#else
#define H5_OVISIT(X) X(H5Ovisit2)
#endif
#define H5_FNS(X)                                                                             \
    X(H5open) X(H5Eget_auto2) X(H5Eset_auto2) X(H5Pcreate) X(H5Pset_fapl_core)               \
    X(H5Pset_file_image) X(H5Fopen) X(H5Fclose) X(H5Pclose) X(H5Dopen2) X(H5Dclose)           \
    X(H5Dget_type) X(H5Dget_space) X(H5Dget_create_plist) X(H5Dget_offset)                    \
    X(H5Dget_storage_size) X(H5Pget_layout) X(H5Pget_external_count) X(H5Pget_nfilters)       \
    X(H5Tget_size) X(H5Tget_class) X(H5Tget_order) X(H5Tget_precision) X(H5Tget_offset)       \
    X(H5Tget_sign) X(H5Tclose) X(H5Sget_simple_extent_npoints) X(H5Sget_simple_extent_ndims)  \
    X(H5Sget_simple_extent_dims) X(H5Sclose) H5_OVISIT(X)

static struct {
#define H5_PTR(f) __typeof__(f) *f;
    H5_FNS(H5_PTR)
#undef H5_PTR
    hid_t *fapl_class; /* what H5P_FILE_ACCESS names: H5P_CLS_FILE_ACCESS_ID_g */
    bool ok;
} h5;
static pthread_once_t h5_once = PTHREAD_ONCE_INIT;

static void h5_load(void)
{
    void *lib = dlopen(CAIRN_HDF5_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        cn_log(CN_LOG_WARN, "HDF5 files are stored whole at level 4: %s", dlerror());
        return;
    }
    bool all = true;
#define H5_SYM(f) all = all && (*(void **)&h5.f = dlsym(lib, #f)) != NULL;
    H5_FNS(H5_SYM)
#undef H5_SYM
    /* The library reaches its own variables through the global scope first: a
     * program that links libhdf5 and names H5P_FILE_ACCESS holds the variable
     * itself (a copy relocation), and that copy is the one the library sets.
     * The same lookup finds it; only when the global scope has none is the
     * library's own the one. */
    h5.fapl_class = dlsym(RTLD_DEFAULT, "H5P_CLS_FILE_ACCESS_ID_g");
    if (!h5.fapl_class)
        h5.fapl_class = dlsym(lib, "H5P_CLS_FILE_ACCESS_ID_g");
    if (!all || !h5.fapl_class || h5.H5open() < 0) {
        cn_log(CN_LOG_WARN, "HDF5 files are stored whole at level 4: %s lacks a call cairn needs",
               CAIRN_HDF5_SONAME);
        dlclose(lib);
        return;
    }
    h5.ok = true; /* the library stays open for the life of the process */
}

bool cz_h5_available(void)
{
    pthread_once(&h5_once, h5_load);
    return h5.ok;
}

static const uint8_t signature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

typedef struct scan {
    size_t len;          /* of the image */
    cz_h5_dset *d;
    size_t n, cap;
    bool nomem;
} scan;

/* The cairn type a dataset of file type T is aggregated as. */
static uint8_t type_of(hid_t t)
{
    size_t size = h5.H5Tget_size(t);
    H5T_class_t cls = h5.H5Tget_class(t);
    if ((cls != H5T_FLOAT && cls != H5T_INTEGER) || h5.H5Tget_order(t) != H5T_ORDER_LE)
        return CAIRN_BYTE;
    if (cls == H5T_FLOAT) {
        /* IEEE layouts only: a native float or double's precision and offset */
        if (size == 4 && h5.H5Tget_precision(t) == 32 && h5.H5Tget_offset(t) == 0)
            return CAIRN_FLOAT;
        if (size == 8 && h5.H5Tget_precision(t) == 64 && h5.H5Tget_offset(t) == 0)
            return CAIRN_DOUBLE;
        return CAIRN_BYTE;
    }
    bool sign = h5.H5Tget_sign(t) == H5T_SGN_2;
    switch (size) {
    case 1: return sign ? CAIRN_INT8 : CAIRN_UINT8;
    case 2: return sign ? CAIRN_INT16 : CAIRN_UINT16;
    case 4: return sign ? CAIRN_INT32 : CAIRN_UINT32;
    case 8: return sign ? CAIRN_INT64 : CAIRN_UINT64;
    default: return CAIRN_BYTE;
    }
}

/* Type and shape of dataset DS holding SIZE bytes into X. */
static void shape_of(hid_t ds, uint64_t size, cz_h5_dset *x)
{
    hid_t t = h5.H5Dget_type(ds), sp = h5.H5Dget_space(ds);
    x->type = t >= 0 ? type_of(t) : CAIRN_BYTE;
    size_t es = cairn_type_size((cairn_type)x->type);
    hssize_t npts = sp >= 0 ? h5.H5Sget_simple_extent_npoints(sp) : -1;
    if (x->type != CAIRN_BYTE && (size % es || npts < 0 || (uint64_t)npts != size / es))
        x->type = CAIRN_BYTE, es = 1; /* storage is not exactly the elements: bytes */
    x->count = size / es;
    x->ndims = 0;
    int rank = sp >= 0 ? h5.H5Sget_simple_extent_ndims(sp) : -1;
    hsize_t dims[H5S_MAX_RANK];
    if (rank >= 1 && rank <= CAIRN_MAX_DIMS && h5.H5Sget_simple_extent_dims(sp, dims, NULL) == rank &&
        (x->type != CAIRN_BYTE || h5.H5Tget_size(t) == 1)) {
        uint64_t prod = 1;
        for (int d = 0; d < rank; d++)
            prod *= dims[d];
        if (prod == x->count) {
            x->ndims = (uint8_t)rank;
            for (int d = 0; d < rank; d++)
                x->dims[d] = dims[d];
        }
    }
    if (t >= 0)
        h5.H5Tclose(t);
    if (sp >= 0)
        h5.H5Sclose(sp);
}

/* Dataset NAME (relative to the root) of the file open as ROOT: taken out? */
static void visit_dataset(hid_t root, const char *name, scan *s)
{
    hid_t ds = h5.H5Dopen2(root, name, H5P_DEFAULT);
    if (ds < 0)
        return;
    hid_t dcpl = h5.H5Dget_create_plist(ds);
    haddr_t off = h5.H5Dget_offset(ds);
    hsize_t size = h5.H5Dget_storage_size(ds);
    size_t nl = strlen(name) + 1; /* with the leading '/' */
    bool take = dcpl >= 0 && h5.H5Pget_layout(dcpl) == H5D_CONTIGUOUS &&
                h5.H5Pget_external_count(dcpl) == 0 && h5.H5Pget_nfilters(dcpl) == 0 &&
                off != HADDR_UNDEF && size >= CZ_H5_MIN_DSET && off <= s->len &&
                size <= s->len - off && nl <= CAIRN_NAME_MAX;
    if (take && s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 16;
        cz_h5_dset *d = realloc(s->d, cap * sizeof *d);
        if (!d)
            s->nomem = true, take = false;
        else
            s->d = d, s->cap = cap;
    }
    if (take) {
        cz_h5_dset *x = &s->d[s->n];
        memset(x, 0, sizeof *x);
        x->name = malloc(nl + 1);
        if (!x->name) {
            s->nomem = true;
        } else {
            x->name[0] = '/';
            memcpy(x->name + 1, name, nl);
            x->offset = off;
            x->size = size;
            shape_of(ds, size, x);
            s->n++;
        }
    }
    if (dcpl >= 0)
        h5.H5Pclose(dcpl);
    h5.H5Dclose(ds);
}

#if H5_VERSION_GE(1, 12, 0)
static herr_t visit(hid_t obj, const char *name, const H5O_info2_t *info, void *arg)
#else
static herr_t visit(hid_t obj, const char *name, const H5O_info_t *info, void *arg)
#endif
{
    scan *s = arg;
    if (info->type == H5O_TYPE_DATASET && strcmp(name, ".") != 0)
        visit_dataset(obj, name, s);
    return s->nomem ? 1 : 0;
}

static int by_offset(const void *a, const void *b)
{
    const cz_h5_dset *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

int cz_h5_scan(const uint8_t *p, size_t len, cz_h5_dset **out, size_t *n, cn_err *err)
{
    *out = NULL;
    *n = 0;
    if (len < 64 || memcmp(p, signature, 8) != 0 || !cz_h5_available())
        return 0;
    H5E_auto2_t was = NULL;
    void *was_arg = NULL;
    h5.H5Eget_auto2(H5E_DEFAULT, &was, &was_arg);
    h5.H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    scan s = {.len = len};
    hid_t fapl = h5.H5Pcreate(*h5.fapl_class), f = -1;
    if (fapl >= 0 && h5.H5Pset_fapl_core(fapl, 1 << 20, 0) >= 0 &&
        h5.H5Pset_file_image(fapl, (void *)p, len) >= 0)
        f = h5.H5Fopen("cairn-routed-file", H5F_ACC_RDONLY, fapl);
    if (f >= 0) {
#if H5_VERSION_GE(1, 12, 0)
        h5.H5Ovisit3(f, H5_INDEX_NAME, H5_ITER_INC, visit, &s, H5O_INFO_BASIC);
#else
        h5.H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_INC, visit, &s, H5O_INFO_BASIC);
#endif
        h5.H5Fclose(f);
    }
    if (fapl >= 0)
        h5.H5Pclose(fapl);
    h5.H5Eset_auto2(H5E_DEFAULT, was, was_arg);
    if (s.nomem) {
        cz_h5_dsets_free(s.d, s.n);
        return cn_fail(err, CAIRN_ENOMEM, "no memory to list the datasets of an HDF5 file");
    }
    if (s.n)
        qsort(s.d, s.n, sizeof *s.d, by_offset);
    size_t k = 0; /* contiguous storage never overlaps; if it did, keep the first */
    for (size_t i = 0; i < s.n; i++) {
        if (k && s.d[i].offset < s.d[k - 1].offset + s.d[k - 1].size) {
            free(s.d[i].name);
            continue;
        }
        s.d[k++] = s.d[i];
    }
    if (k == 0) {
        free(s.d);
        return 0;
    }
    *out = s.d;
    *n = k;
    return 0;
}

#endif /* CAIRN_HAVE_HDF5 */
