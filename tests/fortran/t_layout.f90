! t_layout.f90 - prints the layout of module cairn's bind(C) types in the
! format of `gen_consts layout` (bindings/gen_consts.c), which prints the C
! structs': tests/fortran/run_fortran.sh diffs the two. A field at another
! offset, or a struct of another size (an array's stride), is a mismatch.
program t_layout
  use, intrinsic :: iso_c_binding
  use cairn
  implicit none
  type(cairn_gen_info), target :: g
  type(cairn_restart_plan), target :: p
  type(cairn_var_info), target :: v

  call struct('cairn_gen_info', c_sizeof(g))
  call field('cairn_gen_info.id', c_loc(g), c_loc(g%id))
  call field('cairn_gen_info.level', c_loc(g), c_loc(g%level))
  call field('cairn_gen_info.nranks', c_loc(g), c_loc(g%nranks))
  call field('cairn_gen_info.bytes', c_loc(g), c_loc(g%bytes))
  call field('cairn_gen_info.parent', c_loc(g), c_loc(g%parent))
  call field('cairn_gen_info.base', c_loc(g), c_loc(g%base))
  call field('cairn_gen_info.raw', c_loc(g), c_loc(g%raw))
  call field('cairn_gen_info.delta', c_loc(g), c_loc(g%delta))
  call field('cairn_gen_info.seconds', c_loc(g), c_loc(g%seconds))
  call field('cairn_gen_info.label', c_loc(g), c_loc(g%label))
  call struct('cairn_restart_plan', c_sizeof(p))
  call field('cairn_restart_plan.status', c_loc(p), c_loc(p%status))
  call field('cairn_restart_plan.code', c_loc(p), c_loc(p%code))
  call field('cairn_restart_plan.id', c_loc(p), c_loc(p%id))
  call field('cairn_restart_plan.level', c_loc(p), c_loc(p%level))
  call field('cairn_restart_plan.rebuild', c_loc(p), c_loc(p%rebuild))
  call field('cairn_restart_plan.nodes_lost', c_loc(p), c_loc(p%nodes_lost))
  call field('cairn_restart_plan.raw', c_loc(p), c_loc(p%raw))
  call field('cairn_restart_plan.label', c_loc(p), c_loc(p%label))
  call struct('cairn_var_info', c_sizeof(v))
  call field('cairn_var_info.type', c_loc(v), c_loc(v%type))
  call field('cairn_var_info.count', c_loc(v), c_loc(v%count))
  call field('cairn_var_info.ndims', c_loc(v), c_loc(v%ndims))
  call field('cairn_var_info.dims', c_loc(v), c_loc(v%dims))
  call field('cairn_var_info.bytes', c_loc(v), c_loc(v%bytes))
  call field('cairn_var_info.stored', c_loc(v), c_loc(v%stored))
  call field('cairn_var_info.error_bound', c_loc(v), c_loc(v%error_bound))
contains
  subroutine struct(name, n)
    character(len=*), intent(in) :: name
    integer(c_size_t), intent(in) :: n
    write (*, '(a,1x,a,1x,i0)') 'struct', name, n
  end subroutine
  subroutine field(name, base, at)
    character(len=*), intent(in) :: name
    type(c_ptr), intent(in) :: base, at
    write (*, '(a,1x,a,1x,i0)') 'field', name, &
      transfer(at, 0_c_intptr_t) - transfer(base, 0_c_intptr_t)
  end subroutine
end program
