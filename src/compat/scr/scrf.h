! scrf.h - SCR's Fortran include file (INCLUDE 'scrf.h'), for cairn-scr:
! the constants of SCR's Fortran interface. The calls themselves (CALL
! SCR_INIT(IERR), SCR_ROUTE_FILE(NAME, FILE, IERR), ...) are external
! subroutines in libcairn-scr (scr_fortran.c), as with SCR; every one ends
! with INTEGER IERROR, SCR_SUCCESS or not. Fixed and free form alike.
      INTEGER SCR_SUCCESS
      PARAMETER (SCR_SUCCESS=0)
      INTEGER SCR_MAX_FILENAME
      PARAMETER (SCR_MAX_FILENAME=1024)
      INTEGER SCR_FLAG_NONE
      PARAMETER (SCR_FLAG_NONE=0)
      INTEGER SCR_FLAG_CHECKPOINT
      PARAMETER (SCR_FLAG_CHECKPOINT=1)
      INTEGER SCR_FLAG_OUTPUT
      PARAMETER (SCR_FLAG_OUTPUT=2)
