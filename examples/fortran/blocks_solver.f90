! The multi-block mini solver of examples/c/blocks_solver.c in Fortran, through the
! anabranch module: the same arguments, the same arithmetic, the same file bytes.
!
!   anabranch balance blocks.txt -n 4 --json > four.json
!   mpiexec -n 4 blocks_solver_f four.json run.h5 [frames] [options] [RESTART_FILE FRAME [read_options]]
!
! Each piece's variables live in one array q(mi, mj, mk, 5) with 2, 2 and 1 halo layers in
! i, j and k; the library is given where each variable's array starts.
program blocks_solver_f
  use iso_c_binding
  use mpi_f08
  use anabranch
  implicit none
  integer, parameter :: nvar = 5
  type :: piece_t
    real(c_double), allocatable :: q(:, :, :, :), xyz(:, :, :, :)
    integer(c_int64_t) :: id, range(6), md(3)
  end type
  type(piece_t), allocatable, target :: pieces(:)
  type(c_ptr), allocatable :: qp(:), gp(:)
  type(ab_blocks) :: layout
  type(ab_block_writer) :: w
  type(ab_block_reader) :: r
  character(len=512) :: assignment, output, options, restart, read_options, arg
  character(len=8) :: names(nvar) = [character(len=8) :: 'rho', 'rhou', 'rhov', 'rhow', 'rhoe']
  integer :: rank, size, frames, restart_frame, first, n, v, argc
  integer(c_int64_t) :: nblocks, npieces, p, i, j, k, f, available
  real(c_double) :: t

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  argc = command_argument_count()
  if (argc < 2) then
    write (0, '(a)') 'usage: blocks_solver_f ASSIGNMENT OUTPUT [frames] [options] [RESTART_FILE FRAME [read_options]]'
    call MPI_Finalize()
    stop 2
  end if
  call get_command_argument(1, assignment)
  call get_command_argument(2, output)
  frames = 4
  if (argc > 2) then
    call get_command_argument(3, arg)
    read (arg, *) frames
  end if
  options = ''
  if (argc > 3) call get_command_argument(4, options)
  restart = ''
  restart_frame = -1
  if (argc > 5) then
    call get_command_argument(5, restart)
    call get_command_argument(6, arg)
    read (arg, *) restart_frame
  end if
  read_options = ''
  if (argc > 6) call get_command_argument(7, read_options)

  call ab_blocks_create(layout)
  call ab_blocks_set_halo(layout, 2_c_int64_t, 2_c_int64_t, 1_c_int64_t)
  call ab_blocks_load(layout, trim(assignment), rank)
  call ab_blocks_count(layout, nblocks, npieces)
  allocate (pieces(npieces), qp(max(1_c_int64_t, nvar * npieces)), gp(max(1_c_int64_t, 3 * npieces)))
  do p = 1, npieces
    associate (x => pieces(p))
      call ab_blocks_piece(layout, p, x%id, x%range, x%md)
      allocate (x%q(x%md(1), x%md(2), x%md(3), nvar), x%xyz(x%md(1), x%md(2), x%md(3), 3))
      x%q = -1.0d0
      x%xyz = -1.0d0
      do k = x%range(5), x%range(6) - 1
        do j = x%range(3), x%range(4) - 1
          do i = x%range(1), x%range(2) - 1
            do v = 1, nvar
              x%q(i - x%range(1) + 3, j - x%range(3) + 3, k - x%range(5) + 2, v) = &
                (((0.001d0 * dble(x%id) + dble(i)) + 2.0d0 * dble(j)) + 3.0d0 * dble(k)) + dble(v - 1)
            end do
            x%xyz(i - x%range(1) + 3, j - x%range(3) + 3, k - x%range(5) + 2, :) = &
              [dble(i) + 40.0d0 * dble(mod(x%id, 16_c_int64_t)), dble(j) + 40.0d0 * dble(x%id / 16), dble(k)]
          end do
        end do
      end do
    end associate
    do v = 1, nvar
      qp(nvar * (p - 1) + v) = c_loc(pieces(p)%q(1, 1, 1, v))
    end do
    do v = 1, 3
      gp(3 * (p - 1) + v) = c_loc(pieces(p)%xyz(1, 1, 1, v))
    end do
  end do

  ! The restart file is opened first: an output named like it is then refused.
  if (len_trim(restart) > 0) then
    call ab_block_reader_open(MPI_COMM_WORLD, trim(restart), layout, trim(read_options), r)
    call ab_block_reader_frames(r, available, n)
    if (restart_frame < 0 .or. restart_frame >= available) then
      if (rank == 0) write (0, '(a,i0,a,i0,a)') 'blocks_solver_f: '//trim(restart)//' holds ', available, &
        ' frames; frame ', restart_frame, ' asked'
      call MPI_Finalize()
      stop 1
    end if
  end if
  call ab_block_writer_open(MPI_COMM_WORLD, trim(output), layout, names, trim(options), w)
  if (index(output, '.h5') > 0) call ab_block_writer_write_grid(w, gp(1:3 * npieces))
  first = 1
  if (len_trim(restart) > 0) then
    do f = 0, restart_frame  ! the frames before: copied, so the file is whole
      call ab_block_reader_time(r, f, t)
      call ab_block_reader_read_frame(r, f, qp(1:nvar * npieces))
      call ab_block_writer_write_frame(w, t, qp(1:nvar * npieces))
    end do
    call ab_block_reader_close(r)
    first = restart_frame + 2
  end if
  do n = first, frames
    do p = 1, npieces
      associate (x => pieces(p))
        do k = 0, x%range(6) - x%range(5) - 1
          do j = 0, x%range(4) - x%range(3) - 1
            do i = 0, x%range(2) - x%range(1) - 1
              do v = 1, nvar
                x%q(i + 3, j + 3, k + 2, v) = 0.75d0 * x%q(i + 3, j + 3, k + 2, v) + 0.25d0 * dble(v * n)
              end do
            end do
          end do
        end do
      end associate
    end do
    call ab_block_writer_write_frame(w, 0.1d0 * n, qp(1:nvar * npieces))
  end do
  call ab_block_writer_close(w)
  if (rank == 0) write (*, '(a,i0,a,i0,a,i0,a)') 'blocks_solver_f: ', nblocks, ' blocks, ', size, ' ranks, ', frames, &
    ' frames -> '//trim(output)
  call ab_blocks_free(layout)
  call MPI_Finalize()
end program
