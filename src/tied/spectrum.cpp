#include "slr/tied/spectrum.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numbers>
#include <stdexcept>
#include <string>

namespace slr::tied {

namespace {

constexpr double pi = std::numbers::pi;

void require(bool ok, const char* name, const char* reason) {
  if (!ok) throw std::invalid_argument(std::string(name) + ": " + reason);
}

// Polynomials in x with ascending coefficients (tiny degrees only).
using poly = std::vector<double>;
poly mul(const poly& a, const poly& b) {
  poly c(a.size() + b.size() - 1, 0.0);
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t j = 0; j < b.size(); ++j) c[i + j] += a[i] * b[j];
  return c;
}
poly add(poly a, const poly& b, double cb = 1.0) {
  if (a.size() < b.size()) a.resize(b.size(), 0.0);
  for (std::size_t i = 0; i < b.size(); ++i) a[i] += cb * b[i];
  return a;
}
double eval(const poly& a, double x) {
  double v = 0;
  for (std::size_t i = a.size(); i-- > 0;) v = v * x + a[i];
  return v;
}
double eval_derivative(const poly& a, double x) {
  double v = 0;
  for (std::size_t i = a.size(); i-- > 1;) v = v * x + static_cast<double>(i) * a[i];
  return v;
}

} // namespace

const gauss_legendre_rule& gauss_legendre(int n) {
  require(n >= 1 && n <= 4096, "nodes", "Gauss-Legendre order must be in [1, 4096]");
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<gauss_legendre_rule>> cache;
  std::lock_guard lock(mutex);
  auto& slot = cache[n];
  if (slot) return *slot;
  auto rule = std::make_unique<gauss_legendre_rule>();
  rule->nodes.resize(n);
  rule->weights.resize(n);
  // Newton on the Legendre polynomial P_n from the Chebyshev-like guesses cos(π(i + 3/4)/(n + 1/2));
  // the three-term recurrence gives P_n and P_{n−1}, hence P_n'.
  const auto derivative = [n](double x, double& p_n) {
    double p0 = 1, p1 = x;
    for (int j = 2; j <= n; ++j) {
      const double p2 = ((2.0 * j - 1) * x * p1 - (j - 1.0) * p0) / j;
      p0 = p1;
      p1 = p2;
    }
    if (n == 1) p0 = 1;
    p_n = p1;
    return n * (x * p1 - p0) / (x * x - 1);
  };
  for (int i = 0; i < (n + 1) / 2; ++i) {
    double x = std::cos(pi * (i + 0.75) / (n + 0.5));
    double p_n = 0;
    for (int it = 0; it < 100; ++it) {
      const double slope = derivative(x, p_n);
      const double step = p_n / slope;
      x -= step;
      if (std::abs(step) < 1e-16) break;
    }
    const double dp = derivative(x, p_n);
    const double w = 2 / ((1 - x * x) * dp * dp);
    rule->nodes[i] = -x;
    rule->weights[i] = w;
    rule->nodes[n - 1 - i] = x;
    rule->weights[n - 1 - i] = w;
  }
  slot = std::move(rule);
  return *slot;
}

free_convolution::free_convolution(double k0, double delta, int nodes_per_interval)
    : k0_(k0), delta_(delta), n_(nodes_per_interval) {
  require(std::isfinite(k0) && k0 > 0 && k0 <= 1, "k0", "must be in (0, 1]");
  require(std::isfinite(delta) && delta > 0, "delta", "noise level of Y = S* + delta G must be finite and > 0");
  require(nodes_per_interval >= 8 && nodes_per_interval <= 4096, "nodes_per_interval", "must be in [8, 4096]");
  // Cubic in g: a3 g³ + a2 g² + a1 g + a0 with a3, a0 constant and a2, a1 linear in x. Its
  // discriminant, a quartic in x, is negative exactly where a complex pair exists (the support).
  const double r = std::sqrt(k0), d2 = delta * delta;
  const poly a3{-d2}, a2{r * d2, 1.0}, a1{k0 - 1.0, -r}, a0{r};
  poly disc = mul(mul(mul(a3, a2), a1), a0);
  for (double& c : disc) c *= 18;
  disc = add(disc, mul(mul(mul(a2, a2), a2), a0), -4);
  disc = add(disc, mul(mul(a2, a2), mul(a1, a1)));
  disc = add(disc, mul(a3, mul(mul(a1, a1), a1)), -4);
  disc = add(disc, mul(mul(a3, a3), mul(a0, a0)), -27);
  disc.resize(5, 0.0);
  Eigen::Matrix4d companion = Eigen::Matrix4d::Zero();
  for (int i = 1; i < 4; ++i) companion(i, i - 1) = 1;
  for (int i = 0; i < 4; ++i) companion(i, 3) = -disc[i] / disc[4];
  Eigen::EigenSolver<Eigen::Matrix4d> solver(companion, false);
  std::vector<double> breaks;
  for (int i = 0; i < 4; ++i) {
    const auto z = solver.eigenvalues()[i];
    // Nearly double roots (a small bulk about to detach) may come out with a tiny imaginary
    // part; keeping them as breakpoints is harmless because every piece is classified by the
    // sign of the discriminant at its midpoint and touching pieces are merged.
    if (std::abs(z.imag()) > 1e-6 * (1 + std::abs(z.real()))) continue;
    double x = z.real();
    for (int it = 0; it < 20; ++it) {
      const double dv = eval_derivative(disc, x);
      if (dv == 0) break;
      const double dx = eval(disc, x) / dv;
      if (!std::isfinite(dx) || std::abs(dx) > 1e-3 * (1 + std::abs(x))) break;
      x -= dx;
      if (std::abs(dx) < 1e-15 * (1 + std::abs(x))) break;
    }
    breaks.push_back(x);
  }
  std::sort(breaks.begin(), breaks.end());
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i) {
    const double lo = breaks[i], hi = breaks[i + 1];
    if (!(hi > lo)) continue;
    if (eval(disc, 0.5 * (lo + hi)) >= 0) continue;
    if (!support_.empty() && support_.back().hi == lo)
      support_.back().hi = hi;
    else
      support_.push_back({lo, hi});
  }
  if (support_.empty()) throw std::runtime_error("free_convolution: no support found (k0 = " + std::to_string(k0) +
                                                 ", delta = " + std::to_string(delta) + ")");
}

free_convolution::boundary_value free_convolution::at(double x) const noexcept {
  // Monic cubic g³ + B g² + C g + E; depressed by g = y − B/3 to y³ + p y + q = 0. With
  // D = (q/2)² + (p/3)³ > 0 there is one real root A + v (A = cbrt(−q/2 ∓ √D), v = −p/(3A), the
  // sign chosen against cancellation) and the pair −(A + v)/2 ± i(√3/2)(A − v).
  const double r = std::sqrt(k0_), d2 = delta_ * delta_;
  const double a3 = -d2, a2 = x + r * d2, a1 = -(r * x - k0_ + 1), a0 = r;
  const double B = a2 / a3, C = a1 / a3, E = a0 / a3;
  const double p = C - B * B / 3, q = 2 * B * B * B / 27 - B * C / 3 + E;
  const double D = 0.25 * q * q + p * p * p / 27;
  if (!(D > 0)) return {std::numeric_limits<double>::quiet_NaN(), 0.0};
  const double sq = std::sqrt(D);
  const double A = q > 0 ? -std::cbrt(0.5 * q + sq) : std::cbrt(-0.5 * q + sq);
  const double v = A != 0 ? -p / (3 * A) : 0.0;
  const double im = 0.5 * std::sqrt(3.0) * std::abs(A - v);
  return {-0.5 * (A + v) - B / 3, im / pi};
}

std::vector<free_convolution::node> free_convolution::nodes(double lo) const {
  const auto& rule = gauss_legendre(n_);
  std::vector<node> out;
  out.reserve(support_.size() * rule.nodes.size());
  for (const auto& iv : support_) {
    const double a = std::max(iv.lo, lo), b = iv.hi;
    if (!(b > a)) continue;
    const double half = 0.5 * (b - a);
    for (std::size_t i = 0; i < rule.nodes.size(); ++i) {
      const double theta = 0.5 * pi * (1 + rule.nodes[i]);
      const double x = a + half * (1 - std::cos(theta));
      const auto bv = at(x);
      if (!(bv.density > 0)) continue;
      out.push_back({x, rule.weights[i] * 0.5 * pi * half * std::sin(theta) * bv.density, bv.re});
    }
  }
  return out;
}

namespace {
// ∫_a^b ρ over a sub-interval of the support with the cos substitution.
double mass_between(const free_convolution& law, double a, double b, int n) {
  if (!(b > a)) return 0;
  const auto& rule = gauss_legendre(n);
  const double half = 0.5 * (b - a);
  double s = 0;
  for (std::size_t i = 0; i < rule.nodes.size(); ++i) {
    const double theta = 0.5 * pi * (1 + rule.nodes[i]);
    s += rule.weights[i] * std::sin(theta) * law.density(a + half * (1 - std::cos(theta)));
  }
  return s * 0.5 * pi * half;
}
} // namespace

double free_convolution::cdf(double x) const {
  double total = 0;
  for (const auto& iv : support_) {
    if (x <= iv.lo) break;
    const double full = mass_between(*this, iv.lo, iv.hi, 200);
    if (x >= iv.hi) {
      total += full;
      continue;
    }
    // Integrate over the shorter side, so the square-root edge inside the range stays an endpoint.
    total += (x - iv.lo < iv.hi - x) ? mass_between(*this, iv.lo, x, 200) : full - mass_between(*this, x, iv.hi, 200);
    break;
  }
  return std::clamp(total, 0.0, 1.0);
}

double free_convolution::quantile(double p) const {
  require(p >= 0 && p <= 1, "p", "quantile level must be in [0, 1]");
  if (p == 0) return support_.front().lo;
  if (p == 1) return support_.back().hi;
  double before = 0;
  for (std::size_t k = 0; k < support_.size(); ++k) {
    const auto& iv = support_[k];
    const double mass = mass_between(*this, iv.lo, iv.hi, 200);
    if (before + mass < p && k + 1 < support_.size()) {
      before += mass;
      continue;
    }
    // Safeguarded Newton on cdf(x) − p within [lo, hi] (the derivative is the density).
    double lo = iv.lo, hi = iv.hi, x = 0.5 * (lo + hi);
    for (int it = 0; it < 100; ++it) {
      const double f = cdf(x) - p;
      if (f > 0)
        hi = x;
      else
        lo = x;
      const double rho = density(x);
      double next = rho > 0 ? x - f / rho : 0.5 * (lo + hi);
      if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
      if (std::abs(next - x) < 1e-14 * (1 + std::abs(x)) || hi - lo < 1e-14 * (1 + std::abs(x))) return next;
      x = next;
    }
    return x;
  }
  return support_.back().hi;
}

spectral_functionals threshold_functionals(const free_convolution& law, double eps, double lo) {
  spectral_functionals F;
  for (const auto& nd : law.nodes(lo)) {
    const double f = nd.x - eps;
    F.A0 += nd.weight;
    F.A1 += nd.weight * f;
    F.A2 += nd.weight * f * f;
    F.B1 += nd.weight * f * nd.re_g;
    F.Xf += nd.weight * nd.x * f;
  }
  return F;
}

prior_result prior_update(const problem& p, const hat_variables& h, int nodes_per_interval) {
  p.validate();
  require(std::isfinite(h.q_hat) && h.q_hat > 0, "q_hat", "must be finite and > 0");
  require(std::isfinite(h.m_hat) && h.m_hat > 0, "m_hat", "must be finite and > 0");
  require(std::isfinite(h.V_hat) && h.V_hat > 0, "V_hat", "must be finite and > 0");
  prior_result r;
  const double Q0 = p.target_second_moment();
  r.delta = std::sqrt(h.q_hat) / h.m_hat;
  if (p.param == parametrisation::direct) {
    // Ridge denoiser Ŝ = (m̂ S* + √q̂ G)/(V̂ + 4λ): closed forms.
    const double den = h.V_hat + 4 * p.lambda;
    r.scale = h.m_hat / den;
    r.q = (h.m_hat * h.m_hat * Q0 + h.q_hat) / (den * den);
    r.m = h.m_hat * Q0 / den;
    r.V = 1 / den;
    r.eps = 0;
    r.cut = -std::numeric_limits<double>::infinity();
    r.rank_fraction = 1;
    r.atom_at_0 = 0;
    r.trace_per_d = r.scale * std::sqrt(p.k0); // Tr S*/d = √k0, Tr G/d → 0
    return r;
  }
  const free_convolution law(p.k0, r.delta, nodes_per_interval);
  r.eps = 2 * p.lambda / h.m_hat;
  r.scale = h.m_hat / h.V_hat;
  r.cut = r.eps;
  auto F = threshold_functionals(law, r.eps, r.cut);
  if (p.param == parametrisation::factorised && p.k < 1 && F.A0 > p.k) {
    // Width r = kd below the soft-threshold rank: keep only the top kd eigenvalues (rank-capped RS conjecture).
    r.cut = std::max(r.eps, law.quantile(1 - p.k));
    r.rank_capped = true;
    F = threshold_functionals(law, r.eps, r.cut);
  }
  const double s = r.scale, d2 = r.delta * r.delta;
  r.functionals = F;
  r.q = s * s * F.A2;
  r.V = 2 * F.B1 / h.V_hat;
  r.m = s * (F.Xf - 2 * d2 * F.B1);
  r.rank_fraction = F.A0;
  r.atom_at_0 = 1 - F.A0;
  r.trace_per_d = s * F.A1;
  return r;
}

estimator_spectrum spectrum_of_estimator(const problem& p, const prior_result& prior) {
  p.validate();
  require(std::isfinite(prior.delta) && prior.delta > 0, "delta", "prior result has no valid noise level");
  require(std::isfinite(prior.scale) && prior.scale > 0, "scale", "prior result has no valid scale");
  const free_convolution law(p.k0, prior.delta);
  estimator_spectrum out;
  const bool direct = p.param == parametrisation::direct;
  const double s = prior.scale, eps = direct ? 0.0 : prior.eps;
  const double cut = direct ? -std::numeric_limits<double>::infinity() : prior.cut;
  const auto map = [&](double x) { return s * (x - eps); };
  for (const auto& iv : law.support()) {
    if (iv.hi <= cut) continue;
    out.support.push_back({map(std::max(iv.lo, cut)), map(iv.hi)});
  }
  out.atom_at_0 = direct ? 0.0 : prior.atom_at_0;
  for (int i = 0; i <= 100; ++i) {
    const double pl = i / 100.0;
    out.quantile_p.push_back(pl);
    if (!direct && pl <= out.atom_at_0)
      out.quantiles.push_back(0.0);
    else
      out.quantiles.push_back(std::max(direct ? -std::numeric_limits<double>::infinity() : 0.0,
                                       map(std::max(law.quantile(pl), direct ? -1e300 : cut))));
  }
  if (out.support.empty()) return out;
  const double t0 = out.support.front().lo, t1 = out.support.back().hi;
  for (int i = 0; i < 200; ++i) {
    const double t = t0 + (t1 - t0) * i / 199.0;
    out.grid.push_back(t);
    const double x = eps + t / s;
    out.density.push_back(x >= cut ? law.density(x) / s : 0.0);
  }
  return out;
}

estimator_spectrum target_spectrum(double k0) {
  if (!(std::isfinite(k0) && k0 > 0 && k0 <= 1)) throw std::invalid_argument("k0: must be in (0, 1]");
  const double c = 1 / k0, root = std::sqrt(c), scale = std::sqrt(k0);
  const double lo = (root - 1) * (root - 1), hi = (root + 1) * (root + 1);
  estimator_spectrum out;
  out.atom_at_0 = 1 - k0;
  out.support.push_back({scale * lo, scale * hi});
  constexpr int points = 200;
  for (int i = 0; i < points; ++i) {
    const double w = lo + (hi - lo) * i / (points - 1);
    const double inside = std::max(0.0, 4 * c * w - (w - 1 + c) * (w - 1 + c));
    // At w = 0 (k0 = 1: lo = 0) the density diverges like w^{-1/2}; the grid point carries the
    // limit of its right neighbourhood's formula, infinite, which a plot clips.
    out.grid.push_back(scale * w);
    out.density.push_back(w > 0 ? std::sqrt(inside) / (2 * std::numbers::pi * c * w) / scale
                                : std::numeric_limits<double>::infinity());
  }
  return out;
}

} // namespace slr::tied
