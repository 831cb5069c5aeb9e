/*
 * surface.c - every name FTI 1.6's fti.h gives a program, used with FTI's own
 * signature, so that the compiler checks the layer's fti.h against FTI's
 * (tests/compat/fti/run_fti.sh compiles it with -Werror and checks that each
 * name of NAMES below is declared in fti.h and used here beyond the list).
 *
 * Each function's address goes into a pointer of FTI 1.6's type; each type
 * declares an object and touches the members programs use; each constant is
 * read. Run (one or more ranks, after the checks compile), it uses the calls
 * honoured beyond the basic ones (composite types, attributes, string ids,
 * FTI_GetConfig, an iCP checkpoint recovered bit for bit), then calls each
 * call cairn does not honour twice and exits 0 if each returned FTI_NSCS
 * (NULL); the script counts the messages on stderr: one per call per process.
 *
 * Usage: surface <FTI config file>
 */
#include <stdio.h>
#include <string.h>
#include <fti.h>

/* NAMES-BEGIN */
static const char *const NAMES[] = {
    /* functions */
    "FTI_Init", "FTI_Status", "FTI_InitGroup", "FTI_RenameGroup", "FTI_Protect",
    "FTI_SetAttribute", "FTI_DefineDataset", "FTI_DefineGlobalDataset", "FTI_AddSubset",
    "FTI_RecoverDatasetDimension", "FTI_GetDatasetSpan", "FTI_GetDatasetRank",
    "FTI_UpdateGlobalDataset", "FTI_UpdateSubset", "FTI_GetStoredSize", "FTI_Realloc",
    "FTI_BitFlip", "FTI_Checkpoint", "FTI_GetStageDir", "FTI_GetStageStatus", "FTI_SendFile",
    "FTI_Recover", "FTI_Snapshot", "FTI_Finalize", "FTI_RecoverVar", "FTI_RecoverVarInit",
    "FTI_RecoverVarFinalize", "FTI_InitICP", "FTI_AddVarICP", "FTI_FinalizeICP",
    "FTI_setIDFromString", "FTI_getIDFromString", "FTI_GetConfig", "FTI_InitType",
    "FTI_InitCompositeType", "FTI_AddScalarField", "FTI_AddVectorField",
    /* globals */
    "FTI_COMM_WORLD", "FTI_CHAR", "FTI_SHRT", "FTI_INTG", "FTI_LONG", "FTI_UCHR", "FTI_USHT",
    "FTI_UINT", "FTI_ULNG", "FTI_SFLT", "FTI_DBLE", "FTI_LDBE",
    /* types */
    "fti_id_t", "FTIT_type", "FTIT_hsize_t", "FTI_ADDRVAL", "FTI_ADDRPTR", "FTIT_level",
    "FTIT_double", "FTIT_float", "FTIT_H5Group", "FTIT_typeField", "FTIT_complexType",
    "FTIT_attribute", "FTIT_attributeFlag", "FTIT_dataset", "FTIT_configuration",
    "FTIT_execution", "FTIT_topology", "FTIT_checkpoint", "FTIT_injection",
    "FTIT_allConfiguration",
    /* constants */
    "FTI_BUFS", "FTI_WORD", "FTI_DONE", "FTI_SCES", "FTI_NSCS", "FTI_NREC", "FTI_HEAD",
    "FTI_SI_FAIL", "FTI_SI_SCES", "FTI_SI_ACTV", "FTI_SI_PEND", "FTI_SI_NINI", "FTI_EROR",
    "FTI_WARN", "FTI_IDCP", "FTI_INFO", "FTI_DBUG", "FTI_BASE", "FTI_CKTW", "FTI_XORW",
    "FTI_RSEW", "FTI_PFSW", "FTI_ENDW", "FTI_REJW", "FTI_IO_POSIX", "FTI_IO_MPI",
    "FTI_IO_FTIFF", "FTI_IO_HDF5", "FTI_IO_IME", "FTI_L1", "FTI_L2", "FTI_L3", "FTI_L4",
    "FTI_L1_DCP", "FTI_L2_DCP", "FTI_L3_DCP", "FTI_L4_DCP", "FTI_L4_H5_SINGLE",
    "FTI_MIN_LEVEL_ID", "FTI_MAX_LEVEL_ID", "FTI_ATTRIBUTE_NAME", "FTI_ATTRIBUTE_DIM",
    "FTI_DEFAULT_MAX_VAR_ID", "FTI_LIMIT_MAX_VAR_ID",
};
/* NAMES-END */

/* FTI 1.6's signatures. */
static int (*p_init)(const char *, MPI_Comm) = FTI_Init;
static int (*p_status)(void) = FTI_Status;
static int (*p_initgroup)(FTIT_H5Group *, const char *, FTIT_H5Group *) = FTI_InitGroup;
static int (*p_renamegroup)(FTIT_H5Group *, const char *) = FTI_RenameGroup;
static int (*p_protect)(int, void *, int32_t, fti_id_t) = FTI_Protect;
static int (*p_setattribute)(int, FTIT_attribute, FTIT_attributeFlag) = FTI_SetAttribute;
static int (*p_definedataset)(int, int, int *, const char *, FTIT_H5Group *) = FTI_DefineDataset;
static int (*p_defineglobal)(int, int, FTIT_hsize_t *, const char *, FTIT_H5Group *,
                             fti_id_t) = FTI_DefineGlobalDataset;
static int (*p_addsubset)(int, int, FTIT_hsize_t *, FTIT_hsize_t *, int) = FTI_AddSubset;
static int (*p_recoverdim)(int) = FTI_RecoverDatasetDimension;
static FTIT_hsize_t *(*p_span)(int, int) = FTI_GetDatasetSpan;
static int (*p_dsrank)(int) = FTI_GetDatasetRank;
static int (*p_updateglobal)(int, int, FTIT_hsize_t *) = FTI_UpdateGlobalDataset;
static int (*p_updatesubset)(int, int, FTIT_hsize_t *, FTIT_hsize_t *, int) = FTI_UpdateSubset;
static int32_t (*p_storedsize)(int) = FTI_GetStoredSize;
static void *(*p_realloc)(int, void *) = FTI_Realloc;
static int (*p_bitflip)(int) = FTI_BitFlip;
static int (*p_checkpoint)(int, int) = FTI_Checkpoint;
static int (*p_stagedir)(char *, int) = FTI_GetStageDir;
static int (*p_stagestatus)(int) = FTI_GetStageStatus;
static int (*p_sendfile)(const char *, const char *) = FTI_SendFile;
static int (*p_recover)(void) = FTI_Recover;
static int (*p_snapshot)(void) = FTI_Snapshot;
static int (*p_finalize)(void) = FTI_Finalize;
static int (*p_recovervar)(int) = FTI_RecoverVar;
static int (*p_recovervarinit)(void) = FTI_RecoverVarInit;
static int (*p_recovervarfinalize)(void) = FTI_RecoverVarFinalize;
static int (*p_initicp)(int, int, bool) = FTI_InitICP;
static int (*p_addvaricp)(int) = FTI_AddVarICP;
static int (*p_finalizeicp)(void) = FTI_FinalizeICP;
static int (*p_setid)(const char *) = FTI_setIDFromString;
static int (*p_getid)(const char *) = FTI_getIDFromString;
static FTIT_allConfiguration (*p_getconfig)(const char *, MPI_Comm) = FTI_GetConfig;
static int (*p_inittype)(fti_id_t *, int) = FTI_InitType;
static fti_id_t (*p_initcomposite)(const char *, size_t, FTIT_H5Group *) = FTI_InitCompositeType;
static int (*p_addscalar)(fti_id_t, const char *, fti_id_t, size_t) = FTI_AddScalarField;
static int (*p_addvector)(fti_id_t, const char *, fti_id_t, size_t, int, int *) =
    FTI_AddVectorField;

/* Every type, its members as programs name them, and every constant. */
static long use_types_and_constants(void)
{
    fti_id_t t = FTI_CHAR + FTI_SHRT + FTI_INTG + FTI_LONG + FTI_UCHR + FTI_USHT + FTI_UINT +
                 FTI_ULNG + FTI_SFLT + FTI_DBLE + FTI_LDBE;
    FTIT_type old = FTI_DBLE;
    FTIT_hsize_t hs = 1;
    FTI_ADDRVAL av = (FTI_ADDRVAL)&hs;
    FTI_ADDRPTR ap = &hs;
    FTIT_level lv = FTI_L1 + FTI_L2 + FTI_L3 + FTI_L4 + FTI_L1_DCP + FTI_L2_DCP + FTI_L3_DCP +
                    FTI_L4_DCP + FTI_L4_H5_SINGLE + FTI_MIN_LEVEL_ID + FTI_MAX_LEVEL_ID;
    FTIT_double d = {.value = 1.0};
    FTIT_float f = {.value = 1.0f};
    FTIT_H5Group g = {.id = 0, .childrenNo = 0};
    FTIT_typeField tf = {.type = FTI_INTG, .offset = 0, .rank = 1};
    static FTIT_complexType ct;
    FTIT_attribute at;
    FTIT_attributeFlag af = FTI_ATTRIBUTE_NAME | FTI_ATTRIBUTE_DIM;
    FTIT_dataset ds = {.id = 1, .count = 1, .type = FTI_INTG};
    static FTIT_allConfiguration all;
    FTIT_configuration *cf = &all.configuration;
    FTIT_execution *ex = &all.execution;
    FTIT_topology *tp = &all.topology;
    FTIT_checkpoint *ck = &all.checkpoint[1];
    FTIT_injection *in = &all.injection;
    at.dim.ndims = 1;
    at.dim.count[0] = 3;
    snprintf(at.name, sizeof at.name, "x");
    snprintf(g.name, FTI_BUFS, "g");
    ct.length = 1;
    ct.field[0] = tf;
    long sum = t + old + (long)hs + (long)(av != 0) + (ap != NULL) + lv + (long)d.value +
               (long)f.value + g.id + ct.length + at.dim.ndims + (long)af + ds.id +
               cf->verbosity + ex->reco + tp->nodeSize + ck->ckptIntv + in->rank;
    sum += FTI_BUFS + FTI_WORD + FTI_DONE + FTI_SCES + FTI_NSCS + FTI_NREC + FTI_HEAD +
           FTI_SI_FAIL + FTI_SI_SCES + FTI_SI_ACTV + FTI_SI_PEND + FTI_SI_NINI + FTI_EROR +
           FTI_WARN + FTI_IDCP + FTI_INFO + FTI_DBUG + FTI_BASE + FTI_CKTW + FTI_XORW +
           FTI_RSEW + FTI_PFSW + FTI_ENDW + FTI_REJW + FTI_IO_POSIX + FTI_IO_MPI + FTI_IO_FTIFF +
           FTI_IO_HDF5 + FTI_IO_IME + FTI_DEFAULT_MAX_VAR_ID + (FTI_LIMIT_MAX_VAR_ID > 0);
    return sum;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 2) {
        fprintf(stderr, "usage: surface <config>\n");
        return 2;
    }
    void *fns[] = {(void *)p_init, (void *)p_status, (void *)p_initgroup, (void *)p_renamegroup,
                   (void *)p_protect, (void *)p_setattribute, (void *)p_definedataset,
                   (void *)p_defineglobal, (void *)p_addsubset, (void *)p_recoverdim,
                   (void *)p_span, (void *)p_dsrank, (void *)p_updateglobal,
                   (void *)p_updatesubset, (void *)p_storedsize, (void *)p_realloc,
                   (void *)p_bitflip, (void *)p_checkpoint, (void *)p_stagedir,
                   (void *)p_stagestatus, (void *)p_sendfile, (void *)p_recover,
                   (void *)p_snapshot, (void *)p_finalize, (void *)p_recovervar,
                   (void *)p_recovervarinit, (void *)p_recovervarfinalize, (void *)p_initicp,
                   (void *)p_addvaricp, (void *)p_finalizeicp, (void *)p_setid, (void *)p_getid,
                   (void *)p_getconfig, (void *)p_inittype, (void *)p_initcomposite,
                   (void *)p_addscalar, (void *)p_addvector};
    int ok = use_types_and_constants() != 0;
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
        ok &= fns[i] != NULL;
    ok &= sizeof NAMES / sizeof NAMES[0] > 100;
    if (FTI_Init(argv[1], MPI_COMM_WORLD) != FTI_SCES) {
        MPI_Finalize();
        return 2;
    }
    int rank;
    MPI_Comm_rank(FTI_COMM_WORLD, &rank);
    /* Honoured: composite types, attributes, string ids, FTI_GetConfig, iCP. */
    fti_id_t pair = FTI_InitCompositeType("pair", 16, NULL);
    ok &= pair > FTI_LDBE && FTI_AddScalarField(pair, "a", FTI_DBLE, 0) == FTI_SCES &&
          FTI_AddScalarField(pair, "b", FTI_LONG, 16) == FTI_NSCS; /* outside the type */
    int sid = FTI_setIDFromString("temperature");
    ok &= sid >= 0x40000000 && FTI_setIDFromString("temperature") == sid &&
          FTI_getIDFromString("temperature") == sid && FTI_getIDFromString("nope") == FTI_NSCS;
    FTIT_allConfiguration conf = FTI_GetConfig(argv[1], FTI_COMM_WORLD);
    ok &= conf.topology.nodeSize == 2 && conf.configuration.verbosity >= 1 &&
          conf.checkpoint[2].isInline == 1 && conf.configuration.ioMode == FTI_IO_POSIX &&
          conf.configuration.localDir[0] == '/';
    static double x[4096], want[4096];
    for (int k = 0; k < 4096; k++)
        x[k] = want[k] = rank * 10000.0 + k / 3.0;
    FTIT_attribute at = {.dim = {.ndims = 2, .count = {64, 64}}};
    snprintf(at.name, sizeof at.name, "x");
    ok &= FTI_Protect(7, x, 4096, FTI_DBLE) == FTI_SCES &&
          FTI_SetAttribute(7, at, FTI_ATTRIBUTE_NAME | FTI_ATTRIBUTE_DIM) == FTI_SCES;
    /* iCP: the checkpoint holds x as FTI_AddVarICP saw it, not as it is later */
    ok &= FTI_InitICP(5, FTI_L1, true) == FTI_SCES && FTI_AddVarICP(7) == FTI_SCES;
    for (int k = 0; k < 4096; k++)
        x[k] = -1.0;
    ok &= FTI_FinalizeICP() == FTI_SCES && FTI_GetStoredSize(7) == 4096 * (int)sizeof(double);
    ok &= FTI_Recover() == FTI_SCES && memcmp(x, want, sizeof x) == 0;
    if (!ok)
        printf("rank %d: a call honoured here failed\n", rank);
    /* Twice each: FTI_NSCS both times, one message per call. */
    char dir[FTI_BUFS];
    FTIT_hsize_t dims[1] = {4}, off[1] = {0};
    for (int round = 0; round < 2; round++) {
        ok &= FTI_BitFlip(0) == FTI_NSCS;
        ok &= FTI_GetStageDir(dir, sizeof dir) == FTI_NSCS;
        ok &= FTI_GetStageStatus(1) == FTI_NSCS;
        ok &= FTI_SendFile("/nonexistent/a", "b") == FTI_NSCS;
        ok &= FTI_DefineGlobalDataset(0, 1, dims, "d", NULL, FTI_INTG) == FTI_NSCS;
        ok &= FTI_AddSubset(0, 1, off, dims, 0) == FTI_NSCS;
        ok &= FTI_RecoverDatasetDimension(0) == FTI_NSCS;
        ok &= FTI_GetDatasetSpan(0, 0) == NULL;
        ok &= FTI_GetDatasetRank(0) == FTI_NSCS;
        ok &= FTI_UpdateGlobalDataset(0, 1, dims) == FTI_NSCS;
        ok &= FTI_UpdateSubset(0, 1, off, dims, 0) == FTI_NSCS;
        ok &= FTI_Checkpoint(1, FTI_L4_H5_SINGLE) == FTI_NSCS;
    }
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, FTI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %zu names of FTI 1.6, the extra calls honoured, 12 calls not honoured said "
               "FTI_NSCS twice\n",
               ok ? "PASS" : "FAIL", sizeof NAMES / sizeof NAMES[0]);
    FTI_Finalize();
    MPI_Finalize();
    return ok ? 0 : 1;
}
