/*
 * fti_types.c - FTI's data types and the descriptions of protected
 * variables: FTI_InitType, FTI_InitCompositeType with its fields,
 * FTI_SetAttribute, the HDF5 names (FTI_InitGroup, FTI_RenameGroup,
 * FTI_DefineDataset) and the string ids (FTI_setIDFromString,
 * FTI_getIDFromString). All local, as in FTI.
 *
 * A type is a handle (fti_id_t): FTI_CHAR .. FTI_LDBE are 0..10 and stored as
 * cairn's integer and float types of their size (long double as bytes); a
 * new type is opaque bytes. A composite type's fields are checked (each
 * inside the type, of a known type) and kept only as its description: the
 * bytes are stored as they are, which restores them bit for bit. A variable's
 * name and shape (FTI_SetAttribute, FTI_DefineDataset) are kept; the shape of
 * a float or double variable goes to cairn (cairn_protect's dims), where the
 * float codecs use it.
 *
 * Owns the type table and the string-id table (process-wide, as FTI's).
 */
#include "fti_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

FTI_EXPORT fti_id_t FTI_CHAR = 0;
FTI_EXPORT fti_id_t FTI_SHRT = 1;
FTI_EXPORT fti_id_t FTI_INTG = 2;
FTI_EXPORT fti_id_t FTI_LONG = 3;
FTI_EXPORT fti_id_t FTI_UCHR = 4;
FTI_EXPORT fti_id_t FTI_USHT = 5;
FTI_EXPORT fti_id_t FTI_UINT = 6;
FTI_EXPORT fti_id_t FTI_ULNG = 7;
FTI_EXPORT fti_id_t FTI_SFLT = 8;
FTI_EXPORT fti_id_t FTI_DBLE = 9;
FTI_EXPORT fti_id_t FTI_LDBE = 10;

static const struct {
    int size;
    char kind; /* i signed, u unsigned, f float, b bytes */
} BASIC[CFTI_FIRST_USER_TYPE] = {
    {sizeof(char), 'i'},          {sizeof(short), 'i'},         {sizeof(int), 'i'},
    {sizeof(long), 'i'},          {sizeof(unsigned char), 'u'}, {sizeof(unsigned short), 'u'},
    {sizeof(unsigned int), 'u'},  {sizeof(unsigned long), 'u'}, {sizeof(float), 'f'},
    {sizeof(double), 'f'},        {sizeof(long double), 'b'},
};

typedef struct user_type {
    int size;
    int nfields;
    char name[FTI_BUFS];
} user_type;

static user_type *types; /* handle CFTI_FIRST_USER_TYPE + i */
static int ntypes, cap_types;

typedef struct str_id {
    char *name;
    int id;
} str_id;
static str_id *ids;
static int nids;

int cfti_type_size(fti_id_t t)
{
    if (t >= 0 && t < CFTI_FIRST_USER_TYPE)
        return BASIC[t].size;
    t -= CFTI_FIRST_USER_TYPE;
    return t >= 0 && t < ntypes ? types[t].size : 0;
}

cairn_type cfti_type_ctype(fti_id_t t)
{
    if (t < 0 || t >= CFTI_FIRST_USER_TYPE)
        return CAIRN_BYTE;
    int n = BASIC[t].size, u = BASIC[t].kind == 'u';
    switch (BASIC[t].kind) {
    case 'i':
    case 'u':
        return n == 1   ? (u ? CAIRN_UINT8 : CAIRN_INT8)
               : n == 2 ? (u ? CAIRN_UINT16 : CAIRN_INT16)
               : n == 4 ? (u ? CAIRN_UINT32 : CAIRN_INT32)
               : n == 8 ? (u ? CAIRN_UINT64 : CAIRN_INT64)
                        : CAIRN_BYTE;
    case 'f':
        return n == 4 ? CAIRN_FLOAT : n == 8 ? CAIRN_DOUBLE : CAIRN_BYTE;
    default:
        return CAIRN_BYTE;
    }
}

static fti_id_t new_type(int size, const char *name)
{
    if (ntypes == cap_types) {
        int cap = cap_types ? 2 * cap_types : 16;
        user_type *t = realloc(types, (size_t)cap * sizeof *t);
        if (!t)
            return FTI_NSCS;
        types = t, cap_types = cap;
    }
    types[ntypes] = (user_type){.size = size};
    snprintf(types[ntypes].name, FTI_BUFS, "%s", name ? name : "");
    return CFTI_FIRST_USER_TYPE + ntypes++;
}

FTI_EXPORT int FTI_InitType(fti_id_t *type, int size)
{
    if (!type || size < 1) {
        cfti_once("FTI_InitType", "a type needs a size of 1 byte or more (got %d)", size);
        return FTI_NSCS;
    }
    fti_id_t t = new_type(size, NULL);
    if (t == FTI_NSCS)
        return FTI_NSCS;
    *type = t;
    return FTI_SCES;
}

FTI_EXPORT fti_id_t FTI_InitCompositeType(const char *name, size_t size, FTIT_H5Group *h5g)
{
    (void)h5g;
    if (size < 1 || size > (size_t)0x7fffffff) {
        cfti_once("FTI_InitCompositeType", "a composite type needs a size of 1 to 2^31-1 bytes "
                  "(got %zu)", size);
        return FTI_NSCS;
    }
    return new_type((int)size, name);
}

/* A field of NBYTES at OFFSET in composite type ID, of type FID. */
static int add_field(const char *call, fti_id_t id, fti_id_t fid, size_t offset, size_t count)
{
    int tsize = cfti_type_size(id), fsize = cfti_type_size(fid);
    if (id < CFTI_FIRST_USER_TYPE || tsize == 0 || fsize == 0 || count == 0 ||
        offset > (size_t)tsize || count > ((size_t)tsize - offset) / (size_t)fsize) {
        fprintf(stderr, "cairn-fti: warning: rank %d: %s: the field (type %d, offset %zu, %zu "
                "element(s)) does not fit in composite type %d\n", cfti.rank, call, fid, offset,
                count, id);
        return FTI_NSCS;
    }
    types[id - CFTI_FIRST_USER_TYPE].nfields++;
    return FTI_SCES;
}

FTI_EXPORT int FTI_AddScalarField(fti_id_t id, const char *name, fti_id_t fid, size_t offset)
{
    (void)name;
    return add_field("FTI_AddScalarField", id, fid, offset, 1);
}

FTI_EXPORT int FTI_AddVectorField(fti_id_t id, const char *name, fti_id_t tid, size_t offset,
                                  int ndims, int *dim_sizes)
{
    (void)name;
    size_t count = 1;
    if (ndims < 1 || ndims > 32 || !dim_sizes)
        count = 0;
    for (int d = 0; count && d < ndims; d++)
        count = dim_sizes[d] > 0 && (size_t)dim_sizes[d] <= ((size_t)1 << 31) / count
                    ? count * (size_t)dim_sizes[d]
                    : 0;
    return add_field("FTI_AddVectorField", id, tid, offset, count);
}

/* The shape DIMS[0..NDIMS-1] (FTI's leading dimension first) of variable ID:
 * kept for a float or double variable whose count it matches. */
static int set_shape(const char *call, int id, int ndims, const int64_t *dims)
{
    cfti_var *v = cfti_var_find(id);
    if (!v) {
        fprintf(stderr, "cairn-fti: warning: rank %d: %s: variable %d is not protected\n",
                cfti.rank, call, id);
        return FTI_NSCS;
    }
    size_t cd[CAIRN_MAX_DIMS], prod = 1;
    if (ndims < 1 || ndims > CAIRN_MAX_DIMS || (v->ctype != CAIRN_FLOAT && v->ctype != CAIRN_DOUBLE))
        return FTI_SCES; /* kept as FTI's description only */
    for (int d = 0; d < ndims; d++) {
        if (dims[d] < 1)
            return FTI_SCES;
        cd[ndims - 1 - d] = (size_t)dims[d]; /* cairn: slowest varying first */
        prod *= (size_t)dims[d];
    }
    if (prod != v->elems)
        return FTI_SCES;
    char name[32];
    cfti_name(id, name);
    return cairn_protect(cfti.ctx, name, v->ptr, v->ctype, v->elems, ndims, cd) == 0 ? FTI_SCES
                                                                                    : FTI_NSCS;
}

FTI_EXPORT int FTI_SetAttribute(int id, FTIT_attribute attribute, FTIT_attributeFlag flag)
{
    if (!cfti.ctx) {
        cfti_once("FTI_SetAttribute", "FTI is not initialized");
        return FTI_NSCS;
    }
    if (!cfti_var_find(id)) {
        fprintf(stderr, "cairn-fti: warning: rank %d: FTI_SetAttribute: variable %d is not "
                "protected\n", cfti.rank, id);
        return FTI_NSCS;
    }
    if ((flag & FTI_ATTRIBUTE_DIM) && attribute.dim.ndims >= 1 && attribute.dim.ndims <= 32)
        return set_shape("FTI_SetAttribute", id, attribute.dim.ndims, attribute.dim.count);
    return FTI_SCES;
}

FTI_EXPORT int FTI_InitGroup(FTIT_H5Group *h5group, const char *name, FTIT_H5Group *parent)
{
    if (!h5group || !name)
        return FTI_NSCS;
    memset(h5group, 0, sizeof *h5group);
    snprintf(h5group->name, FTI_BUFS, "%s", name);
    if (snprintf(h5group->fullName, FTI_BUFS, "%s/%s", parent ? parent->fullName : "", name) >=
        FTI_BUFS)
        h5group->fullName[FTI_BUFS - 1] = '\0'; /* cut, as FTI's buffers cut it */
    if (parent && parent->childrenNo < FTI_BUFS)
        parent->childrenNo++;
    return FTI_SCES;
}

FTI_EXPORT int FTI_RenameGroup(FTIT_H5Group *h5group, const char *name)
{
    if (!h5group || !name)
        return FTI_NSCS;
    snprintf(h5group->name, FTI_BUFS, "%s", name);
    return FTI_SCES;
}

FTI_EXPORT int FTI_DefineDataset(int id, int rank, int *dimLength, const char *name,
                                 FTIT_H5Group *h5group)
{
    (void)name, (void)h5group;
    int64_t dims[32];
    if (!cfti.ctx) {
        cfti_once("FTI_DefineDataset", "FTI is not initialized");
        return FTI_NSCS;
    }
    if (rank < 0 || rank > 32 || (rank > 0 && !dimLength))
        return FTI_NSCS;
    for (int d = 0; d < rank; d++)
        dims[d] = dimLength[d];
    return set_shape("FTI_DefineDataset", id, rank, dims);
}

static int id_of(const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return 0x40000000 + (int)(h % 0x3fffffffu);
}

FTI_EXPORT int FTI_setIDFromString(const char *name)
{
    if (!name || !*name)
        return FTI_NSCS;
    int id = id_of(name);
    for (int i = 0; i < nids; i++) {
        if (strcmp(ids[i].name, name) == 0)
            return id;
        if (ids[i].id == id) {
            fprintf(stderr, "cairn-fti: warning: rank %d: FTI_setIDFromString: '%s' and '%s' "
                    "would share id %d\n", cfti.rank, ids[i].name, name, id);
            return FTI_NSCS;
        }
    }
    str_id *n = realloc(ids, (size_t)(nids + 1) * sizeof *n);
    char *copy = strdup(name);
    if (!n || !copy) {
        free(copy);
        if (n)
            ids = n;
        return FTI_NSCS;
    }
    ids = n;
    ids[nids++] = (str_id){copy, id};
    return id;
}

FTI_EXPORT int FTI_getIDFromString(const char *name)
{
    for (int i = 0; name && i < nids; i++)
        if (strcmp(ids[i].name, name) == 0)
            return ids[i].id;
    return FTI_NSCS;
}
