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
# glibc's vector math library (libmvec, in libc6-dev since glibc 2.35 for erf and log1p): the
# element-wise exp/erf/log1p of the activations (src/model/vector_math.cpp). Optional: without it
# (another libc, another CPU) the scalar std:: functions are used.
include(CheckCXXSourceCompiles)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(CMAKE_REQUIRED_LIBRARIES mvec m)
  check_cxx_source_compiles([[
#include <immintrin.h>
extern "C" __m128d _ZGVbN2v_erf(__m128d);
extern "C" __m128d _ZGVbN2v_log1p(__m128d);
int main() { return _mm_cvtsd_f64(_ZGVbN2v_log1p(_ZGVbN2v_erf(_mm_set1_pd(0.5)))) > 0 ? 0 : 1; }
]] SLR_HAVE_LIBMVEC)
  unset(CMAKE_REQUIRED_LIBRARIES)
endif()
