! The Fortran module's status codes (ierr), exactly as the C header documents them, on every
! rank: a refused argument is AB_ERR_USAGE, a file whose bytes are not its format
! AB_ERR_FORMAT, a missing file AB_ERR_IO, and ab_last_error() names the cause. Exit status 0 when every check holds, 1 otherwise.
program status_codes
  use mpi_f08
  use anabranch
  use iso_c_binding, only: c_int32_t, c_int64_t
  implicit none
  type(ab_header) :: h
  type(ab_reader) :: r
  integer :: ierr, rank, size, failures, all, u
  integer(c_int32_t) :: ids(1) = [1]
  character(len=32) :: name

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  failures = 0
  write (name, '(a, i0, a, i0, a)') 'garbage', size, '_', rank, '.slf'  ! runs at several rank counts at once
  open (newunit=u, file=trim(name), access='stream', status='replace')
  write (u) 'this is not a SERAFIN file, whatever its name says'
  close (u)

  call ab_header_create(h, ierr)
  call expect(ierr, AB_OK, 'ab_header_create', '')
  call ab_header_set_precision(h, 3, ierr)
  call expect(ierr, AB_ERR_USAGE, 'ab_header_set_precision(h, 3)', 'precision')
  call ab_header_add_variable(h, 'A_NAME_OF_17_CHRS', 'M', ierr)
  call expect(ierr, AB_ERR_USAGE, 'ab_header_add_variable (17 characters)', '16 characters')
  call ab_header_free(h, ierr)
  call ab_reader_open(MPI_COMM_SELF, trim(name), 0_c_int64_t, ids, '', r, ierr)
  call expect(ierr, AB_ERR_FORMAT, 'ab_reader_open('//trim(name)//')', trim(name))
  call ab_reader_open(MPI_COMM_SELF, 'missing.slf', 0_c_int64_t, ids, '', r, ierr)
  call expect(ierr, AB_ERR_IO, 'ab_reader_open(missing.slf)', 'missing.slf')

  open (newunit=u, file=trim(name))
  close (u, status='delete')
  call MPI_Allreduce(failures, all, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. all == 0) print '(a)', 'status codes (Fortran): every check holds'
  call MPI_Finalize()
  if (all /= 0) error stop 1

contains

  subroutine expect(got, want, call_name, text)
    integer, intent(in) :: got, want
    character(len=*), intent(in) :: call_name, text
    if (got /= want) then
      write (0, '(a, i0, 3a, i0, a, i0, 3a)') 'rank ', rank, ': ', call_name, ' gave ierr ', got, ', expected ', want, &
        ' (', ab_last_error(), ')'
      failures = failures + 1
    else if (want /= AB_OK .and. index(ab_last_error(), text) == 0) then
      write (0, '(a, i0, 5a)') 'rank ', rank, ': ', call_name, ': ab_last_error() does not name ', text, &
        ': '//ab_last_error()
      failures = failures + 1
    end if
  end subroutine
end program
