/*
 * scr_fortran.c - SCR's Fortran interface over cairn-scr's C API: the
 * external subroutines SCR's Fortran programs call with scrf.h included
 * (SCR_INIT(IERROR), SCR_ROUTE_FILE(NAME, FILE, IERROR), ...), under the
 * names gfortran gives them (lower case, one trailing underscore) and its
 * calling convention: every argument by reference, each CHARACTER argument's
 * length passed by value after the others, in order (size_t). Strings in are
 * Fortran's (blank-padded, no NUL): trailing blanks are trimmed; strings out
 * are blank-padded to the caller's length, and one that does not fit fails
 * (IERROR not SCR_SUCCESS, the buffer left blank). Owns nothing.
 */
#include "scr_impl.h"

#include <stdlib.h>
#include <string.h>

/* Fortran string IN (LEN bytes) as a C string in OUT (SIZE bytes); 0 if too long. */
static int from_f(const char *in, size_t len, char *out, size_t size)
{
    while (len > 0 && (in[len - 1] == ' ' || in[len - 1] == '\0'))
        len--;
    if (len >= size)
        return 0;
    memcpy(out, in, len);
    out[len] = '\0';
    return 1;
}

/* C string IN into Fortran string OUT (LEN bytes, blank-padded); 0 if it does not fit. */
static int to_f(const char *in, char *out, size_t len)
{
    size_t n = in ? strlen(in) : 0;
    memset(out, ' ', len);
    if (n > len)
        return 0;
    memcpy(out, in, n);
    return 1;
}

#define RC(x) ((x) == SCR_SUCCESS ? SCR_SUCCESS : SCR_FAILURE)

CSCR_API void scr_init_(int *ierr) { *ierr = RC(SCR_Init()); }
CSCR_API void scr_finalize_(int *ierr) { *ierr = RC(SCR_Finalize()); }

CSCR_API void scr_config_(const char *config, char *val, int *ierr, size_t clen, size_t vlen)
{
    char c[4096] = "";
    int ok = 0;
    const char *v = from_f(config, clen, c, sizeof c) ? cscr_conf_call(c, &ok) : NULL;
    int query = strchr(c, '=') == NULL;
    if (!to_f(v, val, vlen))
        ok = 0;
    if (query)
        free((void *)v); /* a query's value is the caller's; a set's is the library's */
    *ierr = ok ? SCR_SUCCESS : SCR_FAILURE;
}

CSCR_API void scr_get_version_(char *version, int *ierr, size_t len)
{
    *ierr = to_f(SCR_Get_version(), version, len) ? SCR_SUCCESS : SCR_FAILURE;
}

CSCR_API void scr_should_exit_(int *flag, int *ierr) { *ierr = RC(SCR_Should_exit(flag)); }
CSCR_API void scr_need_checkpoint_(int *flag, int *ierr)
{
    *ierr = RC(SCR_Need_checkpoint(flag));
}

CSCR_API void scr_route_file_(const char *name, char *file, int *ierr, size_t nlen, size_t flen)
{
    char n[SCR_MAX_FILENAME], f[SCR_MAX_FILENAME] = "";
    *ierr = SCR_FAILURE;
    if (!from_f(name, nlen, n, sizeof n)) {
        cscr_error("SCR_ROUTE_FILE: the name is longer than SCR_MAX_FILENAME");
        to_f("", file, flen);
        return;
    }
    int rc = SCR_Route_file(n, f);
    if (!to_f(f, file, flen)) {
        cscr_error("SCR_ROUTE_FILE('%s'): the path (%zu bytes) does not fit the FILE argument "
                   "(%zu)", n, strlen(f), flen);
        to_f("", file, flen);
        return;
    }
    *ierr = RC(rc);
}

CSCR_API void scr_start_checkpoint_(int *ierr) { *ierr = RC(SCR_Start_checkpoint()); }
CSCR_API void scr_complete_checkpoint_(int *valid, int *ierr)
{
    *ierr = RC(SCR_Complete_checkpoint(*valid));
}

CSCR_API void scr_start_output_(const char *name, int *flags, int *ierr, size_t len)
{
    char n[SCR_MAX_FILENAME];
    *ierr = from_f(name, len, n, sizeof n) ? RC(SCR_Start_output(n, *flags)) : SCR_FAILURE;
}

CSCR_API void scr_complete_output_(int *valid, int *ierr)
{
    *ierr = RC(SCR_Complete_output(*valid));
}

CSCR_API void scr_have_restart_(int *flag, char *name, int *ierr, size_t len)
{
    char n[SCR_MAX_FILENAME] = "";
    int rc = SCR_Have_restart(flag, n);
    *ierr = to_f(n, name, len) ? RC(rc) : SCR_FAILURE;
}

CSCR_API void scr_start_restart_(char *name, int *ierr, size_t len)
{
    char n[SCR_MAX_FILENAME] = "";
    int rc = SCR_Start_restart(n);
    *ierr = to_f(n, name, len) ? RC(rc) : SCR_FAILURE;
}

CSCR_API void scr_complete_restart_(int *valid, int *ierr)
{
    *ierr = RC(SCR_Complete_restart(*valid));
}

CSCR_API void scr_current_(const char *name, int *ierr, size_t len)
{
    char n[SCR_MAX_FILENAME];
    *ierr = from_f(name, len, n, sizeof n) ? RC(SCR_Current(n)) : SCR_FAILURE;
}

CSCR_API void scr_delete_(const char *name, int *ierr, size_t len)
{
    char n[SCR_MAX_FILENAME];
    *ierr = from_f(name, len, n, sizeof n) ? RC(SCR_Delete(n)) : SCR_FAILURE;
}

CSCR_API void scr_drop_(const char *name, int *ierr, size_t len)
{
    char n[SCR_MAX_FILENAME];
    *ierr = from_f(name, len, n, sizeof n) ? RC(SCR_Drop(n)) : SCR_FAILURE;
}
