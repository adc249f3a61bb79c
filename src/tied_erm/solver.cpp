#include "slr/tied_erm/solver.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <Eigen/Eigenvalues>
#include <LBFGS.h>

#include "slr/erm/normals.hpp"

namespace slr::tied_erm {

namespace {
void require(bool ok, const char* name, const std::string& reason) {
  if (!ok) throw std::invalid_argument(std::string(name) + ": " + reason);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Remembers the lowest objective value evaluated, so that a line-search failure (rounding floor)
// still returns the best point seen rather than a rejected trial point.
struct best_tracking {
  objective& f;
  Eigen::VectorXd best_u;
  double best = std::numeric_limits<double>::infinity();
  double best_gradient_norm = 0;
  std::size_t improvements = 0; // accepted iterations decrease f, so this tracks their count
  double operator()(const Eigen::VectorXd& u, Eigen::VectorXd& gradient) {
    const double value = f(u, gradient);
    // A line search that has lost all precision can step to non-finite points; end the run there.
    if (!std::isfinite(value) || !gradient.allFinite())
      throw std::runtime_error("non-finite objective or gradient at a line-search trial point");
    if (value < best) {
      ++improvements;
      best = value;
      best_u = u;
      best_gradient_norm = gradient.norm();
    }
    return value;
  }
};

// U (Λ − shift)_+ Uᵀ: the prox of shift·Tr + the PSD indicator (shift = 0: projection onto S ⪰ 0).
Eigen::MatrixXd soft_threshold_psd(const Eigen::MatrixXd& V, double shift) {
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(V);
  const Eigen::VectorXd kept = (eig.eigenvalues().array() - shift).max(0.0).matrix();
  Eigen::MatrixXd out = eig.eigenvectors() * kept.asDiagonal() * eig.eigenvectors().transpose();
  return 0.5 * (out + out.transpose());
}
} // namespace

std::string_view solver_status_name(solver_status s) noexcept {
  switch (s) {
  case solver_status::converged: return "converged";
  case solver_status::iteration_cap: return "iteration-cap";
  case solver_status::stalled: return "stalled";
  }
  return "converged";
}

void solver_settings::validate() const {
  require(std::isfinite(tolerance) && tolerance > 0, "tolerance", "must be finite and > 0");
  require(max_iterations >= 1, "max_iterations", "must be >= 1");
  require(lbfgs_memory >= 1, "lbfgs_memory", "must be >= 1");
  require(std::isfinite(init_scale) && init_scale > 0, "init_scale", "must be finite and > 0");
}

Eigen::MatrixXd initial_weights(std::size_t d, std::size_t r, double scale, std::uint64_t seed) {
  require(d >= 2, "d", "must be >= 2");
  require(r >= 1, "r", "must be >= 1");
  require(std::isfinite(scale) && scale > 0, "init_scale", "must be finite and > 0");
  Eigen::MatrixXd W(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(r));
  for (std::size_t j = 0; j < r; ++j)
    erm::normal_stream(seed, model::stream_purpose::initialisation, 0, static_cast<std::uint32_t>(j))
        .fill({W.col(static_cast<Eigen::Index>(j)).data(), d});
  return scale * W;
}

solution minimise_lbfgs(objective& f, Eigen::VectorXd u0, const solver_settings& settings) {
  settings.validate();
  require(static_cast<std::size_t>(u0.size()) == f.variables(), "u0", "has the wrong size");
  const auto start = std::chrono::steady_clock::now();
  const std::size_t evaluations0 = f.risk().evaluations();
  LBFGSpp::LBFGSParam<double> param;
  param.m = static_cast<int>(settings.lbfgs_memory);
  param.epsilon = 0.0;
  param.epsilon_rel = settings.tolerance;
  param.max_iterations = static_cast<int>(std::min<std::size_t>(settings.max_iterations, 1U << 30));
  param.linesearch = LBFGSpp::LBFGS_LINESEARCH_BACKTRACKING_STRONG_WOLFE;
  param.max_linesearch = 60;
  // Stall guard: the relative gradient cannot go below ~√(ε_mach · curvature/f) (the line search
  // compares objective values), so stop when 10 iterations move f by less than 1e-15 relative.
  param.past = 10;
  param.delta = 1e-15;
  LBFGSpp::LBFGSSolver<double, LBFGSpp::LineSearchNocedalWright> lbfgs(param);
  best_tracking tracked{f, u0, std::numeric_limits<double>::infinity(), 0, 0};

  solution out;
  Eigen::VectorXd u = u0;
  double value = 0;
  try {
    out.report.iterations = static_cast<std::size_t>(lbfgs.minimize(tracked, u, value));
    out.report.status = out.report.iterations >= settings.max_iterations ? solver_status::iteration_cap
                                                                          : solver_status::stalled;
  } catch (const std::exception& e) { // line-search failures: runtime_error / logic_error
    out.report.status = solver_status::stalled;
    out.report.message = e.what();
    // LBFGS++ does not report the iterations completed before a line-search failure; the number
    // of decreases of the best value (one per accepted step, the start counted) stands in for it.
    out.report.iterations = tracked.improvements > 0 ? tracked.improvements - 1 : 0;
  }
  const Eigen::VectorXd& best = tracked.best_u;
  out.report.evaluations = f.risk().evaluations() - evaluations0;
  out.report.objective_per_d2 = tracked.best;
  out.report.gradient_norm = tracked.best_gradient_norm;
  out.report.relative_gradient = tracked.best_gradient_norm / std::max(best.norm(), std::numeric_limits<double>::min());
  if (out.report.relative_gradient <= settings.tolerance) {
    out.report.status = solver_status::converged;
    out.report.message.clear();
  } else if (out.report.status == solver_status::stalled && out.report.message.empty()) {
    out.report.message = "objective unchanged to 1e-15 over 10 iterations";
  }
  out.S = f.matrix(best);
  if (f.problem().param == tied::parametrisation::factorised) {
    const auto d = static_cast<double>(f.dimension()), r = static_cast<double>(f.columns());
    out.W = Eigen::Map<const Eigen::MatrixXd>(best.data(), static_cast<Eigen::Index>(f.dimension()),
                                              static_cast<Eigen::Index>(f.columns())) *
            std::pow(r * d * d * d, 0.25);
  }
  out.report.wall_seconds = seconds_since(start);
  return out;
}

// FISTA (Beck–Teboulle) on f(S) = ℒ(S)/d² + (λ/d) Tr S + ι{S ⪰ 0} with a backtracking Lipschitz
// estimate L (tried 10 % smaller every iteration, doubled until the quadratic upper bound holds)
// and the gradient restart of O'Donoghue–Candès (momentum dropped when the step turns against the
// last move), which recovers linear convergence near a minimiser of rank < d.
solution minimise_psd_nuclear(const tied::problem& problem, empirical_risk& risk, const Eigen::MatrixXd& S0,
                              const solver_settings& settings) {
  settings.validate();
  problem.validate();
  const std::size_t dz = risk.data().dimension();
  require(static_cast<std::size_t>(S0.rows()) == dz && static_cast<std::size_t>(S0.cols()) == dz, "S0", "must be d×d");
  const auto start = std::chrono::steady_clock::now();
  const std::size_t evaluations0 = risk.evaluations();
  const double d = static_cast<double>(dz), dd = d * d;
  const double shift_per_L = problem.lambda / d; // prox of (λ/d) Tr with step 1/L
  const double alpha = static_cast<double>(risk.data().size()) / dd;

  Eigen::MatrixXd S = soft_threshold_psd(S0.selfadjointView<Eigen::Upper>(), 0.0);
  Eigen::MatrixXd Y = S, grad, S_new, D;
  double t = 1;
  double L = alpha * problem.beta * problem.beta / d; // the curvature scale of ℒ/d²; backtracking adapts it
  solution out;
  out.report.status = solver_status::iteration_cap;
  double step_norm = 0, relative_step = std::numeric_limits<double>::infinity();
  std::size_t it = 0;
  for (; it < settings.max_iterations; ++it) {
    const double fY = risk.loss(Y, &grad) / dd;
    grad /= dd;
    L *= 0.9;
    double f_new = 0;
    for (;;) {
      S_new = soft_threshold_psd(Y - grad / L, shift_per_L / L);
      D = S_new - Y;
      f_new = risk.loss(S_new) / dd;
      const double bound = fY + (grad.array() * D.array()).sum() + 0.5 * L * D.squaredNorm();
      if (f_new <= bound + 1e-14 * std::abs(fY)) break;
      L *= 2;
    }
    step_norm = D.norm();
    relative_step = step_norm / std::max(S_new.norm(), std::numeric_limits<double>::min());
    const Eigen::MatrixXd move = S_new - S;
    if ((-D.array() * move.array()).sum() > 0) t = 1; // restart: the step opposes the last move
    const double t_next = 0.5 * (1 + std::sqrt(1 + 4 * t * t));
    Y = S_new + ((t - 1) / t_next) * move;
    S = S_new;
    t = t_next;
    out.report.objective_per_d2 = f_new + problem.lambda * S.trace() / d;
    if (relative_step <= settings.tolerance) {
      out.report.status = solver_status::converged;
      ++it;
      break;
    }
  }
  out.S = S;
  out.report.iterations = it;
  out.report.evaluations = risk.evaluations() - evaluations0;
  out.report.gradient_norm = L * step_norm;
  out.report.relative_gradient = relative_step;
  out.report.wall_seconds = seconds_since(start);
  return out;
}

solution solve(const tied::problem& problem, const dataset& data, const solver_settings& settings,
               std::uint64_t seed) {
  problem.validate();
  settings.validate();
  const std::size_t d = data.dimension();
  if (problem.param == tied::parametrisation::psd_nuclear) {
    empirical_risk risk(problem, data);
    return minimise_psd_nuclear(problem, risk, Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d)),
                                settings);
  }
  objective f(problem, data);
  if (problem.param == tied::parametrisation::factorised && settings.convex_start) {
    tied::problem convex_problem = problem;
    convex_problem.param = tied::parametrisation::psd_nuclear;
    const auto convex = minimise_psd_nuclear(convex_problem, f.risk(), Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(d), static_cast<Eigen::Index>(d)),
                                             settings);
    // W Wᵀ/√(r d) = V_r Λ_r V_rᵀ for W = V_r Λ_r^{1/2} (r d)^{1/4}: the top r eigenpairs (ascending order).
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(convex.S);
    const auto r = static_cast<Eigen::Index>(f.columns());
    const Eigen::Index kept = std::min<Eigen::Index>(r, static_cast<Eigen::Index>(d));
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(d), r);
    const double scale = std::pow(static_cast<double>(r) * static_cast<double>(d), 0.25);
    for (Eigen::Index j = 0; j < kept; ++j) {
      const Eigen::Index e = static_cast<Eigen::Index>(d) - 1 - j;
      W.col(j) = eig.eigenvectors().col(e) * std::sqrt(std::max(eig.eigenvalues()(e), 0.0)) * scale;
    }
    auto out = minimise_lbfgs(f, f.from_weights(W), settings);
    out.report.iterations += convex.report.iterations;
    out.report.evaluations += convex.report.evaluations;
    out.report.wall_seconds += convex.report.wall_seconds;
    out.report.message = "convex start (" + std::to_string(convex.report.iterations) + " APG iterations, " +
                         std::string(solver_status_name(convex.report.status)) + ")" +
                         (out.report.message.empty() ? "" : "; " + out.report.message);
    return out;
  }
  if (problem.param == tied::parametrisation::factorised)
    return minimise_lbfgs(f, f.from_weights(initial_weights(d, f.columns(), settings.init_scale, seed)), settings);
  return minimise_lbfgs(f, Eigen::VectorXd::Zero(static_cast<Eigen::Index>(f.variables())), settings);
}

double kkt_residual(const tied::problem& problem, empirical_risk& risk, const Eigen::MatrixXd& S) {
  const std::size_t dz = risk.data().dimension();
  require(static_cast<std::size_t>(S.rows()) == dz && static_cast<std::size_t>(S.cols()) == dz, "S", "must be d×d");
  const Eigen::MatrixXd P = soft_threshold_psd(S.selfadjointView<Eigen::Upper>(), 0.0);
  require(P.norm() > 0, "S", "must have a positive part (the residual is relative to ‖S‖)");
  const double d = static_cast<double>(dz);
  const double alpha = static_cast<double>(risk.data().size()) / (d * d);
  Eigen::MatrixXd G;
  (void)risk.loss(P, &G);
  G.diagonal().array() += problem.lambda * d;
  const double tau = 1.0 / (alpha * d * problem.beta * problem.beta);
  return (P - soft_threshold_psd(P - tau * G, 0.0)).norm() / P.norm();
}

} // namespace slr::tied_erm
