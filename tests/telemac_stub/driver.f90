! A TELEMAC-like run over the stubs: each rank reads the frames of its own SERAFIN part
! (PART + '0000P-0000R', written by `anabranch partition`), opens its own result file
! RES + '0000P-0000R' (header and mesh only, as TELEMAC leaves it) on a unit, and hands
! every frame to BIEF_DESIMP, then closes the files with BIEF_CLOSE_FILES as TELEMAC does.
! Compiled with TELEMAC's flags (-fconvert=big-endian: the parts are read as TELEMAC reads them).
!   mpiexec -n P driver PART RES
! With a third argument, a continued run instead: each rank opens its part PRE + '0000P-0000R'
! of a previous computation on a unit, asks READ_DATASET for every variable of its last
! record (or of record RECORD, 0-based), and writes what it got to SAID.R: the time, the
! record, then per variable whether it was found and its values, one per line.
!   mpiexec -n P driver PRE read SAID [RECORD]
program driver
  use mpi
  use bief
  use declarations_special, only: ncsize, ipid
  use declarations_parallel, only: comm
  implicit none
  character(len=250) :: part, res
  character(len=80) :: title
  character(len=11) :: suffix
  character(len=32), allocatable :: texte(:)
  integer :: ierr, rank, size, nbv(2), iparam(10), date(6), sizes(4), npoin, nvar, i, ios, lt
  integer, allocatable :: ints(:)
  real, allocatable :: r4(:)
  double precision, allocatable :: r8(:)
  real :: t4
  double precision :: t8
  logical :: double
  logical, allocatable :: sorleo(:), sorimp(:)
  type(bief_obj), target :: varsor
  type(bief_obj), allocatable, target :: vars(:)
  type(bief_file) :: files(1)

  call mpi_init(ierr)
  call mpi_comm_rank(mpi_comm_world, rank, ierr)
  call mpi_comm_size(mpi_comm_world, size, ierr)
  comm = mpi_comm_world
  ncsize = size
  ipid = rank
  call get_command_argument(1, part)
  call get_command_argument(2, res)
  write(suffix, '(i5.5,"-",i5.5)') size - 1, rank
  if (res == 'read') then
    call continued(trim(part)//suffix, rank)
    call mpi_finalize(ierr)
    stop
  end if

  open(10, file=trim(part)//suffix, form='unformatted', access='sequential', status='old', action='read')
  read(10) title
  double = title(73:80) == 'SERAFIND'
  read(10) nbv
  nvar = nbv(1) + nbv(2)
  allocate(texte(nvar), sorleo(nvar), sorimp(nvar), vars(nvar), varsor%adr(nvar))
  do i = 1, nvar
    read(10) texte(i)
  end do
  read(10) iparam
  if (iparam(10) == 1) read(10) date
  read(10) sizes
  npoin = sizes(2)
  allocate(ints(sizes(1) * sizes(3)))
  read(10) ints
  deallocate(ints)
  read(10)
  read(10)
  read(10)
  do i = 1, nvar
    allocate(vars(i)%r(npoin))
    varsor%adr(i)%p => vars(i)
  end do
  sorleo = .true.
  sorimp = .false.
  allocate(r4(npoin), r8(npoin))

  ! The rank's result file as TELEMAC holds it: open on a unit, its header on disk.
  open(51, file=trim(res)//suffix, form='unformatted', access='sequential', status='old', position='append')
  files(1)%name = res
  files(1)%lu = 51
  files(1)%fmt = merge('SERAFIND', 'SERAFIN ', double)
  files(1)%type = 'SCAL'
  files(1)%action = 'WRITE'

  lt = 0
  do
    if (double) then
      read(10, iostat=ios) t8
    else
      read(10, iostat=ios) t4
      t8 = t4
    end if
    if (ios /= 0) exit
    do i = 1, nvar
      if (double) then
        read(10) r8
        vars(i)%r = r8
      else
        read(10) r4
        vars(i)%r = r4
      end if
    end do
    call bief_desimp(files(1)%fmt, varsor, npoin, 51, t8, lt, 1, 1, sorleo, sorimp, nvar, texte, 0, 0)
    lt = lt + 1
  end do
  close(10)
  call bief_close_files(files, 1, .true.)
end program

subroutine continued(pre, rank)
  use bief_def
  implicit none
  character(len=*), intent(in) :: pre
  integer, intent(in) :: rank
  interface
    subroutine read_dataset(ffmt, fid, varsor, npoin, record, at, var_list, trouve, alire, listin, lastrecord, maxvar)
      use bief_def
      character(len=8), intent(in) :: ffmt
      integer, intent(in) :: fid, npoin, maxvar
      type(bief_obj), intent(inout) :: varsor
      integer, intent(inout) :: record
      double precision, intent(inout) :: at
      character(len=32), intent(in) :: var_list(maxvar)
      integer, intent(inout) :: trouve(maxvar)
      integer, intent(in) :: alire(maxvar)
      logical, intent(in) :: listin, lastrecord
    end subroutine
  end interface
  character(len=80) :: title
  character(len=250) :: said, arg
  character(len=32), allocatable :: names(:)
  integer :: nbv(2), iparam(10), date(6), sizes(4), nvar, npoin, i, j, record
  integer, allocatable :: trouve(:), alire(:)
  double precision :: at
  type(bief_obj), target :: varsor
  type(bief_obj), allocatable, target :: vars(:)
  logical :: last

  ! The variable names from the part's header, as TELEMAC knows them from its dictionary.
  open(60, file=pre, form='unformatted', access='sequential', status='old', action='read')
  read(60) title
  read(60) nbv
  nvar = nbv(1) + nbv(2)
  allocate(names(nvar + 1), trouve(nvar + 1), alire(nvar + 1), vars(nvar + 1), varsor%adr(nvar + 1))
  do i = 1, nvar
    read(60) names(i)
  end do
  names(nvar + 1) = 'NOT IN THE FILE                 '
  read(60) iparam
  if (iparam(10) == 1) read(60) date
  read(60) sizes
  npoin = sizes(2)
  rewind(60)
  varsor%n = nvar + 1
  do i = 1, nvar + 1
    allocate(vars(i)%r(npoin))
    vars(i)%r = -1.d0
    vars(i)%dim1 = npoin
    varsor%adr(i)%p => vars(i)
  end do
  alire = 1
  trouve = -1
  last = command_argument_count() < 4
  record = 0
  if (.not. last) then
    call get_command_argument(4, arg)
    read(arg, *) record
  end if
  call read_dataset(merge('SERAFIND', 'SERAFIN ', title(73:80) == 'SERAFIND'), 60, varsor, npoin, record, at, names, trouve, &
                    alire, .true., last, nvar + 1)
  call get_command_argument(3, said)
  write(said, '(a,".",i0)') trim(said), rank
  open(61, file=said, form='formatted', status='replace')
  write(61, '(es24.16)') at
  write(61, '(i0)') record
  do i = 1, nvar + 1
    write(61, '(i0)') trouve(i)
    if (trouve(i) == 1) then
      do j = 1, npoin
        write(61, '(es24.16)') vars(i)%r(j)
      end do
    end if
  end do
  close(61)
  close(60)
end subroutine
