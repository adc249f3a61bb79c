#pragma once
// The mismatched minimum ℶ_σ of single-location regression (docs/theory.md §3b): the population
// risk at the local minimum that a gradient descent over all seven order parameters reaches from
// the swapped start (key and value exchanged: k = v*, v = k*). Same Monte Carlo sample as the
// matched minimum of population.hpp (same seed: common random numbers), so E_σ and ℶ_σ compare
// without sampling noise between them. Risks include Δ².
#include <array>
#include <string>
#include <string_view>

#include "slr/model/order_parameters.hpp"
#include "slr/model/problem.hpp"
#include "slr/theory/population.hpp"

namespace slr::theory {

/// The class of the end point of the gradient flow from the swapped start (docs/theory.md §3b),
/// decided in this order:
/// collapsed: the flow fell back to the matched minimum within the box (|ℶ − E| < 2e-4 on the same
///   estimator, m_kv and m_vk within 0.05 of 0, m_vv within 0.05, m_kk within 5 % or 0.05), also
///   where that minimum sits at the box because it lies at |k| → ∞;
/// runaway: the flow reached the box |θ_i| = box with 𝓔 still decreasing outward across it
///   (∂𝓔/∂θ_i pushes θ_i out) — linear attention in both tasks above its threshold runs off to
///   |k| → ∞, |v| → 0, and ℶ is then the limit, the minimum of the bilinear risk;
/// distinct: a stationary point (Newton step |H⁻¹∇𝓔| ≤ newton_distance) whose 7×7 Hessian is
///   positive definite (smallest eigenvalue ≥ hessian_floor), other than the matched minimum;
/// not_converged: anything else (a stationary point with a non-positive Hessian direction, or the
///   step limit reached); `verdict` says which.
enum class mismatched_outcome { distinct, collapsed, runaway, not_converged };
[[nodiscard]] std::string_view mismatched_outcome_name(mismatched_outcome outcome) noexcept;

/// The descent integrates the gradient flow dθ/dt = −∇𝓔(θ) with a linearly implicit Euler step
/// (I + hH)δ = −h∇𝓔 (H the 7×7 Hessian by differences of the analytic gradient), the time step h
/// controlled by the step's local error: it follows the flow's path while the landscape bends
/// and becomes Newton's method (h → ∞) near a minimum, which it converges to machine precision.
struct mismatched_settings {
  double box = 40;                ///< |θ_i| ≤ box, θ = (m_kk, m_vk, m_kv, m_vv, a, b, c), R = LLᵀ, L = [[a,0],[b,c]]
  double initial_time_step = 0.05; ///< first h of the flow (time units of dθ/dt = −∇𝓔)
  /// Largest local error of one step, |δ − exact flow step| estimated from the step's
  /// linearisation residual (θ units, relative to max(1, |θ|)).
  double flow_tolerance = 1e-3;
  int flow_steps = 3000;          ///< accepted steps at most (per sample size)
  /// Accepted steps at most for linear attention, whose runaway slows as |k| ~ t^¼ (about 5·10³
  /// steps to the box at L = 10 near its threshold), each O(12²) from the sample's moments.
  int linear_flow_steps = 30000;
  double gradient_tolerance = 1e-11; ///< projected |∇𝓔| at which the flow stops
  double newton_distance = 1e-6;  ///< |H⁻¹∇𝓔| (θ units) up to which an end point counts as stationary
  double hessian_floor = 1e-6;    ///< smallest Hessian eigenvalue above which a stationary point is a minimum
  int lbfgs_iterations = 500;     ///< per L-BFGS-B run (the bilinear limit of a linear runaway)
  int lbfgs_restarts = 20;        ///< restarts from the best point after a failed line search
  /// With S ≥ 2× this (and σ not linear, whose risk is a closed form in the sample's moments), the
  /// flow first runs on every (S / this)-th sample and continues from its end point on the whole
  /// sample; below, it runs on the whole sample from the start.
  std::size_t screening_samples = 20'000;
};

struct mismatched_minimum {
  mc_estimate risk;                   ///< ℶ_σ (collapsed: E_σ within the box; linear runaway: the |k| → ∞ limit)
  mc_estimate descended_risk;         ///< 𝓔 at the end point of the flow itself
  model::order_parameters argmin;     ///< the end point (M, Q); collapsed: matched_in_box.argmin
  std::array<double, 7> theta{};      ///< the end point in the descent's coordinates
  /// Linear runaway: the minimiser of the bilinear limit in the balanced gauge (𝓔 is evaluated at
  /// k-side × 1e4, v-side / 1e4); zero otherwise.
  std::array<double, 7> limit_theta{};
  mismatched_outcome outcome = mismatched_outcome::distinct;
  std::string verdict;                ///< what decided the class, with its numbers (one sentence)
  double gradient_norm = 0;           ///< projected |∇𝓔| at the end point (held box coordinates excluded)
  double newton_step = 0;             ///< |H⁻¹∇𝓔| over the free coordinates at the end point
  /// Eigenvalues of the Hessian at the end point over the coordinates not held at the box,
  /// ascending (central differences of the analytic gradient); NaN for held coordinates.
  std::array<double, 7> hessian_eigenvalues{};
  int held_coordinate = -1;           ///< runaway: the θ index held at the box with the largest outward slope
  double outward_slope = 0;           ///< runaway: −∂𝓔/∂θ_i · sign(θ_i) at that coordinate (> 0)
  double flow_time = 0;               ///< total t of the integrated flow (both sample sizes)
  int flow_steps = 0;                 ///< accepted steps (both sample sizes)
  int evaluations = 0;                ///< of 𝓔 and its gradient, in whole-sample units
  population_minimum matched;         ///< E_σ on the same sample
  population_minimum matched_in_box;  ///< the matched minimum with |m_kk|, √R_kk ≤ box (= matched unless that lies
                                      ///< beyond the box): the reference point of `collapsed`
  double matched_risk_same_estimator = 0; ///< 𝓔 at matched_in_box.argmin with the descent's estimator (same sample)
};

/// Follows the gradient flow of 𝓔 from the swapped start and classifies its end point. Throws std::invalid_argument for bad settings or problem.
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
