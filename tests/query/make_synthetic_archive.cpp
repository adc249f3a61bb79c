// slr_make_synthetic_archive OUT.h5: an archive with rows for every figure (synthetic_archive.cpp),
// used by the export/plot script test.
#include <exception>
#include <iostream>

#include "synthetic_archive.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: slr_make_synthetic_archive OUT.h5\n";
    return 2;
  }
  try {
    slr::query::testing::write_archive(argv[1], slr::query::testing::figure_rows());
  } catch (const std::exception& e) {
    std::cerr << "slr_make_synthetic_archive: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
