#include "slr/tied/thresholds.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <string>

#include "slr/tied/spectrum.hpp"

namespace slr::tied {

namespace {

void require(bool ok, const char* name, const char* reason) {
  if (!ok) throw std::invalid_argument(std::string(name) + ": " + reason);
}

// E_sc (x − t)^k_+ for x ~ semicircle √(4 − x²)/(2π) on [−2, 2], k = 1, 2, by Gauss–Legendre after
// x = t + (2 − t)(1 − cos θ)/2 (smooth at the square-root edge x = 2).
std::pair<double, double> semicircle_tail_moments(double t) {
  if (t >= 2) return {0, 0};
  const double lo = std::max(t, -2.0), half = 0.5 * (2 - lo);
  const auto& rule = gauss_legendre(200);
  double e1 = 0, e2 = 0;
  for (std::size_t i = 0; i < rule.nodes.size(); ++i) {
    const double theta = 0.5 * std::numbers::pi * (1 + rule.nodes[i]);
    const double x = lo + half * (1 - std::cos(theta));
    const double w = rule.weights[i] * 0.5 * std::numbers::pi * half * std::sin(theta) *
                     std::sqrt(std::max(0.0, 4 - x * x)) / (2 * std::numbers::pi);
    e1 += w * (x - t);
    e2 += w * (x - t) * (x - t);
  }
  return {e1, e2};
}

} // namespace

statistical_dimension psd_trace_statistical_dimension(double rho) {
  require(std::isfinite(rho) && rho > 0 && rho <= 1, "rho", "must be in (0, 1]");
  const double a = rho * (1 - rho), b = (1 - rho) * (1 - rho);
  // The objective is convex in t with derivative a t − b E(x − t)_+, increasing from −b E x_+ at 0:
  // bisection on the derivative over [0, 2] (at t = 2 it is 2a ≥ 0).
  double t = 0;
  if (b > 0) {
    double lo = 0, hi = 2;
    for (int it = 0; it < 200 && hi - lo > 1e-15; ++it) {
      const double mid = 0.5 * (lo + hi);
      (a * mid - b * semicircle_tail_moments(mid).first > 0 ? hi : lo) = mid;
    }
    t = 0.5 * (lo + hi);
  }
  const double e2 = semicircle_tail_moments(t).second;
  return {rho * rho / 2 + a + a * t * t / 2 + b / 2 * e2, t};
}

conic_thresholds conic_threshold(const problem& p) {
  p.validate();
  const double gauge_free = p.fields() - 1.0;
  conic_thresholds out;
  if (p.param == parametrisation::direct) {
    out.stat_dim_per_d2 = 0.5;
    out.alpha_rec = 0.5 / gauge_free;
    out.alpha_interp_lower = out.alpha_rec;
    return out;
  }
  const auto sd = psd_trace_statistical_dimension(p.k0);
  out.stat_dim_per_d2 = sd.per_d2;
  out.t_opt = sd.t_opt;
  out.alpha_rec = sd.per_d2 / gauge_free;
  out.alpha_interp_lower = 0.25 / gauge_free;
  return out;
}

rs_threshold rs_exponent_threshold(problem p, double lambda1, double lambda2, double alpha_lo, double alpha_hi,
                                   double alpha_tolerance, const theory_options& options) {
  require(std::isfinite(lambda2) && lambda2 > 0 && lambda1 > lambda2 && std::isfinite(lambda1), "lambda",
          "needs 0 < lambda2 < lambda1");
  require(std::isfinite(alpha_lo) && alpha_lo > 0 && alpha_hi > alpha_lo && std::isfinite(alpha_hi), "alpha",
          "needs 0 < alpha_lo < alpha_hi");
  require(std::isfinite(alpha_tolerance) && alpha_tolerance > 0, "alpha_tolerance", "must be finite and > 0");
  p.lambda = lambda1;
  p.alpha = alpha_lo;
  p.validate();
  rs_threshold out;
  // The larger λ is solved first and warm-starts the smaller one (V grows like 1/λ where the
  // solution interpolates, so the start is rescaled accordingly).
  const auto exponent = [&](double alpha) {
    p.alpha = alpha;
    p.lambda = lambda1;
    const auto r1 = solve_theory(p, options);
    theory_options o2 = options;
    o2.initial = r1.x;
    p.lambda = lambda2;
    const auto r2 = solve_theory(p, o2);
    out.fixed_points += 2;
    for (const auto* r : {&r1, &r2})
      if (r->status == theory_status::diverged)
        throw std::runtime_error("rs_exponent_threshold: fixed point diverged at alpha = " + std::to_string(alpha) +
                                 ": " + r->message);
    return std::log(r2.x.V / r1.x.V) / std::log(lambda1 / lambda2);
  };
  double plo = exponent(alpha_lo), phi = exponent(alpha_hi);
  // Interpolating (small α) side has p near 1, recovering/non-interpolating side near 0.
  if (!((plo - 0.5) * (phi - 0.5) < 0))
    throw std::invalid_argument("alpha: the exponents at the bracket ends (" + std::to_string(plo) + ", " +
                                std::to_string(phi) + ") do not bracket 1/2");
  double lo = alpha_lo, hi = alpha_hi;
  while (hi - lo > alpha_tolerance) {
    const double mid = 0.5 * (lo + hi), pm = exponent(mid);
    if ((pm - 0.5) * (plo - 0.5) > 0) {
      lo = mid;
      plo = pm;
    } else {
      hi = mid;
      phi = pm;
    }
  }
  out.alpha = 0.5 * (lo + hi);
  out.bracket_lo = lo;
  out.bracket_hi = hi;
  out.exponent_lo = plo;
  out.exponent_hi = phi;
  return out;
}

} // namespace slr::tied
