#include "slr/model/number_text.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace slr::model {

std::optional<double> parse_number(std::string_view text) noexcept {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return std::nullopt;
  const auto last = text.find_last_not_of(" \t");
  // strtod needs a terminated string; the copy is short-lived and small (one token).
  std::string token;
  try {
    token.assign(text.substr(first, last - first + 1));
  } catch (...) {
    return std::nullopt;
  }
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(token.c_str(), &end);
  if (end != token.c_str() + token.size()) return std::nullopt;
  if (errno == ERANGE && std::isinf(value)) return std::nullopt; // overflow ("1e999"), not "inf" itself
  return value;
}

} // namespace slr::model
