# `cmake --install`: the C API library and header, the Fortran module, the executable, a
# CMake package so that a solver finds it with find_package(anabranch) and links
# anabranch::c (C, C++) or anabranch::fortran (Fortran), and pkg-config files (anabranch,
# anabranch-fortran) for codes built with Makefiles. The C API library carries the C++
# core inside it (static), so consumers need only MPI besides.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set_target_properties(anabranch_c PROPERTIES EXPORT_NAME c)
target_include_directories(anabranch_c PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
install(TARGETS anabranch_c EXPORT anabranchTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/anabranch/anabranch.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/anabranch)
install(TARGETS anabranch_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET anabranch_cgns)  # the CGNS helper, found beside the executable
  install(TARGETS anabranch_cgns RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
set(AB_CONFIG_MPI_COMPONENTS C)
if(ANABRANCH_HAVE_FORTRAN)
  set(AB_CONFIG_MPI_COMPONENTS C Fortran)
  set_target_properties(anabranch_fortran PROPERTIES EXPORT_NAME fortran)
  target_include_directories(anabranch_fortran PUBLIC $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/anabranch/fortran>)
  install(TARGETS anabranch_fortran EXPORT anabranchTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${PROJECT_BINARY_DIR}/bindings/fortran/mod/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/anabranch/fortran)
endif()
# The integrations, compiled by the user with the solver's own flags: TELEMAC's user Fortran
# file (docs/telemac.md: its result written by all ranks as one file) and CFL3D's restart and
# PLOT3D routines (docs/cfl3d.md), with anabranch-cfl3d, which links CFL3D's build with them.
install(FILES ${PROJECT_SOURCE_DIR}/integrations/telemac/anabranch_telemac.f DESTINATION ${CMAKE_INSTALL_DATADIR}/anabranch/telemac)
install(FILES ${PROJECT_SOURCE_DIR}/integrations/cfl3d/anabranch_cfl3d.F ${PROJECT_SOURCE_DIR}/integrations/cfl3d/anabranch_cfl3d_cgns.c DESTINATION ${CMAKE_INSTALL_DATADIR}/anabranch/cfl3d)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/integrations/cfl3d/anabranch_cfl3d_tool.py DESTINATION ${CMAKE_INSTALL_BINDIR}
  RENAME anabranch-cfl3d)
set_target_properties(anabranch_c PROPERTIES INSTALL_RPATH "$ORIGIN")
set_target_properties(anabranch_cli PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")

set(cmakedir ${CMAKE_INSTALL_LIBDIR}/cmake/anabranch)
install(EXPORT anabranchTargets NAMESPACE anabranch:: DESTINATION ${cmakedir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/anabranchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/anabranchConfig.cmake INSTALL_DESTINATION ${cmakedir}
  PATH_VARS CMAKE_INSTALL_DATADIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/anabranchConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/anabranchConfig.cmake ${PROJECT_BINARY_DIR}/anabranchConfigVersion.cmake
  DESTINATION ${cmakedir})

# pkg-config files, relocatable: the prefix is found from where the file lies.
string(REGEX REPLACE "[^/]+" ".." AB_PC_TO_PREFIX "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
set(ab_pc_files anabranch)
if(ANABRANCH_HAVE_FORTRAN)
  list(APPEND ab_pc_files anabranch-fortran)
endif()
foreach(pc ${ab_pc_files})
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${pc}.pc.in ${PROJECT_BINARY_DIR}/${pc}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${pc}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# <prefix>/libexec/anabranch/telemac/{partel,gretel}: TELEMAC's par_path (docs/telemac.md).
foreach(tool partel gretel)
  install(CODE "
    set(dir \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBEXECDIR}/anabranch/telemac\")
    file(MAKE_DIRECTORY \"\$ENV{DESTDIR}\${dir}\")
    file(RELATIVE_PATH rel \"\${dir}\" \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/anabranch\")
    file(CREATE_LINK \"\${rel}\" \"\$ENV{DESTDIR}\${dir}/${tool}\" SYMBOLIC)
    message(STATUS \"Installing: \$ENV{DESTDIR}\${dir}/${tool} -> \${rel}\")")
endforeach()
