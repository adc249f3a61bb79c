#pragma once
// Shared by the default and the slow agreement tests: trains ERM at finite D on several seeds
// for each r = 1 case of tests/reference/fixed_point.json and compares the seed average
// with the replica-symmetric fixed point (docs/theory.md §4, §7).
#include <cstddef>
#include <string>

namespace slr_test {
/// Runs every r = 1 case at dimension D with `seeds` seeds and checks, for the 7 order
/// parameters, the training loss and the test risk, |mean − FP| ≤ 3 √(se² + fp_err²) for all
/// but at most one of the 27 comparisons, and ≤ 4 √(…) for every one.
void check_reference_agreement(std::size_t D, std::size_t seeds, unsigned threads);
} // namespace slr_test
