#pragma once
// Helpers of the commands that print the declarations as Markdown tables (parameters, outputs).
#include <string>

#include "slr/methods/registry.hpp"

namespace slr::cli {

/// A Markdown table cell: '|' escaped, since it would end the cell.
inline std::string markdown_cell(std::string text) {
  for (std::size_t at = text.find('|'); at != std::string::npos; at = text.find('|', at + 2)) text.replace(at, 1, "\\|");
  return text;
}

/// The models' names, "slr, tied-attention", for help texts.
inline std::string model_names() {
  std::string names;
  for (const auto& m : methods::all_models()) names += (names.empty() ? "" : ", ") + m.name;
  return names;
}

} // namespace slr::cli
