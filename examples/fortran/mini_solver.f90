! The mini solver of examples/c/mini_solver.c in Fortran, through the anabranch module:
! every rank reads its part, steps an explicit diffusion in integer arithmetic, and all
! ranks write one shared SERAFIN file. Its output is the same bits as the C version's.
! Rank 0 then reads the file back (ab_file_*) and runs `anabranch info` on it (ab_command).
!
!   mpiexec -n 4 mini_solver_f parts/mesh.slf mesh.slf result.slf [strategy] [frames]
!
! A restart from frame K of an earlier result, on any number of ranks (as the C solver):
!   mpiexec -n 3 mini_solver_f parts3/mesh.slf mesh.slf again.slf aggregated 10 result.slf 5 [read_strategy]
program mini_solver
  use mpi_f08
  use iso_c_binding
  use anabranch
  implicit none
  character(len=4096) :: base, geometry, output, strategy, arg, restart, read_strategy
  integer :: frames, rank, ndp, nplan, f, step, k, argc, restart_frame, first
  integer(c_int64_t) :: have, fr
  real(c_double) :: time
  type(ab_reader) :: r
  integer(c_int64_t) :: nelem, nloc, npoin, e, i, g
  integer(c_int32_t), allocatable :: ikle(:), knolg(:)
  real(c_double), allocatable :: x(:), y(:), values(:)
  integer(c_int64_t), allocatable :: u(:), lap(:), total(:)
  real(c_double) :: box(4), all(4), x0, y0, s
  integer(c_int32_t) :: a, b
  integer :: nvar, real_bytes
  integer(c_int64_t) :: nframes
  real(c_double), allocatable :: times(:), back(:)
  character(len=:), allocatable :: report
  type(ab_file) :: file
  type(ab_part) :: part
  type(ab_header) :: h
  type(ab_writer) :: w

  call MPI_Init()
  argc = command_argument_count()
  if (argc < 3) then
    write (0, '(a)') 'usage: mini_solver_f PARTS_BASE GEOMETRY OUTPUT [strategy] [frames] [RESTART_FILE FRAME [read_strategy]]'
    call MPI_Finalize()
    stop 2
  end if
  call get_command_argument(1, base)
  call get_command_argument(2, geometry)
  call get_command_argument(3, output)
  strategy = 'aggregated'
  if (argc > 3) call get_command_argument(4, strategy)
  frames = 4
  if (argc > 4) then
    call get_command_argument(5, arg)
    read (arg, *) frames
  end if
  restart = ''
  restart_frame = 0
  read_strategy = 'aggregated'
  if (argc > 6) then
    call get_command_argument(6, restart)
    call get_command_argument(7, arg)
    read (arg, *) restart_frame
  end if
  if (argc > 7) call get_command_argument(8, read_strategy)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)

  ! This rank's part: local elements, KNOLG, coordinates.
  if (index(base, '.epart.') > 0) then  ! an element -> part file: the part from the global geometry
    call ab_part_open_global(MPI_COMM_WORLD, trim(geometry), trim(base), part)
  else
    call ab_part_open(MPI_COMM_WORLD, trim(base), part)
  end if
  call ab_part_sizes(part, nelem, nloc, ndp, nplan)
  allocate (ikle(nelem * ndp + 1), knolg(nloc + 1), x(nloc + 1), y(nloc + 1))
  call ab_part_mesh(part, ikle, knolg, x, y)
  call ab_part_close(part)

  ! The output: the global geometry, two variables.
  call ab_header_create(h)
  call ab_header_set_geometry(h, trim(geometry))
  call ab_header_set_title(h, 'anabranch mini solver: explicit diffusion')
  call ab_header_add_variable(h, 'TEMPERATURE', 'K')
  call ab_header_add_variable(h, 'LAPLACIAN', 'K')
  call ab_header_set_local_mesh(h, nelem, ikle, nloc, x, y)
  call ab_header_sizes(h, e, npoin, k, k)
  call ab_writer_open(MPI_COMM_WORLD, trim(output), h, nloc, knolg, 'strategy='//trim(strategy), w)

  ! Initial condition: a bump in the middle of the bounding box.
  box = 1.0d300
  do i = 1, nloc
    if (x(i) < box(1)) box(1) = x(i)
    if (-x(i) < box(2)) box(2) = -x(i)
    if (y(i) < box(3)) box(3) = y(i)
    if (-y(i) < box(4)) box(4) = -y(i)
  end do
  call MPI_Allreduce(box, all, 4, MPI_DOUBLE_PRECISION, MPI_MIN, MPI_COMM_WORLD)
  x0 = (all(1) - all(2)) / 2
  y0 = (all(3) - all(4)) / 2
  s = (-all(2) - all(1)) * (-all(2) - all(1)) / 50
  allocate (u(nloc + 1), lap(npoin), total(npoin), values(2 * nloc + 1))
  do i = 1, nloc
    u(i) = int(1.0d6 / (1 + ((x(i) - x0) * (x(i) - x0) + (y(i) - y0) * (y(i) - y0)) / s), c_int64_t)
  end do

  first = 1
  if (len_trim(restart) > 0) then
    ! Frames 1..K as they were, then the state of frame K (micro-units, exact through single
    ! precision). Every rank reads its own nodes only.
    call ab_reader_open(MPI_COMM_WORLD, trim(restart), nloc, knolg, 'strategy='//trim(read_strategy), r)
    call ab_reader_frames(r, have, nvar)
    if (restart_frame < 1 .or. restart_frame > have) then
      if (rank == 0) write (0, '(a,i0,a,i0)') 'mini_solver_f: '//trim(restart)//' has ', have, ' frames, no frame ', restart_frame
      call MPI_Finalize()
      stop 1
    end if
    do fr = 0, restart_frame - 1
      call ab_reader_time(r, fr, time)
      call ab_reader_read_frame(r, fr, values)
      call ab_writer_write_frame(w, time, values)
    end do
    do i = 1, nloc
      u(i) = nint(values(i) * 1.0d6, c_int64_t)
    end do
    call ab_reader_close(r)
    first = restart_frame + 1
  end if

  do f = first, frames
    ! Ten explicit steps between frames: lap(a) = sum over element edges of u(b) - u(a).
    do step = 1, 10
      lap = 0
      do e = 0, nelem - 1
        do k = 0, ndp - 1
          a = ikle(e * ndp + k + 1)
          b = ikle(e * ndp + mod(k + 1, ndp) + 1)
          lap(knolg(a)) = lap(knolg(a)) + (u(b) - u(a))
          lap(knolg(b)) = lap(knolg(b)) + (u(a) - u(b))
        end do
      end do
      call MPI_Allreduce(lap, total, int(npoin), MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
      do i = 1, nloc
        g = total(knolg(i))
        if (g >= 0) then
          u(i) = u(i) + g / 16
        else
          u(i) = u(i) - (-g + 15) / 16
        end if
      end do
    end do
    do i = 1, nloc
      values(i) = real(u(i), c_double) * 1.0d-6
      values(nloc + i) = real(total(knolg(i)), c_double) * 1.0d-6
    end do
    call ab_writer_write_frame(w, 10.0d0 * f, values)
  end do
  call ab_writer_close(w)
  call ab_header_free(h)
  if (rank == 0) then
    write (*, '(a,i0,a,i0,a)') 'mini_solver_f: wrote ', frames, ' frames of ', npoin, ' nodes to '//trim(output)
    call ab_file_open(trim(output), file)
    call ab_file_sizes(file, e, npoin, ndp, nplan, nvar, nframes, real_bytes)
    allocate (times(nframes), back(npoin))
    call ab_file_times(file, times)
    call ab_file_read(file, nframes - 1, 0, 0_c_int64_t, npoin, back)
    call ab_file_close(file)
    write (*, '(a,i0,a,i0,a,f0.1,a,f0.6)') 'mini_solver_f: read back ', nframes, ' frames of ', nvar, &
      ' variables, the last at t = ', times(nframes), ', highest TEMPERATURE ', maxval(back)
    call ab_command([character(len=4096) :: 'info', output], report)
    write (*, '(a)') 'mini_solver_f: info '//report
  end if
  call MPI_Finalize()
end program
