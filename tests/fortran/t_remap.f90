! t_remap.f90 - a restart onto another rank count through the Fortran
! binding (cairn_protect_block, cairn_protect_replicated); run by
! tests/fortran/run_fortran.sh under mpirun.
!
!   t_remap save LEVEL   generations 1 and 2 at LEVEL: u, real(c_double) of
!                        global shape (23, 37), this rank's columns 37 cut in
!                        uneven blocks; k, integer(c_int32_t) of 101 in uneven
!                        blocks the other way round; step, replicated
!                        (rank r stores 10 G + r)
!   t_remap restore      restart on this run's rank count must restore
!                        generation 2: every element of the new blocks equal
!                        to its global definition bit for bit, step rank 0's
!   t_remap refuse       first as restore, after refused declarations (sizes
!                        that differ, an index 0, an unprotected name): each
!                        CAIRN_EINVAL, the blocks declared before kept
! Ranks agree on the outcome; rank 0 prints "t_remap: ok MODE", else the
! program stops with code 3.
program t_remap
  use, intrinsic :: iso_c_binding
  use mpi
  use cairn
  implicit none
  integer, parameter :: GX = 23, GY = 37, GK = 101
  type(cairn_ctx) :: ctx
  real(c_double), allocatable, target :: u(:, :)
  integer(c_int32_t), allocatable, target :: k(:)
  integer(c_int64_t), target :: step(1)
  integer :: rank, nranks, ierr, y0, ny, k0, nk, gen, level
  integer(c_long) :: got
  character(len=16) :: mode, arg
  logical :: ok, all_ok

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  call get_command_argument(1, mode)
  ok = .true.
  call expect(cairn_init(MPI_COMM_WORLD, ctx), 'init')

  call split(GY, .true., y0, ny)
  call split(GK, .false., k0, nk)
  allocate(u(GX, ny), k(nk))
  u = -7.0_c_double
  k = -1
  step = 0
  call expect(cairn_protect(ctx, 'u', u), 'protect u')
  call expect(cairn_protect_block(ctx, 'u', [GX, GY], [1, y0 + 1], [GX, ny]), 'protect_block u')
  call expect(cairn_protect(ctx, 'k', k), 'protect k')
  call expect(cairn_protect_block(ctx, 'k', [int(GK, c_int64_t)], [int(k0 + 1, c_int64_t)], &
                                  [int(nk, c_int64_t)]), 'protect_block k')
  call expect(cairn_protect(ctx, 'step', step), 'protect step')
  call expect(cairn_protect_replicated(ctx, 'step'), 'protect_replicated step')

  select case (trim(mode))
  case ('save')
    call get_command_argument(2, arg)
    read (arg, *) level
    do gen = 1, 2
      call fill(gen)
      step(1) = 10 * gen + rank
      call expect(cairn_checkpoint(ctx, gen, level), 'checkpoint')
    end do
  case ('restore', 'refuse')
    if (trim(mode) == 'refuse') then
      call refused(cairn_protect_block(ctx, 'u', [GX, GY], [1], [GX, ny]), 'sizes that differ')
      call refused(cairn_protect_block(ctx, 'u', [GX, GY], [0, 1], [GX, ny]), 'an index 0')
      call refused(cairn_protect_block(ctx, 'nothing', [4], [1], [4]), 'an unprotected name')
    end if
    call expect(cairn_restart(ctx, CAIRN_LATEST, got), 'restart')
    if (got /= 2) call fail('restored another generation than 2')
    call check(2)
  case default
    call fail('usage: t_remap save LEVEL | restore | refuse')
  end select

  call expect(cairn_finalize(ctx), 'finalize')
  call MPI_Allreduce(ok, all_ok, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. all_ok) write (*, '(a,a)') 't_remap: ok ', trim(mode)
  call MPI_Finalize(ierr)
  if (.not. all_ok) stop 3
contains
  ! Part RANK of N cut into NRANKS uneven pieces (weights i + 1, or the
  ! other way round): first element (0-based) and extent.
  subroutine split(n, up, first, cnt)
    integer, intent(in) :: n
    logical, intent(in) :: up
    integer, intent(out) :: first, cnt
    integer :: p, tot, below
    tot = 0
    below = 0
    do p = 0, nranks - 1
      if (p == rank) below = tot
      tot = tot + weight(p, up)
    end do
    first = n * below / tot
    cnt = n * (below + weight(rank, up)) / tot - first
  end subroutine

  integer function weight(p, up)
    integer, intent(in) :: p
    logical, intent(in) :: up
    weight = merge(p + 1, nranks - p, up)
  end function

  real(c_double) function u_at(i, j, g)
    integer, intent(in) :: i, j, g   ! global 0-based indices
    u_at = real(j, c_double) * 1000.0_c_double + real(i, c_double) + real(g, c_double) / 7.0_c_double
  end function

  subroutine fill(g)
    integer, intent(in) :: g
    integer :: i, j
    do j = 1, ny
      do i = 1, GX
        u(i, j) = u_at(i - 1, y0 + j - 1, g)
      end do
    end do
    do i = 1, nk
      k(i) = int((k0 + i - 1) * 31 + g, c_int32_t)
    end do
  end subroutine

  subroutine check(g)
    integer, intent(in) :: g
    integer :: i, j
    do j = 1, ny
      do i = 1, GX
        if (transfer(u(i, j), 0_c_int64_t) /= transfer(u_at(i - 1, y0 + j - 1, g), 0_c_int64_t)) then
          call fail('u differs')
          return
        end if
      end do
    end do
    do i = 1, nk
      if (k(i) /= int((k0 + i - 1) * 31 + g, c_int32_t)) then
        call fail('k differs')
        return
      end if
    end do
    if (step(1) /= 10 * g) call fail('step is not rank 0''s')
  end subroutine

  subroutine expect(rc, what)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    if (rc /= CAIRN_OK) call fail(what // ': ' // cairn_errmsg(ctx))
  end subroutine

  subroutine refused(rc, what)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    if (rc /= CAIRN_EINVAL) call fail('protect_block with ' // what // ' was not CAIRN_EINVAL')
  end subroutine

  subroutine fail(why)
    character(len=*), intent(in) :: why
    if (ok) write (*, '(a,i0,a,a)') 'rank ', rank, ': ', why
    ok = .false.
  end subroutine
end program
