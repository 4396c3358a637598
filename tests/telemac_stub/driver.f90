! A TELEMAC-like run over the stubs: each rank reads the frames of its own SERAFIN part
! (PART + '0000P-0000R', written by `anabranch partition`), opens its own result file
! RES + '0000P-0000R' (header and mesh only, as TELEMAC leaves it) on a unit, and hands
! every frame to BIEF_DESIMP, then closes the files with BIEF_CLOSE_FILES as TELEMAC does.
! Compiled with TELEMAC's flags (-fconvert=big-endian: the parts are read as TELEMAC reads them).
!   mpiexec -n P driver PART RES
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
