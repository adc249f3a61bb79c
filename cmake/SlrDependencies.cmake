# Every dependency is a Debian package; see README.md and .ci/run for the list.
find_package(Threads REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(MPI REQUIRED COMPONENTS CXX)
find_package(Boost 1.74 REQUIRED COMPONENTS mpi serialization)
find_package(HDF5 REQUIRED COMPONENTS C)
find_package(tomlplusplus 3 REQUIRED)
find_package(CLI11 2 REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(Random123 REQUIRED)
find_package(LBFGSpp REQUIRED)
# OpenBLAS through its CBLAS interface (libopenblas-dev): the dense products of the tied-attention ERM.
set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
