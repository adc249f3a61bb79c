#include "slr/grid/suggest.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace slr::grid {
namespace {
char fold(char c) {
  if (c >= 'A' && c <= 'Z') return static_cast<char>(c - 'A' + 'a');
  return c == '-' ? '_' : c;
}
} // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  // Three rows of the dynamic programme: the transposition looks two rows back.
  std::vector<std::size_t> before(m + 1), previous(m + 1), current(m + 1);
  for (std::size_t j = 0; j <= m; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const bool same = fold(a[i - 1]) == fold(b[j - 1]);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]))
        current[j] = std::min(current[j], before[j - 2] + 1);
    }
    std::swap(before, previous);
    std::swap(previous, current);
  }
  return previous[m];
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known) {
  const std::size_t limit = typed.size() <= 4 ? 1 : typed.size() <= 8 ? 2 : 3;
  std::size_t best = std::numeric_limits<std::size_t>::max();
  const std::string* choice = nullptr;
  for (const auto& name : known) {
    const std::size_t d = edit_distance(typed, name);
    if (d < best) best = d, choice = &name;
  }
  if (choice != nullptr && *choice != typed && best <= limit && best < typed.size())
    return " (did you mean '" + *choice + "'?)";
  // A shortened name ("tied" for "tied-attention"): the one known name it begins.
  const std::string* extension = nullptr;
  for (const auto& name : known)
    if (typed.size() >= 2 && name.size() > typed.size() && edit_distance(typed, name.substr(0, typed.size())) == 0) {
      if (extension != nullptr) return "";
      extension = &name;
    }
  return extension != nullptr ? " (did you mean '" + *extension + "'?)" : "";
}

} // namespace slr::grid
