! A Fortran program's restart-like file, written by Fortran itself and by every rank through
! anabranch's records layout: the stand-in for a code such as CFL3D in the tests.
!   standin serial FILE                      Fortran WRITE(unit), one process (the reference)
!   standin check FILE                       Fortran READ of FILE: every value as written, then
!                                            the end of the file (exit 1 otherwise)
!   standin ab FILE OPTIONS MARKER SUBREC    every rank writes records r with mod(r, P) == its
!                                            rank + 1 (mod P) through anabranch (MPI)
!   standin abread FILE OPTIONS MARKER SUBREC  every rank reads records with mod(r, P) == its
!                                            rank and compares them with what was written
! The records: a header (text, two integers, a double), 1000 doubles, an empty record, 333
! integers, 50 reals, 37 doubles and 5 integers. Compiled with -fmax-subrecord-length,
! -frecord-marker=8 or -fconvert=big-endian, the serial file takes that form; MARKER and
! SUBREC tell anabranch the same (0: gfortran's default).
program standin
  use iso_c_binding
  use iso_fortran_env, only: iostat_end
  use mpi_f08
  use anabranch
  implicit none
  integer, parameter :: nrec = 6
  character(len=256) :: mode, path, options, arg
  integer :: status

  call get_command_argument(1, mode)
  call get_command_argument(2, path)
  status = 0
  select case (trim(mode))
  case ('serial')
    call write_serial()
  case ('check')
    call check_serial(status)
  case ('ab', 'abread')
    call get_command_argument(3, options)
    call parallel(trim(mode) == 'ab', status)
  case default
    print '(a)', 'standin: mode serial, check, ab or abread'
    status = 2
  end select
  if (status /= 0) error stop status

contains

  ! Record r's payload, as the bytes Fortran writes.
  function payload(r) result(b)
    integer, intent(in) :: r
    integer(c_int8_t), allocatable :: b(:)
    integer :: i
    integer(c_int8_t) :: mold(1)
    select case (r)
    case (1)
      b = [transfer('anabranch-record', mold), transfer(7_c_int32_t, mold), transfer(-3_c_int32_t, mold), &
           transfer(1.25_c_double, mold)]
    case (2)
      b = transfer([(i * 0.25_c_double, i = 1, 1000)], mold)
    case (3)
      allocate (b(0))
    case (4)
      b = transfer([(int(i * i - 50, c_int32_t), i = 1, 333)], mold)
    case (5)
      b = transfer([(real(i, c_float) / 8, i = 1, 50)], mold)
    case default
      b = [transfer([(i * 1.5_c_double - 7, i = 1, 37)], mold), transfer([(int(-i, c_int32_t), i = 1, 5)], mold)]
    end select
  end function

  subroutine write_serial()
    integer :: u, i
    open (newunit=u, file=trim(path), form='unformatted', access='sequential', status='replace')
    write (u) 'anabranch-record', 7_c_int32_t, -3_c_int32_t, 1.25_c_double
    write (u) (i * 0.25_c_double, i = 1, 1000)
    write (u)
    write (u) (int(i * i - 50, c_int32_t), i = 1, 333)
    write (u) (real(i, c_float) / 8, i = 1, 50)
    write (u) (i * 1.5_c_double - 7, i = 1, 37), (int(-i, c_int32_t), i = 1, 5)
    close (u)
  end subroutine

  subroutine check_serial(status)
    integer, intent(out) :: status
    integer :: u, i, ios
    character(len=16) :: title
    integer(c_int32_t) :: n1, n2, k(333), m(5)
    real(c_double) :: t, a(1000), d(37)
    real(c_float) :: s(50)
    status = 1
    open (newunit=u, file=trim(path), form='unformatted', access='sequential', status='old', action='read')
    read (u) title, n1, n2, t
    if (title /= 'anabranch-record' .or. n1 /= 7 .or. n2 /= -3 .or. t /= 1.25_c_double) return
    read (u) a
    if (any(a /= [(i * 0.25_c_double, i = 1, 1000)])) return
    read (u)
    read (u) k
    if (any(k /= [(int(i * i - 50, c_int32_t), i = 1, 333)])) return
    read (u) s
    if (any(s /= [(real(i, c_float) / 8, i = 1, 50)])) return
    read (u) d, m
    if (any(d /= [(i * 1.5_c_double - 7, i = 1, 37)]) .or. any(m /= [(int(-i, c_int32_t), i = 1, 5)])) return
    read (u, iostat=ios)
    if (ios /= iostat_end) return
    close (u)
    status = 0
  end subroutine

  subroutine parallel(writing, status)
    logical, intent(in) :: writing
    integer, intent(out) :: status
    type(ab_records) :: l
    type(ab_records_writer) :: w
    type(ab_records_reader) :: rd
    type :: bytes
      integer(c_int8_t), allocatable :: b(:)
    end type
    type(bytes), target :: data(nrec)
    integer(c_int64_t) :: mine(nrec)
    type(c_ptr) :: ptrs(nrec)
    integer :: rank, size, marker, n, r, i
    integer(c_int64_t) :: subrec
    integer(c_int8_t), target :: none(1)
    call MPI_Init()
    call MPI_Comm_rank(MPI_COMM_WORLD, rank)
    call MPI_Comm_size(MPI_COMM_WORLD, size)
    call get_command_argument(4, arg)
    read (arg, *) marker
    call get_command_argument(5, arg)
    read (arg, *) subrec
    call ab_records_create(l)
    call ab_records_set_form(l, marker, -1, subrec)
    n = 0
    do r = 1, nrec
      data(r)%b = payload(r)
      call ab_records_add(l, int(size_of(data(r)%b), c_int64_t))
      if (mod(r, size) == merge(mod(rank + 1, size), rank, writing)) then
        n = n + 1
        mine(n) = r
        if (size_of(data(r)%b) > 0) then
          ptrs(n) = c_loc(data(r)%b(1))
        else
          ptrs(n) = c_loc(none)
        end if
      end if
    end do
    status = 0
    if (writing) then
      call ab_records_writer_open(MPI_COMM_WORLD, trim(path), l, trim(options), w)
      call ab_records_writer_write(w, mine(1:n), ptrs(1:n))
      call ab_records_writer_close(w)
    else
      do i = 1, n
        data(mine(i))%b = -1_c_int8_t
      end do
      call ab_records_reader_open(MPI_COMM_WORLD, trim(path), l, trim(options), rd)
      call ab_records_reader_read(rd, mine(1:n), ptrs(1:n))
      call ab_records_reader_close(rd)
      do i = 1, n
        if (any(data(mine(i))%b /= payload(int(mine(i))))) then
          print '(a, i0, a, i0)', 'standin: record ', mine(i), ' differs on rank ', rank
          status = 1
        end if
      end do
    end if
    call ab_records_free(l)
    call MPI_Finalize()
  end subroutine

  integer function size_of(b)
    integer(c_int8_t), intent(in) :: b(:)
    size_of = size(b)
  end function

end program
