!     anabranch in a TELEMAC run: every process writes its result
!     frames into ONE global SERAFIN file, the file gretel would make of
!     the per-process result files, so that no merge is left to do.
!
!     A user Fortran file (steering file: FORTRAN FILE = '...'). It
!     replaces two subroutines of TELEMAC's BIEF library:
!     - BIEF_DESIMP, through which TELEMAC-2D, TELEMAC-3D, GAIA, ...
!       write each saved time step of their SERAFIN result files;
!     - BIEF_CLOSE_FILES, which closes a code's files at the end of
!       the run: the global files are completed there.
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
!     The file needs no module of anabranch: it declares the four C
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
      PUBLIC :: AB_TELEMAC_ON, AB_TELEMAC_WRITE, AB_TELEMAC_CLOSE
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
