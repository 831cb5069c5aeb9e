! cairn.f90 - module cairn, the Fortran binding of cairn.h (ISO_C_BINDING,
! Fortran 2018; gfortran >= 10). One module, three layers:
!
!   constants   CAIRN_OK, the error codes, types, levels, CAIRN_LATEST, ...:
!               cairn_consts.inc, generated from cairn.h at build time;
!   cairn_c_*   bind(C) interfaces to every C function, one for one
!               (cairn_iface.inc), and bind(C) types mirroring
!               cairn_gen_info, cairn_restart_plan and cairn_var_info;
!   cairn_*     wrappers for Fortran callers: Fortran strings (trailing blanks
!               trimmed, NUL appended), arrays of any rank, optional
!               arguments, a type(cairn_ctx) handle. Each is an integer(c_int)
!               function returning 0 or the negative code of cairn.h.
!
! Arrays: cairn_protect is generic over integer(c_int8_t/int16/int32/int64)
! and real(c_float/c_double) arrays of any rank (assumed rank, dimension(..)).
! A Fortran array of shape (n1, n2, n3) is described to cairn in C order,
! dims = (n3, n2, n1), so C tools see the same layout; rank > 3 is protected
! as a flat array. cairn keeps the array's address: it must be contiguous
! (a non-contiguous section is refused, CAIRN_EINVAL, never copied), stay
! allocated while protected, and have the TARGET or POINTER attribute, so
! that the compiler reloads it after cairn_restart wrote it.
!
! Another rank count on restart: cairn_protect_block(ctx, name, global,
! first, count) declares NAME this rank's block of a global array, in
! Fortran order with 1-based first indices (integer(c_int32_t) or
! (c_int64_t) arrays); cairn_protect_replicated(ctx, name) a value every
! rank holds. cairn_restart then fills each rank's new block (cairn.h).
!
! Errors: cairn_errmsg(ctx) gives the message of the last call on ctx, a
! wrapper's own refusal (held in ctx%msg) or the library's. Ids are
! integer(c_long); cairn_checkpoint also takes a default integer id.
module cairn
  use, intrinsic :: iso_c_binding
  implicit none
  private

  include 'cairn_consts.inc'

  ! The handle: the C context and the message of a refusal by a wrapper.
  type, public :: cairn_ctx
    type(c_ptr) :: ptr = c_null_ptr
    character(len=512) :: msg = ''
  end type

  type, bind(C), public :: cairn_gen_info
    integer(c_long) :: id
    integer(c_int) :: level, nranks
    integer(c_int64_t) :: bytes           ! uint64_t in C
    integer(c_long) :: parent, base
    integer(c_int64_t) :: raw, delta      ! uint64_t in C
    real(c_double) :: seconds
    character(kind=c_char) :: label(CAIRN_LABEL_MAX + 1)  ! cairn_string() converts
  end type

  type, bind(C), public :: cairn_restart_plan
    integer(c_int) :: status, code
    integer(c_long) :: id
    integer(c_int) :: level, rebuild, nodes_lost
    integer(c_int64_t) :: raw             ! uint64_t in C
    character(kind=c_char) :: label(CAIRN_LABEL_MAX + 1)
  end type

  type, bind(C), public :: cairn_var_info
    integer(c_int) :: type
    integer(c_size_t) :: count
    integer(c_int) :: ndims
    integer(c_size_t) :: dims(CAIRN_MAX_DIMS)  ! C order; cairn_var_shape() gives Fortran's
    integer(c_size_t) :: bytes
    integer(c_int64_t) :: stored          ! uint64_t in C
    real(c_double) :: error_bound
  end type

  include 'cairn_iface.inc'

  interface
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

  interface cairn_protect
    module procedure protect_i1, protect_i2, protect_i4, protect_i8, protect_r4, protect_r8
  end interface

  interface cairn_checkpoint
    module procedure checkpoint_long, checkpoint_int
  end interface

  interface cairn_protect_block
    module procedure protect_block_i4, protect_block_i8
  end interface

  public :: cairn_c_type_size, cairn_c_init_f, cairn_c_protect, cairn_c_unprotect, &
            cairn_c_protect_bound, cairn_c_protect_bound_rel, cairn_c_protect_codec, &
            cairn_c_protect_hint, cairn_c_protect_block, cairn_c_protect_replicated, &
            cairn_c_route_file, cairn_c_unroute_file, cairn_c_checkpoint, cairn_c_restart, &
            cairn_c_rebuild, cairn_c_generations, cairn_c_restart_query, cairn_c_var_query, cairn_c_restart_var, cairn_c_label, &
            cairn_c_need_checkpoint, cairn_c_finalize, cairn_c_strerror, cairn_c_errmsg
  public :: cairn_init, cairn_protect, cairn_protect_as, cairn_protect_ptr, cairn_unprotect, &
            cairn_protect_bound, cairn_protect_bound_rel, cairn_protect_codec, &
            cairn_protect_hint, cairn_protect_block, cairn_protect_replicated, &
            cairn_route_file, cairn_unroute_file, cairn_checkpoint, cairn_restart, &
            cairn_rebuild, cairn_generations, cairn_restart_query, cairn_var_query, &
            cairn_restart_var, cairn_label, cairn_need_checkpoint, &
            cairn_finalize, cairn_strerror, cairn_errmsg, cairn_type_size, cairn_string, &
            cairn_var_shape

contains

  ! ---- helpers ----

  ! S as a C string: trailing blanks trimmed, NUL appended.
  pure function cstr(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function

  ! The C string at P as a Fortran string ('' for NULL).
  function f_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: a(:)
    integer(c_size_t) :: n, i
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = c_strlen(p)
    call c_f_pointer(p, a, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = a(i)
    end do
  end function

  ! Refuse a call: CAIRN_EINVAL with MSG in ctx%msg; nothing else changes.
  integer(c_int) function refuse(ctx, msg) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: msg
    ctx%msg = msg
    rc = CAIRN_EINVAL
  end function

  ! Start a wrapped call on CTX: clear its message; refuse an uninitialized
  ! context and strings holding a NUL (C would cut them short).
  integer(c_int) function begin(ctx, what, s1, s2) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: what
    character(len=*), intent(in), optional :: s1, s2
    ctx%msg = ''
    rc = 0
    if (.not. c_associated(ctx%ptr)) then
      rc = refuse(ctx, what // ': the context is not initialized (cairn_init) or was finalized')
    else if (present(s1)) then
      if (index(s1, c_null_char) > 0) rc = refuse(ctx, what // ': a string argument holds a NUL')
    end if
    if (rc == 0 .and. present(s2)) then
      if (index(s2, c_null_char) > 0) rc = refuse(ctx, what // ': a string argument holds a NUL')
    end if
  end function

  ! The characters of a NUL-terminated c_char array (a label) as a string.
  function cairn_string(chars) result(s)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=:), allocatable :: s
    integer :: n, i
    n = 0
    do while (n < size(chars))
      if (chars(n + 1) == c_null_char) exit
      n = n + 1
    end do
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  ! The shape of a stored variable in Fortran order (reverse of info%dims),
  ! or (count) for a variable stored without dims: allocate with it.
  function cairn_var_shape(info) result(shp)
    type(cairn_var_info), intent(in) :: info
    integer(c_size_t), allocatable :: shp(:)
    integer :: i
    if (info%ndims < 1) then
      shp = [info%count]
    else
      shp = [(info%dims(info%ndims + 1 - i), i = 1, info%ndims)]
    end if
  end function

  ! ---- context ----

  ! Collective. COMM is a Fortran handle: `use mpi`'s integer, or mpi_f08's
  ! comm%MPI_VAL. CONFIG names an INI file; absent: defaults.
  integer(c_int) function cairn_init(comm, ctx, config) result(rc)
    integer, intent(in) :: comm
    type(cairn_ctx), intent(out) :: ctx
    character(len=*), intent(in), optional :: config
    ctx%ptr = c_null_ptr
    ctx%msg = ''
    if (present(config)) then
      if (index(config, c_null_char) > 0) then
        rc = refuse(ctx, 'init: the config path holds a NUL')
        return
      end if
      rc = cairn_c_init_f(int(comm, c_int), cstr(config), ctx%ptr)
    else
      rc = cairn_c_init_f(int(comm, c_int), ctx=ctx%ptr)
    end if
  end function

  ! Collective. Frees the context (ctx%ptr becomes null, whatever the result).
  integer(c_int) function cairn_finalize(ctx) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    ctx%msg = ''
    rc = cairn_c_finalize(ctx%ptr)
    ctx%ptr = c_null_ptr
  end function

  function cairn_strerror(code) result(s)
    integer(c_int), intent(in) :: code
    character(len=:), allocatable :: s
    s = f_string(cairn_c_strerror(code))
  end function

  ! The last call's message on CTX ('' if it succeeded); without CTX, or for
  ! a context whose cairn_init failed, why cairn_init failed.
  function cairn_errmsg(ctx) result(s)
    type(cairn_ctx), intent(in), optional :: ctx
    character(len=:), allocatable :: s
    if (.not. present(ctx)) then
      s = f_string(cairn_c_errmsg(c_null_ptr))
    else if (len_trim(ctx%msg) > 0) then
      s = trim(ctx%msg)
    else
      s = f_string(cairn_c_errmsg(ctx%ptr))
    end if
  end function

  integer(c_size_t) function cairn_type_size(type) result(n)
    integer(c_int), intent(in) :: type
    n = cairn_c_type_size(type)
  end function

  ! ---- protected variables (local) ----

  include 'cairn_protect.inc'

  integer(c_int) function cairn_unprotect(ctx, name) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    rc = begin(ctx, 'unprotect', name)
    if (rc == 0) rc = cairn_c_unprotect(ctx%ptr, cstr(name))
  end function

  integer(c_int) function cairn_protect_bound(ctx, name, bound) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    real(c_double), intent(in) :: bound
    rc = begin(ctx, 'protect_bound', name)
    if (rc == 0) rc = cairn_c_protect_bound(ctx%ptr, cstr(name), bound)
  end function

  integer(c_int) function cairn_protect_bound_rel(ctx, name, rel_bound) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    real(c_double), intent(in) :: rel_bound
    rc = begin(ctx, 'protect_bound_rel', name)
    if (rc == 0) rc = cairn_c_protect_bound_rel(ctx%ptr, cstr(name), rel_bound)
  end function

  ! CODEC absent: back to the configured default (NULL in C).
  integer(c_int) function cairn_protect_codec(ctx, name, codec) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    character(len=*), intent(in), optional :: codec
    rc = begin(ctx, 'protect_codec', name, codec)
    if (rc /= 0) return
    if (present(codec)) then
      rc = cairn_c_protect_codec(ctx%ptr, cstr(name), cstr(codec))
    else
      rc = cairn_c_protect_codec(ctx%ptr, cstr(name))
    end if
  end function

  integer(c_int) function cairn_protect_hint(ctx, name, what) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: what
    rc = begin(ctx, 'protect_hint', name)
    if (rc == 0) rc = cairn_c_protect_hint(ctx%ptr, cstr(name), what)
  end function

  ! ---- distributed and replicated variables (local) ----

  ! NAME holds this rank's block of a global array, all three arrays in
  ! Fortran order (first dimension fastest, as NAME's own shape): GLOBAL the
  ! global shape, FIRST the block's first index in each dimension (1-based),
  ! COUNT its extent. Empty arrays make NAME not distributed again. Passed to
  ! C reversed and 0-based, matching cairn_protect's C-order dims.
  integer(c_int) function protect_block_i8(ctx, name, global, first, count) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    integer(c_int64_t), intent(in) :: global(:), first(:), count(:)
    integer(c_size_t) :: g(CAIRN_MAX_DIMS), s(CAIRN_MAX_DIMS), c(CAIRN_MAX_DIMS)
    integer :: nd, i
    rc = begin(ctx, 'protect_block', name)
    if (rc /= 0) return
    nd = size(global)
    if (size(first) /= nd .or. size(count) /= nd .or. nd > CAIRN_MAX_DIMS) then
      rc = refuse(ctx, "protect_block '" // trim(name) // "': global, first and count " // &
                  "must have the same size, at most CAIRN_MAX_DIMS")
      return
    end if
    if (any(first < 1) .or. any(global < 0) .or. any(count < 0)) then
      rc = refuse(ctx, "protect_block '" // trim(name) // "': first indices start at 1; " // &
                  "global and count are not negative")
      return
    end if
    g = 0
    s = 0
    c = 0
    do i = 1, nd
      g(i) = global(nd + 1 - i)
      s(i) = first(nd + 1 - i) - 1
      c(i) = count(nd + 1 - i)
    end do
    rc = cairn_c_protect_block(ctx%ptr, cstr(name), int(nd, c_int), g, s, c)
  end function

  integer(c_int) function protect_block_i4(ctx, name, global, first, count) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    integer(c_int32_t), intent(in) :: global(:), first(:), count(:)
    rc = protect_block_i8(ctx, name, int(global, c_int64_t), int(first, c_int64_t), &
                          int(count, c_int64_t))
  end function

  ! Every rank holds the same NAME: a restart on another layout gives each
  ! rank the copy rank 0 stored.
  integer(c_int) function cairn_protect_replicated(ctx, name) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    rc = begin(ctx, 'protect_replicated', name)
    if (rc == 0) rc = cairn_c_protect_replicated(ctx%ptr, cstr(name))
  end function

  ! ---- routed files (local) ----

  ! PATH receives the file's node-local path, blank-padded (use trim(path));
  ! too short a PATH is CAIRN_EINVAL saying how long it must be.
  integer(c_int) function cairn_route_file(ctx, name, path) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    character(len=*), intent(out) :: path
    character(kind=c_char) :: buf(len(path) + 1)
    path = ''
    rc = begin(ctx, 'route_file', name)
    if (rc /= 0) return
    buf = c_null_char
    rc = cairn_c_route_file(ctx%ptr, cstr(name), buf, size(buf, kind=c_size_t))
    if (rc == 0) path = cairn_string(buf)
  end function

  integer(c_int) function cairn_unroute_file(ctx, name) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in) :: name
    rc = begin(ctx, 'unroute_file', name)
    if (rc == 0) rc = cairn_c_unroute_file(ctx%ptr, cstr(name))
  end function

  ! ---- generations (collective) ----

  integer(c_int) function checkpoint_long(ctx, id, level) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    integer(c_long), intent(in) :: id
    integer(c_int), intent(in) :: level
    rc = begin(ctx, 'checkpoint')
    if (rc == 0) rc = cairn_c_checkpoint(ctx%ptr, id, level)
  end function

  integer(c_int) function checkpoint_int(ctx, id, level) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    integer(c_int), intent(in) :: id
    integer(c_int), intent(in) :: level
    rc = checkpoint_long(ctx, int(id, c_long), level)
  end function

  ! ID: a generation or CAIRN_LATEST; RESTORED_ID (optional) receives the id.
  integer(c_int) function cairn_restart(ctx, id, restored_id) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    integer(c_long), intent(in) :: id
    integer(c_long), intent(out), optional :: restored_id
    rc = begin(ctx, 'restart')
    if (rc == 0) rc = cairn_c_restart(ctx%ptr, id, restored_id)
  end function

  integer(c_int) function cairn_rebuild(ctx, id, rebuilt_id) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    integer(c_long), intent(in) :: id
    integer(c_long), intent(out), optional :: rebuilt_id
    rc = begin(ctx, 'rebuild')
    if (rc == 0) rc = cairn_c_rebuild(ctx%ptr, id, rebuilt_id)
  end function

  ! Fills INFO(1:min(size(info), count)), newest first; COUNT: how many exist.
  integer(c_int) function cairn_generations(ctx, info, count) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    type(cairn_gen_info), intent(out) :: info(:)
    integer(c_int), intent(out) :: count
    count = 0
    rc = begin(ctx, 'generations')
    if (rc == 0) rc = cairn_c_generations(ctx%ptr, info, int(size(info), c_int), count)
  end function

  integer(c_int) function cairn_restart_query(ctx, max_id, plan) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    integer(c_long), intent(in) :: max_id
    type(cairn_restart_plan), intent(out) :: plan
    rc = begin(ctx, 'restart_query')
    if (rc == 0) rc = cairn_c_restart_query(ctx%ptr, max_id, plan)
  end function

  integer(c_int) function cairn_var_query(ctx, id, name, info) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    integer(c_long), intent(in) :: id
    character(len=*), intent(in) :: name
    type(cairn_var_info), intent(out) :: info
    rc = begin(ctx, 'var_query', name)
    if (rc == 0) rc = cairn_c_var_query(ctx%ptr, id, cstr(name), info)
  end function

  integer(c_int) function cairn_restart_var(ctx, id, name, restored_id) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    integer(c_long), intent(in) :: id
    character(len=*), intent(in) :: name
    integer(c_long), intent(out), optional :: restored_id
    rc = begin(ctx, 'restart_var', name)
    if (rc == 0) rc = cairn_c_restart_var(ctx%ptr, id, cstr(name), restored_id)
  end function

  ! Local. LABEL absent: clear it (NULL in C).
  integer(c_int) function cairn_label(ctx, label) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    character(len=*), intent(in), optional :: label
    rc = begin(ctx, 'label', label)
    if (rc /= 0) return
    if (present(label)) then
      rc = cairn_c_label(ctx%ptr, cstr(label))
    else
      rc = cairn_c_label(ctx%ptr)
    end if
  end function

  integer(c_int) function cairn_need_checkpoint(ctx, level) result(rc)
    type(cairn_ctx), intent(inout) :: ctx
    integer(c_int), intent(out) :: level
    level = 0
    rc = begin(ctx, 'need_checkpoint')
    if (rc == 0) rc = cairn_c_need_checkpoint(ctx%ptr, level)
  end function
end module cairn
