/*
 * bind.c - the entry points of cairn.h that language bindings call in place
 * of those taking C-only types: cairn_init_f takes the communicator as a
 * Fortran handle (MPI_Fint), the one form Fortran (`use mpi`, or mpi_f08's
 * %MPI_VAL) and Python (mpi4py's Comm.py2f()) can both pass, and converts it
 * with MPI_Comm_f2c. Nothing is assumed about what an MPI_Comm is (a pointer
 * in Open MPI, an int in MPICH). Everything else is cairn_init's.
 */
#include "api/api.h"

CAIRN_EXPORT int cairn_init_f(MPI_Fint comm, const char *config_path, cairn_ctx **ctx)
{
    /* MPI_Comm_f2c is only defined once MPI is; before that cairn_init
     * refuses on its own (CAIRN_ESTATE, "MPI is not initialized"). */
    int inited = 0;
    MPI_Initialized(&inited);
    MPI_Comm c = inited ? MPI_Comm_f2c(comm) : MPI_COMM_NULL;
    /* Open MPI answers a handle it does not know with a null pointer, which
     * is no valid MPI_Comm of any MPI (MPICH does not check handles). */
    if (c == (MPI_Comm)0)
        c = MPI_COMM_NULL;
    return cairn_init(c, config_path, ctx);
}
