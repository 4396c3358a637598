# Spack package for anabranch. Package API v1.0: with Spack v1.x the build systems
# (CMakePackage) come from the builtin repository's compatibility layer, which Spack
# imports for every v1.0 package; with Spack v0.x they come from spack.package.

import os

from spack.package import *


class Anabranch(CMakePackage):
    """Scalable I/O for parallel mesh-based simulations: splits one mesh into P subdomains
    for P MPI processes (METIS, SCOTCH, PT-Scotch, a Hilbert curve) and brings what they
    compute back into one file. Reads and writes TELEMAC's SERAFIN format natively (partel
    and gretel replacements), writes parallel HDF5 (VTKHDF + XDMF) for ParaView, and is a
    library for solvers (C API, Fortran module, Python package) and a command-line tool."""

    # Placeholders: anabranch has no public repository yet. Build it from a checkout with
    #   spack develop --path <checkout> anabranch@=develop
    # in an environment (scripts/check-spack.sh does so).
    homepage = "https://github.com/anabranch-io/anabranch"
    git = "https://github.com/anabranch-io/anabranch.git"

    # license(): none declared yet (the repository has no license file).

    version("develop", branch="main")

    variant("hdf5", default=True, description="Parallel HDF5 output (VTKHDF + XDMF for ParaView)")
    variant("fortran", default=True, description="Fortran module (anabranch.mod)")
    variant("python", default=False, description="Python package (nanobind extension)")
    variant("scotch", default=True, description="SCOTCH and PT-Scotch partitioners")
    variant("cgns", default=False, description="CGNS export and import (anabranch-cgns)")

    depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build", when="+fortran")

    depends_on("cmake@3.20:", type="build")

    depends_on("mpi")
    # 32-bit indices: the partitioner asserts idx_t and SCOTCH_Num are 32-bit integers.
    depends_on("metis@5:~int64")
    depends_on("zlib-api")
    # Header-only, used by the command and the library's sources; not by consumers.
    depends_on("cli11", type="build")
    depends_on("nlohmann-json", type="build")

    depends_on("scotch+mpi~int64", when="+scotch")
    depends_on("hdf5+mpi", when="+hdf5")
    # The zstd codec of compressed HDF5 outputs.
    depends_on("zstd", when="+hdf5")
    # Only the anabranch-cgns helper program links libcgns.
    depends_on("cgns", when="+cgns")

    with when("+python"):
        extends("python")
        depends_on("python@3.8:", type=("build", "run"))
        depends_on("py-nanobind@2:", type="build")
        depends_on("py-numpy", type="run")

    def _with(self, name, enabled):
        """ANABRANCH_WITH_<name> is a string option (AUTO|ON|OFF): never AUTO here, so that
        a missing dependency fails the configuration instead of being left out."""
        return self.define(f"ANABRANCH_WITH_{name}", "ON" if enabled else "OFF")

    def cmake_args(self):
        spec = self.spec
        args = [
            self.define("ANABRANCH_TESTS", False),
            self._with("METIS", True),
            self._with("HDF5", spec.satisfies("+hdf5")),
            self._with("ZSTD", spec.satisfies("+hdf5")),
            self._with("SCOTCH", spec.satisfies("+scotch")),
            self._with("PTSCOTCH", spec.satisfies("+scotch")),
            self._with("CGNS", spec.satisfies("+cgns")),
            self._with("FORTRAN", spec.satisfies("+fortran")),
            self._with("PYTHON", spec.satisfies("+python")),
            self.define("MPI_C_COMPILER", spec["mpi"].mpicc),
            self.define("MPI_CXX_COMPILER", spec["mpi"].mpicxx),
        ]
        if spec.satisfies("+fortran"):
            args.append(self.define("MPI_Fortran_COMPILER", spec["mpi"].mpifc))
        if spec.satisfies("+hdf5"):
            # FindHDF5 asks h5pcc for the parallel library; a Spack-built hdf5+mpi has it in
            # its prefix (an external one is found on PATH).
            h5pcc = join_path(spec["hdf5"].prefix.bin, "h5pcc")
            if os.path.isfile(h5pcc):
                args.append(self.define("HDF5_C_COMPILER_EXECUTABLE", h5pcc))
        if spec.satisfies("+python"):
            args.extend(
                [
                    self.define("Python_EXECUTABLE", spec["python"].command.path),
                    # The extension is copied from the build tree (install_python_package):
                    # built with its install RPATH, it names no build directory.
                    self.define("CMAKE_BUILD_WITH_INSTALL_RPATH", True),
                ]
            )
        return args

    @run_after("install", when="+python")
    def install_python_package(self):
        # The project's CMake install leaves the Python package to `pip install .`
        # (scikit-build-core); here the package staged in the build tree, the extension
        # linked to the installed libanabranch_c, goes to the prefix's site-packages.
        staged = join_path(self.build_directory, "python", "anabranch")
        install_tree(staged, join_path(python_platlib, "anabranch"))
