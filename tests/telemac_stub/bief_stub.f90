! The few pieces of TELEMAC's BIEF, HERMES and parallel modules that
! integrations/telemac/anabranch_telemac.f uses, with TELEMAC's names and shapes, so
! that the file is compiled and run here exactly as TELEMAC's runner compiles a case's
! user Fortran (TELEMAC's own flags, no anabranch module) without TELEMAC itself.
module bief_def
  implicit none
  type pointer_to_bief_obj
    type(bief_obj), pointer :: p => null()
  end type
  type bief_obj
    integer :: n = 0, dim1 = 0
    double precision, pointer :: r(:) => null()
    type(pointer_to_bief_obj), pointer :: adr(:) => null()
  end type
  type bief_mesh
    integer :: npoin = 0
  end type
  type bief_file
    character(len=250) :: name = ' '
    integer :: lu = 0
    character(len=8) :: fmt = ' '
    character(len=6) :: type = ' '
    character(len=15) :: action = ' '
  end type
end module

module declarations_special
  implicit none
  integer, parameter :: hermes_record_unknown_err = 1000, hermes_var_unknown_err = 1001, point_bnd_elt_type = 1
  integer :: lu = 6
  integer :: ncsize = 0
  integer :: ipid = 0
end module

module declarations_parallel
  implicit none
  integer :: comm = 0
end module

module interface_hermes
  implicit none
  interface
    subroutine write_data(ffmt, nres, maxvar, at, ltt, sorleo, texte, varsor, n, mesh)
      use bief_def
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: nres, maxvar, ltt, n
      double precision, intent(in) :: at
      logical, intent(in) :: sorleo(maxvar)
      character(len=32), intent(in) :: texte(*)
      type(bief_obj), intent(in) :: varsor
      type(bief_mesh), intent(in), optional :: mesh
    end subroutine
    subroutine close_bnd(ffmt, lu, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: lu
      integer, intent(out) :: ierr
    end subroutine
    subroutine get_mesh_title(ffmt, fid, title, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: fid
      character(len=80), intent(out) :: title
      integer, intent(out) :: ierr
    end subroutine
    subroutine get_mesh_npoin(ffmt, fid, typ, npoin, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: fid, typ
      integer, intent(out) :: npoin, ierr
    end subroutine
    subroutine get_mesh_nplan(ffmt, fid, nplan, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: fid
      integer, intent(out) :: nplan, ierr
    end subroutine
    subroutine get_data_nvar(ffmt, fid, nvar, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: fid
      integer, intent(out) :: nvar, ierr
    end subroutine
    subroutine get_data_var_list(ffmt, fid, nvar, varlist, unitlist, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: fid, nvar
      character(len=16), intent(inout) :: varlist(nvar), unitlist(nvar)
      integer, intent(out) :: ierr
    end subroutine
    subroutine get_data_ntimestep(ffmt, fid, ntimestep, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: fid
      integer, intent(out) :: ntimestep
      integer, intent(inout) :: ierr
    end subroutine
    subroutine get_data_time(ffmt, fid, record, time, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: fid, record
      double precision, intent(out) :: time
      integer, intent(out) :: ierr
    end subroutine
    subroutine get_data_value(ffmt, fid, record, var_name, res_value, n, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: fid, record, n
      character(len=16), intent(in) :: var_name
      double precision, intent(inout) :: res_value(n)
      integer, intent(out) :: ierr
    end subroutine
    subroutine close_mesh(ffmt, lu, ierr)
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: lu
      integer, intent(out) :: ierr
    end subroutine
  end interface
end module

module bief
  use bief_def
  implicit none
  interface
    subroutine bief_desimp(format_res, varsor, n, nres, at, lt, lisprd, leoprd, sorleo, sorimp, maxvar, texte, &
                           ptinig, ptinil, mesh, iimp, ileo, compgraph)
      use bief_def
      type(bief_obj), intent(in) :: varsor
      character(len=8), intent(in) :: format_res
      integer, intent(in) :: nres, lt, lisprd, leoprd, ptinig, ptinil, n, maxvar
      double precision, intent(in) :: at
      character(len=32), intent(in) :: texte(*)
      logical, intent(in) :: sorleo(maxvar), sorimp(maxvar)
      type(bief_mesh), intent(in), optional :: mesh
      logical, intent(in), optional :: iimp, ileo
      integer, intent(in), optional :: compgraph
    end subroutine
    subroutine bief_close_files(files, nfiles, pexit)
      use bief_def
      integer, intent(in) :: nfiles
      logical, intent(in) :: pexit
      type(bief_file), intent(inout) :: files(nfiles)
    end subroutine
  end interface
end module

subroutine write_data(ffmt, nres, maxvar, at, ltt, sorleo, texte, varsor, n, mesh)
  use bief_def
  implicit none
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: nres, maxvar, ltt, n
  double precision, intent(in) :: at
  logical, intent(in) :: sorleo(maxvar)
  character(len=32), intent(in) :: texte(*)
  type(bief_obj), intent(in) :: varsor
  type(bief_mesh), intent(in), optional :: mesh
  print '(a)', 'STUB: WRITE_DATA CALLED (TELEMAC''S OWN WRITING)'
end subroutine

! HERMES' readers: TELEMAC's own reading of a part (READ_DATASET's classic path), which
! the runs here never take: each says so and fails.
subroutine hermes_not_here(what, ierr)
  character(len=*), intent(in) :: what
  integer, intent(out) :: ierr
  print '(2a)', 'STUB: HERMES ', what
  ierr = 1
end subroutine

subroutine get_mesh_title(ffmt, fid, title, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: fid
  character(len=80), intent(out) :: title
  integer, intent(out) :: ierr
  title = ' '
  call hermes_not_here('GET_MESH_TITLE', ierr)
end subroutine

subroutine get_mesh_npoin(ffmt, fid, typ, npoin, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: fid, typ
  integer, intent(out) :: npoin, ierr
  npoin = 0
  call hermes_not_here('GET_MESH_NPOIN', ierr)
end subroutine

subroutine get_mesh_nplan(ffmt, fid, nplan, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: fid
  integer, intent(out) :: nplan, ierr
  nplan = 1
  call hermes_not_here('GET_MESH_NPLAN', ierr)
end subroutine

subroutine get_data_nvar(ffmt, fid, nvar, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: fid
  integer, intent(out) :: nvar, ierr
  nvar = 0
  call hermes_not_here('GET_DATA_NVAR', ierr)
end subroutine

subroutine get_data_var_list(ffmt, fid, nvar, varlist, unitlist, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: fid, nvar
  character(len=16), intent(inout) :: varlist(nvar), unitlist(nvar)
  integer, intent(out) :: ierr
  call hermes_not_here('GET_DATA_VAR_LIST', ierr)
end subroutine

subroutine get_data_ntimestep(ffmt, fid, ntimestep, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: fid
  integer, intent(out) :: ntimestep
  integer, intent(inout) :: ierr
  ntimestep = 0
  call hermes_not_here('GET_DATA_NTIMESTEP', ierr)
end subroutine

subroutine get_data_time(ffmt, fid, record, time, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: fid, record
  double precision, intent(out) :: time
  integer, intent(out) :: ierr
  time = 0
  call hermes_not_here('GET_DATA_TIME', ierr)
end subroutine

subroutine get_data_value(ffmt, fid, record, var_name, res_value, n, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: fid, record, n
  character(len=16), intent(in) :: var_name
  double precision, intent(inout) :: res_value(n)
  integer, intent(out) :: ierr
  call hermes_not_here('GET_DATA_VALUE', ierr)
end subroutine

subroutine close_bnd(ffmt, lu, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: lu
  integer, intent(out) :: ierr
  ierr = 0
end subroutine

subroutine close_mesh(ffmt, lu, ierr)
  character(len=8), intent(in) :: ffmt
  integer, intent(in) :: lu
  integer, intent(out) :: ierr
  close(lu)
  ierr = 0
end subroutine

subroutine check_call(ierr, where)
  integer, intent(in) :: ierr
  character(len=*), intent(in) :: where
  if (ierr /= 0) then
    print '(2a)', 'STUB: CHECK_CALL FAILED IN ', where
    call plante(1)
  end if
end subroutine

subroutine impvec(v, texte, n)
  integer, intent(in) :: n
  double precision, intent(in) :: v(n)
  character(len=32), intent(in) :: texte
end subroutine

subroutine plante(ival)
  integer, intent(in) :: ival
  ! Stops this rank non-zero after its listing is out: the launcher then ends the others.
  ! (An MPI_ABORT can kill the launcher's forwarding before what the ranks said reaches it.)
  print '(a)', 'STUB: PLANTE'
  flush(6)
  error stop 2
end subroutine

subroutine p_exit
  use mpi
  integer :: ierr
  call mpi_finalize(ierr)
end subroutine
