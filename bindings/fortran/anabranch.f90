! anabranch Fortran 2003 module: the C API (include/anabranch/anabranch.h) with the same
! names, handles as derived types, 1-based global ids, arrays passed without copies, and a
! trailing optional ierr. Without ierr, an error prints ab_last_error() and stops the
! program (as MPI's default error handler does); with ierr, the status code is returned.
! Communicators: INTEGER (mpif.h, use mpi) or type(MPI_Comm) (use mpi_f08).
module anabranch
  use iso_c_binding
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  integer, parameter, public :: AB_OK = 0, AB_ERR_USAGE = 1, AB_ERR_FORMAT = 2, AB_ERR_IO = 3, &
                                AB_ERR_MPI = 4, AB_ERR_MEMORY = 5, AB_ERR_INTERNAL = 6

  type, public :: ab_header
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_writer
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_reader
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_part
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_file
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_blocks
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_block_writer
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_block_reader
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_records
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_records_writer
    type(c_ptr) :: ptr = c_null_ptr
  end type
  type, public :: ab_records_reader
    type(c_ptr) :: ptr = c_null_ptr
  end type

  public :: ab_last_error, ab_header_create, ab_header_free, ab_header_set_title, ab_header_add_variable, &
            ab_header_set_precision, ab_header_set_geometry, ab_header_set_local_mesh, ab_header_sizes, &
            ab_writer_open, ab_writer_open_merged, ab_writer_write_frame, ab_writer_write_frame_begin, ab_writer_write_frame_end, &
            ab_writer_close, ab_writer_abandon, ab_header_set_iparam, ab_part_open, ab_part_sizes, ab_part_mesh, &
            ab_part_frames, ab_part_read_values, ab_part_close, ab_file_open, ab_file_sizes, ab_file_mesh, &
            ab_file_times, ab_file_read, ab_file_close, ab_command, &
            ab_part_open_global, ab_reader_open, ab_reader_sizes, ab_reader_frames, ab_reader_variable, ab_reader_time, &
            ab_reader_read_frame, ab_reader_read_variable, ab_reader_close, &
            ab_blocks_create, ab_blocks_free, ab_blocks_add_block, ab_blocks_add_piece, ab_blocks_set_halo, ab_blocks_load, &
            ab_blocks_count, ab_blocks_piece, ab_block_writer_open, ab_block_writer_write_grid, ab_block_writer_write_frame, &
            ab_block_writer_write_frame_begin, ab_block_writer_write_frame_end, &
            ab_block_writer_close, ab_block_reader_open, ab_block_reader_frames, ab_block_reader_time, ab_block_reader_read_frame, &
            ab_block_reader_read_grid, ab_block_reader_close, &
            ab_records_create, ab_records_free, ab_records_add, ab_records_set_form, ab_records_set_offset, &
            ab_records_extent, ab_records_writer_open, ab_records_writer_write, ab_records_writer_close, &
            ab_records_reader_open, ab_records_reader_read, ab_records_reader_close

  interface ab_writer_open
    module procedure ab_writer_open_int, ab_writer_open_f08
  end interface
  interface ab_writer_open_merged
    module procedure ab_writer_open_merged_int, ab_writer_open_merged_f08
  end interface
  interface ab_part_open
    module procedure ab_part_open_int, ab_part_open_f08
  end interface
  interface ab_reader_open
    module procedure ab_reader_open_int, ab_reader_open_f08
  end interface
  interface ab_block_writer_open
    module procedure ab_block_writer_open_int, ab_block_writer_open_f08
  end interface
  interface ab_block_reader_open
    module procedure ab_block_reader_open_int, ab_block_reader_open_f08
  end interface
  interface ab_records_writer_open
    module procedure ab_records_writer_open_int, ab_records_writer_open_f08
  end interface
  interface ab_records_reader_open
    module procedure ab_records_reader_open_int, ab_records_reader_open_f08
  end interface
  interface ab_part_open_global
    module procedure ab_part_open_global_int, ab_part_open_global_f08
  end interface

  interface
    function c_last_error() bind(C, name="ab_last_error") result(p)
      import :: c_ptr
      type(c_ptr) :: p
    end function
    integer(c_int) function c_header_create(h) bind(C, name="ab_header_create")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: h
    end function
    integer(c_int) function c_header_free(h) bind(C, name="ab_header_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: h
    end function
    integer(c_int) function c_header_set_title(h, t) bind(C, name="ab_header_set_title")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: h
      character(kind=c_char), intent(in) :: t(*)
    end function
    integer(c_int) function c_header_add_variable(h, n, u) bind(C, name="ab_header_add_variable")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: h
      character(kind=c_char), intent(in) :: n(*), u(*)
    end function
    integer(c_int) function c_header_set_precision(h, b) bind(C, name="ab_header_set_precision")
      import :: c_int, c_ptr
      type(c_ptr), value :: h
      integer(c_int), value :: b
    end function
    integer(c_int) function c_header_set_geometry(h, p) bind(C, name="ab_header_set_geometry")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: h
      character(kind=c_char), intent(in) :: p(*)
    end function
    integer(c_int) function c_header_set_local_mesh(h, ne, ikle, nl, x, y) bind(C, name="ab_header_set_local_mesh")
      import :: c_int, c_ptr, c_int64_t, c_int32_t, c_double
      type(c_ptr), value :: h
      integer(c_int64_t), value :: ne, nl
      integer(c_int32_t), intent(in) :: ikle(*)
      real(c_double), intent(in) :: x(*), y(*)
    end function
    integer(c_int) function c_header_sizes(h, ne, np, ndp, nplan) bind(C, name="ab_header_sizes")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: h
      integer(c_int64_t), intent(out) :: ne, np
      integer(c_int), intent(out) :: ndp, nplan
    end function
    integer(c_int) function c_writer_open(comm, path, h, nl, ids, opts, w) bind(C, name="ab_writer_open_f")
      import :: c_int, c_ptr, c_char, c_int64_t, c_int32_t
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*), opts(*)
      type(c_ptr), value :: h
      integer(c_int64_t), value :: nl
      integer(c_int32_t), intent(in) :: ids(*)
      type(c_ptr), intent(out) :: w
    end function
    integer(c_int) function c_writer_open_merged(comm, part, geo, bnd, path, opts, nl, w) &
        bind(C, name="ab_writer_open_merged_f")
      import :: c_int, c_char, c_int64_t, c_ptr
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: part(*), geo(*), bnd(*), path(*), opts(*)
      integer(c_int64_t), intent(out) :: nl
      type(c_ptr), intent(out) :: w
    end function
    integer(c_int) function c_writer_write_frame(w, t, v) bind(C, name="ab_writer_write_frame")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: w
      real(c_double), value :: t
      real(c_double), intent(in) :: v(*)
    end function
    integer(c_int) function c_writer_write_frame_begin(w, t, v) bind(C, name="ab_writer_write_frame_begin")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: w
      real(c_double), value :: t
      real(c_double), intent(in) :: v(*)
    end function
    integer(c_int) function c_writer_write_frame_end(w) bind(C, name="ab_writer_write_frame_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: w
    end function
    integer(c_int) function c_writer_close(w) bind(C, name="ab_writer_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: w
    end function
    integer(c_int) function c_reader_open(comm, path, nl, ids, opts, r) bind(C, name="ab_reader_open_f")
      import :: c_int, c_ptr, c_char, c_int64_t, c_int32_t
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*), opts(*)
      integer(c_int64_t), value :: nl
      integer(c_int32_t), intent(in) :: ids(*)
      type(c_ptr), intent(out) :: r
    end function
    integer(c_int) function c_reader_sizes(r, ne, np, ndp, nplan) bind(C, name="ab_reader_sizes")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: r
      integer(c_int64_t), intent(out) :: ne, np
      integer(c_int), intent(out) :: ndp, nplan
    end function
    integer(c_int) function c_reader_frames(r, nf, nv) bind(C, name="ab_reader_frames")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: r
      integer(c_int64_t), intent(out) :: nf
      integer(c_int), intent(out) :: nv
    end function
    integer(c_int) function c_reader_variable(r, v, name, unit) bind(C, name="ab_reader_variable")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: r
      integer(c_int), value :: v
      character(kind=c_char), intent(out) :: name(17), unit(17)
    end function
    integer(c_int) function c_reader_time(r, f, t) bind(C, name="ab_reader_time")
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: r
      integer(c_int64_t), value :: f
      real(c_double), intent(out) :: t
    end function
    integer(c_int) function c_reader_read_frame(r, f, v) bind(C, name="ab_reader_read_frame")
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: r
      integer(c_int64_t), value :: f
      real(c_double), intent(out) :: v(*)
    end function
    integer(c_int) function c_reader_read_variable(r, f, var, v) bind(C, name="ab_reader_read_variable")
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: r
      integer(c_int64_t), value :: f
      integer(c_int), value :: var
      real(c_double), intent(out) :: v(*)
    end function
    integer(c_int) function c_reader_close(r) bind(C, name="ab_reader_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
    end function
    integer(c_int) function c_part_open_global(comm, geo, par, p) bind(C, name="ab_part_open_global_f")
      import :: c_int, c_ptr, c_char
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: geo(*), par(*)
      type(c_ptr), intent(out) :: p
    end function
    integer(c_int) function c_part_open(comm, base, p) bind(C, name="ab_part_open_f")
      import :: c_int, c_ptr, c_char
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: base(*)
      type(c_ptr), intent(out) :: p
    end function
    integer(c_int) function c_part_sizes(p, ne, np, ndp, nplan) bind(C, name="ab_part_sizes")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: p
      integer(c_int64_t), intent(out) :: ne, np
      integer(c_int), intent(out) :: ndp, nplan
    end function
    integer(c_int) function c_part_mesh(p, ikle, knolg, x, y) bind(C, name="ab_part_mesh")
      import :: c_int, c_ptr, c_int32_t, c_double
      type(c_ptr), value :: p
      integer(c_int32_t), intent(out) :: ikle(*), knolg(*)
      real(c_double), intent(out) :: x(*), y(*)
    end function
    integer(c_int) function c_part_close(p) bind(C, name="ab_part_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: p
    end function
    integer(c_int) function c_part_frames(p, frames, nvar) bind(C, name="ab_part_frames")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: p
      integer(c_int64_t), intent(out) :: frames
      integer(c_int), intent(out) :: nvar
    end function
    integer(c_int) function c_part_read_values(p, frame, var, values) bind(C, name="ab_part_read_values")
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: p
      integer(c_int64_t), value :: frame
      integer(c_int), value :: var
      real(c_double), intent(out) :: values(*)
    end function
    integer(c_int) function c_writer_abandon(w) bind(C, name="ab_writer_abandon")
      import :: c_int, c_ptr
      type(c_ptr), value :: w
    end function
    integer(c_int) function c_header_set_iparam(h, iparam) bind(C, name="ab_header_set_iparam")
      import :: c_int, c_ptr, c_int32_t
      type(c_ptr), value :: h
      integer(c_int32_t), intent(in) :: iparam(10)
    end function
    integer(c_int) function c_file_open(path, f) bind(C, name="ab_file_open")
      import :: c_int, c_ptr, c_char
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), intent(out) :: f
    end function
    integer(c_int) function c_file_sizes(f, ne, np, ndp, nplan, nvar, frames, rb) bind(C, name="ab_file_sizes")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: f
      integer(c_int64_t), intent(out) :: ne, np, frames
      integer(c_int), intent(out) :: ndp, nplan, nvar, rb
    end function
    integer(c_int) function c_file_mesh(f, ikle, ipobo, x, y) bind(C, name="ab_file_mesh")
      import :: c_int, c_ptr, c_int32_t, c_double
      type(c_ptr), value :: f
      integer(c_int32_t), intent(out) :: ikle(*), ipobo(*)
      real(c_double), intent(out) :: x(*), y(*)
    end function
    integer(c_int) function c_file_times(f, times) bind(C, name="ab_file_times")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: f
      real(c_double), intent(out) :: times(*)
    end function
    integer(c_int) function c_file_read(f, frame, var, first, count, values) bind(C, name="ab_file_read")
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: f
      integer(c_int64_t), value :: frame, first, count
      integer(c_int), value :: var
      real(c_double), intent(out) :: values(*)
    end function
    integer(c_int) function c_file_close(f) bind(C, name="ab_file_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: f
    end function
    integer(c_int) function c_command(argc, argv, report) bind(C, name="ab_command")
      import :: c_int, c_ptr
      integer(c_int), value :: argc
      type(c_ptr), intent(in) :: argv(*)
      type(c_ptr), intent(out) :: report
    end function
    subroutine c_free(p) bind(C, name="ab_free")
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine
    integer(c_int) function c_blocks_create(l) bind(C, name="ab_blocks_create")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: l
    end function
    integer(c_int) function c_blocks_free(l) bind(C, name="ab_blocks_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: l
    end function
    integer(c_int) function c_blocks_add_block(l, id, ni, nj, nk) bind(C, name="ab_blocks_add_block")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: l
      integer(c_int64_t), value :: id, ni, nj, nk
    end function
    integer(c_int) function c_blocks_add_piece(l, id, range) bind(C, name="ab_blocks_add_piece")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: l
      integer(c_int64_t), value :: id
      integer(c_int64_t), intent(in) :: range(6)
    end function
    integer(c_int) function c_blocks_set_halo(l, hi, hj, hk) bind(C, name="ab_blocks_set_halo")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: l
      integer(c_int64_t), value :: hi, hj, hk
    end function
    integer(c_int) function c_blocks_load(l, path, rank) bind(C, name="ab_blocks_load")
      import :: c_int, c_ptr, c_char
      type(c_ptr), value :: l
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: rank
    end function
    integer(c_int) function c_blocks_count(l, nb, np) bind(C, name="ab_blocks_count")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: l
      integer(c_int64_t), intent(out) :: nb, np
    end function
    integer(c_int) function c_blocks_piece(l, p, id, range, md) bind(C, name="ab_blocks_piece")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: l
      integer(c_int64_t), value :: p
      integer(c_int64_t), intent(out) :: id, range(6), md(3)
    end function
    integer(c_int) function c_block_writer_open(comm, path, l, nvar, names, opts, w) bind(C, name="ab_block_writer_open_f")
      import :: c_int, c_ptr, c_char
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*), opts(*)
      type(c_ptr), value :: l
      integer(c_int), value :: nvar
      type(c_ptr), intent(in) :: names(*)
      type(c_ptr), intent(out) :: w
    end function
    integer(c_int) function c_block_writer_write_grid(w, xyz) bind(C, name="ab_block_writer_write_grid")
      import :: c_int, c_ptr
      type(c_ptr), value :: w
      type(c_ptr), intent(in) :: xyz(*)
    end function
    integer(c_int) function c_block_writer_write_frame(w, t, v) bind(C, name="ab_block_writer_write_frame")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: w
      real(c_double), value :: t
      type(c_ptr), intent(in) :: v(*)
    end function
    integer(c_int) function c_block_writer_write_frame_begin(w, t, v) bind(C, name="ab_block_writer_write_frame_begin")
      import :: c_int, c_ptr, c_double
      type(c_ptr), value :: w
      real(c_double), value :: t
      type(c_ptr), intent(in) :: v(*)
    end function
    integer(c_int) function c_block_writer_write_frame_end(w) bind(C, name="ab_block_writer_write_frame_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: w
    end function
    integer(c_int) function c_block_writer_close(w) bind(C, name="ab_block_writer_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: w
    end function
    integer(c_int) function c_block_reader_open(comm, path, l, opts, r) bind(C, name="ab_block_reader_open_f")
      import :: c_int, c_ptr, c_char
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*), opts(*)
      type(c_ptr), value :: l
      type(c_ptr), intent(out) :: r
    end function
    integer(c_int) function c_block_reader_frames(r, nf, nv) bind(C, name="ab_block_reader_frames")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: r
      integer(c_int64_t), intent(out) :: nf
      integer(c_int), intent(out) :: nv
    end function
    integer(c_int) function c_block_reader_time(r, f, t) bind(C, name="ab_block_reader_time")
      import :: c_int, c_ptr, c_int64_t, c_double
      type(c_ptr), value :: r
      integer(c_int64_t), value :: f
      real(c_double), intent(out) :: t
    end function
    integer(c_int) function c_block_reader_read_frame(r, f, v) bind(C, name="ab_block_reader_read_frame")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: r
      integer(c_int64_t), value :: f
      type(c_ptr), intent(in) :: v(*)
    end function
    integer(c_int) function c_block_reader_read_grid(r, v) bind(C, name="ab_block_reader_read_grid")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
      type(c_ptr), intent(in) :: v(*)
    end function
    integer(c_int) function c_records_create(l) bind(C, name="ab_records_create")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: l
    end function
    integer(c_int) function c_records_free(l) bind(C, name="ab_records_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: l
    end function
    integer(c_int) function c_records_add(l, n) bind(C, name="ab_records_add")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: l
      integer(c_int64_t), value :: n
    end function
    integer(c_int) function c_records_set_form(l, m, big, sub) bind(C, name="ab_records_set_form")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: l
      integer(c_int), value :: m, big
      integer(c_int64_t), value :: sub
    end function
    integer(c_int) function c_records_set_offset(l, off) bind(C, name="ab_records_set_offset")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: l
      integer(c_int64_t), value :: off
    end function
    integer(c_int) function c_records_extent(l, r, first, end) bind(C, name="ab_records_extent")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: l
      integer(c_int64_t), value :: r
      integer(c_int64_t), intent(out) :: first, end
    end function
    integer(c_int) function c_records_writer_open(comm, path, l, opts, w) bind(C, name="ab_records_writer_open_f")
      import :: c_int, c_ptr, c_char
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*), opts(*)
      type(c_ptr), value :: l
      type(c_ptr), intent(out) :: w
    end function
    integer(c_int) function c_records_writer_write(w, n, recs, data) bind(C, name="ab_records_writer_write")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: w
      integer(c_int64_t), value :: n
      integer(c_int64_t), intent(in) :: recs(*)
      type(c_ptr), intent(in) :: data(*)
    end function
    integer(c_int) function c_records_writer_close(w) bind(C, name="ab_records_writer_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: w
    end function
    integer(c_int) function c_records_reader_open(comm, path, l, opts, r) bind(C, name="ab_records_reader_open_f")
      import :: c_int, c_ptr, c_char
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: path(*), opts(*)
      type(c_ptr), value :: l
      type(c_ptr), intent(out) :: r
    end function
    integer(c_int) function c_records_reader_read(r, n, recs, data) bind(C, name="ab_records_reader_read")
      import :: c_int, c_ptr, c_int64_t
      type(c_ptr), value :: r
      integer(c_int64_t), value :: n
      integer(c_int64_t), intent(in) :: recs(*)
      type(c_ptr), intent(in) :: data(*)
    end function
    integer(c_int) function c_records_reader_close(r) bind(C, name="ab_records_reader_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
    end function
    integer(c_int) function c_block_reader_close(r) bind(C, name="ab_block_reader_close")
      import :: c_int, c_ptr
      type(c_ptr), value :: r
    end function
  end interface

contains

  ! The message of the last error on this thread.
  function ab_last_error() result(msg)
    character(len=:), allocatable :: msg
    msg = fstr(c_last_error())
  end function

  ! A NUL-terminated C string as a Fortran string ('' for a null pointer).
  function fstr(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: c(:)
    integer :: n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    call c_f_pointer(p, c, [huge(0)])
    n = 0
    do while (c(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate (character(len=n) :: s)
    s = transfer(c(1:n), s)
  end function

  subroutine check(rc, ierr)
    integer(c_int), intent(in) :: rc
    integer, optional, intent(out) :: ierr
    if (present(ierr)) then
      ierr = int(rc)
    else if (rc /= AB_OK) then
      write (0, '(a)') 'anabranch: '//ab_last_error()
      error stop 1
    end if
  end subroutine

  function cstr(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s)//c_null_char
  end function

  subroutine ab_header_create(h, ierr)
    type(ab_header), intent(out) :: h
    integer, optional, intent(out) :: ierr
    call check(c_header_create(h%ptr), ierr)
  end subroutine

  subroutine ab_header_free(h, ierr)
    type(ab_header), intent(inout) :: h
    integer, optional, intent(out) :: ierr
    call check(c_header_free(h%ptr), ierr)
    h%ptr = c_null_ptr
  end subroutine

  subroutine ab_header_set_title(h, title, ierr)
    type(ab_header), intent(in) :: h
    character(len=*), intent(in) :: title
    integer, optional, intent(out) :: ierr
    call check(c_header_set_title(h%ptr, cstr(title)), ierr)
  end subroutine

  subroutine ab_header_add_variable(h, name, unit, ierr)
    type(ab_header), intent(in) :: h
    character(len=*), intent(in) :: name, unit
    integer, optional, intent(out) :: ierr
    call check(c_header_add_variable(h%ptr, cstr(name), cstr(unit)), ierr)
  end subroutine

  subroutine ab_header_set_precision(h, real_bytes, ierr)
    type(ab_header), intent(in) :: h
    integer, intent(in) :: real_bytes
    integer, optional, intent(out) :: ierr
    call check(c_header_set_precision(h%ptr, int(real_bytes, c_int)), ierr)
  end subroutine

  subroutine ab_header_set_geometry(h, path, ierr)
    type(ab_header), intent(in) :: h
    character(len=*), intent(in) :: path
    integer, optional, intent(out) :: ierr
    call check(c_header_set_geometry(h%ptr, cstr(path)), ierr)
  end subroutine

  subroutine ab_header_set_local_mesh(h, nelem, ikle, nlocal, x, y, ierr)
    type(ab_header), intent(in) :: h
    integer(c_int64_t), intent(in) :: nelem, nlocal
    integer(c_int32_t), intent(in) :: ikle(*)
    real(c_double), intent(in) :: x(*), y(*)
    integer, optional, intent(out) :: ierr
    call check(c_header_set_local_mesh(h%ptr, nelem, ikle, nlocal, x, y), ierr)
  end subroutine

  subroutine ab_header_sizes(h, nelem, npoin, ndp, nplan, ierr)
    type(ab_header), intent(in) :: h
    integer(c_int64_t), intent(out) :: nelem, npoin
    integer, intent(out) :: ndp, nplan
    integer, optional, intent(out) :: ierr
    integer(c_int) :: a, b
    call check(c_header_sizes(h%ptr, nelem, npoin, a, b), ierr)
    ndp = int(a)
    nplan = int(b)
  end subroutine

  ! COLLECTIVE. comm as an INTEGER handle (mpif.h, use mpi).
  subroutine ab_writer_open_int(comm, path, h, nlocal, global_ids, options, w, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path, options
    type(ab_header), intent(in) :: h
    integer(c_int64_t), intent(in) :: nlocal
    integer(c_int32_t), intent(in) :: global_ids(*)
    type(ab_writer), intent(out) :: w
    integer, optional, intent(out) :: ierr
    call check(c_writer_open(int(comm, c_int), cstr(path), h%ptr, nlocal, global_ids, cstr(options), w%ptr), ierr)
  end subroutine

  ! COLLECTIVE. comm as type(MPI_Comm) (use mpi_f08).
  subroutine ab_writer_open_f08(comm, path, h, nlocal, global_ids, options, w, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: path, options
    type(ab_header), intent(in) :: h
    integer(c_int64_t), intent(in) :: nlocal
    integer(c_int32_t), intent(in) :: global_ids(*)
    type(ab_writer), intent(out) :: w
    integer, optional, intent(out) :: ierr
    call ab_writer_open_int(comm%MPI_VAL, path, h, nlocal, global_ids, options, w, ierr)
  end subroutine

  ! COLLECTIVE. The file a merge of the ranks' parts would give, written as they run
  ! (ab_writer_open_merged in the C API); nlocal receives the part's NPOIN. boundary: '' for none.
  subroutine ab_writer_open_merged_int(comm, part, geometry, boundary, path, options, nlocal, w, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: part, geometry, boundary, path, options
    integer(c_int64_t), intent(out) :: nlocal
    type(ab_writer), intent(out) :: w
    integer, optional, intent(out) :: ierr
    call check(c_writer_open_merged(int(comm, c_int), cstr(part), cstr(geometry), cstr(boundary), cstr(path), &
                                    cstr(options), nlocal, w%ptr), ierr)
  end subroutine

  subroutine ab_writer_open_merged_f08(comm, part, geometry, boundary, path, options, nlocal, w, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: part, geometry, boundary, path, options
    integer(c_int64_t), intent(out) :: nlocal
    type(ab_writer), intent(out) :: w
    integer, optional, intent(out) :: ierr
    call ab_writer_open_merged_int(comm%MPI_VAL, part, geometry, boundary, path, options, nlocal, w, ierr)
  end subroutine

  ! COLLECTIVE. values(nlocal, nvar): variable after variable, as in the C API.
  subroutine ab_writer_write_frame(w, time, values, ierr)
    type(ab_writer), intent(in) :: w
    real(c_double), intent(in) :: time
    real(c_double), intent(in) :: values(*)
    integer, optional, intent(out) :: ierr
    call check(c_writer_write_frame(w%ptr, time, values), ierr)
  end subroutine

  subroutine ab_writer_write_frame_begin(w, time, values, ierr)
    type(ab_writer), intent(in) :: w
    real(c_double), intent(in) :: time
    real(c_double), intent(in) :: values(*)
    integer, optional, intent(out) :: ierr
    call check(c_writer_write_frame_begin(w%ptr, time, values), ierr)
  end subroutine

  subroutine ab_writer_write_frame_end(w, ierr)
    type(ab_writer), intent(in) :: w
    integer, optional, intent(out) :: ierr
    call check(c_writer_write_frame_end(w%ptr), ierr)
  end subroutine

  subroutine ab_writer_close(w, ierr)
    type(ab_writer), intent(inout) :: w
    integer, optional, intent(out) :: ierr
    call check(c_writer_close(w%ptr), ierr)
    w%ptr = c_null_ptr
  end subroutine

  ! COLLECTIVE. Every rank reads the values of its own nodes (global_ids: KNOLG) from one
  ! shared file; options as in the C API ('strategy=independent', '' for the defaults).
  subroutine ab_reader_open_int(comm, path, nlocal, global_ids, options, r, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path, options
    integer(c_int64_t), intent(in) :: nlocal
    integer(c_int32_t), intent(in) :: global_ids(*)
    type(ab_reader), intent(out) :: r
    integer, optional, intent(out) :: ierr
    call check(c_reader_open(int(comm, c_int), cstr(path), nlocal, global_ids, cstr(options), r%ptr), ierr)
  end subroutine

  subroutine ab_reader_open_f08(comm, path, nlocal, global_ids, options, r, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: path, options
    integer(c_int64_t), intent(in) :: nlocal
    integer(c_int32_t), intent(in) :: global_ids(*)
    type(ab_reader), intent(out) :: r
    integer, optional, intent(out) :: ierr
    call ab_reader_open_int(comm%MPI_VAL, path, nlocal, global_ids, options, r, ierr)
  end subroutine

  subroutine ab_reader_sizes(r, nelem, npoin, ndp, nplan, ierr)
    type(ab_reader), intent(in) :: r
    integer(c_int64_t), intent(out) :: nelem, npoin
    integer, intent(out) :: ndp, nplan
    integer, optional, intent(out) :: ierr
    integer(c_int) :: a, b
    call check(c_reader_sizes(r%ptr, nelem, npoin, a, b), ierr)
    ndp = int(a)
    nplan = int(b)
  end subroutine

  subroutine ab_reader_frames(r, frames, nvar, ierr)
    type(ab_reader), intent(in) :: r
    integer(c_int64_t), intent(out) :: frames
    integer, intent(out) :: nvar
    integer, optional, intent(out) :: ierr
    integer(c_int) :: n
    call check(c_reader_frames(r%ptr, frames, n), ierr)
    nvar = int(n)
  end subroutine

  ! Variable var (0-based, as everywhere in this module's frame and variable numbers): its
  ! name and unit, blank-padded.
  subroutine ab_reader_variable(r, var, name, unit, ierr)
    type(ab_reader), intent(in) :: r
    integer, intent(in) :: var
    character(len=*), intent(out) :: name, unit
    integer, optional, intent(out) :: ierr
    character(kind=c_char) :: n(17), u(17)
    integer :: i
    call check(c_reader_variable(r%ptr, int(var, c_int), n, u), ierr)
    name = ''
    unit = ''
    do i = 1, min(16, len(name))
      if (n(i) == c_null_char) exit
      name(i:i) = n(i)
    end do
    do i = 1, min(16, len(unit))
      if (u(i) == c_null_char) exit
      unit(i:i) = u(i)
    end do
  end subroutine

  ! Time of frame (0-based).
  subroutine ab_reader_time(r, frame, time, ierr)
    type(ab_reader), intent(in) :: r
    integer(c_int64_t), intent(in) :: frame
    real(c_double), intent(out) :: time
    integer, optional, intent(out) :: ierr
    call check(c_reader_time(r%ptr, frame, time), ierr)
  end subroutine

  ! COLLECTIVE. Frame (0-based) into values(nlocal, nvar), as the writer takes them.
  subroutine ab_reader_read_frame(r, frame, values, ierr)
    type(ab_reader), intent(in) :: r
    integer(c_int64_t), intent(in) :: frame
    real(c_double), intent(out) :: values(*)
    integer, optional, intent(out) :: ierr
    call check(c_reader_read_frame(r%ptr, frame, values), ierr)
  end subroutine

  ! COLLECTIVE. Variable var of frame (both 0-based) into values(nlocal).
  subroutine ab_reader_read_variable(r, frame, var, values, ierr)
    type(ab_reader), intent(in) :: r
    integer(c_int64_t), intent(in) :: frame
    integer, intent(in) :: var
    real(c_double), intent(out) :: values(*)
    integer, optional, intent(out) :: ierr
    call check(c_reader_read_variable(r%ptr, frame, int(var, c_int), values), ierr)
  end subroutine

  ! COLLECTIVE.
  subroutine ab_reader_close(r, ierr)
    type(ab_reader), intent(inout) :: r
    integer, optional, intent(out) :: ierr
    call check(c_reader_close(r%ptr), ierr)
    r%ptr = c_null_ptr
  end subroutine

  ! COLLECTIVE. This rank's part from the global geometry and an element -> part file
  ! (ab_part_open_global in the C API): no per-rank files.
  subroutine ab_part_open_global_int(comm, geometry, partition, p, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: geometry, partition
    type(ab_part), intent(out) :: p
    integer, optional, intent(out) :: ierr
    call check(c_part_open_global(int(comm, c_int), cstr(geometry), cstr(partition), p%ptr), ierr)
  end subroutine

  subroutine ab_part_open_global_f08(comm, geometry, partition, p, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: geometry, partition
    type(ab_part), intent(out) :: p
    integer, optional, intent(out) :: ierr
    call ab_part_open_global_int(comm%MPI_VAL, geometry, partition, p, ierr)
  end subroutine

  subroutine ab_part_open_int(comm, base, p, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: base
    type(ab_part), intent(out) :: p
    integer, optional, intent(out) :: ierr
    call check(c_part_open(int(comm, c_int), cstr(base), p%ptr), ierr)
  end subroutine

  subroutine ab_part_open_f08(comm, base, p, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: base
    type(ab_part), intent(out) :: p
    integer, optional, intent(out) :: ierr
    call ab_part_open_int(comm%MPI_VAL, base, p, ierr)
  end subroutine

  subroutine ab_part_sizes(p, nelem, npoin, ndp, nplan, ierr)
    type(ab_part), intent(in) :: p
    integer(c_int64_t), intent(out) :: nelem, npoin
    integer, intent(out) :: ndp, nplan
    integer, optional, intent(out) :: ierr
    integer(c_int) :: a, b
    call check(c_part_sizes(p%ptr, nelem, npoin, a, b), ierr)
    ndp = int(a)
    nplan = int(b)
  end subroutine

  subroutine ab_part_mesh(p, ikle, knolg, x, y, ierr)
    type(ab_part), intent(in) :: p
    integer(c_int32_t), intent(out) :: ikle(*), knolg(*)
    real(c_double), intent(out) :: x(*), y(*)
    integer, optional, intent(out) :: ierr
    call check(c_part_mesh(p%ptr, ikle, knolg, x, y), ierr)
  end subroutine

  ! Frames in the part and variables per frame.
  subroutine ab_part_frames(p, frames, nvar, ierr)
    type(ab_part), intent(in) :: p
    integer(c_int64_t), intent(out) :: frames
    integer, intent(out) :: nvar
    integer, optional, intent(out) :: ierr
    integer(c_int) :: n
    call check(c_part_frames(p%ptr, frames, n), ierr)
    nvar = int(n)
  end subroutine

  ! values(npoin): variable var of frame, both counted from 0 as in the C API.
  subroutine ab_part_read_values(p, frame, var, values, ierr)
    type(ab_part), intent(in) :: p
    integer(c_int64_t), intent(in) :: frame
    integer, intent(in) :: var
    real(c_double), intent(out) :: values(*)
    integer, optional, intent(out) :: ierr
    call check(c_part_read_values(p%ptr, frame, int(var, c_int), values), ierr)
  end subroutine

  subroutine ab_part_close(p, ierr)
    type(ab_part), intent(inout) :: p
    integer, optional, intent(out) :: ierr
    call check(c_part_close(p%ptr), ierr)
    p%ptr = c_null_ptr
  end subroutine

  ! Frees the writer without completing the file (see the C API; collective for hdf5).
  subroutine ab_writer_abandon(w, ierr)
    type(ab_writer), intent(inout) :: w
    integer, optional, intent(out) :: ierr
    call check(c_writer_abandon(w%ptr), ierr)
    w%ptr = c_null_ptr
  end subroutine

  ! IPARAM(1..10) as SERAFIN stores them.
  subroutine ab_header_set_iparam(h, iparam, ierr)
    type(ab_header), intent(in) :: h
    integer(c_int32_t), intent(in) :: iparam(10)
    integer, optional, intent(out) :: ierr
    call check(c_header_set_iparam(h%ptr, iparam), ierr)
  end subroutine

  ! A whole result file, SERAFIN or anabranch's HDF5. Not collective.
  subroutine ab_file_open(path, f, ierr)
    character(len=*), intent(in) :: path
    type(ab_file), intent(out) :: f
    integer, optional, intent(out) :: ierr
    call check(c_file_open(cstr(path), f%ptr), ierr)
  end subroutine

  ! real_bytes: 4 (single precision) or 8 (double).
  subroutine ab_file_sizes(f, nelem, npoin, ndp, nplan, nvar, frames, real_bytes, ierr)
    type(ab_file), intent(in) :: f
    integer(c_int64_t), intent(out) :: nelem, npoin, frames
    integer, intent(out) :: ndp, nplan, nvar, real_bytes
    integer, optional, intent(out) :: ierr
    integer(c_int) :: a, b, c, d
    call check(c_file_sizes(f%ptr, nelem, npoin, a, b, c, frames, d), ierr)
    ndp = int(a)
    nplan = int(b)
    nvar = int(c)
    real_bytes = int(d)
  end subroutine

  ! ikle(nelem*ndp) (1-based), ipobo(npoin), x(npoin), y(npoin).
  subroutine ab_file_mesh(f, ikle, ipobo, x, y, ierr)
    type(ab_file), intent(in) :: f
    integer(c_int32_t), intent(out) :: ikle(*), ipobo(*)
    real(c_double), intent(out) :: x(*), y(*)
    integer, optional, intent(out) :: ierr
    call check(c_file_mesh(f%ptr, ikle, ipobo, x, y), ierr)
  end subroutine

  ! times(frames).
  subroutine ab_file_times(f, times, ierr)
    type(ab_file), intent(in) :: f
    real(c_double), intent(out) :: times(*)
    integer, optional, intent(out) :: ierr
    call check(c_file_times(f%ptr, times), ierr)
  end subroutine

  ! values(count): nodes first+1 .. first+count of variable var of frame; frame, var and
  ! first count from 0, as in the C API.
  subroutine ab_file_read(f, frame, var, first, count, values, ierr)
    type(ab_file), intent(in) :: f
    integer(c_int64_t), intent(in) :: frame, first, count
    integer, intent(in) :: var
    real(c_double), intent(out) :: values(*)
    integer, optional, intent(out) :: ierr
    call check(c_file_read(f%ptr, frame, int(var, c_int), first, count, values), ierr)
  end subroutine

  subroutine ab_file_close(f, ierr)
    type(ab_file), intent(inout) :: f
    integer, optional, intent(out) :: ierr
    call check(c_file_close(f%ptr), ierr)
    f%ptr = c_null_ptr
  end subroutine

  ! Runs a command (args(1): "info", "merge", "partition", ...; trailing blanks of each
  ! argument dropped) and returns its JSON report, as `anabranch ARGS... --json` prints it
  ! ('' on ranks other than 0). Collective over MPI_COMM_WORLD for merge, convert and bench
  ! under mpiexec.
  subroutine ab_command(args, report, ierr)
    character(len=*), intent(in) :: args(:)
    character(len=:), allocatable, intent(out) :: report
    integer, optional, intent(out) :: ierr
    type(c_ptr) :: argv(size(args)), out
    type :: cbuf
      character(kind=c_char), allocatable :: s(:)
    end type
    type(cbuf), allocatable, target :: bufs(:)
    integer :: i, k, n
    integer(c_int) :: rc
    allocate (bufs(size(args)))
    do i = 1, size(args)
      n = len_trim(args(i))
      allocate (bufs(i)%s(n + 1))
      do k = 1, n
        bufs(i)%s(k) = args(i)(k:k)
      end do
      bufs(i)%s(n + 1) = c_null_char
      argv(i) = c_loc(bufs(i)%s)
    end do
    out = c_null_ptr
    rc = c_command(int(size(args), c_int), argv, out)
    report = fstr(out)
    if (c_associated(out)) call c_free(out)
    call check(rc, ierr)
  end subroutine

  ! ---------------------------------------------------------------------------------------
  ! Multi-block grids (see the C API). Pieces are numbered from 1 here; index ranges are as
  ! in the C API: (i0, i1, j0, j1, k0, k1), 0-based, end excluded. Arrays are given as
  ! type(c_ptr) arrays: ptrs(nvar*(p-1) + v) = c_loc(q(lbound(q,1), lbound(q,2), lbound(q,3), v))
  ! for variable v of piece p (its whole array, halos included, contiguous).
  subroutine ab_blocks_create(l, ierr)
    type(ab_blocks), intent(out) :: l
    integer, optional, intent(out) :: ierr
    call check(c_blocks_create(l%ptr), ierr)
  end subroutine

  subroutine ab_blocks_free(l, ierr)
    type(ab_blocks), intent(inout) :: l
    integer, optional, intent(out) :: ierr
    call check(c_blocks_free(l%ptr), ierr)
    l%ptr = c_null_ptr
  end subroutine

  subroutine ab_blocks_add_block(l, id, ni, nj, nk, ierr)
    type(ab_blocks), intent(in) :: l
    integer(c_int64_t), intent(in) :: id, ni, nj, nk
    integer, optional, intent(out) :: ierr
    call check(c_blocks_add_block(l%ptr, id, ni, nj, nk), ierr)
  end subroutine

  subroutine ab_blocks_add_piece(l, id, range, ierr)
    type(ab_blocks), intent(in) :: l
    integer(c_int64_t), intent(in) :: id, range(6)
    integer, optional, intent(out) :: ierr
    call check(c_blocks_add_piece(l%ptr, id, range), ierr)
  end subroutine

  subroutine ab_blocks_set_halo(l, hi, hj, hk, ierr)
    type(ab_blocks), intent(in) :: l
    integer(c_int64_t), intent(in) :: hi, hj, hk
    integer, optional, intent(out) :: ierr
    call check(c_blocks_set_halo(l%ptr, hi, hj, hk), ierr)
  end subroutine

  ! The grid and the pieces of process `rank` (0-based) from `anabranch balance --json`'s report.
  subroutine ab_blocks_load(l, assignment, rank, ierr)
    type(ab_blocks), intent(in) :: l
    character(len=*), intent(in) :: assignment
    integer, intent(in) :: rank
    integer, optional, intent(out) :: ierr
    call check(c_blocks_load(l%ptr, cstr(assignment), int(rank, c_int)), ierr)
  end subroutine

  subroutine ab_blocks_count(l, nblocks, npieces, ierr)
    type(ab_blocks), intent(in) :: l
    integer(c_int64_t), intent(out) :: nblocks, npieces
    integer, optional, intent(out) :: ierr
    call check(c_blocks_count(l%ptr, nblocks, npieces), ierr)
  end subroutine

  ! Piece p (1-based): its block id, range and array dimensions (halos included).
  subroutine ab_blocks_piece(l, p, id, range, memory_dims, ierr)
    type(ab_blocks), intent(in) :: l
    integer(c_int64_t), intent(in) :: p
    integer(c_int64_t), intent(out) :: id, range(6), memory_dims(3)
    integer, optional, intent(out) :: ierr
    call check(c_blocks_piece(l%ptr, p - 1, id, range, memory_dims), ierr)
  end subroutine

  ! COLLECTIVE. names: the variables; options as in the C API ('' for the defaults).
  subroutine ab_block_writer_open_int(comm, path, l, names, options, w, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path, options, names(:)
    type(ab_blocks), intent(in) :: l
    type(ab_block_writer), intent(out) :: w
    integer, optional, intent(out) :: ierr
    character(kind=c_char), allocatable, target :: buf(:)
    type(c_ptr) :: ptrs(size(names))
    integer :: i, k, at
    allocate (buf(sum(len_trim(names)) + size(names)))
    at = 1
    do i = 1, size(names)
      ptrs(i) = c_loc(buf(at))
      do k = 1, len_trim(names(i))
        buf(at) = names(i)(k:k)
        at = at + 1
      end do
      buf(at) = c_null_char
      at = at + 1
    end do
    call check(c_block_writer_open(int(comm, c_int), cstr(path), l%ptr, int(size(names), c_int), ptrs, cstr(options), w%ptr), ierr)
  end subroutine

  subroutine ab_block_writer_open_f08(comm, path, l, names, options, w, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: path, options, names(:)
    type(ab_blocks), intent(in) :: l
    type(ab_block_writer), intent(out) :: w
    integer, optional, intent(out) :: ierr
    call ab_block_writer_open_int(comm%MPI_VAL, path, l, names, options, w, ierr)
  end subroutine

  ! COLLECTIVE, HDF5 files, once: xyz(3*(p-1) + c) points at coordinate c of piece p.
  subroutine ab_block_writer_write_grid(w, xyz, ierr)
    type(ab_block_writer), intent(in) :: w
    type(c_ptr), intent(in) :: xyz(:)
    integer, optional, intent(out) :: ierr
    call check(c_block_writer_write_grid(w%ptr, xyz), ierr)
  end subroutine

  ! COLLECTIVE. values(nvar*(p-1) + v) points at variable v of piece p.
  subroutine ab_block_writer_write_frame(w, time, values, ierr)
    type(ab_block_writer), intent(in) :: w
    real(c_double), intent(in) :: time
    type(c_ptr), intent(in) :: values(:)
    integer, optional, intent(out) :: ierr
    call check(c_block_writer_write_frame(w%ptr, time, values), ierr)
  end subroutine

  ! COLLECTIVE. Starts a frame, returns once the values are copied (aggregated-async: the
  ! bytes go to disk while the caller computes); ab_block_writer_write_frame_end completes it.
  subroutine ab_block_writer_write_frame_begin(w, time, values, ierr)
    type(ab_block_writer), intent(in) :: w
    real(c_double), intent(in) :: time
    type(c_ptr), intent(in) :: values(:)
    integer, optional, intent(out) :: ierr
    call check(c_block_writer_write_frame_begin(w%ptr, time, values), ierr)
  end subroutine

  subroutine ab_block_writer_write_frame_end(w, ierr)
    type(ab_block_writer), intent(in) :: w
    integer, optional, intent(out) :: ierr
    call check(c_block_writer_write_frame_end(w%ptr), ierr)
  end subroutine

  subroutine ab_block_writer_close(w, ierr)
    type(ab_block_writer), intent(inout) :: w
    integer, optional, intent(out) :: ierr
    call check(c_block_writer_close(w%ptr), ierr)
    w%ptr = c_null_ptr
  end subroutine

  subroutine ab_block_reader_open_int(comm, path, l, options, r, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path, options
    type(ab_blocks), intent(in) :: l
    type(ab_block_reader), intent(out) :: r
    integer, optional, intent(out) :: ierr
    call check(c_block_reader_open(int(comm, c_int), cstr(path), l%ptr, cstr(options), r%ptr), ierr)
  end subroutine

  subroutine ab_block_reader_open_f08(comm, path, l, options, r, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: path, options
    type(ab_blocks), intent(in) :: l
    type(ab_block_reader), intent(out) :: r
    integer, optional, intent(out) :: ierr
    call ab_block_reader_open_int(comm%MPI_VAL, path, l, options, r, ierr)
  end subroutine

  subroutine ab_block_reader_frames(r, frames, nvar, ierr)
    type(ab_block_reader), intent(in) :: r
    integer(c_int64_t), intent(out) :: frames
    integer, intent(out) :: nvar
    integer, optional, intent(out) :: ierr
    integer(c_int) :: nv
    call check(c_block_reader_frames(r%ptr, frames, nv), ierr)
    nvar = int(nv)
  end subroutine

  ! Time of frame (0-based).
  subroutine ab_block_reader_time(r, frame, time, ierr)
    type(ab_block_reader), intent(in) :: r
    integer(c_int64_t), intent(in) :: frame
    real(c_double), intent(out) :: time
    integer, optional, intent(out) :: ierr
    call check(c_block_reader_time(r%ptr, frame, time), ierr)
  end subroutine

  ! COLLECTIVE. Frame (0-based) into the interiors of the arrays values points at.
  subroutine ab_block_reader_read_frame(r, frame, values, ierr)
    type(ab_block_reader), intent(in) :: r
    integer(c_int64_t), intent(in) :: frame
    type(c_ptr), intent(in) :: values(:)
    integer, optional, intent(out) :: ierr
    call check(c_block_reader_read_frame(r%ptr, frame, values), ierr)
  end subroutine

  subroutine ab_block_reader_read_grid(r, xyz, ierr)
    type(ab_block_reader), intent(in) :: r
    type(c_ptr), intent(in) :: xyz(:)
    integer, optional, intent(out) :: ierr
    call check(c_block_reader_read_grid(r%ptr, xyz), ierr)
  end subroutine

  subroutine ab_block_reader_close(r, ierr)
    type(ab_block_reader), intent(inout) :: r
    integer, optional, intent(out) :: ierr
    call check(c_block_reader_close(r%ptr), ierr)
    r%ptr = c_null_ptr
  end subroutine

  ! Fortran sequential unformatted files written by many ranks (see the C API). Records are
  ! numbered from 1 here, in file order; data(i) = c_loc(payload of records(i)).
  subroutine ab_records_create(l, ierr)
    type(ab_records), intent(out) :: l
    integer, optional, intent(out) :: ierr
    call check(c_records_create(l%ptr), ierr)
  end subroutine

  subroutine ab_records_free(l, ierr)
    type(ab_records), intent(inout) :: l
    integer, optional, intent(out) :: ierr
    call check(c_records_free(l%ptr), ierr)
    l%ptr = c_null_ptr
  end subroutine

  ! Appends a record of `bytes` payload bytes.
  subroutine ab_records_add(l, bytes, ierr)
    type(ab_records), intent(in) :: l
    integer(c_int64_t), intent(in) :: bytes
    integer, optional, intent(out) :: ierr
    call check(c_records_add(l%ptr, bytes), ierr)
  end subroutine

  ! marker_bytes 4 or 8; big_endian 1, 0 or -1 (the machine's); max_subrecord 0: the compiler's.
  subroutine ab_records_set_form(l, marker_bytes, big_endian, max_subrecord, ierr)
    type(ab_records), intent(in) :: l
    integer, intent(in) :: marker_bytes, big_endian
    integer(c_int64_t), intent(in) :: max_subrecord
    integer, optional, intent(out) :: ierr
    call check(c_records_set_form(l%ptr, int(marker_bytes, c_int), int(big_endian, c_int), max_subrecord), ierr)
  end subroutine

  ! The file byte (0-based) where the first record starts.
  subroutine ab_records_set_offset(l, offset, ierr)
    type(ab_records), intent(in) :: l
    integer(c_int64_t), intent(in) :: offset
    integer, optional, intent(out) :: ierr
    call check(c_records_set_offset(l%ptr, offset), ierr)
  end subroutine

  ! Record r's bytes (markers included) are the file's bytes first..end-1 (0-based); r = 0: the whole layout.
  subroutine ab_records_extent(l, r, first, end, ierr)
    type(ab_records), intent(in) :: l
    integer(c_int64_t), intent(in) :: r
    integer(c_int64_t), intent(out) :: first, end
    integer, optional, intent(out) :: ierr
    call check(c_records_extent(l%ptr, r - 1, first, end), ierr)
  end subroutine

  subroutine ab_records_writer_open_int(comm, path, l, options, w, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path, options
    type(ab_records), intent(in) :: l
    type(ab_records_writer), intent(out) :: w
    integer, optional, intent(out) :: ierr
    call check(c_records_writer_open(int(comm, c_int), cstr(path), l%ptr, cstr(options), w%ptr), ierr)
  end subroutine

  subroutine ab_records_writer_open_f08(comm, path, l, options, w, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: path, options
    type(ab_records), intent(in) :: l
    type(ab_records_writer), intent(out) :: w
    integer, optional, intent(out) :: ierr
    call ab_records_writer_open_int(comm%MPI_VAL, path, l, options, w, ierr)
  end subroutine

  ! COLLECTIVE. This rank's records (1-based), data(i) pointing at the payload of records(i).
  subroutine ab_records_writer_write(w, records, data, ierr)
    type(ab_records_writer), intent(in) :: w
    integer(c_int64_t), intent(in) :: records(:)
    type(c_ptr), intent(in) :: data(:)
    integer, optional, intent(out) :: ierr
    integer(c_int64_t) :: zero(max(size(records), 1))
    zero(1:size(records)) = records - 1
    call check(c_records_writer_write(w%ptr, int(size(records), c_int64_t), zero, data), ierr)
  end subroutine

  subroutine ab_records_writer_close(w, ierr)
    type(ab_records_writer), intent(inout) :: w
    integer, optional, intent(out) :: ierr
    call check(c_records_writer_close(w%ptr), ierr)
    w%ptr = c_null_ptr
  end subroutine

  subroutine ab_records_reader_open_int(comm, path, l, options, r, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: path, options
    type(ab_records), intent(in) :: l
    type(ab_records_reader), intent(out) :: r
    integer, optional, intent(out) :: ierr
    call check(c_records_reader_open(int(comm, c_int), cstr(path), l%ptr, cstr(options), r%ptr), ierr)
  end subroutine

  subroutine ab_records_reader_open_f08(comm, path, l, options, r, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: path, options
    type(ab_records), intent(in) :: l
    type(ab_records_reader), intent(out) :: r
    integer, optional, intent(out) :: ierr
    call ab_records_reader_open_int(comm%MPI_VAL, path, l, options, r, ierr)
  end subroutine

  ! COLLECTIVE. This rank's records (1-based) into the arrays data(i) points at.
  subroutine ab_records_reader_read(r, records, data, ierr)
    type(ab_records_reader), intent(in) :: r
    integer(c_int64_t), intent(in) :: records(:)
    type(c_ptr), intent(in) :: data(:)
    integer, optional, intent(out) :: ierr
    integer(c_int64_t) :: zero(max(size(records), 1))
    zero(1:size(records)) = records - 1
    call check(c_records_reader_read(r%ptr, int(size(records), c_int64_t), zero, data), ierr)
  end subroutine

  subroutine ab_records_reader_close(r, ierr)
    type(ab_records_reader), intent(inout) :: r
    integer, optional, intent(out) :: ierr
    call check(c_records_reader_close(r%ptr), ierr)
    r%ptr = c_null_ptr
  end subroutine

end module anabranch
