! t_api.f90 - every wrapper of module cairn against the real library, under
! mpirun (tests/fortran/run_fortran.sh: 4 ranks on 2 emulated nodes, a fresh
! CAIRN_BASE and job). Arrays of the six generic element types and ranks 0-4,
! cairn_protect_as and cairn_protect_ptr are checkpointed twice (generation
! 2 at level 2), overwritten, and restored from either generation: every byte
! must come back (compared as integers, so NaN payloads count). Refusals
! (a non-contiguous section, a NUL in a name, an uninitialized or finalized
! context, a short path buffer) must return CAIRN_EINVAL with a message and
! change nothing. Queries: cairn_generations, cairn_restart_query,
! cairn_var_query, cairn_restart_var, cairn_label, cairn_need_checkpoint
! (CAIRN_CKPT_EVERY_1=3 set by the script). Prints "not ok - WHAT" for each
! failed check; exits 0 only when every check passed on every rank.
program t_api
  use, intrinsic :: iso_c_binding
  use mpi
  use cairn
  implicit none
  type(cairn_ctx) :: ctx, none
  integer(c_int8_t), target :: i1(5, 3)
  integer(c_int16_t), target :: i2(7)
  integer(c_int32_t), target :: i4(2, 3, 4), u4(6)
  integer(c_int64_t), target :: i8
  real(c_float), target :: r4(2, 2, 2, 2)
  real(c_double), target :: r8(9), wide(10)
  character(kind=c_char), target :: raw(13)
  type(cairn_gen_info) :: gens(4)
  type(cairn_restart_plan) :: plan
  type(cairn_var_info) :: info
  character(len=4096) :: path
  character(len=8) :: short
  integer :: rank, ierr, fails = 0, checks = 0, unit, k, lvl, due
  integer(c_long) :: id
  integer(c_int) :: rc, n
  integer(c_size_t) :: sz(2)
  integer(c_int8_t), allocatable :: snaps(:, :)   ! (bytes, generation 1..2)

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  ! Constants and local helpers. (Every call that acts stands in a statement
  ! of its own: Fortran may skip an operand of .and.)
  call check(CAIRN_LATEST == -1_c_long .and. CAIRN_ENOENT == -1005, 'constants from cairn.h')
  call check(cairn_strerror(CAIRN_ENOENT) == 'no checkpoint found', 'cairn_strerror')
  sz = [cairn_type_size(CAIRN_DOUBLE), cairn_type_size(CAIRN_INT16)]
  call check(all(sz == [8, 2]), 'cairn_type_size')
  rc = cairn_checkpoint(none, 1, 1)
  call expect(rc, CAIRN_EINVAL, 'not initialized', none, 'an uninitialized context is refused')
  rc = cairn_init(MPI_COMM_WORLD, ctx, 'no-such' // c_null_char // 'x')
  call expect(rc, CAIRN_EINVAL, 'NUL', ctx, 'a config path holding a NUL is refused')
  rc = cairn_init(MPI_COMM_WORLD, ctx, '/nonexistent/cairn.ini')
  call check(rc /= 0, 'cairn_init: a missing config file fails')
  call check(len(cairn_errmsg()) > 0, '  ... with a message')
  call check(cairn_errmsg(ctx) == cairn_errmsg(), '  ... and cairn_errmsg(ctx) says why')
  call must(cairn_init(MPI_COMM_WORLD, ctx), 'cairn_init')

  ! Protect: every generic type, ranks 0..4, the two escape hatches.
  call fill(2)
  allocate(snaps(size(snapshot()), 2))
  snaps(:, 2) = snapshot()
  call fill(1)
  snaps(:, 1) = snapshot()
  call must(cairn_protect(ctx, 'i1', i1), 'protect int8 rank 2')
  call must(cairn_protect(ctx, 'i2', i2), 'protect int16 rank 1')
  call must(cairn_protect(ctx, 'i4', i4), 'protect int32 rank 3')
  call must(cairn_protect(ctx, 'i8', i8), 'protect int64 scalar')
  call must(cairn_protect(ctx, 'r4', r4), 'protect float rank 4 (flat)')
  call must(cairn_protect(ctx, 'r8', r8), 'protect double rank 1')
  call must(cairn_protect_as(ctx, 'u4', u4, CAIRN_UINT32), 'cairn_protect_as uint32')
  call must(cairn_protect_ptr(ctx, 'raw', c_loc(raw), CAIRN_BYTE, size(raw, kind=c_size_t)), &
            'cairn_protect_ptr bytes')
  call must(cairn_protect(ctx, 'wide', wide(2:9)), 'protect a contiguous section')

  ! Refusals change nothing: 'r8' stays protected as the whole of r8.
  rc = cairn_protect(ctx, 'r8', wide(1:10:2))
  call expect(rc, CAIRN_EINVAL, 'not contiguous', ctx, 'a non-contiguous section is refused')
  rc = cairn_protect(ctx, 'a' // c_null_char // 'b', r8)
  call expect(rc, CAIRN_EINVAL, 'NUL', ctx, 'a name holding a NUL is refused')
  rc = cairn_protect_ptr(ctx, 'x', c_loc(raw), CAIRN_BYTE, 13_c_size_t, &
                         [1_c_size_t, 1_c_size_t, 1_c_size_t, 13_c_size_t])
  call expect(rc, CAIRN_EINVAL, 'dims', ctx, 'cairn_protect_ptr: 4 dims are refused')
  rc = cairn_protect(ctx, 'bad/name', r8)
  call expect(rc, CAIRN_EINVAL, 'bad name', ctx, 'the library refuses a bad name')
  call must(cairn_unprotect(ctx, 'r8'), 'unprotect')
  call must(cairn_protect(ctx, 'r8', r8), 'protect again')
  call check(len(cairn_errmsg(ctx)) == 0, 'a call that succeeds clears the message')
  call must(cairn_protect_codec(ctx, 'i4', 'zstd'), 'cairn_protect_codec zstd')
  call must(cairn_protect_codec(ctx, 'i4'), 'cairn_protect_codec back to the default')
  rc = cairn_protect_codec(ctx, 'i4', 'no-such-codec')
  call expect(rc, CAIRN_EINVAL, 'no-such-codec', ctx, 'an unknown codec is refused')
  call must(cairn_protect_hint(ctx, 'i2', CAIRN_CHANGED), 'cairn_protect_hint')
  rc = cairn_protect_bound(ctx, 'i2', 0.5_c_double)
  call expect(rc, CAIRN_EINVAL, 'i2', ctx, 'cairn_protect_bound on an integer variable is refused')
  rc = cairn_protect_bound_rel(ctx, 'i2', 0.5_c_double)
  call expect(rc, CAIRN_EINVAL, 'i2', ctx, 'cairn_protect_bound_rel on an integer is refused')

  ! Routed files.
  rc = cairn_route_file(ctx, 'notes.txt', short)
  call expect(rc, CAIRN_EINVAL, 'too small', ctx, 'route_file: a short path is refused')
  call must(cairn_route_file(ctx, 'notes.txt', path), 'cairn_route_file')
  call check(index(path, '/files/rank-') > 0 .and. index(path, 'notes.txt') > 0, 'the routed path')
  rc = cairn_unroute_file(ctx, 'never-routed')
  call expect(rc, CAIRN_EINVAL, 'never-routed', ctx, 'unroute an unrouted name is refused')
  open (newunit=unit, file=trim(path), status='replace', action='write')
  write (unit, '(a,i0)') 'rank ', rank
  close (unit)

  ! Two generations, then restores of each into overwritten memory.
  call must(cairn_label(ctx, 'first'), 'cairn_label')
  call must(cairn_checkpoint(ctx, 1, CAIRN_LEVEL_LOCAL), 'checkpoint 1 (default-integer id)')
  call fill(2)
  call must(cairn_label(ctx), 'cairn_label cleared')
  call must(cairn_checkpoint(ctx, 2_c_long, CAIRN_LEVEL_PARTNER), 'checkpoint 2 at level 2')
  call must(cairn_generations(ctx, gens, n), 'cairn_generations')
  call check(n == 2 .and. gens(1)%id == 2 .and. gens(1)%level == 2 .and. gens(2)%id == 1 .and. &
             gens(1)%nranks == 4 .and. gens(2)%raw > 0, 'generations 2 (level 2) and 1, newest first')
  call check(cairn_string(gens(2)%label) == 'first' .and. cairn_string(gens(1)%label) == '', &
             'the generations carry their labels')
  call fill(9)
  call must(cairn_restart(ctx, CAIRN_LATEST, id), 'cairn_restart latest')
  call check(id == 2 .and. same(2), 'restart: generation 2, every byte')
  call fill(9)
  call must(cairn_restart(ctx, 1_c_long), 'cairn_restart 1 (no id out)')
  call check(same(1), 'restart 1: every byte')
  call must(cairn_route_file(ctx, 'notes.txt', path), 'route_file after a restart')
  open (newunit=unit, file=trim(path), status='old', action='read', iostat=ierr)
  call check(ierr == 0, 'the routed file is restored')
  if (ierr == 0) close (unit)
  call must(cairn_rebuild(ctx, CAIRN_LATEST, id), 'cairn_rebuild')
  call check(id == 2, 'rebuild: generation 2')

  ! Queries.
  call must(cairn_restart_query(ctx, CAIRN_LATEST, plan), 'cairn_restart_query')
  call check(plan%status == CAIRN_RESTART_READY .and. plan%id == 2 .and. plan%code == 0 .and. &
             plan%rebuild == 0 .and. plan%nodes_lost == 0 .and. plan%raw > 0, 'restart_query: plan')
  call must(cairn_restart_query(ctx, 1_c_long, plan), 'cairn_restart_query max 1')
  call check(plan%id == 1 .and. cairn_string(plan%label) == 'first', 'restart_query: id <= 1, labelled')
  call must(cairn_var_query(ctx, CAIRN_LATEST, 'i4', info), 'cairn_var_query')
  call check(info%type == CAIRN_INT32 .and. info%ndims == 3 .and. info%count == 24 .and. &
             info%bytes == 96 .and. all(cairn_var_shape(info) == [2, 3, 4]) .and. &
             all(info%dims == [4, 3, 2]), 'var_query: int32 (2,3,4) is C dims (4,3,2)')
  call must(cairn_var_query(ctx, CAIRN_LATEST, 'r4', info), 'cairn_var_query r4')
  call check(info%ndims == 0 .and. info%count == 16 .and. all(cairn_var_shape(info) == [16]), &
             'var_query: a rank-4 array is stored flat')
  call must(cairn_var_query(ctx, CAIRN_LATEST, 'wide', info), 'cairn_var_query wide')
  call check(info%count == 8, 'var_query: the section holds 8 elements')
  rc = cairn_var_query(ctx, CAIRN_LATEST, 'absent', info)
  call expect(rc, CAIRN_ENOENT, 'absent', ctx, 'var_query: an absent name is CAIRN_ENOENT')
  call fill(9)
  call must(cairn_restart_var(ctx, 1_c_long, 'i8', id), 'cairn_restart_var')
  call check(id == 1 .and. i8 == val8(1, 1) .and. i2(1) == int(9, c_int16_t), &
             'restart_var: i8 alone restored')
  due = 0
  do k = 1, 6
    call must(cairn_need_checkpoint(ctx, lvl), 'cairn_need_checkpoint')
    if (lvl > 0) then
      due = due + 1
      call must(cairn_checkpoint(ctx, 10 + k, lvl), 'checkpoint when due')
    end if
  end do
  call check(due == 2, 'need_checkpoint: due every 3 iterations (CAIRN_CKPT_EVERY_1=3)')

  call must(cairn_finalize(ctx), 'cairn_finalize')
  rc = cairn_restart(ctx, CAIRN_LATEST)
  call expect(rc, CAIRN_EINVAL, 'finalized', ctx, 'a finalized context is refused')

  call MPI_Allreduce(MPI_IN_PLACE, fails, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a,i0,a,i0,a)') 't_api: ', checks, ' checks, ', fails, ' failed'
  call MPI_Finalize(ierr)
  if (fails /= 0) stop 1

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (cond) return
    fails = fails + 1
    write (*, '(a,i0,2a)') 'not ok - rank ', rank, ': ', what
  end subroutine

  subroutine must(code, what)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= 0) write (*, '(a,i0,5a)') '# rank ', rank, ': ', what, ': ', &
      cairn_strerror(code) // ': ', cairn_errmsg(ctx)
    call check(code == 0, what)
  end subroutine

  ! CODE must be WANT, with a message containing SUBSTR.
  subroutine expect(code, want, substr, c, what)
    integer(c_int), intent(in) :: code, want
    character(len=*), intent(in) :: substr, what
    type(cairn_ctx), intent(in) :: c
    character(len=:), allocatable :: msg
    msg = cairn_errmsg(c)
    if (code /= want .or. index(msg, substr) == 0) write (*, '(a,i0,a,i0,3a)') '# got ', code, &
      ' (want ', want, "), message '", msg, "'"
    call check(code == want .and. index(msg, substr) > 0, what)
  end subroutine

  ! Generation G's value of element K (distinct per rank, generation, element).
  integer(c_int64_t) function val8(g, k)
    integer, intent(in) :: g, k
    val8 = int(rank, c_int64_t) * 1000003_c_int64_t + g * 7919_c_int64_t + k * 104729_c_int64_t
  end function

  ! Fill every protected array with generation G's pattern (G = 9: garbage).
  ! Reals get NaNs with payloads, a signalling NaN, -0.0 and infinities.
  subroutine fill(g)
    integer, intent(in) :: g
    integer(c_int32_t) :: b4(16)
    integer(c_int64_t) :: b8(9)
    do k = 1, 16
      b4(k) = int(val8(g, k), c_int32_t)
    end do
    b4(1) = int(z'7FC00123', c_int32_t) + g
    b4(2) = int(z'7F800001', c_int32_t)
    do k = 1, 9
      b8(k) = val8(g, k)
    end do
    b8(1) = int(z'7FF8000000000ABC', c_int64_t) + g
    b8(2) = int(z'7FF0000000000001', c_int64_t)
    b8(3) = ishft(1_c_int64_t, 63)
    b8(4) = int(z'7FF0000000000000', c_int64_t)
    i1 = reshape([(int(modulo(val8(g, k), 256_c_int64_t) - 128, c_int8_t), k = 1, 15)], shape(i1))
    i2 = [(int(modulo(val8(g, k), 65536_c_int64_t) - 32768, c_int16_t), k = 1, 7)]
    if (g == 9) i2 = int(9, c_int16_t)
    i4 = reshape([(int(val8(g, k), c_int32_t), k = 1, 24)], shape(i4))
    u4 = [(int(-val8(g, k), c_int32_t), k = 1, 6)]
    i8 = val8(g, 1)
    r4 = reshape(transfer(b4, r4), shape(r4))
    r8 = transfer(b8, r8)
    wide = transfer([(val8(g, k), k = 1, 10)], wide)
    raw = [(achar(modulo(val8(g, k), 128_c_int64_t)), k = 1, 13)]
  end subroutine

  ! The bytes of every protected array (wide: its protected section only).
  function snapshot() result(b)
    integer(c_int8_t), allocatable :: b(:)
    integer(c_int8_t), parameter :: m(1) = 0
    b = [transfer(i1, m), transfer(i2, m), transfer(i4, m), transfer(i8, m), transfer(u4, m), &
         transfer(r4, m), transfer(r8, m), transfer(wide(2:9), m), transfer(raw, m)]
  end function

  ! Does every protected array hold generation G's pattern, byte for byte?
  logical function same(g)
    integer, intent(in) :: g
    same = all(snapshot() == snaps(:, g))
  end function
end program
