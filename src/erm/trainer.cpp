#include "slr/erm/trainer.hpp"

#include <sys/resource.h>

#include <LBFGS.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "slr/erm/normals.hpp"
#include "slr/erm/rkc.hpp"
#include "slr/model/number_text.hpp"

namespace slr::erm {
namespace {
using clock_type = std::chrono::steady_clock;

struct timeout_signal {};

// RKC's local-error tolerance when none is given (relative to |ŵ|). Its estimate is of the
// step's own O(h³) error, while the Heun controller bounds the O(h²) Euler–Heun difference at
// 1e-4. Measured against Heun at 1e-7 (D = 1000, α = 4, horizon 100, informed start), RKC at
// 1e-5 stays within 7e-5 (softmax) and 8e-5 (linear) of the reference in every order parameter
// along the trajectory — Heun at 1e-4: 5e-5 and 2e-5 — with 1.4× (softmax) to 3.4× (linear,
// r = 0.1) fewer evaluations; seeds scatter the order parameters by ~1e-2 at D = 5000.
constexpr double default_rkc_tolerance = 1e-5;

// F with bookkeeping shared by both optimisers: evaluation count and durations, the lowest
// objective seen (returned if the optimiser is interrupted), the wall-time limit.
class tracked_objective {
public:
  tracked_objective(const empirical_risk& risk, double time_limit_s)
      : risk_(risk), limit_(time_limit_s), start_(clock_type::now()) {}

  double operator()(const Eigen::VectorXd& w, Eigen::VectorXd& gradient) { return evaluate(w, gradient).objective; }

  loss_value evaluate(const Eigen::VectorXd& w, Eigen::VectorXd& gradient) {
    if (std::chrono::duration<double>(clock_type::now() - start_).count() > limit_) throw timeout_signal{};
    const auto t0 = clock_type::now();
    last_ = risk_.evaluate(w, gradient);
    seconds_.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    last_w_ = w;
    last_gradient_ = gradient;
    if (!(last_.objective >= best_objective_) && std::isfinite(last_.objective)) {
      best_objective_ = last_.objective;
      best_w_ = w;
    }
    return last_;
  }

  [[nodiscard]] std::size_t evaluations() const noexcept { return seconds_.size(); }
  [[nodiscard]] double median_seconds() const {
    if (seconds_.empty()) return 0.0;
    auto copy = seconds_;
    const auto mid = copy.begin() + static_cast<std::ptrdiff_t>(copy.size() / 2);
    std::nth_element(copy.begin(), mid, copy.end());
    return *mid;
  }
  [[nodiscard]] const Eigen::VectorXd& best_w() const noexcept { return best_w_; }
  [[nodiscard]] bool has_best() const noexcept { return best_w_.size() > 0; }

  // Loss and gradient at w, reusing the last evaluation when it was at exactly this w.
  loss_value at(const Eigen::VectorXd& w, Eigen::VectorXd& gradient) {
    if (last_w_.size() == w.size() && last_w_ == w) {
      gradient = last_gradient_;
      return last_;
    }
    const auto t0 = clock_type::now();
    last_ = risk_.evaluate(w, gradient);
    seconds_.push_back(std::chrono::duration<double>(clock_type::now() - t0).count());
    last_w_ = w;
    last_gradient_ = gradient;
    return last_;
  }

private:
  const empirical_risk& risk_;
  double limit_;
  clock_type::time_point start_;
  std::vector<double> seconds_;
  loss_value last_;
  Eigen::VectorXd last_w_, last_gradient_, best_w_;
  double best_objective_ = std::numeric_limits<double>::infinity();
};

double alpha_of(const empirical_risk& risk) {
  return static_cast<double>(risk.samples()) / static_cast<double>(risk.dimension());
}

trajectory_point make_point(double time, const empirical_risk& risk, const teacher& teacher, const Eigen::VectorXd& w,
                            const loss_value& value, const Eigen::VectorXd& gradient) {
  const auto D = static_cast<Eigen::Index>(risk.dimension());
  const auto N = static_cast<double>(risk.samples());
  return {time, measure_order_parameters(teacher, w.head(D), w.tail(D)), value.loss / N, value.objective / N,
          relative_gradient(risk, w, gradient)};
}

void finish(training_result& result, tracked_objective& objective, const empirical_risk& risk) {
  Eigen::VectorXd gradient;
  const auto value = objective.at(result.w, gradient);
  const auto N = static_cast<double>(risk.samples());
  result.train_loss = value.loss / N;
  result.train_loss_regularised = value.objective / N;
  result.rel_grad = relative_gradient(risk, result.w, gradient);
  result.gradient_evaluations = objective.evaluations();
  result.median_evaluation_s = objective.median_seconds();
}

// The scale b of the value block in L-BFGS's variables (k, v/b). L-BFGS starts each step from an
// inverse Hessian that is a multiple of the identity, which fits F badly when the ridges differ:
// the ridge curvature of the v block is r_v/r_k times that of the k block, and at α < 1 part of
// each block's directions see only its ridge. With b = √(r_k/r_v) both blocks carry the ridge r_k.
// Measured at √(ND) = 1000, α = 0.5 and 2, 4 seeds per cell (docs/theory.md §8): where r_k < r_v,
// 0.94–4.7× fewer evaluations (2.7× less time over those cells); where r_k > r_v up to 4× more,
// so it is applied only for r_k < r_v. 1 (unscaled) otherwise or when switched off.
double value_block_scale(const empirical_risk& risk, const trainer_settings& settings) {
  if (!settings.balance_ridges || !(risk.r_k() > 0) || !(risk.r_k() < risk.r_v())) return 1.0;
  return std::sqrt(risk.r_k() / risk.r_v());
}

training_result train_lbfgs(const empirical_risk& risk, Eigen::VectorXd w, const trainer_settings& settings) {
  LBFGSpp::LBFGSParam<double> param;
  param.m = static_cast<int>(settings.lbfgs_memory);
  param.epsilon = 0.0;
  param.epsilon_rel = settings.tolerance * alpha_of(risk); // |∇F| ≤ tol·α|w|  ⇔  rel_grad ≤ tol
  param.max_iterations = static_cast<int>(std::min<std::size_t>(settings.max_iterations, 1U << 30));
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  param.max_linesearch = 40;
  tracked_objective objective(risk, settings.wall_time_limit_s);
  training_result result;
  const double b = value_block_scale(risk, settings);
  const auto D = static_cast<Eigen::Index>(risk.dimension());
  double fx = 0;
  // LBFGSpp's line search reads a NaN objective as an acceptable point and keeps expanding its
  // step, and after max_linesearch trials it returns wherever it stands; near the rounding floor
  // of F (curvature pairs with s·y ≈ 0) that walked trainings into NaN weights and on for every
  // remaining iteration at 40 evaluations each. A non-finite F ends the run at the best point seen
  // instead (stop_reason::line_search, or tolerance if that point meets it).
  auto finite = [&](const Eigen::VectorXd& x, Eigen::VectorXd& gradient) {
    const double value = objective(x, gradient);
    if (!std::isfinite(value)) throw std::runtime_error("the loss is not finite at a trial point");
    return value;
  };
  try {
    if (b == 1.0) {
      LBFGSpp::LBFGSSolver<double, LBFGSpp::LineSearchNocedalWright> solver(param);
      result.iterations = static_cast<std::size_t>(solver.minimize(finite, w, fx));
    } else {
      // F(k, b u) in x = (k, u): its gradient is (∇_k F, b ∇_v F).
      auto scaled = [&](const Eigen::VectorXd& x, Eigen::VectorXd& gradient) {
        Eigen::VectorXd point = x;
        point.tail(D) *= b;
        const double value = finite(point, gradient);
        gradient.tail(D) *= b;
        return value;
      };
      Eigen::VectorXd x = w;
      x.tail(D) /= b;
      // L-BFGS's own test (|∇_x| ≤ ε|x|) is not rel_grad of (k, v); it runs with ε, rel_grad is
      // measured at its end point, and while that is above the tolerance it continues from there
      // with ε lowered by the factor it missed by (a restart, with a fresh curvature memory).
      double epsilon = param.epsilon_rel;
      for (int round = 0; round < 8; ++round) {
        param.epsilon_rel = epsilon;
        param.max_iterations = static_cast<int>(
            std::min<std::size_t>(settings.max_iterations - std::min(settings.max_iterations, result.iterations), 1U << 30));
        if (param.max_iterations == 0) break;
        LBFGSpp::LBFGSSolver<double, LBFGSpp::LineSearchNocedalWright> solver(param);
        result.iterations += static_cast<std::size_t>(solver.minimize(scaled, x, fx));
        w = x;
        w.tail(D) *= b;
        Eigen::VectorXd gradient;
        objective.at(w, gradient);
        const double reached = relative_gradient(risk, w, gradient);
        if (reached <= settings.tolerance) break;
        epsilon *= 0.5 * settings.tolerance / reached;
      }
    }
    result.w = w;
    result.stopped = stop_reason::tolerance; // refined below from the measured rel_grad
  } catch (const timeout_signal&) {
    result.stopped = stop_reason::timeout;
    result.message = "wall-time limit reached";
    result.w = objective.has_best() ? objective.best_w() : w;
  } catch (const std::runtime_error& e) {
    result.stopped = stop_reason::line_search;
    result.message = std::string("L-BFGS line search: ") + e.what();
    result.w = objective.has_best() ? objective.best_w() : w;
  }
  finish(result, objective, risk);
  if (result.stopped == stop_reason::tolerance && !(result.rel_grad <= settings.tolerance))
    result.stopped = stop_reason::iteration_cap;
  if (result.stopped == stop_reason::line_search && result.rel_grad <= settings.tolerance)
    result.stopped = stop_reason::tolerance; // the best point already met the tolerance
  return result;
}

// Spectral radius ρ of the flow's Jacobian −∇²F/α at w by the nonlinear power method on
// finite differences of the gradient (one evaluation per iteration), as the RKC solver of
// Sommeijer et al. does. `direction` carries the last eigenvector estimate between calls, so a
// re-estimate along the trajectory converges in a few iterations. Returns the last iterate's
// |J v|/|v|, which approaches ρ from below; the caller adds a safety margin.
double spectral_radius(tracked_objective& objective, double alpha, const Eigen::VectorXd& w,
                       const Eigen::VectorXd& gradient, Eigen::VectorXd& direction) {
  // A perturbation of relative size 1e-7: well above the rounding of the gradient (~1e-13
  // relative), well below the scale on which the Hessian varies.
  const double delta = 1e-7 * std::max(w.norm(), 1e-3);
  if (direction.size() != w.size() || !(direction.norm() > 0)) {
    direction = gradient;
    if (!(direction.norm() > 0)) direction = Eigen::VectorXd::Ones(w.size());
  }
  direction *= delta / direction.norm();
  Eigen::VectorXd perturbed_gradient;
  double rho = 0;
  constexpr int max_iterations = 20;
  for (int i = 0; i < max_iterations; ++i) {
    objective.evaluate(w + direction, perturbed_gradient);
    Eigen::VectorXd image = (perturbed_gradient - gradient) / alpha; // −J v
    const double norm = image.norm();
    if (!(norm > 0) || !std::isfinite(norm)) break;
    const double previous = rho;
    rho = norm / delta;
    direction = image * (delta / norm);
    if (i > 0 && std::abs(rho - previous) <= 0.01 * rho) break;
  }
  return rho;
}

// Gradient flow with both integrators sharing the recording, stopping and step control: each
// attempt proposes `trial` after `step` and its local-error estimate relative to |w| (infinite
// when not finite); RKC has already evaluated the loss + gradient at the trial (FSAL), Heun
// evaluates its accepted state afterwards.
training_result train_gradient_flow(const empirical_risk& risk, const teacher& teacher, Eigen::VectorXd w,
                                    const trainer_settings& settings) {
  const auto& times = settings.record_times;
  if (times.empty()) throw std::invalid_argument("gradient flow needs at least one recording time (the horizon)");
  for (std::size_t i = 0; i < times.size(); ++i) {
    if (!(times[i] >= 0) || !std::isfinite(times[i]))
      throw std::invalid_argument("gradient-flow recording times must be finite and >= 0");
    if (i > 0 && !(times[i] > times[i - 1]))
      throw std::invalid_argument("gradient-flow recording times must be strictly increasing");
  }
  const bool use_rkc = settings.integrator == flow_integrator::rkc;
  const double alpha = alpha_of(risk);
  const double tol = std::isnan(settings.flow_error_tolerance) ? (use_rkc ? default_rkc_tolerance : 1e-4)
                                                               : settings.flow_error_tolerance;
  tracked_objective objective(risk, settings.wall_time_limit_s);
  training_result result;
  Eigen::VectorXd gradient, trial_gradient, trial, eigen_direction;
  loss_value trial_value;
  double t = 0;
  std::size_t next = 0;
  try {
    auto value = objective.at(w, gradient);
    Eigen::VectorXd velocity = -gradient / alpha; // dw/dt
    const auto flow = [&](const Eigen::VectorXd& x, Eigen::VectorXd& fx) {
      objective.evaluate(x, fx);
      fx /= -alpha;
    };
    // RKC: ρ from the power method with a 20 % margin (it approaches ρ from below), re-estimated
    // every 25 accepted steps and after a rejected step, as the Hessian changes along the flow.
    double rho = 0;
    std::size_t since_estimate = 0;
    bool estimate_due = use_rkc;
    double h = 1e-2;
    while (true) {
      while (next < times.size() && times[next] <= t) {
        result.trajectory.push_back(make_point(times[next], risk, teacher, w, value, gradient));
        ++next;
      }
      if (next == times.size()) {
        result.stopped = stop_reason::horizon;
        break;
      }
      if (relative_gradient(risk, w, gradient) <= settings.tolerance) {
        result.stopped = stop_reason::tolerance;
        result.trajectory.push_back(make_point(t, risk, teacher, w, value, gradient));
        break;
      }
      if (result.iterations >= settings.max_iterations) {
        result.stopped = stop_reason::iteration_cap;
        result.trajectory.push_back(make_point(t, risk, teacher, w, value, gradient));
        break;
      }
      if (estimate_due) {
        rho = 1.2 * spectral_radius(objective, alpha, w, gradient, eigen_direction);
        estimate_due = false;
        since_estimate = 0;
      }
      const bool hits_record = t + h >= times[next];
      const double step = hits_record ? times[next] - t : h;
      double error = 0;
      if (use_rkc) {
        const auto scheme = rkc::make_scheme(rkc::stages_for(step * rho));
        rkc::step(scheme, flow, w, velocity, step, trial);
        trial_value = objective.evaluate(trial, trial_gradient);
        error = rkc::error_estimate(w, trial, velocity, -trial_gradient / alpha, step).norm();
      } else {
        // Heun (order 2) with the embedded Euler step as error estimate; the accepted state
        // w + h(v + v_trial)/2 is evaluated after acceptance.
        trial = w + step * velocity;
        objective.evaluate(trial, trial_gradient);
        const Eigen::VectorXd trial_velocity = -trial_gradient / alpha;
        error = 0.5 * step * (trial_velocity - velocity).norm();
        trial = w + 0.5 * step * (velocity + trial_velocity);
      }
      error /= std::max(w.norm(), 1e-300);
      if (!std::isfinite(error)) error = std::numeric_limits<double>::infinity();
      // Controller exponent: the Euler–Heun difference is O(h²), RKC's estimate O(h³).
      const double factor = error > 0 ? 0.9 * (use_rkc ? std::pow(tol / error, 1.0 / 3.0) : std::sqrt(tol / error)) : 5.0;
      if (error <= tol) {
        w.swap(trial);
        if (use_rkc) {
          value = trial_value;
          gradient.swap(trial_gradient);
        } else {
          value = objective.evaluate(w, gradient);
        }
        velocity = -gradient / alpha;
        t = hits_record ? times[next] : t + step;
        ++result.iterations;
        if (use_rkc) {
          // Shrink as well as grow after an accepted step, so the next one is not a likely
          // rejection (each costs s evaluations); a step cut short by a recording time says
          // nothing about the size h had.
          const double proposal = step * std::clamp(factor, 0.2, 5.0);
          h = hits_record ? std::max(h, proposal) : proposal;
        } else {
          h = std::max(step, h) * std::clamp(factor, 1.0, 5.0);
        }
        if (!std::isfinite(value.objective)) throw std::runtime_error("gradient flow diverged (non-finite loss)");
        if (use_rkc && ++since_estimate >= 25) estimate_due = true;
      } else {
        h = step * std::clamp(factor, 0.1, 0.9);
        if (use_rkc && since_estimate > 0) estimate_due = true;
      }
    }
  } catch (const timeout_signal&) {
    result.stopped = stop_reason::timeout;
    result.message = "wall-time limit reached";
  }
  result.w = w;
  result.flow_time = t;
  finish(result, objective, risk);
  return result;
}
} // namespace

model::order_parameters measure_order_parameters(const teacher& teacher, const Eigen::VectorXd& k,
                                                 const Eigen::VectorXd& v) {
  const auto D = static_cast<double>(teacher.dimension());
  model::order_parameters op;
  op.m_kk = teacher.k_star.dot(k) / D;
  op.m_vk = teacher.k_star.dot(v) / D;
  op.m_kv = teacher.v_star.dot(k) / D;
  op.m_vv = teacher.v_star.dot(v) / D;
  op.q_kk = k.squaredNorm() / D;
  op.q_kv = k.dot(v) / D;
  op.q_vv = v.squaredNorm() / D;
  return op;
}

initialisation parse_initialisation(std::string_view name) {
  if (name == "informed") return initialisation::informed;
  if (name == "random") return initialisation::random;
  if (name == "given") return initialisation::given;
  if (name == "overlaps") return initialisation::overlaps;
  throw std::invalid_argument("unknown initialisation '" + std::string(name) +
                              "' (expected informed, random, given or overlaps)");
}

Eigen::VectorXd weights_with_overlaps(const teacher& teacher, const model::order_parameters& op, std::uint64_t seed) {
  const std::size_t D = teacher.dimension();
  if (D < 4) throw std::invalid_argument("overlap initialisation needs D >= 4");
  for (double x : {op.m_kk, op.m_kv, op.m_vk, op.m_vv, op.q_kk, op.q_kv, op.q_vv})
    if (!std::isfinite(x)) throw std::invalid_argument("overlap initialisation: order parameters must be finite");
  // The residual Gram matrix R = Q − MᵀM of the parts orthogonal to the teacher (all /D) must
  // be PSD — the same admissibility test the rest of the code (and erm's option check) uses.
  const Eigen::Matrix2d R = op.residual();
  if (!op.is_admissible(1e-10))
    throw std::invalid_argument("overlap initialisation: Q - M^T M is not positive semi-definite (R_kk = " +
                                std::to_string(R(0, 0)) + ", R_kv = " + std::to_string(R(0, 1)) + ", R_vv = " +
                                std::to_string(R(1, 1)) + ")");
  // Cholesky factor of R (clipping the rounding-level negatives an admissible R may have).
  const double a = std::sqrt(std::max(R(0, 0), 0.0));
  const double b = a > 0 ? R(0, 1) / a : 0.0;
  const double c = std::sqrt(std::max(R(1, 1) - b * b, 0.0));
  // Two random directions, orthonormalised against k*, v* and each other (Gram–Schmidt twice),
  // scaled to |g|² = D like the teacher.
  const auto Di = static_cast<Eigen::Index>(D);
  const double scale = std::sqrt(static_cast<double>(D));
  Eigen::VectorXd g1(Di), g2(Di);
  normal_stream(seed, model::stream_purpose::initialisation, 1, 0).fill({g1.data(), D});
  normal_stream(seed, model::stream_purpose::initialisation, 1, 1).fill({g2.data(), D});
  const auto orthogonalise = [&](Eigen::VectorXd& g, const Eigen::VectorXd* other) {
    for (int pass = 0; pass < 2; ++pass) {
      g -= (g.dot(teacher.k_star) / teacher.k_star.squaredNorm()) * teacher.k_star;
      g -= (g.dot(teacher.v_star) / teacher.v_star.squaredNorm()) * teacher.v_star;
      if (other != nullptr) g -= (g.dot(*other) / other->squaredNorm()) * *other;
    }
    g *= scale / g.norm();
  };
  orthogonalise(g1, nullptr);
  orthogonalise(g2, &g1);
  Eigen::VectorXd w(2 * Di);
  w.head(Di) = op.m_kk * teacher.k_star + op.m_kv * teacher.v_star + a * g1;
  w.tail(Di) = op.m_vk * teacher.k_star + op.m_vv * teacher.v_star + b * g1 + c * g2;
  return w;
}

model::order_parameters parse_overlaps(std::string_view text) {
  std::array<double, 7> values{};
  std::size_t count = 0;
  std::size_t position = 0;
  while (position <= text.size()) {
    const std::size_t comma = std::min(text.find(',', position), text.size());
    const std::string item(text.substr(position, comma - position));
    const auto value = model::parse_number(item);
    if (!value || !std::isfinite(*value))
      throw std::invalid_argument("overlaps: '" + item + "' is not a finite number (expected m_kk,m_kv,m_vk,m_vv,q_kk,q_kv,q_vv)");
    if (count == values.size())
      throw std::invalid_argument("overlaps: more than 7 numbers (expected m_kk,m_kv,m_vk,m_vv,q_kk,q_kv,q_vv)");
    values[count++] = *value;
    position = comma + 1;
  }
  if (count != values.size())
    throw std::invalid_argument("overlaps: " + std::to_string(count) +
                                " numbers given, expected 7 (m_kk,m_kv,m_vk,m_vv,q_kk,q_kv,q_vv)");
  model::order_parameters op;
  op.m_kk = values[0];
  op.m_kv = values[1];
  op.m_vk = values[2];
  op.m_vv = values[3];
  op.q_kk = values[4];
  op.q_kv = values[5];
  op.q_vv = values[6];
  return op;
}

Eigen::VectorXd read_weights_file(const std::string& path, std::size_t dimension) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("initial weights file '" + path + "': cannot open it for reading");
  const std::size_t expected = 2 * dimension;
  Eigen::VectorXd w(static_cast<Eigen::Index>(expected));
  std::size_t count = 0, line_number = 0;
  std::string line;
  while (std::getline(in, line)) {
    ++line_number;
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string item;
    while (fields >> item) {
      const auto value = model::parse_number(item);
      const std::string where = "initial weights file '" + path + "', line " + std::to_string(line_number) + ": ";
      if (!value) throw std::invalid_argument(where + "'" + item + "' is not a number");
      if (!std::isfinite(*value)) throw std::invalid_argument(where + "'" + item + "' is not finite");
      if (count == expected)
        throw std::invalid_argument(where + "more than 2D = " + std::to_string(expected) + " numbers (k then v, D = " +
                                    std::to_string(dimension) + ")");
      w[static_cast<Eigen::Index>(count++)] = *value;
    }
  }
  if (in.bad()) throw std::invalid_argument("initial weights file '" + path + "': read error");
  if (count != expected)
    throw std::invalid_argument("initial weights file '" + path + "': " + std::to_string(count) +
                                " numbers, expected 2D = " + std::to_string(expected) + " (k then v, D = " +
                                std::to_string(dimension) + ")");
  return w;
}

Eigen::VectorXd initial_weights(const teacher& teacher, initialisation kind, double noise, std::uint64_t seed) {
  if (!(noise >= 0) || !std::isfinite(noise)) throw std::invalid_argument("init noise must be finite and >= 0");
  if (kind != initialisation::informed && kind != initialisation::random)
    throw std::invalid_argument("initial_weights: 'given' and 'overlaps' starts need read_weights_file / "
                                "weights_with_overlaps");
  const std::size_t D = teacher.dimension();
  const auto Di = static_cast<Eigen::Index>(D);
  Eigen::VectorXd w(2 * Di);
  normal_stream(seed, model::stream_purpose::initialisation, 0, 0).fill({w.data(), D});
  normal_stream(seed, model::stream_purpose::initialisation, 0, 1).fill({w.data() + D, D});
  w *= noise;
  if (kind == initialisation::informed) {
    w.head(Di) += teacher.k_star;
    w.tail(Di) += teacher.v_star;
  }
  return w;
}

flow_integrator parse_flow_integrator(std::string_view name) {
  if (name == "rkc") return flow_integrator::rkc;
  if (name == "heun") return flow_integrator::heun;
  throw std::invalid_argument("unknown flow integrator '" + std::string(name) + "' (expected rkc or heun)");
}

optimizer parse_optimizer(std::string_view name) {
  if (name == "lbfgs") return optimizer::lbfgs;
  if (name == "gradient-flow") return optimizer::gradient_flow;
  throw std::invalid_argument("unknown optimizer '" + std::string(name) + "' (expected lbfgs or gradient-flow)");
}

std::string_view stop_reason_name(stop_reason reason) noexcept {
  switch (reason) {
  case stop_reason::tolerance: return "tolerance";
  case stop_reason::iteration_cap: return "iteration_cap";
  case stop_reason::horizon: return "horizon";
  case stop_reason::line_search: return "line_search";
  case stop_reason::timeout: return "timeout";
  }
  return "unknown";
}

double relative_gradient(const empirical_risk& risk, const Eigen::VectorXd& w, const Eigen::VectorXd& gradient) {
  const double norm = w.norm();
  return norm > 0 ? gradient.norm() / (alpha_of(risk) * norm) : std::numeric_limits<double>::infinity();
}

training_result train(const empirical_risk& risk, const teacher& teacher, Eigen::VectorXd w0,
                      const trainer_settings& settings) {
  if (static_cast<std::size_t>(w0.size()) != 2 * risk.dimension())
    throw std::invalid_argument("initial weights have size " + std::to_string(w0.size()) + ", expected 2D = " +
                                std::to_string(2 * risk.dimension()));
  if (teacher.dimension() != risk.dimension()) throw std::invalid_argument("teacher and data dimensions differ");
  if (!(settings.tolerance > 0)) throw std::invalid_argument("tolerance must be > 0");
  if (settings.max_iterations == 0) throw std::invalid_argument("max iterations must be >= 1");
  if (settings.lbfgs_memory == 0) throw std::invalid_argument("L-BFGS memory must be >= 1");
  if (!std::isnan(settings.flow_error_tolerance) && !(settings.flow_error_tolerance > 0)) throw std::invalid_argument("gradient-flow error tolerance must be > 0");
  if (settings.method == optimizer::lbfgs) return train_lbfgs(risk, std::move(w0), settings);
  return train_gradient_flow(risk, teacher, std::move(w0), settings);
}

double peak_rss_mb() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(usage.ru_maxrss) * 1024.0 / 1e6; // ru_maxrss is in KiB on Linux; MB = 10^6 bytes
}

} // namespace slr::erm
