#pragma once
// "Did you mean …?" for a mistyped name: the closest of the known names by edit distance.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace slr::grid {

/// Optimal-string-alignment distance (insertions, deletions, substitutions and transpositions of
/// adjacent characters, each costing 1), ignoring ASCII case and treating '-' and '_' alike.
[[nodiscard]] std::size_t edit_distance(std::string_view a, std::string_view b);

/// " (did you mean 'x'?)" for the known name closest to `typed` when it is close enough to be a
/// typing error (distance ≤ 1 for names up to 4 characters, ≤ 2 up to 8, else ≤ 3, and less than
/// the typed name's length; 0 for another spelling such as r-k for r_k), else "" (also when
/// `typed` is itself known); failing that, the one known name that `typed` (≥ 2 characters)
/// begins, as "tied" for "tied-attention". Ties go to the first in `known`.
[[nodiscard]] std::string did_you_mean(std::string_view typed, const std::vector<std::string>& known);

} // namespace slr::grid
