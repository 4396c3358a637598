! A stand-in for the CFL3D run around WREST, RREST and PLOT3D, to test integrations/cfl3d/
! anabranch_cfl3d.F without CFL3D (tests/python/test_cfl3d_stub.py). It is the main.o of a
! stand-in CFL3D build tree (with wrest.F, rrest.F and plot3d.F90, stand-ins of CFL3D's own
! routines; tests/cfl3d_stub/tree.cmake), compiled with CFL3D's flags (-fdefault-real-8
! -std=legacy -fallow-argument-mismatch), once with -DDIST_MPI (CFL3D's MPI build: rank 0
! the host, holding no block, ranks 1..P-1 the blocks' owners) and once without (the
! sequential build: one process, everything on it, no MPI of its own); anabranch-cfl3d
! build links both with the replacement, as it does CFL3D's.
!
!   cfl3d_stub < DECK                  as CFL3D is run: the deck's irest (0: the case sst
!                                      written as `write` does, 1: read as `read` does, then
!                                      dumped again) with restart.bin for its file and
!                                      cfl3d.out for the host's lines.

!   cfl3d_stub write PREFIX [CASE...]  for each case (all when none is named), two restart
!                                      dumps into PREFIX-CASE.bin, as CFL3D's mgblk makes
!                                      them: the host opens unit 2 on the file, then WREST is
!                                      called for each block in file order on the host and
!                                      on the block's owner only (the first block with
!                                      iskip=1), then the host closes unit 2. The second
!                                      dump is the one left in the file; the host checks
!                                      what WREST tells it (thetay, the eddy-viscosity flag).
!   cfl3d_stub levels PREFIX [CASE...] as write, the first dump on the coarser mesh level's
!                                      blocks, the second on the finest's: each the first
!                                      dump of its level (AB_STUB_DUMPS=1: the first only).
!   cfl3d_stub ref PREFIX [CASE...]    one process: the last dump's records written with
!                                      plain Fortran WRITE(2) statements, following CFL3D's
!                                      record layout (the reference file).
!   cfl3d_stub read PREFIX [CASE...]   RREST called for each block as CFL3D's setup does
!                                      (host and owner); every owner checks its arrays,
!                                      the host and the owners the histories, ntt and time.
!   cfl3d_stub plot3d PREFIX [CASE...] PLOT3D output as CFL3D's qout.F makes it: for each
!                                      PLOT3D case (PNAME), two frames into PREFIX-CASE.g
!                                      (grid) and PREFIX-CASE.q (q or function file), PLOT3D
!                                      called for each grid on the host and the grid's owner.
!
! Host lines (CFL3D's cfl3d.out, unit 11) go to PREFIX.out. A failed check prints a line
! naming the case, block and array, and the run ends with status 3 (every rank); a wrong
! command line with status 2. The record names B1..B15 are the layout of CFL3D's
! dist/wrest.F (anabranch_cfl3d.F's KB* kinds).
!
! The cases (turbulence model and ghost data, the records they make):
!   lam   ivisc 0 0 0,  iwghost 1                     B1-B6
!   vis2  ivisc 2 2 0,  iwghost 1                     + B7, B8
!   sst   ivisc 0 0 7,  iwghost 1, a record after the blocks (a time-accurate dump's)
!                                                     + B7-B11
!   easm  ivisc 0 0 8,  iwghost 0                     B7, B9, B11, B15 (cmuv)
!   bb    ivisc 0 0 4,  iwghost 1                     B7-B11, B12-B14 (Baldwin-Barth)
!   k30   ivisc 0 0 30, iwghost 0, 3 fields           B6a, B6b, B9a, B9b
!   k40   ivisc 0 0 40, iwghost 1, 4 fields           B6a, 2 x B6b, B9a, B9b, B10a

! CFL3D's common blocks that anabranch_cfl3d.F reads, with CFL3D's names and layouts
! (CFL3D types them implicitly: a-h, o-z REAL, i-n INTEGER).
module stub_commons
  implicit none
  real :: title(20), rkap(3), xmach, alpha, beta, dt, fmax
  integer :: nit, ntt, idiag(3), nitfo, iflagts, iflim(3), nres, levelb(5), mgflag, iconsf, mseq, ncyc1(5), &
             levelt(5), nitfo1(5), ngam, nsm(5), iipv
  common /info/ title, rkap, xmach, alpha, beta, dt, fmax, nit, ntt, idiag, nitfo, iflagts, iflim, nres, levelb, &
                mgflag, iconsf, mseq, ncyc1, levelt, nitfo1, ngam, nsm, iipv
  real :: time, cfltau, cfltau0, cfltaumax
  integer :: ntstep, ita, iunst
  common /unst/ time, cfltau, ntstep, ita, iunst, cfltau0, cfltaumax
  real :: reue, tinf
  integer :: ivisc(3)
  common /reyue/ reue, tinf, ivisc
  real :: radtodeg
  common /conversion/ radtodeg
  integer :: irghost, iwghost
  common /ghost/ irghost, iwghost
  real :: cflturb(7), edvislim, tur1cut, tur2cut, tur1cutlev, tur2cutlev
  integer :: iturbprod, nsubturb, nfreeze, iwarneddy, itime2read, itaturb, iturbord
  common /turbconv/ cflturb, edvislim, iturbprod, nsubturb, nfreeze, iwarneddy, itime2read, itaturb, tur1cut, &
                    tur2cut, iturbord, tur1cutlev, tur2cutlev
  integer :: icgns, iccg, ibase, nzones, nsoluse, irind, jrind, krind
  common /cgns/ icgns, iccg, ibase, nzones, nsoluse, irind, jrind, krind
  real :: xnumavg, xnumavg2
  integer :: iteravg, ipertavg, iclcd, isubit_r
  common /avgdata/ xnumavg, iteravg, xnumavg2, ipertavg, iclcd, isubit_r
  integer :: irest, irest2
  common /wrestq/ irest, irest2
  integer :: isminc, ismincforce
  common /sminn/ isminc, ismincforce
  real :: p0, rho0, c0, u0, v0, w0, et0, h0, pt0, rhot0, qiv(5), tur10(7)
  common /ivals/ p0, rho0, c0, u0, v0, w0, et0, h0, pt0, rhot0, qiv, tur10
  integer :: ialphit, icycupdt
  real :: cltarg, rlxalph, dalim, dalpha
  common /alphait/ ialphit, cltarg, rlxalph, dalim, dalpha, icycupdt
  real :: randomize
  common /random_input/ randomize
  integer :: ivmx
  common /maxiv/ ivmx
  integer :: nnodes, myhost, myid, mycomm
  common /mydist2/ nnodes, myhost, myid, mycomm
  ! PLOT3D output (qout.F, plot3d.F)
  integer :: ibin, iblnk, iblnkfr, ip3dgrad
  common /bin/ ibin, iblnk, iblnkfr, ip3dgrad
  integer :: i2d
  common /twod/ i2d
  integer :: ip3dgrd, ialph
  common /igrdtyp/ ip3dgrd, ialph
  integer :: movie, nframes, icall1, lhdr, icoarsemovie, i2dmovie
  common /moov/ movie, nframes, icall1, lhdr, icoarsemovie, i2dmovie
  ! what CFL3D's CGNS dump reads (mode cgns)
  real :: gamma, gm1, gp1, gm1g, gp1g, ggm1
  common /fluid/ gamma, gm1, gp1, gm1g, gp1g, ggm1
  ! the deck CFL3D's host keeps open (its copy of standard input) on this unit
  integer :: iunit5
  common /unit5/ iunit5
  ! calls of the fallback stand-ins (cfl3d_fallback.F90)
  integer :: nfallback
  common /stubfb/ nfallback
end module stub_commons

module stub_data
  use stub_commons
  implicit none
  ! 4 grids of different sizes; each has a finest block nblg(g) = 2g-1 and a coarser one 2g
  ! (CFL3D's global numbering with two mesh-sequencing levels): a dump writes the finest.
  integer, parameter :: NGRID = 4, MAXBL = 2*NGRID, NCYCMAX = 12, NBUF = 4, IBUFDIM = 400
  integer, parameter :: JG(NGRID) = [5, 9, 3, 7], KG(NGRID) = [4, 7, 6, 5], IG(NGRID) = [3, 2, 5, 4]
  integer, parameter :: NCASE = 7, NDUMP = 2, NTT_DUMP(NDUMP) = [4, 7]
  character(len=4), parameter :: CNAME(NCASE) = ['lam ', 'vis2', 'sst ', 'easm', 'bb  ', 'k30 ', 'k40 ']
  ! the PLOT3D cases (mode plot3d): q3 3D q file with IBLANK; qa a grid read with alpha in the
  ! x-y plane (ialph), no IBLANK; q2 2D (i2d, the plane i = 1); fn a function file (Cp); qs
  ! every 2nd, 3rd and 2nd point in i, j and k; mix q3 with grid 3 written by CFL3D's own
  ! routine in between (as qout.F writes a cell-centred block through plot3c)
  integer, parameter :: NPCASE = 6
  character(len=4), parameter :: PNAME(NPCASE) = ['q3  ', 'qa  ', 'q2  ', 'fn  ', 'qs  ', 'mix ']
  real, parameter :: SENT = -999.25, EDV = 123.5, QH(5) = [1.0, 0.5, 0.25, 0.125, 0.7]
  integer, parameter :: ISENT = -99
  type blk
    integer :: jdim, kdim, idim
    real, allocatable :: q(:,:,:,:), qj0(:,:,:,:), qk0(:,:,:,:), qi0(:,:,:,:), vist3d(:,:,:), tursav(:,:,:,:)
    real, allocatable :: smin(:,:,:), xjb(:,:,:), xkb(:,:,:), blnum(:,:,:), cmuv(:,:,:)
    real, allocatable :: vj0(:,:,:,:), vk0(:,:,:,:), vi0(:,:,:,:), tj0(:,:,:,:), tk0(:,:,:,:), ti0(:,:,:,:)
    real, allocatable :: bcj(:,:,:), bck(:,:,:), bci(:,:,:), blank(:,:,:), qavg(:,:,:,:), q2avg(:,:,:,:)
    real, allocatable :: x(:,:,:), y(:,:,:), z(:,:,:)
  end type blk
  type(blk) :: b(NGRID)
  integer :: nblg(NGRID), mblk2nd(MAXBL), nproc, nummem, iwg, ntrail, nerr = 0
  logical :: host
  character(len=8) :: case_name
  logical :: deck_run = .false.  ! run as CFL3D is (a deck on stdin): the file is restart.bin
  integer :: lev = 0  ! the mesh level of the dump: 0 the finest (blocks nblg(g)), 1 the coarser (nblg(g) + 1)
  real :: rms(NCYCMAX), clw(NCYCMAX), cdw(NCYCMAX), cdpw(NCYCMAX), cdvw(NCYCMAX), cxw(NCYCMAX), cyw(NCYCMAX)
  real :: czw(NCYCMAX), cmxw(NCYCMAX), cmyw(NCYCMAX), cmzw(NCYCMAX), fmdotw(NCYCMAX), cftmomw(NCYCMAX)
  real :: cftpw(NCYCMAX), cftvw(NCYCMAX), cfttotw(NCYCMAX), clcd(2, 1, NCYCMAX), thetay(MAXBL), wk(4096)
  integer :: blocks_clcd(2, 1) = 1, iwk(1) = 0, nou(NBUF)
  character(len=120) :: bou(IBUFDIM, NBUF)
  real, allocatable :: rmstr(:,:)
  integer, allocatable :: nneg(:,:)
  ! mode cgns: three dumps (the first teaches the host the blocks), the owners' values of
  ! the dump being written (CFL3D's own routine, the stand-in of wrest.F, makes them again)
  integer, parameter :: NDUMP_CGNS = 3
  real :: cur_shift = 0.

contains

  ! the settings of case ic
  subroutine set_case(ic)
    integer, intent(in) :: ic
    case_name = CNAME(ic)
    nummem = 2
    ntrail = 0
    select case (trim(case_name))
    case ('lam')
      ivisc = [0, 0, 0]; iwg = 1
    case ('vis2')
      ivisc = [2, 2, 0]; iwg = 1
    case ('sst')
      ivisc = [0, 0, 7]; iwg = 1; ntrail = 1
    case ('easm')
      ivisc = [0, 0, 8]; iwg = 0
    case ('bb')
      ivisc = [0, 0, 4]; iwg = 1
    case ('k30')
      ivisc = [0, 0, 30]; iwg = 0; nummem = 3
    case ('k40')
      ivisc = [0, 0, 40]; iwg = 1; nummem = 4
    end select
    ivmx = maxval(ivisc)
    iwghost = iwg
    irghost = iwg
    if (allocated(rmstr)) deallocate(rmstr, nneg)
    allocate(rmstr(NCYCMAX, nummem), nneg(NCYCMAX, nummem))
  end subroutine set_case

  ! CFL3D's other settings, the same on every rank: no CGNS, no averaging, no cl/cd file, a
  ! plain restart (what makes anabranch_cfl3d.F leave a restart to CFL3D is off)
  subroutine fixed_settings()
    icgns = 0
    iteravg = 0
    iclcd = 0
    irest = 1
    irest2 = 0
    ialphit = 0
    randomize = 0.
    isminc = 0
    ismincforce = -1
    mseq = 2
    nou = 0
    bou = ' '
    nfallback = 0
  end subroutine fixed_settings

  ! The block-to-rank map as CFL3D's compg2n makes it: one worker (or the sequential
  ! build) holds every block on rank 1; otherwise the grids, largest first, each to the
  ! worker with the fewest cells so far; a coarser block goes with its finest.
  subroutine assign_map()
    integer :: nodes, load(64), order(NGRID), cells(NGRID), g, h, t, node
    do g = 1, NGRID
      nblg(g) = 2*g - 1
      cells(g) = (JG(g) - 1)*(KG(g) - 1)*(IG(g) - 1)
      order(g) = g
    end do
    nodes = max(1, nproc - 1)
    if (nodes .eq. 1) then
      mblk2nd = 1
      return
    end if
    do g = 1, NGRID - 1  ! sort, largest first (no two grids of the same size)
      do h = g + 1, NGRID
        if (cells(order(h)) .gt. cells(order(g))) then
          t = order(g); order(g) = order(h); order(h) = t
        end if
      end do
    end do
    load = 0
    do h = 1, NGRID
      g = order(h)
      node = minloc(load(1:nodes), 1)
      mblk2nd(nblg(g)) = node
      mblk2nd(nblg(g) + 1) = node
      load(node) = load(node) + cells(g)
    end do
  end subroutine assign_map

  ! whether this rank owns grid g's block (the sequential build: all of them)
  logical function owns(g)
    integer, intent(in) :: g
#if defined DIST_MPI
    owns = mblk2nd(nblg(g)) .eq. myid
#else
    owns = .true.
#endif
  end function owns

  subroutine alloc_block(a, g)
    type(blk), intent(inout) :: a
    integer, intent(in) :: g
    integer :: jd, kd, id
    jd = JG(g); kd = KG(g); id = IG(g)
    a%jdim = jd; a%kdim = kd; a%idim = id
    allocate(a%q(jd,kd,id,5), a%qj0(kd,id-1,5,4), a%qk0(jd,id-1,5,4), a%qi0(jd,kd,5,4))
    allocate(a%vist3d(jd,kd,id), a%tursav(jd,kd,id,nummem))
    allocate(a%smin(jd-1,kd-1,id-1), a%xjb(jd-1,kd-1,id-1), a%xkb(jd-1,kd-1,id-1), a%blnum(jd-1,kd-1,id-1), &
             a%cmuv(jd-1,kd-1,id-1))
    allocate(a%vj0(kd,id-1,1,4), a%vk0(jd,id-1,1,4), a%vi0(jd,kd,1,4))
    allocate(a%tj0(kd,id-1,nummem,4), a%tk0(jd,id-1,nummem,4), a%ti0(jd,kd,nummem,4))
    allocate(a%bcj(kd,id-1,2), a%bck(jd,id-1,2), a%bci(jd,kd,2), a%blank(jd,kd,id), a%qavg(jd,kd,id,5), &
             a%q2avg(jd,kd,id,5), a%x(jd,kd,id), a%y(jd,kd,id), a%z(jd,kd,id))
    call setall(a, SENT)
  end subroutine alloc_block

  subroutine free_block(a)
    type(blk), intent(out) :: a  ! its arrays deallocated on entry
    a%jdim = 0
  end subroutine free_block

  subroutine setall(a, v)
    type(blk), intent(inout) :: a
    real, intent(in) :: v
    a%q = v; a%qj0 = v; a%qk0 = v; a%qi0 = v; a%vist3d = v; a%tursav = v
    a%smin = v; a%xjb = v; a%xkb = v; a%blnum = v; a%cmuv = v
    a%vj0 = v; a%vk0 = v; a%vi0 = v; a%tj0 = v; a%tk0 = v; a%ti0 = v
    a%bcj = v; a%bck = v; a%bci = v; a%blank = v; a%qavg = v; a%q2avg = v; a%x = v; a%y = v; a%z = v
  end subroutine setall

  ! deterministic values of array ia of block nbl (every element, halos included);
  ! neg: every third value negative
  subroutine fill(a, n, nbl, ia, shift, neg)
    integer, intent(in) :: n, nbl, ia
    real, intent(out) :: a(n)
    real, intent(in) :: shift
    logical, intent(in) :: neg
    integer :: i
    do i = 1, n
      a(i) = 10*nbl + ia + 0.001*i + 0.5*sin(0.37*i + ia) + shift
      if (neg .and. mod(i, 3) .eq. 0) a(i) = -a(i)
    end do
  end subroutine fill

  ! the owner's arrays of grid g (dump shift: the first dump's values differ)
  subroutine fill_block(a, g, shift)
    type(blk), intent(inout) :: a
    integer, intent(in) :: g
    real, intent(in) :: shift
    integer :: nbl
    nbl = nblg(g)
    call fill(a%q, size(a%q), nbl, 1, shift, .false.)
    call fill(a%qj0, size(a%qj0), nbl, 2, shift, .false.)
    call fill(a%qk0, size(a%qk0), nbl, 3, shift, .false.)
    call fill(a%qi0, size(a%qi0), nbl, 4, shift, .false.)
    call fill(a%vist3d, size(a%vist3d), nbl, 5, shift, .false.)
    call fill(a%tursav, size(a%tursav), nbl, 6, shift, .false.)
    call fill(a%smin, size(a%smin), nbl, 7, shift, .true.)  ! written as abs(smin)
    call fill(a%xjb, size(a%xjb), nbl, 8, shift, .false.)
    call fill(a%xkb, size(a%xkb), nbl, 9, shift, .false.)
    call fill(a%blnum, size(a%blnum), nbl, 10, shift, .false.)
    call fill(a%cmuv, size(a%cmuv), nbl, 11, shift, .false.)
    call fill(a%vj0, size(a%vj0), nbl, 12, shift, .false.)
    call fill(a%vk0, size(a%vk0), nbl, 13, shift, .false.)
    call fill(a%vi0, size(a%vi0), nbl, 14, shift, .false.)
    call fill(a%tj0, size(a%tj0), nbl, 15, shift, .false.)
    call fill(a%tk0, size(a%tk0), nbl, 16, shift, .false.)
    call fill(a%ti0, size(a%ti0), nbl, 17, shift, .false.)
    ! the eddy-viscosity limit reached in one cell of grid 3 (WREST tells the host)
    if (g .eq. 3) a%vist3d(1,1,1) = EDV
  end subroutine fill_block

  ! the owner's thetay(nbl)
  real function theta_of(nbl)
    integer, intent(in) :: nbl
    theta_of = 0.01*nbl + 0.003
  end function theta_of

  ! The host's values for dump d (the file holds the host's header, histories and
  ! turbulence histories); in the MPI build a worker holds other values, which must not
  ! reach the file.
  subroutine header_values(d, mine)
    integer, intent(in) :: d
    logical, intent(in) :: mine
    integer :: n, l
    if (mine) then
      do n = 1, 20
        title(n) = n + 0.25
      end do
      xmach = 0.85
      alpha = 0.0523
      reue = 2.5e6
      time = 0.25*d
      radtodeg = 45./atan(1.)
      edvislim = EDV
      ntt = NTT_DUMP(d)
      do n = 1, NCYCMAX
        rms(n) = hist(1, n); clw(n) = hist(2, n); cdw(n) = hist(3, n); cdpw(n) = hist(4, n)
        cdvw(n) = hist(5, n); cxw(n) = hist(6, n); cyw(n) = hist(7, n); czw(n) = hist(8, n)
        cmxw(n) = hist(9, n); cmyw(n) = hist(10, n); cmzw(n) = hist(11, n); fmdotw(n) = hist(12, n)
        cftmomw(n) = hist(13, n); cftpw(n) = hist(14, n); cftvw(n) = hist(15, n); cfttotw(n) = hist(16, n)
        do l = 1, nummem
          rmstr(n, l) = rm_of(n, l)
          nneg(n, l) = 100*l + n
        end do
      end do
      clcd = 0.5
    else
      title = -1.
      xmach = 9.
      alpha = 9.
      reue = 9.
      time = 9.
      radtodeg = 1.
      edvislim = -5.
      ntt = 2
      call hist_sentinel()
      clcd = SENT
    end if
  end subroutine header_values

  real function hist(k, n)
    integer, intent(in) :: k, n
    hist = k + 0.01*n + 0.001*sin(real(n))
  end function hist

  ! the host's turbulence residuals: some of them <= 0 (CFL3D writes those as 1)
  real function rm_of(n, l)
    integer, intent(in) :: n, l
    rm_of = sin(real(n + 2*l))
    if (n .eq. 3 .and. l .eq. 1) rm_of = 0.
  end function rm_of

  real function rm_written(n, l)
    integer, intent(in) :: n, l
    rm_written = rm_of(n, l)
    if (rm_written .le. 0.) rm_written = 1.
  end function rm_written

  subroutine hist_sentinel()
    rms = SENT; clw = SENT; cdw = SENT; cdpw = SENT; cdvw = SENT; cxw = SENT; cyw = SENT; czw = SENT
    cmxw = SENT; cmyw = SENT; cmzw = SENT; fmdotw = SENT; cftmomw = SENT; cftpw = SENT; cftvw = SENT
    cfttotw = SENT
    rmstr = SENT
    nneg = ISENT
  end subroutine hist_sentinel

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      nerr = nerr + 1
      write(*, '(a,i0,a)') 'cfl3d_stub: rank ', myid, ': case '//trim(case_name)//': '//what
      flush(6)
    end if
  end subroutine expect

  function blkname(g) result(s)
    integer, intent(in) :: g
    character(len=16) :: s
    write(s, '(a,i0)') 'block ', nblg(g)
    s = trim(s)//': '
  end function blkname

  function fpath(prefix) result(p)
    character(len=*), intent(in) :: prefix
    character(len=len_trim(prefix) + 16) :: p
    p = trim(prefix)//'-'//trim(case_name)//'.bin'
    if (deck_run) p = 'restart.bin'
  end function fpath
end module stub_data

module stub_modes
  use stub_data
  implicit none
contains

  ! One restart dump, as CFL3D's mgblk: the host opens unit 2, WREST for each block on the
  ! host and the block's owner, the host closes unit 2 (after the record of a time-accurate
  ! dump, which CFL3D writes after the blocks).
  subroutine dump(path)
    character(len=*), intent(in) :: path
    if (host) then
      open(unit=2, file=path, form='unformatted', status='unknown')
      rewind(2)
    end if
    call wrest_all()
    if (host) then
      if (ntrail .ne. 0) write(2) 0
      close(2)
    end if
  end subroutine dump

  ! WREST for each block in file order, on the host and on the block's owner
  subroutine wrest_all()
    integer :: g, nbl, iskipz
    do g = 1, NGRID
      iskipz = 0
      if (g .eq. 1) iskipz = 1
      nbl = nblg(g) + lev
      if (mblk2nd(nbl) .eq. myid .or. myid .eq. myhost) then
        associate (a => b(g))
          call wrest(nbl, a%jdim, a%kdim, a%idim, a%q, a%qj0, a%qk0, a%qi0, NCYCMAX, rms, &
                     clw, cdw, cdpw, cdvw, cxw, cyw, czw, cmxw, cmyw, cmzw, &
                     1, clcd, 1, blocks_clcd, &
                     fmdotw, cftmomw, cftpw, cftvw, cfttotw, rmstr, &
                     nneg, iskipz, a%vist3d, a%tursav, &
                     a%smin, a%xjb, a%xkb, a%blnum, a%cmuv, thetay, MAXBL, &
                     myid, myhost, mycomm, mblk2nd, g, wk, &
                     a%idim, a%jdim, a%kdim, a%bcj, a%bck, a%bci, a%vj0, a%vk0, a%vi0, &
                     a%tj0, a%tk0, a%ti0, a%blank, iwk, 1, 0, &
                     nou, bou, NBUF, IBUFDIM, a%qavg, a%q2avg, a%x, a%y, a%z, nummem)
        end associate
      end if
    end do
  end subroutine wrest_all

  subroutine mode_write(prefix, ic)
    character(len=*), intent(in) :: prefix
    integer, intent(in) :: ic
    integer :: g, d
    real :: shift
    call set_case(ic)
    call fixed_settings()
    do g = 1, NGRID
      call alloc_block(b(g), g)
    end do
    do d = 1, NDUMP
      shift = 0.
      if (d .lt. NDUMP) shift = 0.5
      call header_values(d, host)
      do g = 1, NGRID
        call setall(b(g), SENT)
        if (owns(g)) then
          call fill_block(b(g), g, shift)
          thetay(nblg(g)) = theta_of(nblg(g))
        else
          thetay(nblg(g)) = SENT
        end if
      end do
      ! mgblk: the flag is reset before the last dump, -1 (not watched) before the others
      iwarneddy = -1
      if (d .eq. NDUMP) iwarneddy = 0
      call dump(fpath(prefix))
      if (host .and. nfallback .eq. 0) then
        do g = 1, NGRID
          call expect(thetay(nblg(g)) .eq. theta_of(nblg(g)), trim(blkname(g))//' thetay is not the owner''s')
        end do
        if (d .lt. NDUMP) then
          call expect(iwarneddy .eq. -1, 'iwarneddy set in a dump that does not watch it')
        else if (ivmx .ge. 2) then
          call expect(iwarneddy .eq. 1, 'the eddy-viscosity limit reached in block 5 is not reported')
        else
          call expect(iwarneddy .eq. 0, 'iwarneddy set without eddy viscosity')
        end if
      end if
    end do
    do g = 1, NGRID
      call free_block(b(g))
    end do
  end subroutine mode_write

  ! Two dumps as a run over two mesh levels makes them (mseq 2): the coarser level's blocks
  ! (nblg(g) + 1), then the finest's (nblg(g)), each the first dump of its level and so
  ! written block by block. The second is the reference's; AB_STUB_DUMPS=1 stops after the
  ! first. The host checks each block's thetay as in mode_write.
  subroutine mode_levels(prefix, ic)
    character(len=*), intent(in) :: prefix
    integer, intent(in) :: ic
    integer :: g, d, nd, l, st, nbl
    character(len=8) :: v
    call set_case(ic)
    call fixed_settings()
    nd = NDUMP
    call get_environment_variable('AB_STUB_DUMPS', v, l, st)
    if (st .eq. 0 .and. l .gt. 0) read(v, *) nd
    do g = 1, NGRID
      call alloc_block(b(g), g)
    end do
    do d = 1, nd
      lev = NDUMP - d
      call header_values(d, host)
      do g = 1, NGRID
        nbl = nblg(g) + lev
        call setall(b(g), SENT)
        if (owns(g)) then
          call fill_block(b(g), g, 0.)
          thetay(nbl) = theta_of(nbl)
        else
          thetay(nbl) = SENT
        end if
      end do
      iwarneddy = -1
      call dump(fpath(prefix))
      if (host .and. nfallback .eq. 0) then
        do g = 1, NGRID
          call expect(thetay(nblg(g) + lev) .eq. theta_of(nblg(g) + lev), trim(blkname(g))//' thetay is not the owner''s')
        end do
      end if
    end do
    lev = 0
    do g = 1, NGRID
      call free_block(b(g))
    end do
  end subroutine mode_levels

  ! The deck CFL3D's host reads and keeps open on unit iunit5 (32), in CFL3D's layout (14
  ! lines of file names, the title, the free stream, the reference values, dt and irest,
  ! ngrid, then a line per grid: ncg, iem, ...), for the stand-in's grids: what the
  ! replacement reads to know which block ends a dump. With a deck on standard input (CFL3D's
  ! way) that deck's copy, tempz3y2x1.inp, as CFL3D makes it.
  subroutine open_deck(prefix)
    character(len=*), intent(in) :: prefix
    integer :: g
    iunit5 = 32
    if (deck_run) then
      open(iunit5, file='tempz3y2x1.inp', form='formatted', status='old')
      return
    end if
    open(iunit5, file=trim(prefix)//'.inp', form='formatted', status='replace')
    write(iunit5, '(a)') 'input/output files:'
    do g = 1, 13
      write(iunit5, '(a,i0)') 'file', g
    end do
    write(iunit5, '(a)') '     The CFL3D stand-in''s deck'
    write(iunit5, '(a)') '      Mach     alpha      beta      ReUe   Tinf,dR     ialph    ihstry'
    write(iunit5, '(a)') '   0.85000   3.00000   0.00000 0.250E+01 460.00000         0         0'
    write(iunit5, '(a)') '      sref      cref      bref       xmc       ymc       zmc'
    write(iunit5, '(a)') '   1.00000   1.00000   1.00000   0.00000   0.00000   0.00000'
    write(iunit5, '(a)') '        dt     irest   iflagts      fmax     iunst   cfl_tau'
    write(iunit5, '(a)') '  -5.00000         0         0   5.00000         0  10.00000'
    write(iunit5, '(a)') '     ngrid   nplot3d    nprint    nwrest      ichk       i2d    ntstep       ita'
    write(iunit5, '(a,i10,a)') '', NGRID, '         0         0        20         0         0         1         1'
    write(iunit5, '(a)') '       ncg       iem  iadvance    iforce  ivisc(i)  ivisc(j)  ivisc(k)'
    do g = 1, NGRID
      write(iunit5, '(a)') '         1         0         0         1         0         0         7'
    end do
    flush(iunit5)
    rewind(iunit5)
  end subroutine open_deck

  ! The reference: the last dump's records, written by one process with Fortran WRITE
  ! statements in the order and form of CFL3D's restart file (its dist/wrest.F).
  subroutine mode_ref(prefix, ic)
    character(len=*), intent(in) :: prefix
    integer, intent(in) :: ic
    integer :: g, l, jd1, kd1, id1, nbl
    real :: alphw, rmw(NCYCMAX, 7)
    logical :: bb, cm
    call set_case(ic)
    call fixed_settings()
    call header_values(NDUMP, .true.)
    do l = 1, nummem
      do g = 1, NCYCMAX
        rmw(g, l) = rm_written(g, l)
      end do
    end do
    bb = any(ivisc .eq. 4) .or. any(ivisc .eq. 25)
    cm = any(ivisc .eq. 8) .or. any(ivisc .eq. 9) .or. any(ivisc .eq. 13) .or. any(ivisc .eq. 14)
    open(unit=2, file=fpath(prefix), form='unformatted', status='replace')
    do g = 1, NGRID
      call alloc_block(b(g), g)
      call fill_block(b(g), g, 0.)
      nbl = nblg(g)
      associate (a => b(g))
        jd1 = a%jdim - 1; kd1 = a%kdim - 1; id1 = a%idim - 1
        alphw = radtodeg*(alpha + theta_of(nbl))
        ! B1 header
        write(2) title, xmach, a%jdim, a%kdim, a%idim, alphw, reue, ntt, time
        ! B2 convergence histories (first block only)
        if (g .eq. 1) write(2) rms(1:ntt), clw(1:ntt), cdw(1:ntt), cdpw(1:ntt), cdvw(1:ntt), cxw(1:ntt), &
          cyw(1:ntt), czw(1:ntt), cmxw(1:ntt), cmyw(1:ntt), cmzw(1:ntt), fmdotw(1:ntt), cftmomw(1:ntt), &
          cftpw(1:ntt), cftvw(1:ntt), cfttotw(1:ntt)
        ! B3 q at the cell centres
        write(2) a%q(1:jd1, 1:kd1, 1:id1, 1:5)
        ! B4 ghost q
        if (iwg .ne. 0) write(2) a%qi0(1:jd1, 1:kd1, 1:5, 1:4), a%qj0(1:kd1, 1:id1, 1:5, 1:4), &
          a%qk0(1:jd1, 1:id1, 1:5, 1:4)
        ! B5
        write(2) ivisc(1), ivisc(2), ivisc(3)
        if (g .eq. 1) then
          ! B6, B6a, B6b turbulence histories (first block only)
          write(2) rmw(1:ntt, 1), rmw(1:ntt, 2), nneg(1:ntt, 1), nneg(1:ntt, 2)
          if (ivmx .ge. 30) then
            write(2) nummem
            do l = 3, nummem
              write(2) rmw(1:ntt, l), nneg(1:ntt, l)
            end do
          end if
        end if
        if (ivmx .ge. 2) then
          ! B7 eddy viscosity, B8 its ghost values (full j, k extents)
          write(2) a%vist3d(1:jd1, 1:kd1, 1:id1)
          if (iwg .ne. 0) write(2) a%vi0(1:a%jdim, 1:a%kdim, 1, 1:4), a%vj0(1:a%kdim, 1:id1, 1, 1:4), &
            a%vk0(1:a%jdim, 1:id1, 1, 1:4)
        end if
        if (ivmx .ge. 4) then
          ! B9, B9a, B9b turbulence fields
          write(2) a%tursav(1:jd1, 1:kd1, 1:id1, 1:2)
          if (ivmx .ge. 30) then
            write(2) nummem
            write(2) a%tursav(1:jd1, 1:kd1, 1:id1, 3:nummem)
          end if
          ! B10, B10a their ghost values
          if (iwg .ne. 0) then
            write(2) a%ti0(1:a%jdim, 1:a%kdim, 1:2, 1:4), a%tj0(1:a%kdim, 1:id1, 1:2, 1:4), &
              a%tk0(1:a%jdim, 1:id1, 1:2, 1:4)
            if (ivmx .ge. 30) write(2) a%ti0(1:a%jdim, 1:a%kdim, 3:nummem, 1:4), &
              a%tj0(1:a%kdim, 1:id1, 3:nummem, 1:4), a%tk0(1:a%jdim, 1:id1, 3:nummem, 1:4)
          end if
          ! B11 wall distance
          write(2) abs(a%smin(1:jd1, 1:kd1, 1:id1))
        end if
        if (bb) then
          ! B12-B14 Baldwin-Barth
          write(2) a%xjb(1:jd1, 1:kd1, 1:id1)
          write(2) a%xkb(1:jd1, 1:kd1, 1:id1)
          write(2) a%blnum(1:jd1, 1:kd1, 1:id1)
        end if
        ! B15 cmu (EASM)
        if (cm) write(2) a%cmuv(1:jd1, 1:kd1, 1:id1)
      end associate
    end do
    if (ntrail .ne. 0) write(2) 0
    close(2)
    do g = 1, NGRID
      call free_block(b(g))
    end do
  end subroutine mode_ref

  ! A restart, as CFL3D's setup: the host opens unit 2, RREST for each block on the host
  ! and the block's owner, the host reads what follows the blocks and closes unit 2. Then
  ! the checks.
  subroutine mode_read(prefix, ic)
#if defined DIST_MPI
    include 'mpif.h'
#endif
    character(len=*), intent(in) :: prefix
    integer, intent(in) :: ic
    integer :: g, nbl, iskipz, ntr, iflagg
    logical :: any_block
    call set_case(ic)
    call fixed_settings()
    ! what a restarting run holds before reading: the host's Mach and Reynolds numbers (a
    ! restart that changes them is CFL3D's), the free stream (the MPI owners' q halo)
    call header_values(NDUMP, host)
    call hist_sentinel()
    ntt = 0
    ntr = -1
    time = -1.
    qiv = -3.
    if (host) qiv = QH
    do g = 1, NGRID
      call alloc_block(b(g), g)
    end do
    if (host) then
      open(unit=2, file=fpath(prefix), form='unformatted', status='unknown')
      rewind(2)
    end if
    do g = 1, NGRID
      iskipz = 0
      if (g .eq. 1) iskipz = 1
      nbl = nblg(g)
      if (mblk2nd(nbl) .eq. myid .or. myid .eq. myhost) then
        associate (a => b(g))
          call rrest(nbl, a%jdim, a%kdim, a%idim, a%q, a%qj0, a%qk0, a%qi0, NCYCMAX, ntr, &
                     rms, clw, cdw, cdpw, cdvw, cxw, cyw, czw, cmxw, cmyw, cmzw, &
                     1, clcd, 1, blocks_clcd, &
                     fmdotw, cftmomw, cftpw, cftvw, cfttotw, rmstr, &
                     nneg, iskipz, a%vist3d, a%tursav, &
                     a%smin, a%xjb, a%xkb, a%blnum, a%cmuv, MAXBL, mblk2nd, &
                     myid, myhost, mycomm, nou, bou, NBUF, IBUFDIM, &
                     g, wk, a%idim, a%jdim, a%kdim, a%vj0, a%vk0, a%vi0, &
                     a%tj0, a%tk0, a%ti0, a%qavg, a%q2avg, nummem)
        end associate
      end if
    end do
    if (host) then
      if (ntrail .ne. 0 .and. nfallback .eq. 0) then
        iflagg = -1
        read(2, iostat=g) iflagg
        call expect(g .eq. 0 .and. iflagg .eq. 0, 'the record after the blocks is not where the host reads it')
      end if
      close(2)
    end if
    if (nfallback .eq. 0) then
      any_block = .false.
      do g = 1, NGRID
        if (owns(g)) then
          any_block = .true.
          call check_block(g)
        end if
      end do
      if (host) call expect(ntr .eq. NTT_DUMP(NDUMP), 'ntr on the host')
      if (host .or. any_block) call check_histories(owns(1))
      ! the run goes on and dumps what it read: the blocks of the restart are the dump's
      ! (the same bytes as the file read, under <prefix>-again, or restart.bin itself in a
      ! run from a deck). CFL3D's cycles come in between: the owners have read their
      ! blocks before the host's dump makes the file anew (here a barrier).
#if defined DIST_MPI
      call MPI_Barrier(MPI_COMM_WORLD, g)
#endif
      do g = 1, NGRID
        if (owns(g)) thetay(nblg(g)) = theta_of(nblg(g))
      end do
      call dump(fpath(trim(prefix)//'-again'))
    end if
    do g = 1, NGRID
      call free_block(b(g))
    end do
  end subroutine mode_read

  ! PLOT3D output of two frames (the second with the grid not written again: icall1 = 1),
  ! as CFL3D's qout.F: the host opens units 3 and 4, writes each frame's first records (the
  ! grid count, the dimensions), then PLOT3D is called for each grid on the host and the
  ! grid's owner. The owner's arrays: x = 1000 g + 100 i + 10 k + j, y = x + 1/4, z = x + 1/2,
  ! q(m) = x + m/8 + (frame - 1)/16, blank 0 where i + j + k is a multiple of 4.
  subroutine mode_plot3d(prefix, ic)
    character(len=*), intent(in) :: prefix
    integer, intent(in) :: ic
    integer :: g, nbl, frame, jd, kd, id, ir(3), jr(3), kr(3), jdw, kdw, idw, j, k, i, ifunc, nfb
    integer :: inpl(NGRID, 11), dims(4, NGRID), nd
    external :: plot3d, plot3d_cfl3d
    real, allocatable :: x(:,:,:), y(:,:,:), z(:,:,:), q(:,:,:,:), bl(:,:,:)
    real(4), allocatable :: xg(:,:,:,:), xw(:,:,:,:)
    call fixed_settings()
    call set_case(1)
    case_name = PNAME(ic)
    ibin = 1
    iblnk = 1
    iblnkfr = 0
    ip3dgrad = 0
    i2d = 0
    ialph = 0
    ifunc = 0
    lhdr = 1
    movie = 0
    select case (trim(case_name))
    case ('qa')
      ialph = 1
      iblnk = 0
    case ('q2')
      i2d = 1
    case ('fn')
      ifunc = -5
      iblnk = 0
    end select
    inpl = 0
    inpl(:, 2) = ifunc
    if (host) then
      open(unit=3, file=trim(prefix)//'-'//trim(case_name)//'.g', form='unformatted', status='replace')
      open(unit=4, file=trim(prefix)//'-'//trim(case_name)//'.q', form='unformatted', status='replace')
    end if
    do frame = 1, 2
      icall1 = 0
      if (frame .eq. 2) icall1 = 1
      call header_values(frame, host)
      do g = 1, NGRID
        call ranges(g, ir, jr, kr)
        dims(1:3, g) = [(ir(2) - ir(1))/ir(3) + 1, (jr(2) - jr(1))/jr(3) + 1, (kr(2) - kr(1))/kr(3) + 1]
        dims(4, g) = 1
      end do
      if (host) then
        nd = 3
        if (i2d .ne. 0) nd = 2
        if (icall1 .eq. 0) write(3) NGRID
        write(4) NGRID
        if (icall1 .eq. 0) write(3) ((dims(i, g), i = 4 - nd, 3), g = 1, NGRID)
        if (ifunc .eq. 0) then
          write(4) ((dims(i, g), i = 4 - nd, 3), g = 1, NGRID)
        else
          write(4) ((dims(i, g), i = 4 - nd, 4), g = 1, NGRID)
        end if
      end if
      do g = 1, NGRID
        nbl = nblg(g)
        if (.not. (owns(g) .or. host)) cycle
        jd = JG(g); kd = KG(g); id = IG(g)
        call ranges(g, ir, jr, kr)
        idw = dims(1, g); jdw = dims(2, g); kdw = dims(3, g)
        allocate(x(jd, kd, id), y(jd, kd, id), z(jd, kd, id), q(jd, kd, id, 5), bl(jd, kd, id))
        allocate(xg(jdw, kdw, idw, 4), xw(jdw, kdw, idw, 5))
        x = SENT; y = SENT; z = SENT; q = SENT; bl = SENT; xg = -7.; xw = -7.
        thetay(nbl) = SENT
        if (owns(g)) then
          do i = 1, id
            do k = 1, kd
              do j = 1, jd
                x(j, k, i) = 1000*g + 100*i + 10*k + j
                y(j, k, i) = x(j, k, i) + 0.25
                z(j, k, i) = x(j, k, i) + 0.5
                q(j, k, i, :) = x(j, k, i) + [1, 2, 3, 4, 5]/8. + (frame - 1)/16.
                bl(j, k, i) = 1.
                if (mod(i + j + k, 4) .eq. 0) bl(j, k, i) = 0.
              end do
            end do
          end do
        end if
        if (host) thetay(nbl) = theta_of(nbl)
        if (trim(case_name) .eq. 'mix' .and. g .eq. 3) then
          nfb = nfallback
          call call_plot3d(plot3d_cfl3d)
          nfallback = nfb  ! a block CFL3D writes itself, not a fallback
        else
          call call_plot3d(plot3d)
        end if
        deallocate(x, y, z, q, bl, xg, xw)
      end do
    end do
    if (host) then
      close(3)
      close(4)
    end if
  contains
    ! qout.F's call of its PLOT3D routine (routine: the replacement or CFL3D's own)
    subroutine call_plot3d(routine)
      external :: routine
      call routine(jd, kd, id, ir(1), ir(2), ir(3), jr(1), jr(2), jr(3), kr(1), kr(2), kr(3), q, &
                   wk, wk, wk, x, y, z, xw, wk, bl, xg, 1, &
                   wk, 0, nbl, iwk, wk, wk, wk, &
                   wk, wk, wk, ifunc, g, jdw, kdw, idw, &
                   NGRID, iwk, iwk, iwk, iwk, iwk, iwk, iwk, &
                   iwk, iwk, iwk, 0, iwk, 1, 1, &
                   1, iwk, 1, iwk, iwk, iwk, 1, &
                   thetay, MAXBL, NGRID, myid, myhost, mycomm, &
                   mblk2nd, inpl, MAXBL, iwk, wk, &
                   wk, wk, wk, wk, 5)
    end subroutine call_plot3d
  end subroutine mode_plot3d

  ! the points of grid g a PLOT3D case writes: (first, last, stride) in i, j and k
  subroutine ranges(g, ir, jr, kr)
    integer, intent(in) :: g
    integer, intent(out) :: ir(3), jr(3), kr(3)
    ir = [1, IG(g), 1]
    jr = [1, JG(g), 1]
    kr = [1, KG(g), 1]
    if (i2d .ne. 0) ir = [1, 1, 1]
    if (trim(case_name) .eq. 'qs') then
      ir = [1, IG(g), 2]
      jr = [2, JG(g), 3]
      kr = [1, KG(g), 2]
    end if
  end subroutine ranges

  ! The owner's arrays of grid g after RREST: the records' values where the file has them,
  ! the values before reading elsewhere (in the MPI build the host sends q whole, its halo
  ! the free stream: the host's qiv).
  subroutine check_block(g)
    integer, intent(in) :: g
    type(blk) :: r, e
    integer :: jd1, kd1, id1, l
    character(len=16) :: w
    call alloc_block(r, g)
    call fill_block(r, g, 0.)
    call alloc_block(e, g)
    jd1 = r%jdim - 1; kd1 = r%kdim - 1; id1 = r%idim - 1
    e%q(1:jd1, 1:kd1, 1:id1, :) = r%q(1:jd1, 1:kd1, 1:id1, :)
#if defined DIST_MPI
    do l = 1, 5
      e%q(r%jdim, :, :, l) = QH(l)
      e%q(:, r%kdim, :, l) = QH(l)
      e%q(:, :, r%idim, l) = QH(l)
    end do
#endif
    if (irghost .ne. 0) then
      e%qi0(1:jd1, 1:kd1, :, :) = r%qi0(1:jd1, 1:kd1, :, :)
      e%qj0(1:kd1, :, :, :) = r%qj0(1:kd1, :, :, :)
      e%qk0(1:jd1, :, :, :) = r%qk0(1:jd1, :, :, :)
    end if
    if (ivmx .ge. 2) then
      e%vist3d(1:jd1, 1:kd1, 1:id1) = r%vist3d(1:jd1, 1:kd1, 1:id1)
      if (irghost .ne. 0) then
        e%vi0 = r%vi0; e%vj0 = r%vj0; e%vk0 = r%vk0
      end if
    end if
    if (ivmx .ge. 4) then
      e%tursav(1:jd1, 1:kd1, 1:id1, 1:2) = r%tursav(1:jd1, 1:kd1, 1:id1, 1:2)
      if (ivmx .ge. 30) e%tursav(1:jd1, 1:kd1, 1:id1, 3:nummem) = r%tursav(1:jd1, 1:kd1, 1:id1, 3:nummem)
      if (irghost .ne. 0) then
        l = 2
        if (ivmx .ge. 30) l = nummem
        e%ti0(:, :, 1:l, :) = r%ti0(:, :, 1:l, :)
        e%tj0(:, :, 1:l, :) = r%tj0(:, :, 1:l, :)
        e%tk0(:, :, 1:l, :) = r%tk0(:, :, 1:l, :)
      end if
      e%smin = abs(r%smin)
    end if
    if (any(ivisc .eq. 4) .or. any(ivisc .eq. 25)) then
      e%xjb = r%xjb; e%xkb = r%xkb; e%blnum = r%blnum
    end if
    if (ivmx .eq. 8 .or. ivmx .eq. 9 .or. ivmx .eq. 13 .or. ivmx .eq. 14) e%cmuv = r%cmuv
    w = blkname(g)
    associate (a => b(g))
      call expect(all(a%q .eq. e%q), trim(w)//' q differs')
      call expect(all(a%qi0 .eq. e%qi0), trim(w)//' qi0 differs')
      call expect(all(a%qj0 .eq. e%qj0), trim(w)//' qj0 differs')
      call expect(all(a%qk0 .eq. e%qk0), trim(w)//' qk0 differs')
      call expect(all(a%vist3d .eq. e%vist3d), trim(w)//' vist3d differs')
      call expect(all(a%vi0 .eq. e%vi0), trim(w)//' vi0 differs')
      call expect(all(a%vj0 .eq. e%vj0), trim(w)//' vj0 differs')
      call expect(all(a%vk0 .eq. e%vk0), trim(w)//' vk0 differs')
      call expect(all(a%tursav .eq. e%tursav), trim(w)//' tursav differs')
      call expect(all(a%ti0 .eq. e%ti0), trim(w)//' ti0 differs')
      call expect(all(a%tj0 .eq. e%tj0), trim(w)//' tj0 differs')
      call expect(all(a%tk0 .eq. e%tk0), trim(w)//' tk0 differs')
      call expect(all(a%smin .eq. e%smin), trim(w)//' smin differs')
      call expect(all(a%xjb .eq. e%xjb), trim(w)//' xjb differs')
      call expect(all(a%xkb .eq. e%xkb), trim(w)//' xkb differs')
      call expect(all(a%blnum .eq. e%blnum), trim(w)//' blnum differs')
      call expect(all(a%cmuv .eq. e%cmuv), trim(w)//' cmuv differs')
    end associate
  end subroutine check_block

  ! ntt, time and the histories (the host reads them; the MPI owners get them from it: the
  ! turbulence histories only the first block's owner, as the ntt*nummem values that start
  ! the host's rmstr(ncycmax, nummem) and nneg, as CFL3D sends them)
  subroutine check_histories(first)
    logical, intent(in) :: first
    real :: er(NCYCMAX, nummem)
    integer :: en(NCYCMAX, nummem), n, l, m
    logical :: ok
    m = NTT_DUMP(NDUMP)
    call expect(ntt .eq. m, 'ntt after the restart')
    call expect(time .eq. 0.25*NDUMP, 'time after the restart')
    ok = .true.
    do n = 1, m
      ok = ok .and. rms(n) .eq. hist(1, n) .and. clw(n) .eq. hist(2, n) .and. cdw(n) .eq. hist(3, n) &
        .and. cdpw(n) .eq. hist(4, n) .and. cdvw(n) .eq. hist(5, n) .and. cxw(n) .eq. hist(6, n) &
        .and. cyw(n) .eq. hist(7, n) .and. czw(n) .eq. hist(8, n) .and. cmxw(n) .eq. hist(9, n) &
        .and. cmyw(n) .eq. hist(10, n) .and. cmzw(n) .eq. hist(11, n) .and. fmdotw(n) .eq. hist(12, n) &
        .and. cftmomw(n) .eq. hist(13, n) .and. cftpw(n) .eq. hist(14, n) .and. cftvw(n) .eq. hist(15, n) &
        .and. cfttotw(n) .eq. hist(16, n)
    end do
    call expect(ok, 'convergence histories after the restart')
    er = SENT
    en = ISENT
    do l = 1, nummem
      do n = 1, m
        er(n, l) = rm_written(n, l)
        en(n, l) = 100*l + n
      end do
    end do
    if (host) then
      call expect(all(rmstr .eq. er), 'rmstr on the host after the restart')
      call expect(all(nneg .eq. en), 'nneg on the host after the restart')
    else if (first) then
      call expect(all(reshape(rmstr, [m*nummem]) .eq. reshape(er, [m*nummem])), &
                  'rmstr on the first block''s owner')
      call expect(all(reshape(nneg, [m*nummem]) .eq. reshape(en, [m*nummem])), &
                  'nneg on the first block''s owner')
    end if
  end subroutine check_histories
#if defined CGNS
  ! CFL3D built with CGNS (icgns = 1): the grid's CGNS file (made here by the host: a base,
  ! a structured zone a grid) holds the solution; three dumps as CFL3D's mgblk makes them:
  ! the host opens the file (wopencgns), WREST for each block on the host and its owner,
  ! the host closes it. With ANABRANCH_CFL3D=0, CFL3D's own routine (the stand-in wrest.F)
  ! writes each block on the host from the owner's values (the reference file).
  subroutine mode_cgns(prefix, ic)
    character(len=*), intent(in) :: prefix
    integer, intent(in) :: ic
    integer :: g, d, nz, nd, l, st
    character(len=80) :: path
    character(len=8) :: v
    call set_case(ic)
    call fixed_settings()
    nd = NDUMP_CGNS  ! AB_STUB_DUMPS: fewer
    call get_environment_variable('AB_STUB_DUMPS', v, l, st)
    if (st .eq. 0 .and. l .gt. 0) read(v, *) nd
    icgns = 1
    gamma = 1.4
    gm1 = 0.4
    path = trim(prefix)//'-'//trim(case_name)//'.cgns'
    if (host) call cgns_grid(path)
    do g = 1, NGRID
      call alloc_block(b(g), g)
    end do
    do d = 1, nd
      cur_shift = 0.25*(NDUMP_CGNS - d)
      call header_values(min(d, NDUMP), host)
      do g = 1, NGRID
        call setall(b(g), SENT)
        if (owns(g)) then
          call fill_block(b(g), g, cur_shift)
          thetay(nblg(g)) = theta_of(nblg(g)) + cur_shift
        else
          thetay(nblg(g)) = SENT
        end if
      end do
      iwarneddy = 0
      if (host) call wopencgns(path, 'Base', 3, iccg, ibase, nz)
      call wrest_all()
      if (host) then
        call cgns_close(iccg)
        if (nfallback .eq. 0) then
          do g = 1, NGRID
            call expect(thetay(nblg(g)) .eq. theta_of(nblg(g)) + cur_shift, trim(blkname(g))//' thetay is not the owner''s')
          end do
          if (ivmx .ge. 2) call expect(iwarneddy .eq. 1, 'the eddy-viscosity limit reached in block 5 is not reported')
        end if
      end if
    end do
    do g = 1, NGRID
      call free_block(b(g))
    end do
  end subroutine mode_cgns

  subroutine cgns_grid(path)
    use cgns, only: cg_open_f, cg_base_write_f, cg_zone_write_f, cg_close_f, CG_MODE_WRITE, Structured
    character(len=*), intent(in) :: path
    integer :: fn, bi, zi, ier, g, size(3, 3)
    character(len=32) :: zname
    call cg_open_f(path, CG_MODE_WRITE, fn, ier)
    call expect(ier .eq. 0, 'cannot make '//trim(path))
    call cg_base_write_f(fn, 'Base', 3, 3, bi, ier)
    do g = 1, NGRID
      size(:, 1) = [IG(g), JG(g), KG(g)]
      size(:, 2) = size(:, 1) - 1
      size(:, 3) = 0
      write(zname, '(a,i4)') 'Zone', g
      call cg_zone_write_f(fn, bi, zname, size, Structured, zi, ier)
      call expect(ier .eq. 0, 'cannot write zone '//trim(zname))
    end do
    call cg_close_f(fn, ier)
  end subroutine cgns_grid

  subroutine cgns_close(fn)
    use cgns, only: cg_close_f
    integer, intent(in) :: fn
    integer :: ier
    call cg_close_f(fn, ier)
    call expect(ier .eq. 0, 'cannot close the CGNS file')
  end subroutine cgns_close
#endif
end module stub_modes

#if defined CGNS
! CFL3D's own CGNS dump of a block on its host (the stand-in wrest.F calls it with the
! block's number and grid): the owner's values of the dump, and the calls of CFL3D's
! dist/wrest.F: writebcs on the primitive variables (or the old values deleted), the
! conserved variables for writesoln, the host's own nodes, writeeqn, writeturb.
subroutine stub_cgns_own(nbl, igrid, iskip)
  use stub_modes
  implicit none
  integer, intent(in) :: nbl, igrid, iskip
  type(blk) :: t
  real, allocatable :: qc(:,:,:,:), qi0c(:,:,:,:), qj0c(:,:,:,:), qk0c(:,:,:,:)
  real, allocatable :: w(:)
  integer :: i, j, k, m, ideg(3), ns
  real :: alphw, betaw
  call alloc_block(t, igrid)
  call fill_block(t, igrid, cur_shift)
  thetay(nbl) = theta_of(nbl) + cur_shift
  allocate(w((t%idim + 1)*(t%jdim + 1)*(t%kdim + 1)))
  if (iwghost .ne. 0) then
    call writebcs(iccg, ibase, igrid, t%idim, t%jdim, t%kdim, t%qj0, t%qk0, t%qi0, t%vj0, t%vk0, t%vi0, &
                  t%tj0, t%tk0, t%ti0, i2d, nummem)
  else
    call delete_bcs()
  end if
  qc = t%q
  qi0c = t%qi0
  qj0c = t%qj0
  qk0c = t%qk0
  do i = 1, t%idim - 1
    do k = 1, t%kdim - 1
      do j = 1, t%jdim - 1
        qc(j,k,i,2:4) = qc(j,k,i,2:4)*qc(j,k,i,1)
        qc(j,k,i,5) = qc(j,k,i,5)/gm1 + 0.5/qc(j,k,i,1)*(qc(j,k,i,2)**2 + qc(j,k,i,3)**2 + qc(j,k,i,4)**2)
      end do
    end do
    do m = 1, 3, 2
      do k = 1, t%kdim - 1
        qj0c(k,i,2:4,m) = qj0c(k,i,2:4,m)*qj0c(k,i,1,m)
        qj0c(k,i,5,m) = qj0c(k,i,5,m)/gm1 + 0.5/qj0c(k,i,1,m)*(qj0c(k,i,2,m)**2 + qj0c(k,i,3,m)**2 + qj0c(k,i,4,m)**2)
      end do
      do j = 1, t%jdim - 1
        qk0c(j,i,2:4,m) = qk0c(j,i,2:4,m)*qk0c(j,i,1,m)
        qk0c(j,i,5,m) = qk0c(j,i,5,m)/gm1 + 0.5/qk0c(j,i,1,m)*(qk0c(j,i,2,m)**2 + qk0c(j,i,3,m)**2 + qk0c(j,i,4,m)**2)
      end do
    end do
  end do
  do m = 1, 3, 2
    do k = 1, t%kdim - 1
      do j = 1, t%jdim - 1
        qi0c(j,k,2:4,m) = qi0c(j,k,2:4,m)*qi0c(j,k,1,m)
        qi0c(j,k,5,m) = qi0c(j,k,5,m)/gm1 + 0.5/qi0c(j,k,1,m)*(qi0c(j,k,2,m)**2 + qi0c(j,k,3,m)**2 + qi0c(j,k,4,m)**2)
      end do
    end do
  end do
  call writesoln(iccg, ibase, igrid, t%idim, t%jdim, t%kdim, t%idim, t%jdim, t%kdim, w, qc, qj0c, qk0c, qi0c, &
                 t%bcj, t%bck, t%bci, i2d, ialph, nsoluse)
  call writeziter(iccg, ibase, igrid)
  if (iskip .gt. 0) then
    call writehist(iccg, ibase, ntt, rms, clw, cdw, cdpw, cdvw, cxw, cyw, czw, cmxw, cmyw, cmzw, fmdotw, cftmomw, &
                   cftpw, cftvw, cfttotw, rmstr(1,1), rmstr(1,1), rmstr(1,1), rmstr(1,1), rmstr(1,1), rmstr(1,1), &
                   rmstr(1,1), nneg(1,1), nneg(1,1), nneg(1,1), nneg(1,1), nneg(1,1), nneg(1,1), nneg(1,1), nummem)
    alphw = radtodeg*(alpha + thetay(nbl))
    betaw = radtodeg*beta
    call writeref(iccg, ibase, xmach, reue, 1., 1., 1., 1., 1., tinf, alphw, betaw, 0., 0., 0., ialph)
    call writetime(iccg, ibase, time, ntt, dt)
  end if
  ideg = 0
  call writeeqn(iccg, ibase, igrid, ivisc(1), ivisc(2), ivisc(3), ideg, gamma, 0., 0., 0., i2d, 0, 0, 0, 0, 0, 0)
  call writeturb(iccg, ibase, igrid, nsoluse, t%idim, t%jdim, t%kdim, t%idim, t%jdim, t%kdim, ivisc, w, t%vist3d, &
                 t%tursav, t%smin, t%xjb, t%xkb, t%tursav(1,1,1,min(2, nummem)), t%blnum, t%cmuv, t%vj0, t%vk0, t%vi0, &
                 t%tj0, t%tk0, t%ti0, i2d, xmach, reue, nummem)
  if (ivmx .ge. 2 .and. any(t%vist3d(1:t%jdim-1,1:t%kdim-1,1:t%idim-1) .eq. edvislim)) iwarneddy = 1
  call free_block(t)
contains
  subroutine delete_bcs()
    use cgns, only: cg_goto_f, cg_delete_node_f
    integer :: ier
    call cg_goto_f(iccg, ibase, ier, 'Zone_t', igrid, 'end')
    call cg_delete_node_f('CFL3DBoundaryValues', ier)
  end subroutine delete_bcs
end subroutine stub_cgns_own
#endif

program cfl3d_stub
  use stub_modes
  implicit none
#if defined DIST_MPI
  include 'mpif.h'
  integer :: ierr, total
#endif
  character(len=1024) :: mode, prefix, arg
  integer :: ic, na, k
  logical :: chosen(max(NCASE, NPCASE)), found
  integer :: ncases

#if defined DIST_MPI
  ! CFL3D's MPI main: rank 0 the host, the others the nodes; one process is refused
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, myid, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  mycomm = MPI_COMM_WORLD
  myhost = 0
  nnodes = nproc - 1
#else
  ! CFL3D's sequential build: no MPI here (anabranch_cfl3d.F starts it for itself)
  myid = 0
  myhost = 0
  mycomm = 0
  nproc = 1
  nnodes = 1
#endif
  host = myid .eq. myhost
  call get_command_argument(1, mode)
  call get_command_argument(2, prefix)
  na = command_argument_count()
  if (na .eq. 0) call deck_mode()
  if (na .lt. 2 .or. (mode .ne. 'write' .and. mode .ne. 'ref' .and. mode .ne. 'read' .and. &
                      mode .ne. 'plot3d' .and. mode .ne. 'cgns' .and. mode .ne. 'levels')) then
    if (host) write(0, '(a)') 'usage: cfl3d_stub write|levels|ref|read|plot3d|cgns PREFIX [CASE...]'
    call finish(2)
  end if
#if !defined CGNS
  if (mode .eq. 'cgns') then
    if (host) write(0, '(a)') 'cfl3d_stub: built without CGNS'
    call finish(2)
  end if
#endif
  ncases = NCASE
  if (mode .eq. 'plot3d') ncases = NPCASE
  chosen = .false.
  chosen(1:ncases) = na .eq. 2
  do k = 3, na
    call get_command_argument(k, arg)
    if (deck_run) arg = 'sst'
    found = .false.
    do ic = 1, ncases
      if ((mode .ne. 'plot3d' .and. trim(arg) .eq. trim(CNAME(ic))) .or. &
          (mode .eq. 'plot3d' .and. trim(arg) .eq. trim(PNAME(ic)))) then
        chosen(ic) = .true.
        found = .true.
      end if
    end do
    if (.not. found) then
      if (host) write(0, '(a)') 'cfl3d_stub: no case '//trim(arg)
      call finish(2)
    end if
  end do
#if defined DIST_MPI
  if (nproc .lt. 2 .and. mode .ne. 'ref') then
    write(0, '(a)') 'cfl3d_stub: the MPI build needs 2 or more processes (a host and its nodes)'
    call finish(2)
  end if
#endif
  call assign_map()
  if (host) open(unit=11, file=trim(prefix)//'.out', form='formatted', status='unknown')
  call get_environment_variable('AB_STUB_NODECK', arg, k)
  if (host .and. mode .ne. 'ref' .and. k .eq. 0) call open_deck(prefix)
  do ic = 1, ncases
    if (.not. chosen(ic)) cycle
    select case (trim(mode))
    case ('plot3d')
      call mode_plot3d(prefix, ic)
    case ('write')
      call mode_write(prefix, ic)
    case ('levels')
      call mode_levels(prefix, ic)
    case ('read')
      call mode_read(prefix, ic)
    case ('ref')
      if (host) call mode_ref(prefix, ic)
#if defined CGNS
    case ('cgns')
      call mode_cgns(prefix, ic)
#endif
    end select
  end do
  if (host) close(11)
  if (nfallback .gt. 0) write(*, '(a,i0,a,i0,a)') 'cfl3d_stub: rank ', myid, ': ', nfallback, &
    ' calls of CFL3D''s own routines'
#if defined DIST_MPI
  call MPI_Allreduce(nerr, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  nerr = total
#endif
  if (host .and. nerr .eq. 0) then
    if (nfallback .eq. 0) then
      write(*, '(a)') 'cfl3d_stub: '//trim(mode)//' done, every check passed'
    else
      write(*, '(a)') 'cfl3d_stub: '//trim(mode)//' done by CFL3D''s own routines, nothing checked'
    end if
  end if
  if (nerr .gt. 0) call finish(3)
  call finish(0)

contains

  ! The deck on stdin (the host reads it and tells the nodes, as CFL3D's does): irest 0
  ! writes the case sst, 1 reads it back (and dumps it again).
  subroutine deck_mode()
    character(len=256) :: line
    character(len=16) :: w(12)
    integer :: st, irest, k
    logical :: next
    irest = -1
    next = .false.
    ! copied, as CFL3D copies it, for the deck's unit (open_deck)
    if (host) open(33, file='tempz3y2x1.inp', form='formatted', status='replace')
    do
      if (.not. host) exit
      read(5, '(a)', iostat=st) line
      if (st .ne. 0) exit
      write(33, '(a)') trim(line)
      if (next) then
        w = ' '
        read(line, *, iostat=st) w(1:2)
        read(w(2), *, iostat=st) irest
        next = .false.
      end if
      w = ' '
      read(line, *, iostat=st) w
      do k = 1, 12
        if (w(k) .eq. 'irest' .or. w(k) .eq. 'IREST') next = .true.
      end do
    end do
    if (host) close(33)
#if defined DIST_MPI
    call MPI_Bcast(irest, 1, MPI_INTEGER, myhost, MPI_COMM_WORLD, st)
#endif
    if (irest .lt. 0) then
      if (host) write(0, '(a)') 'cfl3d_stub: the deck on stdin has no irest line'
      call finish(2)
    end if
    deck_run = .true.
    mode = 'write'
    if (irest .gt. 0) mode = 'read'
    prefix = 'cfl3d'
    na = 3
  end subroutine deck_mode

  subroutine finish(code)
    integer, intent(in) :: code
#if defined DIST_MPI
    integer :: ierr2
#endif
    ! run as CFL3D is: its cfl3d.error, as CFL3D's termn8 writes it
    if (deck_run .and. host) then
      open(unit=99, file='cfl3d.error', form='formatted', status='replace')
      write(99, '(a,/,i4)') ' error code:', code
      if (code .eq. 0) write(99, '(/,a)') ' execution terminated normally'
      close(99)
    end if
#if defined DIST_MPI
    call MPI_Finalize(ierr2)
#endif
    select case (code)
    case (0)
      stop
    case (2)
      stop 2
    case default
      stop 3
    end select
  end subroutine finish
end program cfl3d_stub
