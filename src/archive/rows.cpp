#include "slr/archive/rows.hpp"

namespace slr::archive {

std::string archive_column_name(std::string_view result_column) {
  std::string name(result_column);
  for (auto& c : name)
    if (c == '.') c = '_';
  return name;
}

} // namespace slr::archive
