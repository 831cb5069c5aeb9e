! t_f08.f90 - module cairn with mpi_f08: the communicator handed over as
! comm%MPI_VAL must be the one cairn uses. The world is split in two halves
! (even and odd ranks), each half checkpoints as a job of its own
! (CAIRN_JOB=<job>-half<color>): its generation must have been written by
! the half's ranks only, and restore bit for bit. MPI_COMM_NULL's handle is
! refused with CAIRN_EINVAL. Prints "t_f08: ok" on rank 0 when all passed.
program t_f08
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use cairn
  implicit none
  interface
    integer(c_int) function c_setenv(name, val, over) bind(C, name="setenv")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*), val(*)
      integer(c_int), value :: over
    end function
  end interface
  type(MPI_Comm) :: half
  type(cairn_ctx) :: ctx
  type(cairn_gen_info) :: g(2)
  real(c_double), target :: x(100)
  integer(c_int64_t) :: want(100)
  character(len=256) :: job
  integer :: rank, nranks, hsize, i, bad = 0
  integer(c_int) :: rc, n
  integer(c_long) :: id

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half)
  call MPI_Comm_size(half, hsize)

  rc = cairn_init(MPI_COMM_NULL%MPI_VAL, ctx)
  job = cairn_errmsg()
  if (rc /= CAIRN_EINVAL .or. index(job, 'MPI_COMM_NULL') == 0) call fail('MPI_COMM_NULL accepted')

  call get_environment_variable('CAIRN_JOB', job)
  write (job, '(2a,i0)') trim(job), '-half', mod(rank, 2)
  rc = c_setenv('CAIRN_JOB' // c_null_char, trim(job) // c_null_char, 1_c_int)
  call must(cairn_init(half%MPI_VAL, ctx), 'cairn_init over a split communicator')
  want = [(int(z'7FF8000000000000', c_int64_t) + rank * 1000 + i, i = 1, 100)]  ! NaN payloads
  x = transfer(want, x)
  call must(cairn_protect(ctx, 'x', x), 'protect')
  call must(cairn_checkpoint(ctx, 1, CAIRN_LEVEL_LOCAL), 'checkpoint')
  call must(cairn_generations(ctx, g, n), 'generations')
  if (n /= 1 .or. g(1)%nranks /= hsize) call fail('the generation was not written by the half')
  x = 0
  call must(cairn_restart(ctx, CAIRN_LATEST, id), 'restart')
  if (id /= 1 .or. any(transfer(x, want) /= want)) call fail('restored bytes differ')
  call must(cairn_finalize(ctx), 'finalize')

  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. bad == 0) write (*, '(a,i0,a,i0,a)') 't_f08: ok (', nranks, &
    ' ranks in halves of ', hsize, ')'
  call MPI_Comm_free(half)
  call MPI_Finalize()
  if (bad /= 0) stop 1
contains
  subroutine fail(what)
    character(len=*), intent(in) :: what
    write (*, '(a,i0,2a)') 'not ok - rank ', rank, ': ', what
    bad = bad + 1
  end subroutine
  subroutine must(code, what)
    integer(c_int), intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= 0) call fail(what // ': ' // cairn_strerror(code) // ': ' // cairn_errmsg(ctx))
  end subroutine
end program
