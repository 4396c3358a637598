# A stand-in CFL3D tree, laid out as CFL3D's own after its build (build/Install, make
# cfl3d_mpi, make cfl3d_seq): source/cfl3d/dist/{wrest,rrest}.F, build/makefile with the
# variables of CFL3D's build, build/cfl/{mpi,seq}/*.o (main.o, wrest.o, rrest.o, plot3d.o: the
# stand-in and the stand-ins of CFL3D's routines), build/cfl/libs/. `anabranch-cfl3d build`
# links it as it links CFL3D; docs/cfl3d.md's commands run on it in the suite.
#   cmake -DTREE=DIR -DSRC=tests/cfl3d_stub -DFC=mpif90 -DMPI_OBJS=... -DSEQ_OBJS=... -P tree.cmake
# A tree built with CGNS: -DCGNS_FLAGS="-DCGNS -I<cgns.mod's folder>" -DCGNS_LIBS="<cgns_f.F90.o> <libcgns>".
file(REMOVE_RECURSE ${TREE}/build/cfl)
file(MAKE_DIRECTORY ${TREE}/source/cfl3d/dist ${TREE}/build/cfl/mpi ${TREE}/build/cfl/seq ${TREE}/build/cfl/libs)
foreach(f wrest.F rrest.F)
  configure_file(${SRC}/${f} ${TREE}/source/cfl3d/dist/${f} COPYONLY)
endforeach()
foreach(v MPI SEQ)
  string(TOLOWER ${v} d)
  string(REPLACE "|" ";" objs "${${v}_OBJS}")
  foreach(o ${objs})
    get_filename_component(n ${o} NAME)
    string(REGEX REPLACE "\\.(F|F90)\\.o$" ".o" n ${n})
    if(n STREQUAL "cfl3d_stub.o")
      set(n main.o)
    endif()
    configure_file(${o} ${TREE}/build/cfl/${d}/${n} COPYONLY)
  endforeach()
endforeach()
file(WRITE ${TREE}/build/makefile "# the stand-in's build/makefile: the variables CFL3D's Install writes
FTN        = ${FC}
FFLAG      = -O2 -std=legacy -fallow-argument-mismatch
PREC       = -fdefault-real-8
INLINE     =
CPPOPT     = -DDIST_MPI -DP3D_SINGLE
CPPOPT_SP  = -DP3D_SINGLE ${CGNS_FLAGS}
LFLAG      =
LLIBS      = ${CGNS_LIBS}
LLIBS_SEQ  = ${CGNS_LIBS}
CFLSRC_D   = ../source/cfl3d/dist

all:
\t@echo the stand-in is built by anabranch's CMake
")
file(MAKE_DIRECTORY ${TREE}/case)
configure_file(${SRC}/cfl3d.inp ${TREE}/case/cfl3d.inp COPYONLY)
file(TOUCH ${TREE}/stamp)
