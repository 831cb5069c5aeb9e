! ckpt_scr.F90 - an SCR Fortran program written the way SCR's
! examples/test_ckpt.F90 is: INCLUDE 'mpif.h' and 'scrf.h', SCR_INIT,
! SCR_HAVE_RESTART / SCR_START_RESTART / SCR_ROUTE_FILE / SCR_COMPLETE_RESTART
! to read its file back, then a loop that writes a checkpoint
! (SCR_NEED_CHECKPOINT, SCR_START_CHECKPOINT, SCR_ROUTE_FILE,
! SCR_COMPLETE_CHECKPOINT) and an output dataset (SCR_START_OUTPUT,
! SCR_COMPLETE_OUTPUT) each time, SCR_FINALIZE. Only MPI and SCR's calls.
! Each rank's array changes every loop from the one before, so the final
! array depends on the restored one bit for bit; with -f FILE, rank 0 writes
! every rank's final array (in rank order, raw) to FILE.
! Rank 0 prints what it restarted from and "Completed checkpoint N." lines.
      PROGRAM CKPT_SCR
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INCLUDE 'scrf.h'
      INTEGER, PARAMETER :: NI = 20, NJ = 30, NK = 45, LOOPS = 6
      INTEGER(KIND=8), DIMENSION(NI,NJ,NK) :: w1
      INTEGER(KIND=8), ALLOCATABLE :: all(:)
      CHARACTER(LEN=1024) :: fname, outfile
      CHARACTER(LEN=SCR_MAX_FILENAME) :: fname_scr, ckptname, val
      INTEGER :: ierr, rc, nprocs, mynod, ios, i, j, k, loop, first, u
      INTEGER :: flag, valid, outflags, need
      INTEGER(KIND=8) :: nodeoff

      CALL MPI_INIT(ierr)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, mynod, ierr)
      outfile = ''
      DO i = 1, COMMAND_ARGUMENT_COUNT() - 1
        CALL GET_COMMAND_ARGUMENT(i, fname)
        IF (TRIM(fname) == '-f') CALL GET_COMMAND_ARGUMENT(i + 1, outfile)
      END DO
      CALL SCR_CONFIG('SCR_FLUSH=0', val, ierr)
      IF (ierr /= SCR_SUCCESS .OR. TRIM(val) /= '0') CALL FAIL('SCR_CONFIG')
      CALL SCR_INIT(ierr)
      IF (ierr /= SCR_SUCCESS) CALL FAIL('SCR_INIT')

      nodeoff = 2_8**21
      DO k = 1, NK
        DO j = 1, NJ
          DO i = 1, NI
            w1(i,j,k) = nodeoff*mynod + i + NI*(j-1+NJ*(k-1))
          END DO
        END DO
      END DO
      first = 1
      CALL SCR_HAVE_RESTART(flag, ckptname, ierr)
      IF (flag == 1) THEN
        IF (mynod == 0) WRITE (*,'(A,A)') 'Restarting from checkpoint named ', TRIM(ckptname)
        CALL SCR_START_RESTART(ckptname, ierr)
        WRITE (fname,'(A,A,I5.5,A)') TRIM(ckptname), '/rank_', mynod, '.ckpt'
        CALL SCR_ROUTE_FILE(fname, fname_scr, ierr)
        valid = 0
        IF (ierr == SCR_SUCCESS) THEN
          OPEN (NEWUNIT=u, FILE=fname_scr, FORM='unformatted', ACTION='read', IOSTAT=ios)
          IF (ios == 0) READ (u, IOSTAT=ios) loop, w1
          IF (ios == 0) valid = 1
          CLOSE (u)
        END IF
        CALL SCR_COMPLETE_RESTART(valid, ierr)
        IF (ierr /= SCR_SUCCESS) CALL FAIL('SCR_COMPLETE_RESTART')
        first = loop + 1
      ELSE
        IF (mynod == 0) WRITE (*,'(A)') 'No checkpoint to restart from'
      END IF

      DO loop = first, LOOPS
        w1 = MOD(w1*31_8 + loop + mynod, 2_8**40)
        CALL SCR_NEED_CHECKPOINT(need, ierr)
        IF (need /= 1) CYCLE
        CALL SCR_START_CHECKPOINT(ierr)
        WRITE (fname,'(A,I5.5,A,I5.5,A)') 'ckpt_', loop, '/rank_', mynod, '.ckpt'
        CALL SCR_ROUTE_FILE(fname, fname_scr, ierr)
        OPEN (NEWUNIT=u, FILE=fname_scr, FORM='unformatted', ACTION='write', IOSTAT=ios)
        IF (ios == 0) WRITE (u, IOSTAT=ios) loop, w1
        CLOSE (u)
        valid = 0
        IF (ios == 0) valid = 1
        CALL SCR_COMPLETE_CHECKPOINT(valid, ierr)
        IF (ierr /= SCR_SUCCESS) CALL FAIL('SCR_COMPLETE_CHECKPOINT')
        IF (mynod == 0) WRITE (*,'(A,I0,A)') 'Completed checkpoint ', loop, '.'
        WRITE (ckptname,'(A,I5.5)') 'output_', loop
        outflags = SCR_FLAG_OUTPUT
        CALL SCR_START_OUTPUT(ckptname, outflags, ierr)
        WRITE (fname,'(A,A,I5.5,A)') TRIM(ckptname), '/rank_', mynod, '.out'
        CALL SCR_ROUTE_FILE(fname, fname_scr, ierr)
        OPEN (NEWUNIT=u, FILE=fname_scr, FORM='unformatted', ACTION='write', IOSTAT=ios)
        IF (ios == 0) WRITE (u, IOSTAT=ios) w1
        CLOSE (u)
        valid = 0
        IF (ios == 0) valid = 1
        CALL SCR_COMPLETE_OUTPUT(valid, ierr)
        IF (ierr /= SCR_SUCCESS) CALL FAIL('SCR_COMPLETE_OUTPUT')
        FLUSH (6)
      END DO

      ALLOCATE (all(SIZE(w1)*nprocs))
      CALL MPI_GATHER(w1, SIZE(w1), MPI_INTEGER8, all, SIZE(w1), MPI_INTEGER8, 0, &
                      MPI_COMM_WORLD, ierr)
      rc = 0
      IF (mynod == 0 .AND. LEN_TRIM(outfile) > 0) THEN
        OPEN (NEWUNIT=u, FILE=outfile, ACCESS='stream', FORM='unformatted', &
              STATUS='replace', IOSTAT=ios)
        IF (ios == 0) WRITE (u, IOSTAT=ios) all
        IF (ios /= 0) rc = 1
        CLOSE (u)
      END IF
      CALL SCR_FINALIZE(ierr)
      CALL MPI_FINALIZE(ierr)
      IF (rc /= 0) ERROR STOP 1

      CONTAINS
      SUBROUTINE FAIL(what)
        CHARACTER(LEN=*), INTENT(IN) :: what
        WRITE (0,'(A,A)') 'ckpt_scr: failed: ', what
        ERROR STOP 1
      END SUBROUTINE FAIL
      END PROGRAM CKPT_SCR
