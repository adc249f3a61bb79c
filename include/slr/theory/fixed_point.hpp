#pragma once
// Replica-symmetric fixed point of finite-α ERM (docs/theory.md §4):
//   min_{k,v} Σ_μ ½(y_μ − f(X_μ))² + (r_k/2)|k|² + (r_v/2)|v|²,  N = αD sequences.
// Unknowns: M (teacher × student), Q, V (2×2) and their conjugates M̂, Q̂, V̂. The prior side is
// closed form (V = (Λ + V̂)⁻¹, M = M̂V, Q = V(M̂ᵀM̂ + Q̂)V); the channel side is a Monte Carlo
// average, over a sample fixed for the whole solve (common random numbers), of the per-sample
// 2L-dimensional proximal problem, solved by Levenberg–Marquardt Newton from two starts (optionally
// skipping a dominated one, see prox_start_policy), the iteration accelerated by Anderson mixing.
// Results do not depend on the thread count. All quantities are per dimension D (like M, Q).
#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "slr/model/activation.hpp"
#include "slr/model/order_parameters.hpp"
#include "slr/model/problem.hpp"
#include "slr/theory/population.hpp"

namespace slr::theory {

/// Outcome of an iterative theory solve. not_converged: iteration cap reached; diverged: the
/// state left the admissible region (non-finite, |entries| above the bound, Λ + V̂ not PD);
/// timeout: the wall-time cap was hit. The last state is always returned.
enum class solve_status { ok, not_converged, diverged, failed, timeout };
[[nodiscard]] std::string_view solve_status_name(solve_status s) noexcept;
/// The worse of two statuses (failed > timeout > diverged > not_converged > ok).
[[nodiscard]] solve_status worse(solve_status a, solve_status b) noexcept;

/// The primal RS state: M (rows teacher k*, v*; columns student k, v), Q, V (V ≻ 0).
struct fixed_point_state {
  Eigen::Matrix2d M = Eigen::Matrix2d::Identity();
  Eigen::Matrix2d Q = 1.2 * Eigen::Matrix2d::Identity();
  Eigen::Matrix2d V = 0.5 * Eigen::Matrix2d::Identity();

  /// M = I, Q = 1.2 I, V = 0.5 I (mimics an ERM started near the teacher).
  static fixed_point_state informed();
  /// M = 0.01 I, Q = 0.5 I, V = 0.5 I (mimics a random start).
  static fixed_point_state uninformed();
  [[nodiscard]] model::order_parameters order_parameters() const {
    return model::order_parameters::from_matrices(M, Q);
  }
};

/// The conjugate ("hat") variables, same layout as M, Q, V.
struct hat_variables {
  Eigen::Matrix2d M_hat = Eigen::Matrix2d::Zero();
  Eigen::Matrix2d Q_hat = Eigen::Matrix2d::Zero();
  Eigen::Matrix2d V_hat = Eigen::Matrix2d::Zero();
};

/// Estimator of M̂ (docs/theory.md §4). automatic = tilt_score where the tilt has a score (spiked,
/// finite-ν max), stein_free at max-SLR ν = ∞ (the only valid one there).
enum class hat_m_estimator { automatic, stein_free, tilt_score };

/// Acceleration of the fixed-point iteration. none: x ← (1−η)x + ηF(x). anderson: type-II
/// Anderson mixing over the last `anderson_memory` iterates with mixing η, safeguarded (it
/// falls back to the damped step from the best iterate when the residual grows, rejects
/// extrapolations with V not positive definite, and reverts to plain damping for the rest of
/// the solve after repeated failures). Both converge to the same fixed point.
enum class fixed_point_acceleration { none, anderson };

/// Starts of the per-sample prox problem. both: the linearised prox and the previous solution
/// (warm start), keeping the lower objective. adaptive: the linearised start is skipped when the
/// warm start has converged to an objective no higher than the value at the linearised start
/// (~1.07 instead of 2 prox problems per sample, ~45 % less channel time; the same fixed point at
/// r = 1, but at r = 0.1 a few samples with competing prox minima make the converged state depend
/// on the path by ~3 % on V_k, so it is opt-in).
enum class prox_start_policy { both, adaptive };

struct fixed_point_options {
  std::size_t samples = 8000;        ///< channel MC samples S ≥ 100
  std::size_t test_samples = 100000; ///< samples of the population-risk evaluation; 0 = skip the test risk
  unsigned repeats = 3;              ///< independent solves (seeds derive_seed(seed, r)); ≥ 1
  double damping = 0.3;              ///< η in (0, 1]: x ← (1−η)x + ηF(x)
  fixed_point_acceleration acceleration = fixed_point_acceleration::anderson;
  int anderson_memory = 5;           ///< past iterates used by Anderson mixing, in [1, 20]
  double tolerance = 1e-4;           ///< stop when max |F(x) − x| over M, Q, V entries < tolerance (> 0)
  int max_iterations = 500;          ///< ≥ 1
  double wall_time_limit_s = std::numeric_limits<double>::infinity(); ///< for all repeats together
  double divergence_bound = 1e6;     ///< |entries of M, Q, V| above it → diverged
  bool diagonal = true;              ///< project M̂, Q̂, V̂ onto their diagonals (the manifold 𝓜)
  hat_m_estimator estimator = hat_m_estimator::automatic;
  prox_start_policy prox_starts = prox_start_policy::both;
  int prox_max_steps = 60;           ///< Levenberg–Marquardt steps per start
  double prox_tolerance = 1e-9;      ///< on the ∞-norm of the prox gradient
  std::optional<fixed_point_state> initial_state; ///< explicit start; informed() when empty
  unsigned threads = 1;              ///< 0 = all hardware threads; results do not depend on it

  /// Throws std::invalid_argument naming the offending field.
  void validate() const;
};

/// One solve on one MC sample.
struct fixed_point_repeat {
  std::uint64_t seed = 0;
  solve_status status = solve_status::ok;
  std::string message;
  int iterations = 0;
  double residual = std::numeric_limits<double>::infinity(); ///< max |F(x) − x| at the last iteration
  fixed_point_state state;  ///< the last (damped) state
  hat_variables hats;       ///< from the last channel evaluation (α included)
  mc_estimate test_risk{std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  double train_loss = 0;    ///< E[½(y − f(ĥ))²]
  double nonpd_fraction = 0; ///< weight of samples whose prox Hessian H + V⁻¹⊗I is not PD at ĥ
  /// Both M̂ estimators at the last channel evaluation, and the MC standard error of their
  /// difference (entry-wise; the tilt score is NaN at max-SLR ν = ∞).
  Eigen::Matrix2d M_hat_stein_free = Eigen::Matrix2d::Zero();
  Eigen::Matrix2d M_hat_tilt_score = Eigen::Matrix2d::Zero();
  Eigen::Matrix2d M_hat_difference_stderr = Eigen::Matrix2d::Zero();
  std::size_t channel_samples = 0; ///< samples × iterations (one prox problem per start)
  std::size_t prox_problems = 0; ///< proximal problems solved (starts summed over samples and iterations)
  std::size_t newton_steps = 0;  ///< accepted Levenberg–Marquardt steps
  int accelerated_steps = 0;     ///< iterations whose step was an Anderson extrapolation
  int acceleration_restarts = 0; ///< Anderson safeguard interventions (history cleared)
  double channel_seconds = 0;    ///< wall time spent on the channel side
};

struct fixed_point_result {
  solve_status status = solve_status::ok; ///< the worst over repeats
  std::string message;
  fixed_point_state state;   ///< mean over repeats with a finite state
  hat_variables hats;        ///< mean over the same repeats
  /// Mean test risk over repeats; stderr = seed-to-seed spread / √R (NaN for one repeat).
  mc_estimate test_risk{std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
  mc_estimate train_loss;               ///< same averaging
  double train_loss_regularised = 0;    ///< train_loss + (r_k q_kk + r_v q_vv)/(2α)
  int iterations = 0;                   ///< the largest over repeats
  double residual = 0;                  ///< the largest over repeats
  double nonpd_fraction = 0;            ///< mean over repeats
  std::vector<fixed_point_repeat> repeats;
  [[nodiscard]] model::order_parameters order_parameters() const { return state.order_parameters(); }
};

/// Physical checks of a converged fixed point (docs/theory.md §6).
/// unphysical: V not positive definite, or a regularised training objective above the zero
/// predictor's ½(1 + Δ²) — then it cannot be the ERM minimum it stands for.
/// other_branch: a teacher overlap m_kk* or m_vv* below −margin, i.e. a key or value anti-aligned
/// with the teacher, which no informed ERM run shows (for linear attention only one of them:
/// (k, v) → (−k, −v) leaves the predictor unchanged, so both negative is the mirrored state).
enum class fixed_point_verdict { consistent, other_branch, unphysical };
struct fixed_point_check {
  fixed_point_verdict verdict = fixed_point_verdict::consistent;
  std::string message; ///< empty when consistent; otherwise the numbers and what they mean
};
[[nodiscard]] fixed_point_check check_fixed_point(const fixed_point_result& result, const model::problem& problem,
                                                  double margin = 0.02);

class fixed_point_solver {
public:
  /// Throws std::invalid_argument for α ≤ 0, r < 0 or non-finite, bad options or problem.
  /// `activation` replaces the one of problem.activation in the channel (for activations
  /// outside the registry); the test risk still uses problem.activation, so set
  /// test_samples = 0 when they differ.
  fixed_point_solver(model::problem problem, double alpha, double r_k, double r_v, fixed_point_options options,
                     std::shared_ptr<const model::activation> activation = nullptr);

  /// All repeats; never throws for a solve that fails to converge (see status).
  [[nodiscard]] fixed_point_result solve(std::uint64_t seed) const;
  /// One solve on the MC sample of `sample_seed`, stopping at `deadline_s` seconds of wall time.
  [[nodiscard]] fixed_point_repeat solve_once(std::uint64_t sample_seed,
                                              double wall_time_limit_s = std::numeric_limits<double>::infinity()) const;

  /// The prior-side map (Λ + V̂)⁻¹ etc. for given hats: exposed for tests and for the ridge check.
  [[nodiscard]] fixed_point_state prior_update(const hat_variables& hats) const;

  [[nodiscard]] const model::problem& problem() const noexcept { return problem_; }

private:
  model::problem problem_;
  double alpha_, r_k_, r_v_;
  fixed_point_options options_;
  std::shared_ptr<const model::activation> activation_;
};

} // namespace slr::theory
