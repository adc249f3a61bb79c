#pragma once
// The sequence-length law P_L: a fixed L, or an explicit pmf over lengths ("1:0.25,3:0.75").
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace slr::model {

class length_law {
public:
  struct entry {
    std::size_t length; ///< L ≥ 1
    double probability; ///< in (0, 1]
  };

  /// Point mass at L; throws std::invalid_argument if L == 0.
  static length_law fixed(std::size_t length);
  /// Explicit pmf; lengths ≥ 1, distinct, probabilities > 0 summing to 1 within 1e-9.
  /// Throws std::invalid_argument naming the offending entry.
  static length_law from_pmf(std::vector<entry> pmf);
  /// Parses "3" (fixed) or "1:0.25,3:0.75" (pmf); throws std::invalid_argument.
  static length_law parse(std::string_view text);

  [[nodiscard]] const std::vector<entry>& support() const noexcept { return pmf_; }
  [[nodiscard]] bool is_fixed() const noexcept { return pmf_.size() == 1; }
  [[nodiscard]] std::size_t max_length() const noexcept;
  [[nodiscard]] double mean() const noexcept;
  /// Canonical text: "3" or "1:0.25,3:0.75" (sorted by length, shortest round-trip doubles).
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const length_law&, const length_law&) = default;

private:
  std::vector<entry> pmf_;
  friend bool operator==(const entry& a, const entry& b) {
    return a.length == b.length && a.probability == b.probability;
  }
};

} // namespace slr::model
