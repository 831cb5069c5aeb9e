! heat.f90 - 2-D heat diffusion (5-point Jacobi stencil) in Fortran that
! survives a crash, through module cairn (bindings/fortran/cairn.f90).
!
! The NX x NY grid of doubles is cut into blocks of columns (the slow, second
! dimension), one per rank; every step swaps a halo column with each neighbour
! (MPI_Sendrecv) and updates every free cell from its old neighbours (fixed
! cells: the first column 1.0, the other edges 0.0, a hot disc 2.0), so the
! final field is the same bit for bit however often the run stops and restarts.
!
! cairn protects the rank's columns u(:, 1:cols) (a contiguous section of the
! array with halos), the step counter and a layout record; a generation's id
! is its step. Options:
!   --nx N --ny N --steps N   grid and steps (defaults 64 64 60)
!   --every K --level L       checkpoint every K steps at level L (10, 1)
!   --auto                    checkpoint when cairn_need_checkpoint says so
!                             (ckpt.every_<L> in the configuration) instead
!   --restart                 restore the newest generation first (none: start fresh)
!   --query                   before restoring, print cairn_restart_query's plan,
!                             check cairn_var_query's description of the grid, and
!                             restore the step counter alone (cairn_restart_var)
!   --crash-at S --crash-rank R   rank R kills itself (SIGKILL) after step S
!   --out FILE                rank 0 writes the final grid there (raw doubles)
! Exit status: 0 done, 1 usage, 2 a cairn call failed, 3 a check failed.
program heat
  use, intrinsic :: iso_c_binding
  use mpi
  use cairn
  implicit none
  interface
    integer(c_int) function c_raise(sig) bind(C, name="raise")
      import :: c_int
      integer(c_int), value :: sig
    end function
  end interface
  integer :: nx = 64, ny = 64, steps = 60, every = 10, level = 1, crash_at = -1, crash_rank = 0
  logical :: restart = .false., query = .false., auto = .false.
  character(len=4096) :: out = ''
  real(c_double), allocatable, target :: u(:, :), v(:, :)
  integer(c_int64_t), target :: step = 0
  integer(c_int32_t), target :: meta(4)
  type(cairn_ctx) :: ctx
  integer :: rank, nranks, ierr, cols, col0, left, right, i, j, lvl
  integer(c_int) :: rc
  integer(c_long) :: id
  real(c_double) :: val

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (.not. parse_args()) call quit(1, 'usage: heat [--nx N] [--ny N] [--steps N] [--every K] ' // &
      '[--level L] [--auto] [--restart] [--query] [--crash-at S] [--crash-rank R] [--out FILE]')
  cols = ny / nranks + merge(1, 0, rank < mod(ny, nranks))
  col0 = rank * (ny / nranks) + min(rank, mod(ny, nranks))   ! columns before this rank's
  left = merge(rank - 1, MPI_PROC_NULL, rank > 0)
  right = merge(rank + 1, MPI_PROC_NULL, rank < nranks - 1)
  allocate(u(nx, 0:cols + 1), v(nx, cols))
  u = 0
  do j = 1, cols
    do i = 1, nx
      if (fixed(i, j, val)) u(i, j) = val
    end do
  end do
  meta = [int(nx, c_int32_t), int(ny, c_int32_t), int(nranks, c_int32_t), int(rank, c_int32_t)]

  call ok(cairn_init(MPI_COMM_WORLD, ctx), 'cairn_init', .true.)
  call ok(cairn_protect(ctx, 'grid', u(:, 1:cols)), 'protect grid', .false.)
  call ok(cairn_protect(ctx, 'step', step), 'protect step', .false.)
  call ok(cairn_protect(ctx, 'meta', meta), 'protect meta', .false.)

  if (restart) then
    if (query) call query_first()
    rc = cairn_restart(ctx, CAIRN_LATEST, id)
    if (rc == CAIRN_ENOENT) then
      if (rank == 0) write (*, '(a)') 'heat: no checkpoint, starting fresh'
    else
      call ok(rc, 'cairn_restart', .true.)
      if (any(meta /= [int(nx, c_int32_t), int(ny, c_int32_t), int(nranks, c_int32_t), &
                       int(rank, c_int32_t)]) .or. step /= id) &
        call quit(3, 'restored layout or step does not match this run')
      if (rank == 0) write (*, '(a,i0)') 'heat: restarted from generation ', id
    end if
  end if

  do while (step < steps)
    call advance()
    step = step + 1
    lvl = 0
    if (auto) then
      call ok(cairn_need_checkpoint(ctx, lvl), 'cairn_need_checkpoint', .true.)
    else if (mod(step, int(every, c_int64_t)) == 0) then
      lvl = level
    end if
    if (lvl > 0) then
      call ok(cairn_label(ctx, 'heat step ' // itoa(int(step))), 'cairn_label', .false.)
      call ok(cairn_checkpoint(ctx, int(step, c_long), lvl), 'cairn_checkpoint', .true.)
      if (rank == 0) write (*, '(a,i0,a,i0)') 'heat: checkpoint ', step, ' level ', lvl
    end if
    if (step == crash_at .and. rank == crash_rank) then
      write (*, '(a,i0,a,i0)') 'heat: rank ', rank, ' crashing after step ', step
      flush (6)
      rc = c_raise(9_c_int)   ! SIGKILL, as a real crash
    end if
  end do
  call finish()
  call ok(cairn_finalize(ctx), 'cairn_finalize', .true.)
  call MPI_Finalize(ierr)

contains

  logical function parse_args()
    character(len=4096) :: a, b
    integer :: k, n
    parse_args = .true.
    k = 1
    do while (k <= command_argument_count())
      call get_command_argument(k, a)
      select case (a)
      case ('--restart'); restart = .true.
      case ('--query'); query = .true.
      case ('--auto'); auto = .true.
      case ('--nx', '--ny', '--steps', '--every', '--level', '--crash-at', '--crash-rank', '--out')
        k = k + 1
        if (k > command_argument_count()) then
          parse_args = .false.; return
        end if
        call get_command_argument(k, b)
        if (a == '--out') then
          out = b
        else
          read (b, *, iostat=n) i
          if (n /= 0) then
            parse_args = .false.; return
          end if
          select case (a)
          case ('--nx'); nx = i
          case ('--ny'); ny = i
          case ('--steps'); steps = i
          case ('--every'); every = i
          case ('--level'); level = i
          case ('--crash-at'); crash_at = i
          case ('--crash-rank'); crash_rank = i
          end select
        end if
      case default
        parse_args = .false.; return
      end select
      k = k + 1
    end do
    parse_args = nx >= 3 .and. ny >= nranks .and. steps >= 0 .and. every >= 1 .and. &
                 level >= 1 .and. level <= 4 .and. crash_rank < nranks
  end function

  ! Is cell (i, j) of this rank fixed? Its value in VAL if so.
  logical function fixed(i, j, val)
    integer, intent(in) :: i, j
    real(c_double), intent(out) :: val
    integer :: gj, di, dj, rad
    gj = col0 + j
    di = i - nx / 2
    dj = gj - 2 * ny / 3
    rad = min(nx, ny) / 10
    fixed = .true.
    if (gj == 1) then
      val = 1.0_c_double
    else if (gj == ny .or. i == 1 .or. i == nx) then
      val = 0.0_c_double
    else if (di * di + dj * dj <= rad * rad) then
      val = 2.0_c_double
    else
      fixed = .false.
      val = 0.0_c_double
    end if
  end function

  subroutine advance()
    integer :: st(MPI_STATUS_SIZE)
    call MPI_Sendrecv(u(:, 1), nx, MPI_DOUBLE_PRECISION, left, 1, u(:, cols + 1), nx, &
                      MPI_DOUBLE_PRECISION, right, 1, MPI_COMM_WORLD, st, ierr)
    call MPI_Sendrecv(u(:, cols), nx, MPI_DOUBLE_PRECISION, right, 2, u(:, 0), nx, &
                      MPI_DOUBLE_PRECISION, left, 2, MPI_COMM_WORLD, st, ierr)
    do j = 1, cols
      do i = 1, nx
        if (.not. fixed(i, j, v(i, j))) &
          v(i, j) = 0.25_c_double * ((u(i - 1, j) + u(i + 1, j)) + (u(i, j - 1) + u(i, j + 1)))
      end do
    end do
    u(:, 1:cols) = v
  end subroutine

  ! --query: what a restart would do, the stored grid's shape, and the step
  ! counter restored alone (the grid must stay as it is).
  subroutine query_first()
    type(cairn_restart_plan) :: plan
    type(cairn_var_info) :: info
    real(c_double), allocatable :: before(:, :)
    integer(c_long) :: sid
    call ok(cairn_restart_query(ctx, CAIRN_LATEST, plan), 'cairn_restart_query', .true.)
    if (rank == 0) write (*, '(a,6(1x,i0),a,a,a)') 'heat: plan status/code/id/level/rebuild/lost', &
      plan%status, plan%code, plan%id, plan%level, plan%rebuild, plan%nodes_lost, &
      " label '", cairn_string(plan%label), "'"
    if (plan%status /= CAIRN_RESTART_READY) return
    call ok(cairn_var_query(ctx, CAIRN_LATEST, 'grid', info), 'cairn_var_query', .true.)
    if (info%type /= CAIRN_DOUBLE .or. info%ndims /= 2 .or. &
        any(cairn_var_shape(info) /= [integer(c_size_t) :: nx, cols])) &
      call quit(3, 'cairn_var_query: the stored grid is not ' // itoa(nx) // ' x ' // itoa(cols))
    if (rank == 0) write (*, '(a,2(1x,i0),a,i0)') 'heat: stored grid', cairn_var_shape(info), &
      ' bytes ', info%bytes
    before = u(:, 1:cols)
    call ok(cairn_restart_var(ctx, plan%id, 'step', sid), 'cairn_restart_var', .true.)
    if (sid /= plan%id .or. step /= plan%id .or. &
        any(transfer(u(:, 1:cols), [0_c_int64_t]) /= transfer(before, [0_c_int64_t]))) &
      call quit(3, 'cairn_restart_var: step not restored alone')
    if (rank == 0) write (*, '(a,i0)') 'heat: step restored alone: ', step
  end subroutine

  ! Gather the grid on rank 0: checksum line, and the raw doubles to --out.
  subroutine finish()
    real(c_double), allocatable :: all(:)
    integer, allocatable :: counts(:), displs(:)
    integer :: r, unit
    allocate(counts(nranks), displs(nranks), all(merge(nx * ny, 1, rank == 0)))
    do r = 0, nranks - 1
      counts(r + 1) = nx * (ny / nranks + merge(1, 0, r < mod(ny, nranks)))
    end do
    displs(1) = 0
    do r = 2, nranks
      displs(r) = displs(r - 1) + counts(r - 1)
    end do
    call MPI_Gatherv(u(:, 1:cols), nx * cols, MPI_DOUBLE_PRECISION, all, counts, displs, &
                     MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, ierr)
    if (rank /= 0) return
    write (*, '(a,i0,a,es24.16)') 'heat: done at step ', step, ' sum ', sum(all)
    if (len_trim(out) > 0) then
      open (newunit=unit, file=trim(out), access='stream', form='unformatted', &
            status='replace', action='write')
      write (unit) all
      close (unit)
    end if
  end subroutine

  ! RC must be 0; else report it (from rank 0 only if every rank shares it).
  subroutine ok(code, what, all)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: what
    logical, intent(in) :: all
    if (code == 0) return
    if (.not. all .or. rank == 0) write (0, '(a,i0,5a)') 'heat: rank ', rank, ': ', what, ': ', &
      cairn_strerror(code) // ': ', cairn_errmsg(ctx)
    call quit(2, '')
  end subroutine

  subroutine quit(status, msg)
    integer, intent(in) :: status
    character(len=*), intent(in) :: msg
    if (len(msg) > 0) write (0, '(a,i0,2a)') 'heat: rank ', rank, ': ', msg
    flush (0)
    call MPI_Abort(MPI_COMM_WORLD, status, ierr)
    stop 1
  end subroutine

  function itoa(n) result(s)
    integer, intent(in) :: n
    character(len=:), allocatable :: s
    character(len=24) :: b
    write (b, '(i0)') n
    s = trim(b)
  end function
end program
