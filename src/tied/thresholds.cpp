#include "slr/tied/thresholds.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
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

namespace {

double round_12(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.12g", x);
  return std::strtod(text, nullptr);
}

double decade(double lambda_max, int j) { return round_12(lambda_max * std::pow(10.0, -j)); }

// V at each λ of a decade chain lambda_max, lambda_max/10, ..., down to `last`, each solve
// warm-starting the next. Returns the exponent of the last two.
struct chain_solver {
  problem p;
  theory_options options;
  int fixed_points = 0;

  double exponent(double alpha, double lambda_start, double lambda1, double lambda2) {
    p.alpha = alpha;
    theory_options o = options;
    double lambda = lambda_start, V1 = 0;
    for (;;) {
      p.lambda = lambda;
      const auto r = solve_theory(p, o);
      ++fixed_points;
      if (r.status == theory_status::diverged)
        throw std::runtime_error("rs_exponent_threshold: fixed point diverged at alpha = " + std::to_string(alpha) +
                                 ", lambda = " + std::to_string(lambda) + ": " + r.message);
      if (lambda <= lambda2 * (1 + 1e-12)) return std::log(r.x.V / V1) / std::log(lambda1 / lambda2);
      if (lambda <= lambda1 * (1 + 1e-12)) {
        V1 = r.x.V;
        lambda = lambda2;
      } else {
        lambda = std::max(round_12(lambda / 10), lambda1);
      }
      o.initial = r.x;
    }
  }
};

// Bisection for the crossing of 1/2 on [lo, hi]; false (and nothing changed) if the ends do not
// bracket it.
template <class Exponent>
bool bisect(Exponent&& exponent, double lo, double hi, double tolerance, rs_threshold& out) {
  double plo = exponent(lo), phi = exponent(hi);
  if (!((plo - 0.5) * (phi - 0.5) < 0)) {
    out.exponent_lo = plo;
    out.exponent_hi = phi;
    return false;
  }
  while (hi - lo > tolerance) {
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
  return true;
}

void require_bracket(double alpha_lo, double alpha_hi, double alpha_tolerance) {
  require(std::isfinite(alpha_lo) && alpha_lo > 0 && alpha_hi > alpha_lo && std::isfinite(alpha_hi), "alpha",
          "needs 0 < alpha_lo < alpha_hi");
  require(std::isfinite(alpha_tolerance) && alpha_tolerance > 0, "alpha_tolerance", "must be finite and > 0");
}

std::invalid_argument no_bracket(const rs_threshold& r) {
  return std::invalid_argument("alpha: the exponents at the bracket ends (" + std::to_string(r.exponent_lo) + ", " +
                               std::to_string(r.exponent_hi) + ") do not bracket 1/2");
}

} // namespace

rs_threshold rs_exponent_threshold(problem p, double lambda1, double lambda2, double alpha_lo, double alpha_hi,
                                   double alpha_tolerance, const theory_options& options) {
  require(std::isfinite(lambda2) && lambda2 > 0 && lambda1 > lambda2 && std::isfinite(lambda1), "lambda",
          "needs 0 < lambda2 < lambda1");
  require_bracket(alpha_lo, alpha_hi, alpha_tolerance);
  p.lambda = lambda1;
  p.alpha = alpha_lo;
  p.validate();
  chain_solver chain{p, options};
  rs_threshold out;
  // The larger λ is solved first and warm-starts the smaller one.
  const auto exponent = [&](double alpha) { return chain.exponent(alpha, lambda1, lambda1, lambda2); };
  // Interpolating (small α) side has p near 1, recovering/non-interpolating side near 0.
  const bool found = bisect(exponent, alpha_lo, alpha_hi, alpha_tolerance, out);
  out.fixed_points = chain.fixed_points;
  if (!found) throw no_bracket(out);
  return out;
}

void extrapolate_threshold(rs_threshold_limit& limit) {
  const auto& c = limit.crossings;
  require(!c.empty(), "crossings", "needs at least one");
  const std::size_t n = c.size();
  const double half = c.back().half_width;
  limit.alpha = c.back().alpha;
  limit.step_ratio = 0;
  if (n == 1) {
    limit.extrapolation = "single";
    limit.uncertainty = half;
    return;
  }
  const double last = c[n - 1].alpha - c[n - 2].alpha;
  if (n >= 3) {
    const double before = c[n - 2].alpha - c[n - 3].alpha;
    const double r = before != 0 ? last / before : 0;
    if (r > 0 && r < 1) {
      limit.extrapolation = "geometric";
      limit.step_ratio = r;
      limit.alpha = c.back().alpha + last * r / (1 - r);
      limit.uncertainty = std::max(std::abs(limit.alpha - c.back().alpha), std::abs(last)) + half;
      return;
    }
  }
  limit.extrapolation = "last-step";
  // Steps that grow or change sign: the crossings have not settled, and the next decade may move
  // as far as either of the last two did.
  const double before = n >= 3 ? std::abs(c[n - 2].alpha - c[n - 3].alpha) : 0.0;
  limit.uncertainty = std::max(std::abs(last), before) + half;
}

rs_threshold_limit rs_exponent_threshold_limit(const problem& p0, double lambda_max, double lambda_min, double alpha_lo,
                                               double alpha_hi, double alpha_tolerance, const theory_options& options) {
  require(std::isfinite(lambda_max) && std::isfinite(lambda_min) && lambda_min > 0 &&
              lambda_min <= lambda_max / 10 * (1 + 1e-12),
          "lambda", "needs 0 < lambda_min <= lambda_max/10");
  require_bracket(alpha_lo, alpha_hi, alpha_tolerance);
  problem p = p0;
  p.lambda = lambda_max;
  p.alpha = alpha_lo;
  p.validate();
  chain_solver chain{p, options};
  rs_threshold_limit out;
  for (int j = 0;; ++j) {
    // λ_max·10^{-j} to 12 significant digits, so 1e-3 → 1e-6 are the decimal numbers themselves.
    const double lambda1 = decade(lambda_max, j), lambda2 = decade(lambda_max, j + 1);
    if (lambda2 < lambda_min * (1 - 1e-9)) break;
    const auto exponent = [&](double alpha) { return chain.exponent(alpha, lambda_max, lambda1, lambda2); };
    rs_threshold r;
    bool found = false;
    if (!out.crossings.empty()) {
      const double prev = out.crossings.back().alpha;
      const double lo = std::max(alpha_lo, prev - rs_limit_bracket_step);
      const double hi = std::min(alpha_hi, prev + rs_limit_bracket_step);
      found = hi > lo && bisect(exponent, lo, hi, alpha_tolerance, r);
    }
    if (!found && !bisect(exponent, alpha_lo, alpha_hi, alpha_tolerance, r)) {
      out.fixed_points = chain.fixed_points;
      throw no_bracket(r);
    }
    out.crossings.push_back({lambda1, lambda2, r.alpha, 0.5 * (r.bracket_hi - r.bracket_lo)});
  }
  out.fixed_points = chain.fixed_points;
  extrapolate_threshold(out);
  return out;
}

} // namespace slr::tied
