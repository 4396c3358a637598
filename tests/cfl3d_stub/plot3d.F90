! A stand-in of CFL3D's own PLOT3D (dist/plot3d.F; a build linked by anabranch-cfl3d renames
! its routine plot3d_cfl3d in the object, as it does CFL3D's),
! for grid-point output (iflag = 1): the block's owner puts the block's values for the points
! i1:i2:i3, j1:j2:j3, k1:k2:k3 in xg (x, y, z, blanking) and xw (5 q values, or one function
! value), held j, k, i as CFL3D holds them, and sends both to the host (DIST_MPI); the host
! writes them to unit 3 (the grid, when icall1 = 0) and unit 4 (a header record of Mach,
! alpha, Re and time, then the q values; or the function's one record), i fastest, as CFL3D
! does, turning y and z back for a grid read with alpha in the x-y plane (ialph). Its values
! are the driver's own arrays, so that the test knows each value's place in the files:
! x, y, z and q(.., 1..5) of the block, blank the block's blanking, the function q(.., 1).
subroutine plot3d(jdim, kdim, idim, i1, i2, i3, j1, j2, j3, k1, k2, k3, q, &
                        qi0, qj0, qk0, x, y, z, xw, blank2, blank, xg, iflag, &
                        vist3d, iover, nblk, nmap, bcj, bck, bci, &
                        vj0, vk0, vi0, ifunc, iplot, jdw, kdw, idw, &
                        nplots, jdimg, kdimg, idimg, nblcg, jsg, ksg, isg, &
                        jeg, keg, ieg, ninter, iindex, intmax, nsub1, &
                        maxxe, nblkk, nbli, limblk, isva, nblon, mxbli, &
                        thetay, maxbl, maxgr, myid, myhost, mycomm, &
                        mblk2nd, inpl3d, nblock, nblkpt, xv, &
                        sj, sk, si, vol, nset)
  use stub_commons, only: ibin, iblnk, i2d, ialph, icall1, xmach, alpha, reue, time, radtodeg, nfallback
  implicit none
#if defined DIST_MPI
  include 'mpif.h'
  integer :: istat(MPI_STATUS_SIZE), ierr
#endif
  integer :: jdim, kdim, idim, i1, i2, i3, j1, j2, j3, k1, k2, k3, iflag, nblk, ifunc, iplot, jdw, kdw, idw
  integer :: nplots, maxbl, myid, myhost, mycomm, nset, iover, ninter, intmax, nsub1, maxxe, nbli, mxbli
  integer :: maxgr, nblock
  real :: q(jdim, kdim, idim, 5), x(jdim, kdim, idim), y(jdim, kdim, idim), z(jdim, kdim, idim)
  real :: blank(jdim, kdim, idim), thetay(maxbl)
  real(4) :: xw(jdw, kdw, idw, nset), xg(jdw, kdw, idw, 4)
  integer :: mblk2nd(maxbl)
  real :: qi0(*), qj0(*), qk0(*), blank2(*), vist3d(*), bcj(*), bck(*), bci(*), vj0(*), vk0(*), vi0(*)
  real :: xv(*), sj(*), sk(*), si(*), vol(*)
  integer :: nmap(*), jdimg(*), kdimg(*), idimg(*), nblcg(*), jsg(*), ksg(*), isg(*), jeg(*), keg(*), ieg(*)
  integer :: iindex(*), nblkk(*), limblk(*), isva(*), nblon(*), nblkpt(*), inpl3d(nplots, 11)
  integer :: j, k, i, jw, kw, iw, m, nv
  real(4) :: hdr4(4), t
  logical :: owner
  if (iflag .ne. 1) return
  if (myid .eq. myhost) nfallback = nfallback + 1
  nv = 5
  if (ifunc .ne. 0) nv = 1
#if defined DIST_MPI
  owner = mblk2nd(nblk) .eq. myid
#else
  owner = .true.
#endif
  if (owner) then
    iw = 0
    do i = i1, i2, i3
      iw = iw + 1
      jw = 0
      do j = j1, j2, j3
        jw = jw + 1
        kw = 0
        do k = k1, k2, k3
          kw = kw + 1
          xg(jw, kw, iw, :) = real([x(j, k, i), y(j, k, i), z(j, k, i), blank(j, k, i)], 4)
          xw(jw, kw, iw, 1:nv) = real(q(j, k, i, 1:nv), 4)
        end do
      end do
    end do
  end if
#if defined DIST_MPI
  if (owner) then
    call MPI_Send(xg, 4*jdw*kdw*idw, MPI_REAL, myhost, 1, mycomm, ierr)
    call MPI_Send(xw, nv*jdw*kdw*idw, MPI_REAL, myhost, 2, mycomm, ierr)
  else if (myid .eq. myhost) then
    call MPI_Recv(xg, 4*jdw*kdw*idw, MPI_REAL, mblk2nd(nblk), 1, mycomm, istat, ierr)
    call MPI_Recv(xw, nv*jdw*kdw*idw, MPI_REAL, mblk2nd(nblk), 2, mycomm, istat, ierr)
  end if
#endif
  if (myid .ne. myhost .or. ibin .eq. 0) return
  if (icall1 .eq. 0) then
    if (ialph .ne. 0 .and. i2d .eq. 0) then
      do i = 1, idw
        do k = 1, kdw
          do j = 1, jdw
            t = xg(j, k, i, 2)
            xg(j, k, i, 2) = xg(j, k, i, 3)
            xg(j, k, i, 3) = -t
          end do
        end do
      end do
    end if
    if (i2d .eq. 0 .and. iblnk .eq. 0) then
      write(3) (((xg(j, k, i, 1), i = 1, idw), j = 1, jdw), k = 1, kdw), &
               (((xg(j, k, i, 2), i = 1, idw), j = 1, jdw), k = 1, kdw), &
               (((xg(j, k, i, 3), i = 1, idw), j = 1, jdw), k = 1, kdw)
    else if (i2d .eq. 0) then
      write(3) (((xg(j, k, i, 1), i = 1, idw), j = 1, jdw), k = 1, kdw), &
               (((xg(j, k, i, 2), i = 1, idw), j = 1, jdw), k = 1, kdw), &
               (((xg(j, k, i, 3), i = 1, idw), j = 1, jdw), k = 1, kdw), &
               (((int(xg(j, k, i, 4)), i = 1, idw), j = 1, jdw), k = 1, kdw)
    else if (iblnk .eq. 0) then
      write(3) (((xg(j, k, i, 1), i = 1, idw), j = 1, jdw), k = 1, kdw), &
               (((xg(j, k, i, 3), i = 1, idw), j = 1, jdw), k = 1, kdw)
    else
      write(3) (((xg(j, k, i, 1), i = 1, idw), j = 1, jdw), k = 1, kdw), &
               (((xg(j, k, i, 3), i = 1, idw), j = 1, jdw), k = 1, kdw), &
               (((int(xg(j, k, i, 4)), i = 1, idw), j = 1, jdw), k = 1, kdw)
    end if
  end if
  if (ifunc .ne. 0) then
    write(4) (((xw(j, k, i, 1), i = 1, idw), j = 1, jdw), k = 1, kdw)
    return
  end if
  hdr4 = real([xmach, radtodeg*(alpha + thetay(nblk)), reue, time], 4)
  write(4) hdr4
  if (i2d .ne. 0) then
    write(4) ((((xw(j, k, i, m), i = 1, idw), j = 1, jdw), k = 1, kdw), m = 1, 2), &
             ((((xw(j, k, i, m), i = 1, idw), j = 1, jdw), k = 1, kdw), m = 4, 5)
  else if (ialph .ne. 0) then
    write(4) ((((xw(j, k, i, m), i = 1, idw), j = 1, jdw), k = 1, kdw), m = 1, 2), &
             (((xw(j, k, i, 4), i = 1, idw), j = 1, jdw), k = 1, kdw), &
             (((-xw(j, k, i, 3), i = 1, idw), j = 1, jdw), k = 1, kdw), &
             (((xw(j, k, i, 5), i = 1, idw), j = 1, jdw), k = 1, kdw)
  else
    write(4) ((((xw(j, k, i, m), i = 1, idw), j = 1, jdw), k = 1, kdw), m = 1, 5)
  end if
end subroutine plot3d
