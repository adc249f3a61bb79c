#pragma once
// The mismatched minimum ℶ_σ of single-location regression (docs/theory.md §3b): the population
// risk at the local minimum that a gradient descent over all seven order parameters reaches from
// the swapped start (key and value exchanged: k = v*, v = k*). Same Monte Carlo sample as the
// matched minimum of population.hpp (same seed: common random numbers), so E_σ and ℶ_σ compare
// without sampling noise between them. Risks include Δ².
#include <array>
#include <string_view>

#include "slr/model/order_parameters.hpp"
#include "slr/model/problem.hpp"
#include "slr/theory/population.hpp"

namespace slr::theory {

/// distinct: a local minimum other than the matched one (projected |∇𝓔| ≤ stationary_gradient);
/// collapsed: the descent fell back to the matched minimum within the box (|ℶ − E| < 2e-4 on the
/// same estimator, m_kv and m_vk within 0.05 of 0, m_vv within 0.05, m_kk within 5 % or 0.05), also
/// where that minimum sits at the box because it lies at |k| → ∞; runaway: a parameter reached the
/// box |θ_i| ≤ box, or the descent stopped short of a stationary point while still heading outward
/// (−∇𝓔·θ > 0) — linear attention in both tasks runs off to |k| → ∞, |v| → 0, and ℶ is then the
/// limit, the minimum of the bilinear risk (docs/theory.md §3b); not_converged: the descent stopped
/// away from the box at a point that is not stationary and not heading outward.
enum class mismatched_outcome { distinct, collapsed, runaway, not_converged };
[[nodiscard]] std::string_view mismatched_outcome_name(mismatched_outcome outcome) noexcept;

struct mismatched_settings {
  double box = 40;                ///< |θ_i| ≤ box, θ = (m_kk, m_vk, m_kv, m_vv, a, b, c), R = LLᵀ, L = [[a,0],[b,c]]
  double first_step_cap = 0.05;   ///< largest step in θ of the first, capped descent phase
  double capped_until = 1e-3;     ///< gradient norm below which L-BFGS-B takes over
  int capped_iterations = 2000;   ///< at most this many capped steps
  int lbfgs_iterations = 500;     ///< per L-BFGS-B run
  int lbfgs_restarts = 20;        ///< restarts from the best point after a failed line search
  double gradient_tolerance = 1e-8; ///< projected |∇𝓔| at which a descent stops
  /// Projected |∇𝓔| up to which an end point counts as stationary (a minimum): the descent's line
  /// search gives up on the Monte Carlo objective near 1e-7–1e-5 at the minima of Fig 5.
  double stationary_gradient = 5e-5;
  /// With S ≥ 2× this, both descents run on every (S / this)-th sample and their end points are
  /// then polished on the whole sample; below, they run on the whole sample.
  std::size_t screening_samples = 20'000;
};

struct mismatched_minimum {
  mc_estimate risk;                   ///< ℶ_σ (collapsed: E_σ within the box; linear runaway: the |k| → ∞ limit)
  mc_estimate descended_risk;         ///< 𝓔 at the end point of the descent itself
  model::order_parameters argmin;     ///< the end point (M, Q); collapsed: matched_in_box.argmin
  std::array<double, 7> theta{};      ///< the end point in the descent's coordinates
  /// Linear runaway: the minimiser of the bilinear limit in the balanced gauge (𝓔 is evaluated at
  /// k-side × 1e4, v-side / 1e4); zero otherwise.
  std::array<double, 7> limit_theta{};
  mismatched_outcome outcome = mismatched_outcome::distinct;
  double gradient_norm = 0;           ///< |∇𝓔| at the end point
  int evaluations = 0;                ///< of 𝓔 and its gradient, in whole-sample units
  population_minimum matched;         ///< E_σ on the same sample
  population_minimum matched_in_box;  ///< the matched minimum with |m_kk|, √R_kk ≤ box (= matched unless that lies
                                      ///< beyond the box): the reference point of `collapsed`
  double matched_risk_same_estimator = 0; ///< 𝓔 at matched_in_box.argmin with the descent's estimator (same sample)
};

/// Descends 𝓔 from the swapped start. Throws std::invalid_argument for bad settings or problem.
[[nodiscard]] mismatched_minimum minimise_from_swapped_start(const model::problem& problem, const mc_settings& mc,
                                                             const mismatched_settings& settings = {});

/// How 𝓔 is summed over the sample: automatic = as the descent does (moments for linear
/// attention, sample by sample otherwise); per_sample = sample by sample for every activation;
/// moments = the closed form in θ from the sample's moments, linear attention only (else
/// std::invalid_argument).
enum class risk_evaluation { automatic, per_sample, moments };

/// 𝓔 and its gradient in θ on the sample of (problem, mc): what the descent minimises (tests,
/// diagnostics). gradient may be null.
[[nodiscard]] double seven_parameter_risk(const model::problem& problem, const mc_settings& mc,
                                          const std::array<double, 7>& theta, std::array<double, 7>* gradient,
                                          risk_evaluation how = risk_evaluation::automatic);

/// The point of the orbit (k, v) → (s k, v/s) through θ whose k-side (m_kk, m_kv, a) and v-side
/// (m_vk, m_vv, b, c) have equal norms; θ itself if either side is 0. The orbit is flat for the
/// bilinear limit of linear attention (Σ_l χ_l z_l depends on sym(k vᵀ) only), not for σ = 1 + χ
/// itself, whose Σ_l z_l term scales as 1/s.
[[nodiscard]] std::array<double, 7> balanced_gauge(const std::array<double, 7>& theta);

/// θ → (M, Q): M = [[m_kk, m_vk], [m_kv, m_vv]] (rows teacher), Q = MᵀM + LLᵀ.
[[nodiscard]] model::order_parameters order_parameters_of(const std::array<double, 7>& theta);

} // namespace slr::theory
