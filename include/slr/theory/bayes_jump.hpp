#pragma once
// Location of the first-order jump of the Bayes-optimal state evolution in α (docs/theory.md §5).
// The Bayes-optimal curve follows, at each α, the fixed point of larger free entropy; where the
// informed and uninformed branches exchange that role the risk and the overlaps jump. The jump is
// bracketed by a coarse log-spaced scan of [α_min, α_max] (the neighbours with the largest change of
// the chosen overlaps q) and refined by bisection in log α: a midpoint belongs to the side whose
// chosen q it is closer to. Every α uses the same Monte Carlo samples (one seed), so the free
// entropies and risks of the bracket's ends differ by the physics, not by sampling noise.
// Where both branches exist at both ends (Δ > 0), α_jump is the zero of the free-entropy difference
// Φ_informed − Φ_uninformed interpolated linearly in log α across the bracket; otherwise (a branch
// ends at a spinodal, e.g. Δ = 0 where the informed branch is exact recovery) the bracket's
// geometric midpoint. With noiseless labels (Δ = 0) the informed branch recovers v exactly and its
// free entropy diverges: it wins wherever it exists, and the jump is where it appears. The samples
// are common to every α of one search, so the seed moves α_jump as a whole by its Monte Carlo
// error: alpha_jump_stderr, from independent batches.
#include <cstdint>
#include <vector>

#include "slr/model/problem.hpp"
#include "slr/theory/state_evolution.hpp"

namespace slr::theory {

/// An informed branch with 1 − q_vv below this at Δ = 0 is exact recovery (bayes_jump_side).
inline constexpr double exact_recovery_gap = 1e-3;

struct bayes_jump_options {
  double alpha_min = 0.5;         ///< search range, 0 < alpha_min < alpha_max < ∞
  double alpha_max = 4;
  std::size_t scan_points = 9;    ///< log-spaced coarse scan, ≥ 3
  double relative_tolerance = 1e-3; ///< stop when α_above / α_below − 1 ≤ this, in (0, 1)
  /// A jump is reported only if the chosen q changes by at least this (max norm) across the final
  /// bracket and keeps at least a fifth of the coarse bracket's change (a continuous curve's
  /// change shrinks with the bracket).
  double minimum_gap = 0.02;
  /// α_jump's uncertainty from this many independent searches on samples/batches samples each
  /// (batch means; doubles the cost); 0 or 1: none (alpha_jump_stderr NaN).
  std::size_t batches = 4;
  state_evolution_options solver; ///< both starts must be enabled

  /// Throws std::invalid_argument naming the offending field.
  void validate() const;
};

/// The state evolution at one α of the search.
struct bayes_jump_side {
  double alpha = 0;
  state_evolution_result result;
  /// Noiseless labels (Δ = 0) and an informed branch at q_vv > 1 − exact_recovery_gap beside the
  /// uninformed one: exact recovery of v, whose free entropy diverges (−½ log V_vv).
  bool exact_recovery = false;
  /// Φ_informed − Φ_uninformed when both branches converged to distinct fixed points (+∞ under
  /// exact recovery), else NaN.
  [[nodiscard]] double free_entropy_gap() const;
  /// Its Monte Carlo standard error (state_evolution_result::free_entropy_gap), NaN likewise.
  [[nodiscard]] double free_entropy_gap_stderr() const;
};

struct bayes_jump_result {
  bool found = false;              ///< a discontinuity was bracketed to the tolerance
  solve_status status = solve_status::ok; ///< worst status of the bracket's two ends
  std::string message;
  double alpha_jump = 0;           ///< estimate of the jump's location (NaN if not found)
  /// Its uncertainty: the standard deviation of α_jump over `batches` independent searches on
  /// samples/batches samples each (not divided by √batches: the location's error does not shrink
  /// like 1/√S, docs/theory.md §5), with half the bracket's width added in quadrature. The bracket
  /// alone is not the uncertainty: another seed moves α_jump by several bracket widths. NaN without
  /// batches or when fewer than two located the jump.
  double alpha_jump_stderr = 0;
  std::vector<double> batch_alpha_jumps; ///< α_jump of each batch that located it
  bayes_jump_side below, above;    ///< the final bracket (below.alpha < above.alpha)
  double gap_q = 0;                ///< max |q_above − q_below| of the chosen branches
  double gap_risk = 0;             ///< test risk below − above
  std::size_t evaluations = 0;     ///< state-evolution solves (each runs both starts)
  std::vector<bayes_jump_side> scan; ///< the coarse scan, in increasing α
};

/// Throws std::invalid_argument for a bad problem or options.
[[nodiscard]] bayes_jump_result locate_bayes_jump(const model::problem& problem, const bayes_jump_options& options,
                                                  std::uint64_t seed);

} // namespace slr::theory
