! heatdis_f.f90 - the Fortran test program of cairn's FTI layer: heat
! diffusion on a grid cut into column blocks, one per rank, protected with
! FTI's Fortran interface the way FTI's Fortran heat example does it (`use
! fti`, FTI_Init('config', FTI_comm_world, err) replacing the communicator,
! the loop counter through a pointer and both grids protected, a name and
! the dimensions set by FTI_SetAttribute, FTI_Snapshot at the top of every
! iteration, FTI_Finalize at the end). Only FTI's module and MPI are used;
! the stencil is written for this test. Built against fti.mod and
! libcairn-fti-fortran (tests/compat/fti/run_fti.sh).
!
! Usage: heatdis_f <FTI config file> <output file prefix>
! On a restart (FTI_Status /= 0) it calls FTI_Recover itself first, as FTI's
! examples may. At the end each rank writes its grid and the iteration count
! to <prefix>.<rank> (raw bytes), for the test to compare with an
! uninterrupted run, and a last FTI_Checkpoint(1000, 1) must say FTI_DONE.
program heatdis_f
  use fti
  use mpi
  implicit none
  integer, parameter :: ROWS = 256, COLS = 64, ITER_TIMES = 600
  integer, target :: iter
  integer, pointer :: ptriter
  real(8), pointer :: g(:, :), h(:, :)
  integer :: err, rank, nbProcs, FTI_comm_world, status, u, nargs
  integer(8) :: counts(2)
  character(len=512) :: config, prefix, outname
  real(8) :: localerror, globalerror

  call MPI_Init(err)
  nargs = command_argument_count()
  if (nargs < 2) then
    print '(a)', 'usage: heatdis_f <config> <output prefix>'
    call MPI_Abort(MPI_COMM_WORLD, 2, err)
  end if
  call get_command_argument(1, config)
  call get_command_argument(2, prefix)
  FTI_comm_world = MPI_COMM_WORLD
  call FTI_Init(config, FTI_comm_world, err)   ! FTI_comm_world is now FTI's
  if (err /= FTI_SCES .and. err /= FTI_NREC) call MPI_Abort(MPI_COMM_WORLD, 3, err)
  call MPI_Comm_size(FTI_comm_world, nbProcs, err)
  call MPI_Comm_rank(FTI_comm_world, rank, err)

  allocate (g(ROWS, COLS), h(ROWS, COLS))
  call init_grid(g, rank)
  h = 0
  counts = [int(ROWS, 8), int(COLS, 8)]
  iter = 0
  ptriter => iter
  call FTI_Protect(0, ptriter, err)
  call check(err, 'FTI_Protect(0)')
  call FTI_Protect(2, g, err)
  call check(err, 'FTI_Protect(2)')
  call FTI_SetAttribute(2, 'temperature_field', FTI_ATTRIBUTE_NAME, err)
  call check(err, 'FTI_SetAttribute(name)')
  call FTI_SetAttribute(2, counts, FTI_ATTRIBUTE_DIM, err)
  call check(err, 'FTI_SetAttribute(dims)')
  call FTI_Protect(1, h, err)
  call check(err, 'FTI_Protect(1)')

  call FTI_Status(status)
  if (status /= 0) then
    call FTI_Recover(err)
    call check(err, 'FTI_Recover')
    if (rank == 0) print '(a,i0)', 'recovered at iteration ', iter
  end if

  globalerror = 1
  do while (iter < ITER_TIMES)
    call FTI_Snapshot(err)
    if (err /= FTI_SCES .and. err /= FTI_DONE) call check(err, 'FTI_Snapshot')
    iter = iter + 1
    call step(g, h, rank, nbProcs, localerror)
    if (mod(iter, 5) == 0) call MPI_Allreduce(localerror, globalerror, 1, MPI_REAL8, MPI_MAX, &
                                              FTI_comm_world, err)
    if (rank == 0 .and. mod(iter, 100) == 0) print '(a,i5,a,f9.5)', 'Step : ', iter, &
        ', error = ', globalerror
  end do

  write (outname, '(a,a,i0)') trim(prefix), '.', rank
  open (newunit=u, file=outname, access='stream', form='unformatted', status='replace')
  write (u) iter, g
  close (u)
  call FTI_Checkpoint(1000, 1, err)
  if (err /= FTI_DONE) call check(FTI_NSCS, 'FTI_Checkpoint(1000, 1)')
  if (rank == 0) print '(a,i0)', 'Final iteration ', iter
  call FTI_Finalize(err)
  call MPI_Finalize(err)

contains

  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    integer :: e
    if (code /= FTI_SCES) then
      print '(a,a,i0)', what, ' failed: ', code
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine

  subroutine init_grid(a, r)
    real(8), intent(out) :: a(:, :)
    integer, intent(in) :: r
    a = 0
    if (r == 0) a(26:230, 1) = 100   ! a hot stretch of the first column
  end subroutine

  ! One Jacobi step; halo columns 1 and COLS exchanged with the neighbours.
  subroutine step(a, b, r, n, err_out)
    real(8), intent(inout) :: a(:, :), b(:, :)
    integer, intent(in) :: r, n
    real(8), intent(out) :: err_out
    integer :: req(4), nreq, e, i, j
    nreq = 0
    if (r > 0) then
      nreq = nreq + 1
      call MPI_Isend(a(:, 2), ROWS, MPI_REAL8, r - 1, 50, FTI_comm_world, req(nreq), e)
      nreq = nreq + 1
      call MPI_Irecv(b(:, 1), ROWS, MPI_REAL8, r - 1, 51, FTI_comm_world, req(nreq), e)
    end if
    if (r < n - 1) then
      nreq = nreq + 1
      call MPI_Isend(a(:, COLS - 1), ROWS, MPI_REAL8, r + 1, 51, FTI_comm_world, req(nreq), e)
      nreq = nreq + 1
      call MPI_Irecv(b(:, COLS), ROWS, MPI_REAL8, r + 1, 50, FTI_comm_world, req(nreq), e)
    end if
    call MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE, e)
    if (r > 0) a(:, 1) = b(:, 1)
    if (r < n - 1) a(:, COLS) = b(:, COLS)
    err_out = 0
    do j = 2, COLS - 1
      do i = 2, ROWS - 1
        b(i, j) = 0.25d0 * (a(i - 1, j) + a(i + 1, j) + a(i, j - 1) + a(i, j + 1))
        err_out = max(err_out, abs(b(i, j) - a(i, j)))
      end do
    end do
    a(2:ROWS - 1, 2:COLS - 1) = b(2:ROWS - 1, 2:COLS - 1)
  end subroutine

end program heatdis_f
