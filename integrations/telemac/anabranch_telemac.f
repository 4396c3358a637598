!     anabranch in a TELEMAC run: every process writes its result
!     frames into ONE global SERAFIN file, the file gretel would make of
!     the per-process result files, so that no merge is left to do.
!
!     A user Fortran file (steering file: FORTRAN FILE = '...'). It
!     replaces three subroutines of TELEMAC's BIEF library:
!     - BIEF_DESIMP, through which TELEMAC-2D, TELEMAC-3D, GAIA, ...
!       write each saved time step of their SERAFIN result files;
!     - BIEF_CLOSE_FILES, which closes a code's files at the end of
!       the run: the global files are completed there;
!     - READ_DATASET, through which they read the record a run
!       continues from (PREVIOUS COMPUTATION FILE): when the runner
!       gave each process a part holding no frame (anabranch's partel
!       with ANABRANCH_TELEMAC_RESTART=1), every process reads its own
!       nodes of that record from the one global file instead.
!     On one process, for MED files, or with ANABRANCH_TELEMAC=0 in the
!     environment, TELEMAC writes as it always does.
!
!     For a result file NAME, each process still has its own file
!     NAME00003-00001 (header and mesh, written by TELEMAC: its IPOBO
!     record is the process's KNOLG); the frames go to NAME in the
!     run's folder, written by all processes through anabranch's C
!     library. anabranch's gretel (the runner's merge step) sees that
!     the per-process files hold no frames and NAME is complete, and
!     leaves NAME as it is.
!
!     The file needs no module of anabranch: it declares the C
!     functions it calls itself (BIND(C) interfaces below), so it
!     compiles with the flags TELEMAC was built with. Only the link
!     needs anabranch: libs_all: ... -lanabranch_c (docs/telemac.md).
!
!     Environment:
!       ANABRANCH_TELEMAC=0          TELEMAC's own writing
!       ANABRANCH_OPTIONS='...'      writer options (strategy=...,
!                                    writers_per_node=..., MPI-IO hints)
!       ANABRANCH_TELEMAC_GEOMETRY   global geometry (default: the
!                                    result's first three letters + GEO,
!                                    e.g. T2DGEO, as the runner names it)
!       ANABRANCH_TELEMAC_BOUNDARY   its boundary file (default ...CLI)
!
!     Documentation: docs/telemac.md in anabranch.
!
!-----------------------------------------------------------------------
!
      MODULE ANABRANCH_TELEMAC
!
      USE ISO_C_BINDING
      IMPLICIT NONE
      PRIVATE
      PUBLIC :: AB_TELEMAC_ON, AB_TELEMAC_WRITE, AB_TELEMAC_CLOSE,
     &          AB_TELEMAC_READ
!
!     THE C FUNCTIONS OF ANABRANCH CALLED HERE (anabranch.h)
      INTEGER(C_INT), PARAMETER :: AB_OK = 0
      INTERFACE
        FUNCTION AB_C_OPEN_MERGED(COMM, PART, GEO, BND, PATH, OPTS,
     &                            NL, W)
     &      BIND(C, NAME='ab_writer_open_merged_f')
          IMPORT :: C_INT, C_CHAR, C_INT64_T, C_PTR
          INTEGER(C_INT) :: AB_C_OPEN_MERGED
          INTEGER(C_INT), VALUE :: COMM
          CHARACTER(KIND=C_CHAR), INTENT(IN) :: PART(*), GEO(*),
     &                                          BND(*), PATH(*), OPTS(*)
          INTEGER(C_INT64_T), INTENT(OUT) :: NL
          TYPE(C_PTR), INTENT(OUT) :: W
        END FUNCTION
        FUNCTION AB_C_WRITE_FRAME(W, T, V)
     &      BIND(C, NAME='ab_writer_write_frame')
          IMPORT :: C_INT, C_PTR, C_DOUBLE
          INTEGER(C_INT) :: AB_C_WRITE_FRAME
          TYPE(C_PTR), VALUE :: W
          REAL(C_DOUBLE), VALUE :: T
          REAL(C_DOUBLE), INTENT(IN) :: V(*)
        END FUNCTION
        FUNCTION AB_C_CLOSE(W) BIND(C, NAME='ab_writer_close')
          IMPORT :: C_INT, C_PTR
          INTEGER(C_INT) :: AB_C_CLOSE
          TYPE(C_PTR), VALUE :: W
        END FUNCTION
        FUNCTION AB_C_PART_OPEN(COMM, BASE, P)
     &      BIND(C, NAME='ab_part_open_f')
          IMPORT :: C_INT, C_CHAR, C_PTR
          INTEGER(C_INT) :: AB_C_PART_OPEN
          INTEGER(C_INT), VALUE :: COMM
          CHARACTER(KIND=C_CHAR), INTENT(IN) :: BASE(*)
          TYPE(C_PTR), INTENT(OUT) :: P
        END FUNCTION
        FUNCTION AB_C_PART_SIZES(P, NE, NP, NDP, NPLAN)
     &      BIND(C, NAME='ab_part_sizes')
          IMPORT :: C_INT, C_PTR, C_INT64_T
          INTEGER(C_INT) :: AB_C_PART_SIZES
          TYPE(C_PTR), VALUE :: P
          INTEGER(C_INT64_T), INTENT(OUT) :: NE, NP
          INTEGER(C_INT), INTENT(OUT) :: NDP, NPLAN
        END FUNCTION
        FUNCTION AB_C_PART_FRAMES(P, NF, NV)
     &      BIND(C, NAME='ab_part_frames')
          IMPORT :: C_INT, C_PTR, C_INT64_T
          INTEGER(C_INT) :: AB_C_PART_FRAMES
          TYPE(C_PTR), VALUE :: P
          INTEGER(C_INT64_T), INTENT(OUT) :: NF
          INTEGER(C_INT), INTENT(OUT) :: NV
        END FUNCTION
        FUNCTION AB_C_PART_MESH(P, IKLE, KNOLG, X, Y)
     &      BIND(C, NAME='ab_part_mesh')
          IMPORT :: C_INT, C_PTR
          INTEGER(C_INT) :: AB_C_PART_MESH
          TYPE(C_PTR), VALUE :: P, IKLE, X, Y
          INTEGER(C_INT), INTENT(OUT) :: KNOLG(*)
        END FUNCTION
        FUNCTION AB_C_PART_CLOSE(P) BIND(C, NAME='ab_part_close')
          IMPORT :: C_INT, C_PTR
          INTEGER(C_INT) :: AB_C_PART_CLOSE
          TYPE(C_PTR), VALUE :: P
        END FUNCTION
        FUNCTION AB_C_READER_OPEN(COMM, PATH, NL, IDS, OPTS, R)
     &      BIND(C, NAME='ab_reader_open_f')
          IMPORT :: C_INT, C_CHAR, C_INT64_T, C_PTR
          INTEGER(C_INT) :: AB_C_READER_OPEN
          INTEGER(C_INT), VALUE :: COMM
          CHARACTER(KIND=C_CHAR), INTENT(IN) :: PATH(*), OPTS(*)
          INTEGER(C_INT64_T), VALUE :: NL
          INTEGER(C_INT), INTENT(IN) :: IDS(*)
          TYPE(C_PTR), INTENT(OUT) :: R
        END FUNCTION
        FUNCTION AB_C_READER_FRAMES(R, NF, NV)
     &      BIND(C, NAME='ab_reader_frames')
          IMPORT :: C_INT, C_PTR, C_INT64_T
          INTEGER(C_INT) :: AB_C_READER_FRAMES
          TYPE(C_PTR), VALUE :: R
          INTEGER(C_INT64_T), INTENT(OUT) :: NF
          INTEGER(C_INT), INTENT(OUT) :: NV
        END FUNCTION
        FUNCTION AB_C_READER_VARIABLE(R, V, NAME, UNIT)
     &      BIND(C, NAME='ab_reader_variable')
          IMPORT :: C_INT, C_PTR, C_CHAR
          INTEGER(C_INT) :: AB_C_READER_VARIABLE
          TYPE(C_PTR), VALUE :: R
          INTEGER(C_INT), VALUE :: V
          CHARACTER(KIND=C_CHAR), INTENT(OUT) :: NAME(17), UNIT(17)
        END FUNCTION
        FUNCTION AB_C_READER_TIME(R, F, T)
     &      BIND(C, NAME='ab_reader_time')
          IMPORT :: C_INT, C_PTR, C_INT64_T, C_DOUBLE
          INTEGER(C_INT) :: AB_C_READER_TIME
          TYPE(C_PTR), VALUE :: R
          INTEGER(C_INT64_T), VALUE :: F
          REAL(C_DOUBLE), INTENT(OUT) :: T
        END FUNCTION
        FUNCTION AB_C_READER_READ_VARIABLE(R, F, V, VALUES)
     &      BIND(C, NAME='ab_reader_read_variable')
          IMPORT :: C_INT, C_PTR, C_INT64_T, C_DOUBLE
          INTEGER(C_INT) :: AB_C_READER_READ_VARIABLE
          TYPE(C_PTR), VALUE :: R
          INTEGER(C_INT64_T), VALUE :: F
          INTEGER(C_INT), VALUE :: V
          REAL(C_DOUBLE), INTENT(OUT) :: VALUES(*)
        END FUNCTION
        FUNCTION AB_C_READER_CLOSE(R) BIND(C, NAME='ab_reader_close')
          IMPORT :: C_INT, C_PTR
          INTEGER(C_INT) :: AB_C_READER_CLOSE
          TYPE(C_PTR), VALUE :: R
        END FUNCTION
        FUNCTION AB_C_LAST_ERROR() BIND(C, NAME='ab_last_error')
          IMPORT :: C_PTR
          TYPE(C_PTR) :: AB_C_LAST_ERROR
        END FUNCTION
        FUNCTION C_STRLEN(S) BIND(C, NAME='strlen')
          IMPORT :: C_PTR, C_SIZE_T
          INTEGER(C_SIZE_T) :: C_STRLEN
          TYPE(C_PTR), VALUE :: S
        END FUNCTION
      END INTERFACE
!
!     ONE GLOBAL FILE PER RESULT UNIT
      INTEGER, PARAMETER :: MAXOUT = 16
      TYPE AB_OUT
        INTEGER :: LU = -1
        INTEGER(C_INT64_T) :: NLOCAL = 0
        INTEGER :: NVAR = 0
        INTEGER :: FRAMES = 0
        DOUBLE PRECISION :: SECONDS = 0.D0
        TYPE(C_PTR) :: W = C_NULL_PTR
        CHARACTER(LEN=250) :: NAME = ' '
        DOUBLE PRECISION, ALLOCATABLE :: BUF(:)
      END TYPE
      TYPE(AB_OUT), SAVE :: OUTS(MAXOUT)
      INTEGER, SAVE :: NOUT = 0
!
      CONTAINS
!
!     WHETHER THE FRAMES OF A RESULT FILE GO THROUGH ANABRANCH
      LOGICAL FUNCTION AB_TELEMAC_ON(FFORMAT, NPROC)
        CHARACTER(LEN=8), INTENT(IN) :: FFORMAT
        INTEGER, INTENT(IN) :: NPROC
        CHARACTER(LEN=8) :: FLAG
        INTEGER :: L, ST
        AB_TELEMAC_ON = .FALSE.
        IF(NPROC.LE.1) RETURN
        IF(FFORMAT(1:7).NE.'SERAFIN') RETURN
        CALL GET_ENVIRONMENT_VARIABLE('ANABRANCH_TELEMAC', FLAG, L, ST)
        IF(ST.EQ.0.AND.L.GT.0) THEN
          IF(FLAG(1:1).EQ.'0'.OR.FLAG(1:1).EQ.'n'
     &       .OR.FLAG(1:1).EQ.'N') RETURN
        ENDIF
        AB_TELEMAC_ON = .TRUE.
      END FUNCTION
!
!     WALL-CLOCK SECONDS
      DOUBLE PRECISION FUNCTION WALL()
        INTEGER(KIND=8) :: COUNT, RATE
        CALL SYSTEM_CLOCK(COUNT, RATE)
        WALL = DBLE(COUNT) / DBLE(RATE)
      END FUNCTION
!
!     AN ENVIRONMENT VARIABLE, OR DFLT WHEN IT IS NOT SET
      FUNCTION ENV_OR(NAME, DFLT) RESULT(VAL)
        CHARACTER(LEN=*), INTENT(IN) :: NAME, DFLT
        CHARACTER(LEN=:), ALLOCATABLE :: VAL
        INTEGER :: L, ST
        CALL GET_ENVIRONMENT_VARIABLE(NAME, LENGTH=L, STATUS=ST)
        IF(ST.NE.0.OR.L.EQ.0) THEN
          VAL = DFLT
          RETURN
        ENDIF
        ALLOCATE(CHARACTER(LEN=L) :: VAL)
        CALL GET_ENVIRONMENT_VARIABLE(NAME, VAL)
      END FUNCTION
!
!     A FORTRAN STRING AS A NUL-TERMINATED C STRING
      FUNCTION CSTR(S) RESULT(C)
        CHARACTER(LEN=*), INTENT(IN) :: S
        CHARACTER(KIND=C_CHAR) :: C(LEN_TRIM(S)+1)
        INTEGER :: I
        DO I = 1, LEN_TRIM(S)
          C(I) = S(I:I)
        ENDDO
        C(LEN_TRIM(S)+1) = C_NULL_CHAR
      END FUNCTION
!
!     THE MESSAGE OF ANABRANCH'S LAST ERROR
      FUNCTION LAST_ERROR() RESULT(MSG)
        CHARACTER(LEN=:), ALLOCATABLE :: MSG
        CHARACTER(KIND=C_CHAR), POINTER :: P(:)
        TYPE(C_PTR) :: CP
        INTEGER :: I, N
        CP = AB_C_LAST_ERROR()
        N = INT(C_STRLEN(CP))
        CALL C_F_POINTER(CP, P, [N])
        ALLOCATE(CHARACTER(LEN=N) :: MSG)
        DO I = 1, N
          MSG(I:I) = P(I)
        ENDDO
      END FUNCTION
!
!     OPENS THE GLOBAL FILE OF RESULT UNIT NRES (COLLECTIVE)
      SUBROUTINE OPEN_OUT(NRES, NVAR, COMM, LU, K)
        INTEGER, INTENT(IN) :: NRES, NVAR, COMM, LU
        INTEGER, INTENT(OUT) :: K
        CHARACTER(LEN=250) :: PART
        CHARACTER(LEN=:), ALLOCATABLE :: GLOBAL, DIR, BASE, GEO, CLI
        INTEGER :: L, I, IERR
        IF(NOUT.EQ.MAXOUT) THEN
          WRITE(LU,*) 'ANABRANCH: MORE THAN ', MAXOUT, ' RESULT FILES'
          CALL PLANTE(1)
          STOP
        ENDIF
!       THIS PROCESS'S FILE: NAME00003-00001, ITS HEADER ON DISK
        INQUIRE(UNIT=NRES, NAME=PART)
        FLUSH(NRES)
        L = LEN_TRIM(PART)
        IF(L.LE.11) THEN
          WRITE(LU,*) 'ANABRANCH: UNEXPECTED RESULT FILE NAME ',
     &                TRIM(PART)
          CALL PLANTE(1)
          STOP
        ENDIF
        GLOBAL = PART(1:L-11)
        I = INDEX(GLOBAL, '/', BACK=.TRUE.)
        DIR = GLOBAL(1:I)
        BASE = GLOBAL(I+1:)
        GEO = ENV_OR('ANABRANCH_TELEMAC_GEOMETRY',
     &               DIR//BASE(1:MIN(3,LEN(BASE)))//'GEO')
        CLI = ENV_OR('ANABRANCH_TELEMAC_BOUNDARY',
     &               DIR//BASE(1:MIN(3,LEN(BASE)))//'CLI')
        NOUT = NOUT + 1
        K = NOUT
        OUTS(K)%LU = NRES
        OUTS(K)%NVAR = NVAR
        OUTS(K)%NAME = GLOBAL
        IERR = AB_C_OPEN_MERGED(INT(COMM, C_INT), CSTR(PART), CSTR(GEO),
     &       CSTR(CLI), CSTR(GLOBAL), CSTR(ENV_OR('ANABRANCH_OPTIONS',
     &       ' ')), OUTS(K)%NLOCAL, OUTS(K)%W)
        IF(IERR.NE.AB_OK) THEN
          WRITE(LU,*) 'ANABRANCH: ', LAST_ERROR()
          CALL PLANTE(1)
          STOP
        ENDIF
        ALLOCATE(OUTS(K)%BUF(OUTS(K)%NLOCAL*NVAR))
        WRITE(LU,*) 'ANABRANCH: ALL PROCESSES WRITE ', TRIM(BASE),
     &              ' (ONE FILE, NO MERGE)'
      END SUBROUTINE
!
!     ONE FRAME OF RESULT UNIT NRES: THE VARIABLES WITH OUTVAR, IN
!     ORDER, AS HERMES WRITES THEM (COLLECTIVE)
      SUBROUTINE AB_TELEMAC_WRITE(NRES, TIME, NVARS, OUTVAR, BVARSOR,
     &                            N, COMM, LU)
        USE BIEF_DEF, ONLY: BIEF_OBJ
        INTEGER, INTENT(IN) :: NRES, NVARS, N, COMM, LU
        DOUBLE PRECISION, INTENT(IN) :: TIME
        LOGICAL, INTENT(IN) :: OUTVAR(NVARS)
        TYPE(BIEF_OBJ), INTENT(IN) :: BVARSOR
        INTEGER :: I, J, K, NV, IERR
        INTEGER(C_INT64_T) :: AT
        DOUBLE PRECISION :: T0
        T0 = WALL()
        NV = 0
        DO I = 1, NVARS
          IF(OUTVAR(I)) THEN
            IF(ASSOCIATED(BVARSOR%ADR(I)%P%R)) NV = NV + 1
          ENDIF
        ENDDO
        K = 0
        DO I = 1, NOUT
          IF(OUTS(I)%LU.EQ.NRES) K = I
        ENDDO
        IF(K.EQ.0) CALL OPEN_OUT(NRES, NV, COMM, LU, K)
        IF(NV.NE.OUTS(K)%NVAR.OR.N.NE.OUTS(K)%NLOCAL) THEN
          WRITE(LU,*) 'ANABRANCH: ', TRIM(OUTS(K)%NAME), ': ', NV,
     &      ' VARIABLES OF ', N, ' POINTS, THE FILE HAS ',
     &      OUTS(K)%NVAR, ' OF ', OUTS(K)%NLOCAL
          CALL PLANTE(1)
          STOP
        ENDIF
        AT = 0
        DO I = 1, NVARS
          IF(OUTVAR(I)) THEN
            IF(ASSOCIATED(BVARSOR%ADR(I)%P%R)) THEN
              DO J = 1, N
                OUTS(K)%BUF(AT+J) = BVARSOR%ADR(I)%P%R(J)
              ENDDO
              AT = AT + N
            ENDIF
          ENDIF
        ENDDO
        IERR = AB_C_WRITE_FRAME(OUTS(K)%W, TIME, OUTS(K)%BUF)
        IF(IERR.NE.AB_OK) THEN
          WRITE(LU,*) 'ANABRANCH: ', LAST_ERROR()
          CALL PLANTE(1)
          STOP
        ENDIF
        OUTS(K)%FRAMES = OUTS(K)%FRAMES + 1
        OUTS(K)%SECONDS = OUTS(K)%SECONDS + (WALL() - T0)
      END SUBROUTINE
!
!     COMPLETES THE GLOBAL FILE OF UNIT NRES, IF ANY (COLLECTIVE)
      SUBROUTINE AB_TELEMAC_CLOSE(NRES, LU)
        INTEGER, INTENT(IN) :: NRES, LU
        INTEGER :: I, IERR
        DOUBLE PRECISION :: T0
        DO I = 1, NOUT
          IF(OUTS(I)%LU.EQ.NRES) THEN
            T0 = WALL()
            OUTS(I)%LU = -1
            DEALLOCATE(OUTS(I)%BUF)
            IERR = AB_C_CLOSE(OUTS(I)%W)
            OUTS(I)%W = C_NULL_PTR
            IF(IERR.NE.AB_OK) THEN
              WRITE(LU,*) 'ANABRANCH: ', LAST_ERROR()
              CALL PLANTE(1)
              STOP
            ENDIF
            OUTS(I)%SECONDS = OUTS(I)%SECONDS + (WALL() - T0)
            WRITE(LU,'(1X,3A,I0,A,F0.3,A)') 'ANABRANCH: ',
     &        TRIM(OUTS(I)%NAME), ': ', OUTS(I)%FRAMES,
     &        ' FRAMES WRITTEN, OUTPUT TIME ', OUTS(I)%SECONDS, ' S'
          ENDIF
        ENDDO
      END SUBROUTINE
!
!
!     A RECORD OF A PREVIOUS COMPUTATION FROM THE ONE GLOBAL FILE:
!     DONE IS .TRUE. WHEN THIS PROCESS'S PART OF THE FILE (UNIT FID,
!     NAME00003-00001) HOLDS NO FRAME AND NAME EXISTS, ON EVERY
!     PROCESS; THEN EVERY PROCESS READS ITS OWN NODES OF THE RECORD
!     FROM NAME (COLLECTIVE), AS READ_DATASET WOULD HAVE READ THEM
!     FROM ITS PART. .FALSE.: NOTHING WAS READ, READ THE PART.
      SUBROUTINE AB_TELEMAC_READ(FFORMAT, FID, VARSOR, NPOIN, RECORD,
     &     AT, VAR_LIST, TROUVE, ALIRE, LISTIN, LASTRECORD, MAXVAR,
     &     NPROC, COMM, LU, DONE)
        USE BIEF_DEF, ONLY: BIEF_OBJ
        USE MPI
        CHARACTER(LEN=8), INTENT(IN) :: FFORMAT
        INTEGER, INTENT(IN) :: FID, NPOIN, MAXVAR, NPROC, COMM, LU
        TYPE(BIEF_OBJ), INTENT(INOUT) :: VARSOR
        INTEGER, INTENT(INOUT) :: RECORD
        DOUBLE PRECISION, INTENT(INOUT) :: AT
        CHARACTER(LEN=32), INTENT(IN) :: VAR_LIST(MAXVAR)
        INTEGER, INTENT(INOUT) :: TROUVE(MAXVAR)
        INTEGER, INTENT(IN) :: ALIRE(MAXVAR)
        LOGICAL, INTENT(IN) :: LISTIN, LASTRECORD
        LOGICAL, INTENT(OUT) :: DONE
        CHARACTER(LEN=250) :: PART
        CHARACTER(LEN=:), ALLOCATABLE :: GLOBAL
        CHARACTER(KIND=C_CHAR) :: CNAME(17), CUNIT(17)
        CHARACTER(LEN=16), ALLOCATABLE :: NAMES(:)
        INTEGER(C_INT), ALLOCATABLE :: KNOLG(:)
        TYPE(C_PTR) :: P, R
        INTEGER(C_INT64_T) :: NE, NP, NF, IREC
        INTEGER(C_INT) :: NDP, NPLAN, NV, IV
        INTEGER :: L, I, K, MINE, ALL, IERR
        LOGICAL :: THERE
        DONE = .FALSE.
        IF(.NOT.AB_TELEMAC_ON(FFORMAT, NPROC)) RETURN
        INQUIRE(UNIT=FID, NAME=PART)
        L = LEN_TRIM(PART)
        IF(L.LE.11) RETURN
        GLOBAL = PART(1:L-11)
!       EVERY PROCESS'S PART WITHOUT FRAMES, AND THE GLOBAL FILE THERE
        P = C_NULL_PTR
        MINE = 0
        INQUIRE(FILE=GLOBAL, EXIST=THERE)
        IF(THERE.AND.AB_C_PART_OPEN(INT(COMM, C_INT), CSTR(GLOBAL), P)
     &     .EQ.AB_OK) THEN
          IF(AB_C_PART_FRAMES(P, NF, NV).EQ.AB_OK) THEN
            IF(NF.EQ.0) MINE = 1
          ENDIF
        ENDIF
        CALL MPI_ALLREDUCE(MINE, ALL, 1, MPI_INTEGER, MPI_MIN, COMM,
     &                     IERR)
        IF(ALL.EQ.0) THEN
          IF(C_ASSOCIATED(P)) IERR = AB_C_PART_CLOSE(P)
          RETURN
        ENDIF
        DONE = .TRUE.
!       THIS PROCESS'S NODES, FROM ITS PART
        IERR = AB_C_PART_SIZES(P, NE, NP, NDP, NPLAN)
        IF(NP.NE.NPOIN) THEN
          WRITE(LU,*) 'ANABRANCH: ', GLOBAL, ' HAS ', NP, ' POINTS',
     &      ' ON THIS PROCESS, THE RUN ', NPOIN, ': A CONTINUATION',
     &      ' ONTO ANOTHER MESH OR NUMBER OF PLANES NEEDS THE SPLIT',
     &      ' FILE (ANABRANCH_TELEMAC_RESTART=0)'
          CALL PLANTE(1)
          STOP
        ENDIF
        ALLOCATE(KNOLG(MAX(NP, 1_C_INT64_T)))
        IERR = AB_C_PART_MESH(P, C_NULL_PTR, KNOLG, C_NULL_PTR,
     &                        C_NULL_PTR)
        IERR = AB_C_PART_CLOSE(P)
        IERR = AB_C_READER_OPEN(INT(COMM, C_INT), CSTR(GLOBAL), NP,
     &       KNOLG, CSTR(ENV_OR('ANABRANCH_READ_OPTIONS', ' ')), R)
        IF(IERR.NE.AB_OK) CALL READ_FAILED(GLOBAL, LU)
        DEALLOCATE(KNOLG)
        IERR = AB_C_READER_FRAMES(R, NF, NV)
        ALLOCATE(NAMES(NV))
        IF(LISTIN) WRITE(LU,'(1X,//,1X,3A)') 'ANABRANCH: PREVIOUS ',
     &    'COMPUTATION READ FROM ', GLOBAL
        DO IV = 1, NV
          IERR = AB_C_READER_VARIABLE(R, IV-1, CNAME, CUNIT)
          NAMES(IV) = ' '
          DO K = 1, 16
            IF(CNAME(K).EQ.C_NULL_CHAR) EXIT
            NAMES(IV)(K:K) = CNAME(K)
          ENDDO
          IF(LISTIN) WRITE(LU,'(1X,2A)') 'NAME: ', NAMES(IV)
        ENDDO
        IF(LASTRECORD) THEN
          IREC = NF - 1
          RECORD = INT(IREC)
        ELSE
          IREC = RECORD
        ENDIF
        IF(IREC.LT.0.OR.IREC.GE.NF) THEN
          WRITE(LU,'(/,1X,A,I16,/,1X,3A,I0,A)') 'TIME STEP : ', IREC,
     &      'IS NOT IN THE FILE ', GLOBAL, ' (', NF, ' RECORDS)'
          CALL PLANTE(1)
          STOP
        ENDIF
        IERR = AB_C_READER_TIME(R, IREC, AT)
!       THE VARIABLES ASKED FOR, IN THE ORDER OF THE LIST (THE SAME ON
!       EVERY PROCESS)
        DO L = 1, MIN(MAXVAR, VARSOR%N)
          IF(ALIRE(L).NE.1.OR..NOT.ASSOCIATED(VARSOR%ADR(L)%P).OR.
     &       VAR_LIST(L)(1:1).EQ.' ') THEN
            TROUVE(L) = 0
            CYCLE
          ENDIF
          IF(VARSOR%ADR(L)%P%DIM1.LT.NPOIN) CYCLE
          TROUVE(L) = 0
          DO IV = 1, NV
            IF(NAMES(IV).EQ.VAR_LIST(L)(1:16)) THEN
              IERR = AB_C_READER_READ_VARIABLE(R, IREC, IV-1,
     &                                         VARSOR%ADR(L)%P%R)
              IF(IERR.NE.AB_OK) CALL READ_FAILED(GLOBAL, LU)
              TROUVE(L) = 1
              EXIT
            ENDIF
          ENDDO
        ENDDO
        IERR = AB_C_READER_CLOSE(R)
        IF(IERR.NE.AB_OK) CALL READ_FAILED(GLOBAL, LU)
        IF(LISTIN) WRITE(LU,'(/,1X,A,I5)')
     &    'READ_DATASET : READ OF RECORD ', IREC + 1
        IF(LISTIN) WRITE(LU,'(//,1X,A,G16.7,A)') 'TIME OF RECORD: ',
     &    AT, ' S'
      END SUBROUTINE
!
!     STOPS THE RUN WITH ANABRANCH'S REASON IN THE LISTING
      SUBROUTINE READ_FAILED(NAME, LU)
        CHARACTER(LEN=*), INTENT(IN) :: NAME
        INTEGER, INTENT(IN) :: LU
        WRITE(LU,*) 'ANABRANCH: ', NAME, ': ', LAST_ERROR()
        CALL PLANTE(1)
        STOP
      END SUBROUTINE
!
      END MODULE ANABRANCH_TELEMAC
!
!                   **********************
                    SUBROUTINE BIEF_DESIMP
!                   **********************
!
     &(FORMAT_RES,VARSOR,N,NRES,AT,LT,LISPRD,LEOPRD,
     & SORLEO,SORIMP,MAXVAR,TEXTE,PTINIG,PTINIL,MESH,
     & IIMP,ILEO,COMPGRAPH)
!
!***********************************************************************
!     BIEF_DESIMP's interface and behaviour, with the result frames of
!     a parallel run written into one global file by anabranch.
!***********************************************************************
!
      USE BIEF, EX_BIEF_DESIMP => BIEF_DESIMP
      USE INTERFACE_HERMES
      USE DECLARATIONS_SPECIAL
      USE DECLARATIONS_PARALLEL, ONLY: COMM
      USE ANABRANCH_TELEMAC
      IMPLICIT NONE
!
      TYPE(BIEF_OBJ)   , INTENT(IN) :: VARSOR
      CHARACTER(LEN=8) , INTENT(IN) :: FORMAT_RES
      INTEGER          , INTENT(IN) :: NRES,LT,LISPRD,LEOPRD
      INTEGER          , INTENT(IN) :: PTINIG,PTINIL,N
      INTEGER          , INTENT(IN) :: MAXVAR
      DOUBLE PRECISION , INTENT(IN) :: AT
      CHARACTER(LEN=32), INTENT(IN) :: TEXTE(*)
      LOGICAL          , INTENT(IN) :: SORLEO(MAXVAR),SORIMP(MAXVAR)
      TYPE(BIEF_MESH)  , INTENT(IN), OPTIONAL :: MESH
      LOGICAL          , INTENT(IN), OPTIONAL :: IIMP,ILEO
      INTEGER          , INTENT(IN), OPTIONAL :: COMPGRAPH
!
      INTEGER LTT,K
      LOGICAL LEO,IMP
!
!     WHICH OUTPUTS THIS TIME STEP HAS
!
      IMP=.FALSE.
      LEO=.FALSE.
      LTT=(LT/LISPRD)*LISPRD
      IF(LT.EQ.LTT.AND.LT.GE.PTINIL) IMP=.TRUE.
      LTT=(LT/LEOPRD)*LEOPRD
      IF(LT.EQ.LTT.AND.LT.GE.PTINIG) LEO=.TRUE.
      IF(LT.EQ.0) LEO=.TRUE.
      IF(PRESENT(IIMP)) IMP=IIMP
      IF(PRESENT(ILEO)) LEO=ILEO
!
!     TO THE RESULT FILE
!
      IF(LEO) THEN
        IF(AB_TELEMAC_ON(FORMAT_RES, NCSIZE)) THEN
!         SERAFIN STORES NO MOVING MESH: NOTHING ELSE TO WRITE
          CALL AB_TELEMAC_WRITE(NRES,AT,MAXVAR,SORLEO,VARSOR,N,COMM,LU)
        ELSE
          IF(PRESENT(COMPGRAPH)) THEN
            LTT=COMPGRAPH
          ELSE
            LTT=(LT-PTINIG)/LEOPRD
            IF(PTINIG.NE.0) LTT=LTT+1
            IF(LT.EQ.0) LTT=0
          ENDIF
          IF(PRESENT(MESH)) THEN
            CALL WRITE_DATA(FORMAT_RES,NRES,MAXVAR,AT,LTT,SORLEO,
     &                      TEXTE,VARSOR,N,MESH)
          ELSE
            CALL WRITE_DATA(FORMAT_RES,NRES,MAXVAR,AT,LTT,SORLEO,
     &                      TEXTE,VARSOR,N)
          ENDIF
        ENDIF
      ENDIF
!
!     TO THE LISTING
!
      IF(IMP) THEN
        DO K=1,MAXVAR
          IF(SORIMP(K)) THEN
            IF(ASSOCIATED(VARSOR%ADR(K)%P%R)) THEN
              CALL IMPVEC(VARSOR%ADR(K)%P%R,TEXTE(K),N)
            ELSE
              WRITE(LU,*) 'DESIMP: VARIABLE NUMBER: ',K
              WRITE(LU,*) '        NOT OR NOT WELL ALLOCATED'
              WRITE(LU,*) '        OR POINTER NOT ASSOCIATED '
            ENDIF
          ENDIF
        ENDDO
      ENDIF
!
      RETURN
      END
!
!                   ***************************
                    SUBROUTINE BIEF_CLOSE_FILES
!                   ***************************
!
     &(FILES,NFILES,PEXIT)
!
!***********************************************************************
!     BIEF_CLOSE_FILES's interface and behaviour; the global files
!     anabranch writes for these files are completed first.
!***********************************************************************
!
      USE BIEF, EX_BIEF_CLOSE_FILES => BIEF_CLOSE_FILES
      USE INTERFACE_HERMES
      USE DECLARATIONS_SPECIAL
      USE ANABRANCH_TELEMAC
      IMPLICIT NONE
!
      INTEGER          , INTENT(IN)     :: NFILES
      LOGICAL          , INTENT(IN)     :: PEXIT
      TYPE(BIEF_FILE)  , INTENT(INOUT)  :: FILES(NFILES)
!
      INTEGER I,IERR
!
      DO I=1,NFILES
        IF(FILES(I)%NAME(1:1).NE.' ') CALL AB_TELEMAC_CLOSE(FILES(I)%LU,
     &                                                      LU)
      ENDDO
!
      DO I=1,NFILES
        IF(FILES(I)%NAME(1:1).EQ.' ') CYCLE
        IF(FILES(I)%TYPE.EQ.'CONLIM') CYCLE
        IF(FILES(I)%FMT(1:7).EQ.'SERAFIN'.OR.
     &     FILES(I)%FMT.EQ.'MED     ') THEN
          IF(FILES(I)%TYPE(1:4).EQ.'SCAL'.AND.IPID.NE.0.AND.
     &       FILES(I)%ACTION(1:4).NE.'READ') CYCLE
          CALL CLOSE_BND(FILES(I)%FMT,FILES(I)%LU,IERR)
          CALL CHECK_CALL(IERR,'BIEF_CLOSE_FILE:CLOSE_BND')
          CALL CLOSE_MESH(FILES(I)%FMT,FILES(I)%LU,IERR)
          CALL CHECK_CALL(IERR,'BIEF_CLOSE_FILE:CLOSE_MESH')
        ELSE
          CLOSE(FILES(I)%LU)
        ENDIF
      ENDDO
!
      IF(PEXIT) CALL P_EXIT
!
      RETURN
      END
!
!                   ***********************
                    SUBROUTINE READ_DATASET
!                   ***********************
!
     &(FFORMAT,FID,VARSOR,NPOIN,RECORD,AT,VAR_LIST,TROUVE,ALIRE,LISTIN,
     & LASTRECORD,MAXVAR)
!
!***********************************************************************
!     READ_DATASET's interface and behaviour: the record RECORD (the
!     last one if LASTRECORD) of the variables ALIRE asks for, found by
!     name, into VARSOR; TROUVE says which were there; AT its time. A
!     file of fewer points than the run (a 2D record continuing a 3D
!     run) is spread over the planes: the bottom and top planes as
!     they are, the planes between interpolated. In a parallel run
!     whose parts hold no frame, read from the one global file.
!***********************************************************************
!
      USE BIEF_DEF
      USE INTERFACE_HERMES
      USE DECLARATIONS_SPECIAL
      USE DECLARATIONS_PARALLEL, ONLY: COMM
      USE ANABRANCH_TELEMAC
      IMPLICIT NONE
!
      CHARACTER(LEN=8), INTENT(IN)    :: FFORMAT
      INTEGER, INTENT(IN)             :: FID,NPOIN,MAXVAR
      TYPE(BIEF_OBJ), INTENT(INOUT)   :: VARSOR
      INTEGER, INTENT(INOUT)          :: RECORD
      DOUBLE PRECISION, INTENT(INOUT) :: AT
      CHARACTER(LEN=32), INTENT(IN)   :: VAR_LIST(MAXVAR)
      INTEGER, INTENT(INOUT)          :: TROUVE(MAXVAR)
      INTEGER, INTENT(IN)             :: ALIRE(MAXVAR)
      LOGICAL, INTENT(IN)             :: LISTIN,LASTRECORD
!
      CHARACTER(LEN=80) TITLE
      CHARACTER(LEN=16), ALLOCATABLE :: NAMES(:),UNITS(:)
      DOUBLE PRECISION, ALLOCATABLE :: PREV(:)
      DOUBLE PRECISION W
      INTEGER NPREV,NPLANPREV,NP2,NPLAN,NVAR,IREC,IERR,L,K,IP,LOW
      LOGICAL DONE,SPREAD
!
      CALL AB_TELEMAC_READ(FFORMAT,FID,VARSOR,NPOIN,RECORD,AT,VAR_LIST,
     &     TROUVE,ALIRE,LISTIN,LASTRECORD,MAXVAR,NCSIZE,COMM,LU,DONE)
      IF(DONE) RETURN
!
!     WHAT THE FILE HOLDS, FOR THE LISTING
!
      CALL GET_MESH_NPOIN(FFORMAT,FID,POINT_BND_ELT_TYPE,NPREV,IERR)
      CALL CHECK_CALL(IERR,'READ_DATASET:GET_MESH_NPOIN')
      CALL GET_MESH_NPLAN(FFORMAT,FID,NPLANPREV,IERR)
      CALL CHECK_CALL(IERR,'READ_DATASET:GET_MESH_NPLAN')
      CALL GET_MESH_TITLE(FFORMAT,FID,TITLE,IERR)
      CALL CHECK_CALL(IERR,'READ_DATASET:GET_MESH_TITLE')
      CALL GET_DATA_NVAR(FFORMAT,FID,NVAR,IERR)
      CALL CHECK_CALL(IERR,'READ_DATASET:GET_DATA_NVAR')
      ALLOCATE(NAMES(NVAR),UNITS(NVAR))
      CALL GET_DATA_VAR_LIST(FFORMAT,FID,NVAR,NAMES,UNITS,IERR)
      CALL CHECK_CALL(IERR,'READ_DATASET:GET_DATA_VAR_LIST')
      IF(LISTIN) THEN
        WRITE(LU,'(1X,//,1X,A,A72,/)')
     &    'TITLE OF PREVIOUS COMPUTATION: ',TITLE
        DO K=1,NVAR
          WRITE(LU,'(1X,A,A16,A,A16)') 'NAME: ',NAMES(K),'  UNIT: ',
     &                                 UNITS(K)
        ENDDO
      ENDIF
      DEALLOCATE(NAMES,UNITS)
!
!     WHICH RECORD
!
      IF(LASTRECORD) THEN
        CALL GET_DATA_NTIMESTEP(FFORMAT,FID,IREC,IERR)
        CALL CHECK_CALL(IERR,'READ_DATASET:GET_DATA_NTIMESTEP')
        IREC=IREC-1
        RECORD=IREC
      ELSE
        IREC=RECORD
      ENDIF
      CALL GET_DATA_TIME(FFORMAT,FID,IREC,AT,IERR)
      IF(IERR.EQ.HERMES_RECORD_UNKNOWN_ERR) THEN
        WRITE(LU,'(/,1X,A,I16,/,1X,A)') 'TIME STEP : ',IREC,
     &                                  'IS NOT IN THE FILE'
        CALL PLANTE(1)
      ELSE
        CALL CHECK_CALL(IERR,'READ_DATASET:GET_DATA_TIME')
      ENDIF
!
!     THE VARIABLES
!
      SPREAD=NPREV.NE.NPOIN
      IF(SPREAD) THEN
        NP2=NPREV/NPLANPREV
        NPLAN=NPOIN/NP2
        ALLOCATE(PREV(NPREV))
      ENDIF
      DO L=1,MIN(MAXVAR,VARSOR%N)
        IF(ALIRE(L).NE.1.OR..NOT.ASSOCIATED(VARSOR%ADR(L)%P).OR.
     &     VAR_LIST(L)(1:1).EQ.' ') THEN
          TROUVE(L)=0
          CYCLE
        ENDIF
        IF(VARSOR%ADR(L)%P%DIM1.LT.NPREV) CYCLE
        TROUVE(L)=0
        IF(.NOT.SPREAD) THEN
          CALL GET_DATA_VALUE(FFORMAT,FID,IREC,VAR_LIST(L)(1:16),
     &                        VARSOR%ADR(L)%P%R,NPREV,IERR)
        ELSE
          CALL GET_DATA_VALUE(FFORMAT,FID,IREC,VAR_LIST(L)(1:16),
     &                        PREV,NPREV,IERR)
        ENDIF
        IF(IERR.EQ.HERMES_VAR_UNKNOWN_ERR) CYCLE
        CALL CHECK_CALL(IERR,'READ_DATASET:GET_DATA_VALUE')
        TROUVE(L)=1
        IF(.NOT.SPREAD) CYCLE
!       BOTTOM AND TOP PLANES AS THEY ARE, THE OTHERS INTERPOLATED
!       BETWEEN THE TWO PLANES OF THE FILE AROUND THEM
        VARSOR%ADR(L)%P%R(1:NP2)=PREV(1:NP2)
        VARSOR%ADR(L)%P%R(NPOIN-NP2+1:NPOIN)=PREV(NPREV-NP2+1:NPREV)
        DO IP=2,NPLAN-1
          W=DBLE(NPLANPREV-1)*DBLE(IP-1)/DBLE(NPLAN-1)
          LOW=INT(W)
          W=W-DBLE(LOW)
          DO K=1,NP2
            VARSOR%ADR(L)%P%R(K+NP2*(IP-1))=
     &        W*PREV(K+NP2*(LOW+1))+(1.D0-W)*PREV(K+NP2*LOW)
          ENDDO
        ENDDO
      ENDDO
      IF(SPREAD) DEALLOCATE(PREV)
      IF(LISTIN) WRITE(LU,'(/,1X,A,I5)')
     &  'READ_DATASET : READ OF RECORD ',IREC+1
      IF(LISTIN) WRITE(LU,'(//,1X,A,G16.7,A)') 'TIME OF RECORD: ',AT,
     &                                         ' S'
!
      RETURN
      END
