! fortran_prog.f90 - a Fortran program outside the tree: `use cairn` (the
! installed cairn.mod) and MPI. Built by tests/install/cmake/CMakeLists.txt
! against cairn::fortran and cairn::fortran_static; run by
! tests/install/run_cmake.sh.
!   fortran_prog write   protect 20000 doubles made from bit patterns of (rank,
!                        index), checkpoint generation 1 at level 1
!   fortran_prog read    restart into zeroed memory, compare every bit
! Exits 0 when every rank succeeded, 1 otherwise (every rank agreeing).
program fortran_prog
  use, intrinsic :: iso_c_binding
  use mpi
  use cairn
  implicit none
  integer, parameter :: n = 20000
  real(c_double), allocatable, target :: a(:)
  integer(c_int64_t) :: bits
  type(cairn_ctx) :: ctx
  character(len=8) :: mode
  integer :: ierr, rank, i, ok, all
  integer(c_int) :: rc
  integer(c_long) :: id

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call get_command_argument(1, mode)
  allocate (a(n))
  a = 0
  ok = 1
  rc = cairn_init(MPI_COMM_WORLD, ctx)
  if (rc /= 0) ok = 0
  if (ok == 1) then
    rc = cairn_protect(ctx, 'field', a)
    if (rc /= 0) ok = 0
  end if
  if (ok == 1 .and. mode == 'write') then
    do i = 1, n
      a(i) = transfer(pattern(rank, i), 0.0_c_double)
    end do
    rc = cairn_checkpoint(ctx, 1, CAIRN_LEVEL_LOCAL)
    if (rc /= 0) ok = 0
  else if (ok == 1 .and. mode == 'read') then
    rc = cairn_restart(ctx, CAIRN_LATEST, id)
    if (rc /= 0 .or. id /= 1) ok = 0
    do i = 1, n
      bits = transfer(a(i), 0_c_int64_t)
      if (bits /= pattern(rank, i)) ok = 0
    end do
  else
    ok = 0
  end if
  if (ok == 0) print '(a,i0,a,i0,2a)', 'rank ', rank, ': failed, rc ', rc, ': ', cairn_errmsg(ctx)
  rc = cairn_finalize(ctx)
  call MPI_Allreduce(ok, all, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  if (all == 1 .and. rank == 0) print '(3a)', 'fortran_prog ', trim(mode), ': ok'
  call MPI_Finalize(ierr)
  if (all /= 1) error stop 1
contains
  ! A finite double's bits for (r, i): the exponent kept in range, so no NaN
  ! can be quietened on the way.
  integer(c_int64_t) function pattern(r, i)
    integer, intent(in) :: r, i
    pattern = ior(int(r, c_int64_t) * 1000003_c_int64_t + int(i, c_int64_t) * 7919_c_int64_t, &
                  shiftl(int(512 + mod(i, 256), c_int64_t), 52))
  end function
end program
