! Stand-ins of CFL3D's own WREST and RREST, under the names anabranch_cfl3d.F calls them by
! when it leaves a restart to CFL3D (CFL3D's dist/wrest.F and dist/rrest.F compiled with
! -Dwrest=wrest_cfl3d -Drrest=rrest_cfl3d in a real build). They write nothing: each says on
! stdout that it was called, on which rank and for which block, and counts the call
! (common /stubfb/), so that a test sees the fallback taken (ANABRANCH_CFL3D=0) and the
! driver leaves its checks of a restart that was not written.
subroutine wrest_cfl3d(nbl, jdim, kdim, idim, q, qj0, qk0, qi0, ncycmax, rms, &
                       clw, cdw, cdpw, cdvw, cxw, cyw, czw, cmxw, cmyw, cmzw, &
                       n_clcd, clcd, nblocks_clcd, blocks_clcd, &
                       fmdotw, cftmomw, cftpw, cftvw, cfttotw, rmstr, &
                       nneg, iskip, vist3d, tursav, &
                       smin, xjb, xkb, blnum, cmuv, thetay, maxbl, &
                       myid, myhost, mycomm, mblk2nd, igrid, wk, &
                       idima, jdima, kdima, bcj, bck, bci, vj0, vk0, vi0, &
                       tj0, tk0, ti0, blank, iwk, iwork, iover, &
                       nou, bou, nbuf, ibufdim, qavg, q2avg, x, y, z, nummem)
  integer :: nbl, myid, nbuf, ibufdim, nfallback
  character(len=120) :: bou(ibufdim, nbuf)
  common /stubfb/ nfallback
  nfallback = nfallback + 1
  write(*, '(a,i0,a,i0)') 'cfl3d_stub: CFL3D''s own wrest called for block ', nbl, ' on rank ', myid
  flush(6)
end subroutine wrest_cfl3d

subroutine rrest_cfl3d(nbl, jdim, kdim, idim, q, qj0, qk0, qi0, ncycmax, ntr, &
                       rms, clw, cdw, cdpw, cdvw, cxw, cyw, czw, cmxw, cmyw, cmzw, &
                       n_clcd, clcd, nblocks_clcd, blocks_clcd, &
                       fmdotw, cftmomw, cftpw, cftvw, cfttotw, rmstr, &
                       nneg, iskip, vist3d, tursav, &
                       smin, xjb, xkb, blnum, cmuv, maxbl, mblk2nd, &
                       myid, myhost, mycomm, nou, bou, nbuf, ibufdim, &
                       igrid, wk, idima, jdima, kdima, vj0, vk0, vi0, &
                       tj0, tk0, ti0, qavg, q2avg, nummem)
  integer :: nbl, myid, nbuf, ibufdim, nfallback
  character(len=120) :: bou(ibufdim, nbuf)
  common /stubfb/ nfallback
  nfallback = nfallback + 1
  write(*, '(a,i0,a,i0)') 'cfl3d_stub: CFL3D''s own rrest called for block ', nbl, ' on rank ', myid
  flush(6)
end subroutine rrest_cfl3d
