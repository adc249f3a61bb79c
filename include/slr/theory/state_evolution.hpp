#pragma once
// Bayes-optimal finite-α state evolution (docs/theory.md §5), Gaussian priors k*, v* ~ N(0, I_D).
// Nishimori: M = Q = q (2×2), V = I − q = (I + q̂)⁻¹, and
//   q̂ = α E[Σ_l g_out,l g_out,lᵀ],  q = q̂(I + q̂)⁻¹,  g_out,l = ∇_{ω_l} log Z_out(y, ω, V),
// the expectation over the exact task law with ω_l | h*_l ~ N(q h*_l, q − q²). The channel
// Z_out carries the whole sequence likelihood (labels and tilt):
//   spiked-SLR   closed form;
//   max-SLR ν<∞  Monte Carlo over the student fields χ ~ N(ω_χ, V_kk) (z integrated exactly);
//   max-SLR ν=∞  one-dimensional Gauss–Hermite quadrature of the orthant probabilities
//                P(χ_ε = max) (the L tokens are independent given ω).
// Free entropy Φ = −½ tr(q q̂) + ½[tr q̂ − log det(I + q̂)] + α E[log Z_out] decides between the
// informed and uninformed branches. Risks include Δ². r_k, r_v play no role (Bayes-optimal).
#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "slr/model/problem.hpp"
#include "slr/theory/fixed_point.hpp"
#include "slr/theory/population.hpp"

namespace slr::theory {

struct state_evolution_options {
  std::size_t samples = 100000;     ///< outer MC samples S ≥ 100 (common random numbers)
  std::size_t inner_samples = 256;  ///< MC samples of χ per outer sample (max-SLR, finite ν), ≥ 1
  std::size_t quadrature_nodes = 32; ///< Gauss–Hermite nodes (max-SLR, ν = ∞), in [4, 200]
  double damping = 1.0;             ///< η in (0, 1], applied to q̂
  double tolerance = 1e-5;          ///< stop when max |Δq| < tolerance
  int max_iterations = 1000;
  double wall_time_limit_s = std::numeric_limits<double>::infinity(); ///< for both branches together
  bool diagonal = true;             ///< project q̂ onto its diagonal (the manifold 𝓜)
  bool informed = true;             ///< run the informed branch (q̂ = 100 I, q ≈ 0.99 I)
  bool uninformed = true;           ///< run the uninformed branch (q̂ = 0.01 I)
  unsigned threads = 1;             ///< 0 = all hardware threads; results do not depend on it

  /// Throws std::invalid_argument naming the offending field.
  void validate() const;
};

struct state_evolution_branch {
  std::string start;                ///< "informed" or "uninformed"
  solve_status status = solve_status::ok;
  std::string message;
  int iterations = 0;
  double residual = std::numeric_limits<double>::infinity(); ///< max |Δq| at the last iteration
  Eigen::Matrix2d q = Eigen::Matrix2d::Zero();     ///< overlap (= M = Q by Nishimori)
  Eigen::Matrix2d q_hat = Eigen::Matrix2d::Zero(); ///< conjugate, from the last channel pass (α included)
  mc_estimate test_risk;            ///< Bayes-optimal test risk Δ² + E[(z*_ε − ŷ)²] at q
  mc_estimate free_entropy;         ///< Φ at (q, q̂); MC error of α E[log Z_out] only
};

struct state_evolution_result {
  solve_status status = solve_status::ok; ///< of the chosen branch
  state_evolution_branch chosen;          ///< the branch with the larger free entropy
  std::vector<state_evolution_branch> branches; ///< every branch that ran (informed first)
  /// True if the branches ended at different q (max |Δq| > 100·tolerance): coexisting fixed points.
  bool coexistence = false;
  /// Φ_informed − Φ_uninformed with its Monte Carlo standard error, estimated from the per-sample
  /// difference on the samples both branches share (their errors are correlated); NaN unless both
  /// branches ran and coexist.
  mc_estimate free_entropy_gap{std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
};

class state_evolution {
public:
  /// Throws std::invalid_argument for α ≤ 0 or non-finite, bad options or problem.
  state_evolution(model::problem problem, double alpha, state_evolution_options options);

  [[nodiscard]] state_evolution_result solve(std::uint64_t seed) const;
  /// One branch from q̂_0 (2×2 symmetric PSD).
  [[nodiscard]] state_evolution_branch solve_branch(std::uint64_t seed, const Eigen::Matrix2d& q_hat_start,
                                                    std::string start_name,
                                                    double wall_time_limit_s = std::numeric_limits<double>::infinity()) const;

private:
  /// solve_branch on given samples; the per-sample log Z_out of the reported state into log_z_out.
  [[nodiscard]] state_evolution_branch solve_branch(const model::teacher_fields& fields, std::uint64_t seed,
                                                    const Eigen::Matrix2d& q_hat_start, std::string start_name,
                                                    double wall_time_limit_s, std::vector<double>* log_z_out) const;
  model::problem problem_;
  double alpha_;
  state_evolution_options options_;
};

/// Nodes and weights of the n-point Gauss–Hermite rule for the standard normal weight:
/// Σ_j w_j f(t_j) ≈ E[f(t)], t ~ N(0, 1) (Golub–Welsch). Throws std::invalid_argument if n < 1.
void gauss_hermite_normal(std::size_t n, std::vector<double>& nodes, std::vector<double>& weights);

} // namespace slr::theory
