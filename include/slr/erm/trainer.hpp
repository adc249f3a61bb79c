#pragma once
// Training of the attention predictor on the empirical risk F (loss.hpp) and what is measured.
//
// Relative gradient (the stopping quantity): rel_grad = |∇F(w)| / (α |w|), α = N/D. It is the
// gradient of the per-sample objective F/N with respect to the normalised weights ŵ = w/√D,
// divided by |ŵ|, so it does not scale with N, D or the size of the weights.
//
// Optimisers: L-BFGS (LBFGS++, strong-Wolfe line search of Nocedal–Wright) — the default; and
// gradient flow dŵ/dt = −∇_ŵ(F/N) (i.e. dw/dt = −∇F/α), recording the order parameters at
// chosen times t (in these natural units, in which the order parameters move at O(1) rates).
// The flow is stiff (the Hessian's top eigenvalue ρ, set by the data, is 10–100× the rate at
// which the order parameters move), so it is integrated by adaptive second-order
// Runge–Kutta–Chebyshev steps (rkc.hpp) whose stage count follows a power-method estimate of ρ;
// the adaptive Heun–Euler pair, held at h ≤ 2/ρ, remains as the classical reference.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "slr/erm/data.hpp"
#include "slr/erm/loss.hpp"
#include "slr/model/order_parameters.hpp"

namespace slr::erm {

/// The 7 order parameters of (k, v) against the teacher (all /D).
[[nodiscard]] model::order_parameters measure_order_parameters(const teacher& teacher, const Eigen::VectorXd& k,
                                                               const Eigen::VectorXd& v);

enum class initialisation {
  informed, ///< k = k* + η g, v = v* + η g'
  random,   ///< k = η g, v = η g'
  given,    ///< weights read from a file (read_weights_file)
  overlaps, ///< random weights with prescribed order parameters (weights_with_overlaps)
};
/// Parses "informed", "random", "given" or "overlaps"; throws std::invalid_argument otherwise.
[[nodiscard]] initialisation parse_initialisation(std::string_view name);

/// Initial w = [k; v]: informed k = k* + η g, v = v* + η g' (g, g' ~ N(0, I_D)); random
/// k = η g, v = η g' (so |k|²/D ≈ η²). Stream (seed, initialisation). Throws if η < 0 or for
/// the kinds that need more input (given, overlaps: use the functions below).
[[nodiscard]] Eigen::VectorXd initial_weights(const teacher& teacher, initialisation kind, double noise,
                                              std::uint64_t seed);

/// w = [k; v] with exactly the 7 given order parameters (up to rounding): the teacher part
/// k = m_kk k* + m_kv v*, v = m_vk k* + m_vv v*, plus random directions orthogonal to k*, v* (and
/// to each other) carrying the Cholesky factor of R = Q − MᵀM. Used for warm starts along an
/// α-chain and for --init overlaps. Stream (seed, initialisation). Throws std::invalid_argument
/// if the parameters are not finite or R is not positive semi-definite (tolerance 1e-10), or D < 4.
[[nodiscard]] Eigen::VectorXd weights_with_overlaps(const teacher& teacher, const model::order_parameters& overlaps,
                                                    std::uint64_t seed);

/// Parses "m_kk,m_kv,m_vk,m_vv,q_kk,q_kv,q_vv" (7 comma-separated numbers); throws
/// std::invalid_argument naming the bad item.
[[nodiscard]] model::order_parameters parse_overlaps(std::string_view text);

/// Reads 2D numbers k_1 … k_D v_1 … v_D (whitespace-separated; '#' starts a comment), e.g. the
/// output of numpy.savetxt(path, numpy.concatenate([k, v])). Throws std::invalid_argument naming
/// the file, the line and the reason (unreadable, not a number, not finite, wrong count).
[[nodiscard]] Eigen::VectorXd read_weights_file(const std::string& path, std::size_t dimension);

enum class optimizer { lbfgs, gradient_flow };
/// Parses "lbfgs" or "gradient-flow"; throws std::invalid_argument otherwise.
[[nodiscard]] optimizer parse_optimizer(std::string_view name);

enum class flow_integrator {
  rkc,  ///< Runge–Kutta–Chebyshev (order 2, s stages with h·ρ ≤ β(s) ≈ 0.65 s²), its own error estimate
  heun, ///< Heun (order 2), step controlled by the embedded Euler step's error, stable for h·ρ ≤ 2
};
/// Parses "rkc" or "heun"; throws std::invalid_argument otherwise.
[[nodiscard]] flow_integrator parse_flow_integrator(std::string_view name);

/// What ended the training.
enum class stop_reason {
  tolerance,     ///< rel_grad ≤ tolerance
  iteration_cap, ///< max_iterations reached
  horizon,       ///< gradient flow reached the last recording time
  line_search,   ///< the L-BFGS line search could not make progress (rounding floor)
  timeout,       ///< wall-time limit
};
[[nodiscard]] std::string_view stop_reason_name(stop_reason reason) noexcept;

struct trainer_settings {
  optimizer method = optimizer::lbfgs;
  double tolerance = 1e-6;           ///< on rel_grad, > 0
  std::size_t max_iterations = 10000; ///< L-BFGS iterations or accepted gradient-flow steps, ≥ 1
  double wall_time_limit_s = std::numeric_limits<double>::infinity();
  std::size_t lbfgs_memory = 10;     ///< L-BFGS correction pairs
  /// L-BFGS in the variables (k, v/b), b = √(r_k/r_v), when 0 < r_k < r_v: both blocks then carry
  /// the same ridge (~2× fewer evaluations at weak r_k; the end point is another stationary point
  /// of the same non-convex F, so single trainings move). No effect otherwise.
  bool balance_ridges = false;
  /// Gradient flow: times at which to record (sorted, ≥ 0); the last one is the horizon.
  std::vector<double> record_times;
  flow_integrator integrator = flow_integrator::rkc;
  /// Local error per step relative to |ŵ|, > 0; NaN: the integrator's default (rkc: its own
  /// estimate ≤ 1e-5; heun: the Euler step's error ≤ 1e-4 — trajectories within ~1e-4 of an
  /// accurate one in every order parameter).
  double flow_error_tolerance = std::numeric_limits<double>::quiet_NaN();
};

struct trajectory_point {
  double time = 0;
  model::order_parameters overlaps;
  double train_loss = 0;             ///< Σ½(y − f)² / N
  double train_loss_regularised = 0; ///< F / N
  double rel_grad = 0;
};

struct training_result {
  Eigen::VectorXd w;                 ///< final [k; v]
  stop_reason stopped = stop_reason::tolerance;
  std::string message;               ///< detail (e.g. the line-search error)
  std::size_t iterations = 0;
  std::size_t gradient_evaluations = 0;
  double rel_grad = 0;
  double train_loss = 0;             ///< Σ½(y − f)² / N at w
  double train_loss_regularised = 0; ///< F(w) / N
  double median_evaluation_s = 0;    ///< median wall time of one loss + gradient evaluation
  double flow_time = 0;              ///< gradient flow: time reached
  std::vector<trajectory_point> trajectory; ///< gradient flow only
};

/// Minimises F from w0. Throws std::invalid_argument on bad settings or a w0 of wrong size.
[[nodiscard]] training_result train(const empirical_risk& risk, const teacher& teacher, Eigen::VectorXd w0,
                                    const trainer_settings& settings);

/// |∇F| / (α|w|) as defined above.
[[nodiscard]] double relative_gradient(const empirical_risk& risk, const Eigen::VectorXd& w,
                                       const Eigen::VectorXd& gradient);

/// Peak resident memory of this process in MB (10^6 bytes, from getrusage), or NaN where unavailable.
[[nodiscard]] double peak_rss_mb();

} // namespace slr::erm
