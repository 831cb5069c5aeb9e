! fti_mod.f90 - module fti: FTI's Fortran interface over libcairn-fti, so an
! FTI Fortran program (`use fti`) compiles unchanged against cairn. Built into
! libcairn-fti-fortran with fti.mod (gfortran's); pkg-config cairn-fti-fortran.
!
! The calls are FTI's subroutines with FTI's arguments, each ending in an
! error code: FTI_Init(config, comm, err) (COMM becomes FTI_COMM_WORLD's
! handle), FTI_Status(status), FTI_InitType(type, size, err),
! FTI_Protect(id, data, err) for a POINTER of FTI's element types and any rank
! (or FTI_Protect(id, c_ptr, count, type, err)), FTI_SetAttribute(id, name or
! dims, flag, err), FTI_Checkpoint(id, level, err), FTI_Snapshot(err),
! FTI_Recover(err), FTI_RecoverVar(id, err), FTI_GetStoredSize(id, size),
! FTI_Realloc(id, c_ptr, err), FTI_Finalize(err). The type handles
! FTI_INTEGER4, FTI_REAL8, ... are set by FTI_Init: the integer and real
! kinds are C's types of their size (stored typed, so cairn's float codecs see
! doubles), the others opaque bytes.
!
! cairn keeps the address of what is protected: the array must be
! contiguous (else err = FTI_NSCS, nothing protected) and stay allocated.
! The module owns nothing but the handles.
module fti
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer, parameter, public :: FTI_SCES = 0, FTI_NSCS = -1, FTI_DONE = 1, FTI_NREC = -2
  integer, parameter, public :: FTI_ATTRIBUTE_NAME = 1, FTI_ATTRIBUTE_DIM = 2
  integer, public :: FTI_CHARACTER1 = -1, FTI_CHARACTER4 = -1, FTI_COMPLEX4 = -1, &
                     FTI_COMPLEX8 = -1, FTI_COMPLEX16 = -1, FTI_INTEGER1 = -1, &
                     FTI_INTEGER2 = -1, FTI_INTEGER4 = -1, FTI_INTEGER8 = -1, &
                     FTI_INTEGER16 = -1, FTI_LOGICAL1 = -1, FTI_LOGICAL2 = -1, &
                     FTI_LOGICAL4 = -1, FTI_LOGICAL8 = -1, FTI_LOGICAL16 = -1, &
                     FTI_REAL4 = -1, FTI_REAL8 = -1, FTI_REAL16 = -1

  public :: FTI_Init, FTI_Status, FTI_InitType, FTI_Protect, FTI_SetAttribute, &
            FTI_Checkpoint, FTI_Snapshot, FTI_Recover, FTI_RecoverVar, FTI_GetStoredSize, &
            FTI_Realloc, FTI_Finalize

  interface
    integer(c_int) function c_init(config, comm) bind(C, name='FTI_Init_fort_wrapper')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: config(*)
      integer(c_int), intent(inout) :: comm
    end function
    integer(c_int) function c_status() bind(C, name='FTI_Status')
      import :: c_int
    end function
    integer(c_int) function c_inittype(t, size) bind(C, name='FTI_InitType')
      import :: c_int
      integer(c_int), intent(out) :: t
      integer(c_int), value :: size
    end function
    integer(c_int) function c_protect(id, p, count, t) bind(C, name='FTI_Protect')
      import :: c_int, c_ptr, c_int32_t
      integer(c_int), value :: id
      type(c_ptr), value :: p
      integer(c_int32_t), value :: count
      integer(c_int), value :: t
    end function
    integer(c_int) function c_setattr(id, name, ndims, counts, flag) &
        bind(C, name='FTI_SetAttribute_fort_wrapper')
      import :: c_int, c_char, c_int64_t
      integer(c_int), value :: id, ndims, flag
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), intent(in) :: counts(*)
    end function
    integer(c_int) function c_checkpoint(id, level) bind(C, name='FTI_Checkpoint')
      import :: c_int
      integer(c_int), value :: id, level
    end function
    integer(c_int) function c_snapshot() bind(C, name='FTI_Snapshot')
      import :: c_int
    end function
    integer(c_int) function c_recover() bind(C, name='FTI_Recover')
      import :: c_int
    end function
    integer(c_int) function c_recovervar(id) bind(C, name='FTI_RecoverVar')
      import :: c_int
      integer(c_int), value :: id
    end function
    integer(c_int32_t) function c_storedsize(id) bind(C, name='FTI_GetStoredSize')
      import :: c_int, c_int32_t
      integer(c_int), value :: id
    end function
    type(c_ptr) function c_realloc(id, p) bind(C, name='FTI_Realloc')
      import :: c_int, c_ptr
      integer(c_int), value :: id
      type(c_ptr), value :: p
    end function
    integer(c_int) function c_finalize() bind(C, name='FTI_Finalize')
      import :: c_int
    end function
  end interface

  interface FTI_Protect
    module procedure protect_ptr, protect_i1, protect_i2, protect_i4, protect_i8, protect_r4, &
                     protect_r8, protect_c4, protect_c8, protect_l4, protect_ch
  end interface

  interface FTI_SetAttribute
    module procedure setattr_name, setattr_dims
  end interface

contains

  subroutine FTI_Init(config_file, global_comm, err)
    character(len=*), intent(in) :: config_file
    integer, intent(inout) :: global_comm
    integer, intent(out) :: err
    integer(c_int) :: comm
    comm = int(global_comm, c_int)
    err = int(c_init(trim(config_file) // c_null_char, comm))
    if (err /= FTI_SCES .and. err /= FTI_NREC) return
    global_comm = int(comm)
    FTI_INTEGER1 = 0   ! FTI_CHAR
    FTI_INTEGER2 = 1   ! FTI_SHRT
    FTI_INTEGER4 = 2   ! FTI_INTG
    FTI_INTEGER8 = 3   ! FTI_LONG (8 bytes on LP64)
    if (c_sizeof(0_c_long) /= 8) FTI_INTEGER8 = opaque(8)
    FTI_REAL4 = 8      ! FTI_SFLT
    FTI_REAL8 = 9      ! FTI_DBLE
    FTI_CHARACTER1 = opaque(1)
    FTI_CHARACTER4 = opaque(4)
    FTI_COMPLEX4 = opaque(8)
    FTI_COMPLEX8 = opaque(16)
    FTI_COMPLEX16 = opaque(32)
    FTI_INTEGER16 = opaque(16)
    FTI_LOGICAL1 = opaque(1)
    FTI_LOGICAL2 = opaque(2)
    FTI_LOGICAL4 = opaque(4)
    FTI_LOGICAL8 = opaque(8)
    FTI_LOGICAL16 = opaque(16)
    FTI_REAL16 = opaque(16)
  contains
    integer function opaque(bytes)
      integer, intent(in) :: bytes
      integer(c_int) :: t
      t = -1
      if (c_inittype(t, int(bytes, c_int)) /= FTI_SCES) t = -1
      opaque = int(t)
    end function
  end subroutine

  subroutine FTI_Status(status)
    integer, intent(out) :: status
    status = int(c_status())
  end subroutine

  subroutine FTI_InitType(type_F, size_F, err)
    integer, intent(out) :: type_F
    integer, intent(in) :: size_F
    integer, intent(out) :: err
    integer(c_int) :: t
    err = int(c_inittype(t, int(size_F, c_int)))
    type_F = int(t)
  end subroutine

  subroutine protect_ptr(id_F, ptr, count_F, type_F, err)
    integer, intent(in) :: id_F, count_F, type_F
    type(c_ptr), value :: ptr
    integer, intent(out) :: err
    err = int(c_protect(int(id_F, c_int), ptr, int(count_F, c_int32_t), int(type_F, c_int)))
  end subroutine

  ! The address of a contiguous, associated array of N elements, or an error.
  subroutine protect_at(id, assoc, contig, p, n, t, err)
    integer, intent(in) :: id, t
    logical, intent(in) :: assoc, contig
    type(c_ptr), intent(in) :: p
    integer(c_size_t), intent(in) :: n
    integer, intent(out) :: err
    err = FTI_NSCS
    if (.not. assoc .or. .not. contig .or. n > huge(0_c_int32_t)) return
    err = int(c_protect(int(id, c_int), p, int(n, c_int32_t), int(t, c_int)))
  end subroutine

  subroutine protect_i1(id_F, data, err)
    integer, intent(in) :: id_F
    integer(c_int8_t), pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_INTEGER1, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine protect_i2(id_F, data, err)
    integer, intent(in) :: id_F
    integer(c_int16_t), pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_INTEGER2, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine protect_i4(id_F, data, err)
    integer, intent(in) :: id_F
    integer(c_int32_t), pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_INTEGER4, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine protect_i8(id_F, data, err)
    integer, intent(in) :: id_F
    integer(c_int64_t), pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_INTEGER8, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine protect_r4(id_F, data, err)
    integer, intent(in) :: id_F
    real(c_float), pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_REAL4, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine protect_r8(id_F, data, err)
    integer, intent(in) :: id_F
    real(c_double), pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_REAL8, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine protect_c4(id_F, data, err)
    integer, intent(in) :: id_F
    complex(c_float_complex), pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_COMPLEX4, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine protect_c8(id_F, data, err)
    integer, intent(in) :: id_F
    complex(c_double_complex), pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_COMPLEX8, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine protect_l4(id_F, data, err)
    integer, intent(in) :: id_F
    logical, pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_LOGICAL4, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine protect_ch(id_F, data, err)
    integer, intent(in) :: id_F
    character(kind=c_char, len=1), pointer, intent(in) :: data(..)
    integer, intent(out) :: err
    if (associated(data)) then
      call protect_at(id_F, .true., is_contiguous(data), c_loc(data), size(data, kind=c_size_t), &
                      FTI_CHARACTER1, err)
    else
      err = FTI_NSCS
    end if
  end subroutine

  subroutine setattr_name(id_F, name, flag, err)
    integer, intent(in) :: id_F, flag
    character(len=*), intent(in) :: name
    integer, intent(out) :: err
    integer(c_int64_t) :: none(1)
    none = 0
    err = int(c_setattr(int(id_F, c_int), trim(name) // c_null_char, 0_c_int, none, &
                        int(flag, c_int)))
  end subroutine

  subroutine setattr_dims(id_F, dims, flag, err)
    integer, intent(in) :: id_F, flag
    integer(c_int64_t), intent(in) :: dims(:)
    integer, intent(out) :: err
    integer(c_int64_t) :: d(max(1, size(dims)))
    d = 0
    d(1:size(dims)) = dims
    err = int(c_setattr(int(id_F, c_int), c_null_char, int(size(dims), c_int), d, &
                        int(flag, c_int)))
  end subroutine

  subroutine FTI_Checkpoint(id_F, level, err)
    integer, intent(in) :: id_F, level
    integer, intent(out) :: err
    err = int(c_checkpoint(int(id_F, c_int), int(level, c_int)))
  end subroutine

  subroutine FTI_Snapshot(err)
    integer, intent(out) :: err
    err = int(c_snapshot())
  end subroutine

  subroutine FTI_Recover(err)
    integer, intent(out) :: err
    err = int(c_recover())
  end subroutine

  subroutine FTI_RecoverVar(id_F, err)
    integer, intent(in) :: id_F
    integer, intent(out) :: err
    err = int(c_recovervar(int(id_F, c_int)))
  end subroutine

  subroutine FTI_GetStoredSize(id_F, size)
    integer, intent(in) :: id_F
    integer, intent(out) :: size
    size = int(c_storedsize(int(id_F, c_int)))
  end subroutine

  subroutine FTI_Realloc(id_F, ptr, err)
    integer, intent(in) :: id_F
    type(c_ptr), intent(inout) :: ptr
    integer, intent(out) :: err
    ptr = c_realloc(int(id_F, c_int), ptr)
    err = FTI_SCES
    if (.not. c_associated(ptr)) err = FTI_NSCS
  end subroutine

  subroutine FTI_Finalize(err)
    integer, intent(out) :: err
    err = int(c_finalize())
  end subroutine

end module fti
