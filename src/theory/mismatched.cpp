#include "slr/theory/mismatched.hpp"

#include <LBFGSB.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

#include "slr/model/activation.hpp"
#include "slr/model/parallel.hpp"
#include "slr/model/random.hpp"
#include "slr/model/teacher_fields.hpp"

namespace slr::theory {
namespace {

constexpr std::size_t chunk_size = 512;

// Linear attention (σ_l = 1 + χ_l) makes the per-sample risk e a polynomial in θ. With u_l =
// (χ*_l, z*_l, ξ_l), θ_χ = (m_kk, m_kv, a), θ_z = (m_vk, m_vv, b): χ_l = θ_χ·u_l, z̄_l = θ_z·u_l, and
// with s = Σ_l u_l, Q = Σ_l u_l u_lᵀ,
//   f̄ = θ_z·s + θ_χᵀQθ_z = g(θ)·φ,  φ = (s, Q row by row) ∈ R¹², g = (θ_z, θ_χ ⊗ θ_z),
//   Σ_l σ_l² = L + 2θ_χ·s + θ_χᵀQθ_χ.
// The weighted sum of e over the sample is then Σw·second − 2g·B + gᵀMg + c²(ΣwL + 2θ_χ·S₁ + θ_χᵀQ₁θ_χ)
// with the moments below, formed in one pass: an evaluation costs O(12²) instead of a pass over
// the S·L tokens (the swapped descents of linear attention take ~10³ evaluations). The sums differ
// from the sample-by-sample ones by rounding only (a relative 1e-13 at |θ| ≤ 40, the descent's box).
struct linear_moments {
  Eigen::Matrix<double, 12, 12> M = Eigen::Matrix<double, 12, 12>::Zero(); // Σ w φφᵀ
  Eigen::Matrix<double, 12, 1> B = Eigen::Matrix<double, 12, 1>::Zero();   // Σ w ȳ φ
  Eigen::Vector3d S1 = Eigen::Vector3d::Zero();                            // Σ w s
  Eigen::Matrix3d Q1 = Eigen::Matrix3d::Zero();                            // Σ w Q
  double length = 0, second = 0;                                           // Σ w L, Σ w·second
  linear_moments& operator+=(const linear_moments& o) {
    M += o.M, B += o.B, S1 += o.S1, Q1 += o.Q1, length += o.length, second += o.second;
    return *this;
  }
};

// The fixed sample of a descent: teacher fields and one student-noise normal ξ_l per token (the
// first normal of the student-noise stream, as population_risk draws it).
// Per sample also the two θ-independent terms of the risk, ȳ = Σ_j p_j z*_j and Σ_j p_j z*_j²,
// formed once instead of in every evaluation (the same sums, so the same values).
struct sample {
  model::teacher_fields fields;
  std::vector<double> xi;          // S × max_length
  std::vector<double> y_bar, second; // S
  std::optional<linear_moments> linear; // set for linear attention (with_linear_moments)
};

sample draw(const model::problem& problem, const mc_settings& mc) {
  sample s{model::draw_teacher_fields(problem.task, problem.lengths, mc.samples, mc.seed, mc.threads), {}, {}, {}, {}};
  const auto& f = s.fields;
  s.xi.assign(f.size() * f.max_length, 0.0);
  s.y_bar.assign(f.size(), 0.0);
  s.second.assign(f.size(), 0.0);
  for (std::size_t i = 0; i < f.size(); ++i) {
    model::counter_rng rng(mc.seed, model::stream_purpose::student_noise, i);
    for (std::size_t l = 0; l < f.length[i]; ++l) s.xi[i * f.max_length + l] = rng.normal();
    const auto zs = f.z(i), p = f.p(i);
    double y_bar = 0, second = 0;
    for (std::size_t l = 0; l < f.length[i]; ++l) {
      y_bar += p[l] * zs[l];
      second += p[l] * zs[l] * zs[l];
    }
    s.y_bar[i] = y_bar;
    s.second[i] = second;
  }
  return s;
}

// Every stride-th sample, packed (teacher_fields::every).
sample every(const sample& smp, std::size_t stride) {
  return {smp.fields.every(stride), model::every_row(smp.xi, smp.fields.max_length, stride),
          model::every_row(smp.y_bar, 1, stride), model::every_row(smp.second, 1, stride), std::nullopt};
}

// The moments of linear_moments over the sample, in fixed chunks (the same sums for any thread count).
void with_linear_moments(sample& smp, unsigned threads) {
  const auto& f = smp.fields;
  smp.linear = model::chunked_reduce(f.size(), chunk_size, threads, linear_moments{},
                                     [&](std::size_t begin, std::size_t end, linear_moments& acc) {
    Eigen::Matrix<double, 12, 1> phi;
    for (std::size_t i = begin; i < end; ++i) {
      const double w = f.weight[i];
      const std::size_t L = f.length[i];
      const auto cs = f.chi(i), zs = f.z(i);
      const double* xi = smp.xi.data() + i * f.max_length;
      Eigen::Vector3d s = Eigen::Vector3d::Zero();
      Eigen::Matrix3d Q = Eigen::Matrix3d::Zero();
      for (std::size_t l = 0; l < L; ++l) {
        const Eigen::Vector3d u(cs[l], zs[l], xi[l]);
        s += u;
        Q.noalias() += u * u.transpose();
      }
      phi.head<3>() = s;
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) phi[3 + 3 * a + b] = Q(a, b);
      acc.M.noalias() += w * phi * phi.transpose();
      acc.B += (w * smp.y_bar[i]) * phi;
      acc.S1 += w * s;
      acc.Q1 += w * Q;
      acc.length += w * static_cast<double>(L);
      acc.second += w * smp.second[i];
    }
  });
}

struct accumulator {
  double value = 0;
  std::array<double, 7> gradient{};
  accumulator& operator+=(const accumulator& o) {
    value += o.value;
    for (std::size_t k = 0; k < 7; ++k) gradient[k] += o.gradient[k];
    return *this;
  }
};

// The weighted sum of e and its gradient from the moments (linear attention; see linear_moments).
accumulator evaluate_linear(const linear_moments& mo, const std::array<double, 7>& t, bool with_gradient,
                            double weight_scale) {
  const Eigen::Vector3d tc(t[0], t[2], t[4]), tz(t[1], t[3], t[5]);
  const double c = t[6];
  Eigen::Matrix<double, 12, 1> g;
  g.head<3>() = tz;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) g[3 + 3 * a + b] = tc[a] * tz[b];
  const Eigen::Matrix<double, 12, 1> Mg = mo.M * g;
  const Eigen::Vector3d Qtc = mo.Q1 * tc;
  const double sigma_squares = mo.length + 2 * tc.dot(mo.S1) + tc.dot(Qtc);
  accumulator acc;
  acc.value = weight_scale * (mo.second - 2 * g.dot(mo.B) + g.dot(Mg) + c * c * sigma_squares);
  if (with_gradient) {
    const Eigen::Matrix<double, 12, 1> r = 2 * (Mg - mo.B); // ∂/∂g
    Eigen::Vector3d d_tc = 2 * c * c * (mo.S1 + Qtc), d_tz = r.head<3>();
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) {
        d_tc[a] += r[3 + 3 * a + b] * tz[b];
        d_tz[b] += r[3 + 3 * a + b] * tc[a];
      }
    acc.gradient = {d_tc[0], d_tz[0], d_tc[1], d_tz[1], d_tc[2], d_tz[2], 2 * c * sigma_squares};
    for (double& v : acc.gradient) v *= weight_scale;
  }
  return acc;
}

// Per sample, with χ_l = m_kk χ*_l + m_kv z*_l + a ξ_l and z̄_l = m_vk χ*_l + m_vv z*_l + b ξ_l (the
// c-part of z, independent Gaussian, integrated exactly):
//   e = Σ_j p_j z*_j² − 2 ȳ f̄ + f̄² + c² Σ_l σ_l²,  ȳ = Σ_j p_j z*_j,  f̄ = Σ_l σ_l z̄_l,
// and its gradient (g = 2(f̄ − ȳ); ∂e/∂z̄_l = g σ_l; ∂e/∂χ = Jᵀ(g z̄ + 2c²σ); ∂e/∂c = 2c Σσ²).
// The weights are multiplied by weight_scale (teacher_fields::strided_weight_scale for a
// subsample of every stride-th sample, packed by every()).
accumulator evaluate(const sample& smp, const model::activation& sigma, const std::array<double, 7>& t,
                     unsigned threads, bool with_gradient, double weight_scale = 1.0) {
  if (smp.linear) return evaluate_linear(*smp.linear, t, with_gradient, weight_scale);
  const auto& f = smp.fields;
  const double m_kk = t[0], m_vk = t[1], m_kv = t[2], m_vv = t[3], a = t[4], b = t[5], c = t[6];
  return model::chunked_reduce(f.size(), chunk_size, threads, accumulator{},
                               [&](std::size_t begin, std::size_t end, accumulator& acc) {
    std::vector<double> chi(f.max_length), zbar(f.max_length), sig(f.max_length), u(f.max_length),
        jtu(f.max_length), work(f.max_length);
    // The chunk's sums live in locals, not in `acc`: stores through acc's doubles may alias the
    // work vectors, which kept every sum in memory. Each chunk starts from zero, so adding the
    // locals to acc at the end gives the same sums bit for bit.
    double value = 0, g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0;
    for (std::size_t s = begin; s < end; ++s) {
      const double w = f.weight[s] * weight_scale; // exact for the whole sample (scale 1)
      const std::size_t L = f.length[s];
      const auto cs = f.chi(s), zs = f.z(s);
      const double* xi = smp.xi.data() + s * f.max_length;
      const double y_bar = smp.y_bar[s], second = smp.second[s];
      for (std::size_t l = 0; l < L; ++l) {
        chi[l] = m_kk * cs[l] + m_kv * zs[l] + a * xi[l];
        zbar[l] = m_vk * cs[l] + m_vv * zs[l] + b * xi[l];
      }
      double f_bar = 0, sig_sq = 0;
      if (with_gradient) {
        // First σ (for g), then Jᵀu with u = g z̄ + 2c²σ from the same linearisation.
        sigma.linearise({chi.data(), L}, {sig.data(), L}, {work.data(), L});
        for (std::size_t l = 0; l < L; ++l) f_bar += sig[l] * zbar[l], sig_sq += sig[l] * sig[l];
        const double g = 2 * (f_bar - y_bar);
        for (std::size_t l = 0; l < L; ++l) u[l] = g * zbar[l] + 2 * c * c * sig[l];
        sigma.jacobian_transpose({sig.data(), L}, {work.data(), L}, {u.data(), L}, {jtu.data(), L});
        for (std::size_t l = 0; l < L; ++l) {
          const double G = jtu[l], H = g * sig[l];
          g0 += w * G * cs[l];
          g2 += w * G * zs[l];
          g4 += w * G * xi[l];
          g1 += w * H * cs[l];
          g3 += w * H * zs[l];
          g5 += w * H * xi[l];
        }
        g6 += w * 2 * c * sig_sq;
      } else {
        sigma.evaluate({chi.data(), L}, {sig.data(), L});
        for (std::size_t l = 0; l < L; ++l) f_bar += sig[l] * zbar[l], sig_sq += sig[l] * sig[l];
      }
      value += w * (second - 2 * y_bar * f_bar + f_bar * f_bar + c * c * sig_sq);
    }
    acc.value += value;
    const std::array<double, 7> g{g0, g1, g2, g3, g4, g5, g6};
    for (std::size_t k = 0; k < 7; ++k) acc.gradient[k] += g[k];
  });
}

// Per-sample values at θ, for the Monte Carlo error of the risk at the end point.
std::vector<double> per_sample_values(const sample& smp, const model::activation& sigma, const std::array<double, 7>& t) {
  const auto& f = smp.fields;
  std::vector<double> values(f.size());
  std::vector<double> chi(f.max_length), zbar(f.max_length), sig(f.max_length);
  for (std::size_t s = 0; s < f.size(); ++s) {
    const std::size_t L = f.length[s];
    const auto cs = f.chi(s), zs = f.z(s);
    const double* xi = smp.xi.data() + s * f.max_length;
    const double y_bar = smp.y_bar[s], second = smp.second[s];
    double f_bar = 0, sig_sq = 0;
    for (std::size_t l = 0; l < L; ++l) {
      chi[l] = t[0] * cs[l] + t[2] * zs[l] + t[4] * xi[l];
      zbar[l] = t[1] * cs[l] + t[3] * zs[l] + t[5] * xi[l];
    }
    sigma.evaluate({chi.data(), L}, {sig.data(), L});
    for (std::size_t l = 0; l < L; ++l) f_bar += sig[l] * zbar[l], sig_sq += sig[l] * sig[l];
    values[s] = second - 2 * y_bar * f_bar + f_bar * f_bar + t[6] * t[6] * sig_sq;
  }
  return values;
}

double norm(const std::array<double, 7>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}

} // namespace

std::string_view mismatched_outcome_name(mismatched_outcome outcome) noexcept {
  switch (outcome) {
  case mismatched_outcome::distinct: return "distinct";
  case mismatched_outcome::collapsed: return "collapsed";
  case mismatched_outcome::runaway: return "runaway";
  case mismatched_outcome::not_converged: return "not-converged";
  }
  return "distinct";
}

model::order_parameters order_parameters_of(const std::array<double, 7>& t) {
  Eigen::Matrix2d M;
  M << t[0], t[1], t[2], t[3];
  Eigen::Matrix2d Lr;
  Lr << t[4], 0, t[5], t[6];
  return model::order_parameters::from_matrices(M, M.transpose() * M + Lr * Lr.transpose());
}

double seven_parameter_risk(const model::problem& problem, const mc_settings& mc, const std::array<double, 7>& theta,
                            std::array<double, 7>* gradient, risk_evaluation how) {
  problem.validate();
  if (mc.samples == 0) throw std::invalid_argument("samples must be >= 1");
  const auto sigma = model::make_activation(problem.activation);
  const bool linear = problem.activation.kind == model::activation_kind::linear;
  if (how == risk_evaluation::moments && !linear)
    throw std::invalid_argument("the closed form of the mismatched risk exists for linear attention only");
  auto smp = draw(problem, mc);
  if (linear && how != risk_evaluation::per_sample) with_linear_moments(smp, mc.threads);
  const auto acc = evaluate(smp, *sigma, theta, mc.threads, gradient != nullptr);
  if (gradient != nullptr) *gradient = acc.gradient;
  return problem.delta * problem.delta + acc.value;
}

std::array<double, 7> balanced_gauge(const std::array<double, 7>& theta) {
  // k-side (m_kk, m_kv, a) = θ_0, θ_2, θ_4; v-side (m_vk, m_vv, b, c) = θ_1, θ_3, θ_5, θ_6.
  const double k = std::sqrt(theta[0] * theta[0] + theta[2] * theta[2] + theta[4] * theta[4]);
  const double v = std::sqrt(theta[1] * theta[1] + theta[3] * theta[3] + theta[5] * theta[5] + theta[6] * theta[6]);
  if (!(k > 0) || !(v > 0) || !std::isfinite(k) || !std::isfinite(v)) return theta;
  const double s = std::sqrt(v / k);
  std::array<double, 7> out = theta;
  for (const std::size_t i : {0u, 2u, 4u}) out[i] *= s;
  for (const std::size_t i : {1u, 3u, 5u, 6u}) out[i] /= s;
  return out;
}

mismatched_minimum minimise_from_swapped_start(const model::problem& problem, const mc_settings& mc,
                                               const mismatched_settings& settings) {
  problem.validate();
  if (mc.samples == 0) throw std::invalid_argument("samples must be >= 1");
  if (!(settings.box > 1) || !(settings.first_step_cap > 0))
    throw std::invalid_argument("mismatched descent: box must be > 1 and first_step_cap > 0");
  const auto sigma = model::make_activation(problem.activation);
  const bool linear = problem.activation.kind == model::activation_kind::linear;
  auto smp = draw(problem, mc);
  if (linear) with_linear_moments(smp, mc.threads);
  mismatched_minimum out;
  const double delta2 = problem.delta * problem.delta;
  // The objective of the whole sample (stride 1) or of every stride-th sample (the screening
  // phase below), its weights renormalised to sum to 1.
  std::size_t stride = 1;
  double weight_scale = 1.0;
  sample screening_sample; // every stride-th sample of smp, packed (filled below when screening)
  int screening_evaluations = 0;
  auto value_and_gradient = [&](const std::array<double, 7>& t, std::array<double, 7>& g) {
    ++(stride == 1 ? out.evaluations : screening_evaluations);
    const auto acc = evaluate(stride == 1 ? smp : screening_sample, *sigma, t, mc.threads, true, weight_scale);
    g = acc.gradient;
    return delta2 + acc.value;
  };

  const auto clamp = [&](std::array<double, 7>& x) {
    for (auto& v : x) v = std::clamp(v, -settings.box, settings.box);
  };
  // The objective seen by L-BFGS-B, remembering the lowest point it was asked about: a line search
  // that gives up leaves x at its last trial, not at the best point.
  struct objective_fn {
    std::function<double(const std::array<double, 7>&, std::array<double, 7>&)> fn;
    double best_value = std::numeric_limits<double>::infinity();
    std::array<double, 7> best{}, best_gradient{};
    double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
      std::array<double, 7> a{}, ga{};
      for (int k = 0; k < 7; ++k) a[static_cast<std::size_t>(k)] = x[k];
      const double v = fn(a, ga);
      for (int k = 0; k < 7; ++k) grad[k] = ga[static_cast<std::size_t>(k)];
      if (v < best_value) best_value = v, best = a, best_gradient = ga;
      return v;
    }
  };
  // Projected gradient in the box (components pushing out of an active bound removed).
  const auto projected_norm = [&](const std::array<double, 7>& x, const std::array<double, 7>& g) {
    double s = 0;
    for (std::size_t k = 0; k < 7; ++k) {
      const bool held = (x[k] <= -settings.box && g[k] > 0) || (x[k] >= settings.box && g[k] < 0);
      if (!held) s += g[k] * g[k];
    }
    return std::sqrt(s);
  };
  // L-BFGS-B in the box. On the Monte Carlo objective the More–Thuente line search gives up well
  // before a minimum where the curvature is small (a flat valley, a slow slide along it); the
  // descent then restarts, with a fresh curvature memory, from restart_at(the best point seen)
  // until the projected gradient is below `gradient_tolerance` or a restart no longer lowers the
  // objective. Returns the objective with its best point.
  const auto lbfgs_with_restarts = [&](objective_fn objective, const auto& restart_at) {
    LBFGSpp::LBFGSBParam<double> param;
    param.epsilon = settings.gradient_tolerance;
    param.epsilon_rel = 0;
    param.max_iterations = settings.lbfgs_iterations;
    param.max_linesearch = 60;
    LBFGSpp::LBFGSBSolver<double> solver(param);
    const Eigen::VectorXd lower = Eigen::VectorXd::Constant(7, -settings.box),
                          upper = Eigen::VectorXd::Constant(7, settings.box);
    for (int restart = 0; restart < settings.lbfgs_restarts; ++restart) {
      if (projected_norm(objective.best, objective.best_gradient) <= settings.gradient_tolerance) break;
      const double before = objective.best_value;
      const std::array<double, 7> start = restart_at(objective.best);
      Eigen::VectorXd x(7);
      for (int k = 0; k < 7; ++k) x[k] = start[static_cast<std::size_t>(k)];
      double fx = before;
      try {
        solver.minimize(objective, x, fx, lower, upper);
      } catch (const std::exception&) {
        // The line search could not progress: restart from the best point below.
      }
      if (!(objective.best_value < before - 1e-13 * std::max(1.0, std::abs(before)))) break;
    }
    return objective;
  };
  const auto same_point = [](const std::array<double, 7>& x) { return x; };
  // From t (value and gradient known there).
  const auto lbfgs = [&](std::array<double, 7> t, double value, std::array<double, 7> g) {
    return lbfgs_with_restarts(objective_fn{value_and_gradient, value, t, g}, same_point).best;
  };
  // One descent from the swapped start M = [[0, 1], [1, 0]], R = 0: optionally capped first steps
  // (no line search may jump from the swapped start onto a saturated plateau), then L-BFGS-B in the box.
  const auto descend = [&](bool capped) {
    std::array<double, 7> t{0, 1, 1, 0, 0, 0, 0};
    std::array<double, 7> g{};
    double value = value_and_gradient(t, g);
    double scale = 1.0;
    for (int it = 0; capped && it < settings.capped_iterations && norm(g) >= settings.capped_until; ++it) {
      const double gn = norm(g);
      const double length = std::min(settings.first_step_cap, scale * gn);
      std::array<double, 7> trial = t;
      for (std::size_t k = 0; k < 7; ++k) trial[k] -= length * g[k] / gn;
      clamp(trial);
      std::array<double, 7> trial_g{};
      const double trial_value = value_and_gradient(trial, trial_g);
      if (trial_value < value) {
        t = trial, g = trial_g, value = trial_value;
        scale = std::min(1.0, scale * 2);
      } else {
        scale *= 0.5;
        if (scale < 1e-8) break;
      }
    }
    return lbfgs(t, value, g);
  };
  // Both descents, the lower end point kept: the plain one is what a gradient method does from the
  // swapped start; the capped one rescues it where its first line search lands on a saturated
  // plateau (then the plain end point is the higher one). The capped walk alone can slide off to
  // |k| → ∞ where the plain descent reaches the matched minimum (linear attention, max-SLR).
  //
  // With S ≥ 2·screening_samples both descents first run on every stride-th sample (stride =
  // S/screening_samples), where their hundreds to thousands of steps cost 1/stride each, and each end
  // point is then polished on the whole sample (L-BFGS-B with restarts, as above); the lower
  // polished point is kept. An interior minimum is a point of the whole sample's objective that
  // the polish converges to. A descent that heads for the box (|θ_i| > box/2: |k| → ∞, or a matched
  // minimum beyond the box) ends where its walk along a flat direction stops, which depends on the
  // path, so then both descents run again on the whole sample, as without screening.
  const std::size_t screen_stride = smp.fields.size() / std::max<std::size_t>(1, settings.screening_samples);
  const auto far_out = [&](const std::array<double, 7>& x) {
    return std::any_of(x.begin(), x.end(), [&](double v) { return std::abs(v) > 0.5 * settings.box; });
  };
  std::array<double, 7> plain{}, capped{};
  bool screened = false;
  if (screen_stride >= 2) {
    stride = screen_stride;
    weight_scale = smp.fields.strided_weight_scale(stride);
    // Packed: a strided pass over the whole sample was latency-bound (4× the time per token of a
    // pass over a packed subsample at S = 10⁵, L = 10), and the sums are the same in the same order.
    screening_sample = every(smp, stride);
    if (linear) with_linear_moments(screening_sample, mc.threads);
    plain = descend(false);
    capped = descend(true);
    stride = 1;
    weight_scale = 1.0;
    screening_sample = {};
    if (!far_out(plain) && !far_out(capped)) {
      std::array<double, 7> g0{};
      const double v0 = value_and_gradient(plain, g0);
      plain = lbfgs(plain, v0, g0);
      std::array<double, 7> g1{};
      const double v1 = value_and_gradient(capped, g1);
      capped = lbfgs(capped, v1, g1);
      screened = !far_out(plain) && !far_out(capped);
    }
  }
  if (!screened) {
    plain = descend(false);
    capped = descend(true);
  }
  std::array<double, 7> t = plain;
  std::array<double, 7> g{};
  double value = value_and_gradient(t, g);
  {
    std::array<double, 7> other_g{};
    const double other_value = value_and_gradient(capped, other_g);
    if (other_value < value) t = capped, g = other_g, value = other_value;
  }
  // In units of whole-sample evaluations (a subsample evaluation costs 1/stride of one).
  if (screen_stride >= 2)
    out.evaluations += (screening_evaluations + static_cast<int>(screen_stride) - 1) / static_cast<int>(screen_stride);

  out.theta = t;
  out.argmin = order_parameters_of(t);
  out.gradient_norm = norm(g);
  out.descended_risk = stratified_estimate(smp.fields, per_sample_values(smp, *sigma, t));
  out.descended_risk.value += delta2;
  out.risk = out.descended_risk;
  out.matched = minimise_population_risk(problem, mc);
  // The descent lives in the box |θ_i| ≤ box; where the matched minimum lies beyond it (|k| → ∞ for
  // softmax at max-SLR ν = ∞, a large but finite |k| for the softplus kernel there) the descent
  // can only fall back to the matched minimum within the box, which is then the reference point.
  const auto outside = [&](const population_minimum& pm) {
    return std::abs(pm.argmin.m_kk) > settings.box || std::sqrt(std::max(0.0, pm.argmin.residual()(0, 0))) > settings.box;
  };
  out.matched_in_box = outside(out.matched) ? minimise_population_risk(problem, mc, {settings.box}) : out.matched;

  // E on this estimator and sample, at the matched argmin (R = LLᵀ by Cholesky), so that ℶ − E
  // carries no difference between estimators.
  const auto& em = out.matched_in_box.argmin;
  const Eigen::Matrix2d R = em.residual();
  const double ea = std::sqrt(std::max(0.0, R(0, 0)));
  const double eb = ea > 1e-12 ? R(0, 1) / ea : 0.0;
  const std::array<double, 7> matched_theta{em.m_kk, em.m_vk, em.m_kv, em.m_vv, ea, eb,
                                             std::sqrt(std::max(0.0, R(1, 1) - eb * eb))};
  const double matched_here = delta2 + evaluate(smp, *sigma, matched_theta, mc.threads, false).value;
  out.matched_risk_same_estimator = matched_here;

  const bool at_box = std::any_of(t.begin(), t.end(), [&](double v) { return std::abs(v) >= settings.box * (1 - 1e-6); });
  // A descent that stopped short of a stationary point (its line search gave up on a slope too
  // shallow to resolve) while still heading outward, −∇𝓔·θ > 0, is on its way to the box.
  double outward = 0;
  for (std::size_t k = 0; k < 7; ++k) outward -= g[k] * t[k];
  const bool stationary = projected_norm(t, g) <= settings.stationary_gradient;
  const bool heading_out = !stationary && outward > 0;
  // Linear attention has no flat orbit, but far out along (s·k-side, v-side/s) its risk differs
  // from the bilinear limit only by O(1/s): a descent can come to rest there with a gradient below
  // the tolerance. An end point whose k-side outweighs its v-side a hundredfold (s ≥ 10) is on
  // the runaway path, not at a distinct minimum.
  const double k_side = std::sqrt(t[0] * t[0] + t[2] * t[2] + t[4] * t[4]);
  const double v_side = std::sqrt(t[1] * t[1] + t[3] * t[3] + t[5] * t[5] + t[6] * t[6]);
  const bool on_runaway_path = linear && k_side > 100 * v_side;
  const auto& e = em;
  const auto& m = out.argmin;
  // Back at the matched minimum: on 𝓜 (a distinct minimum has all four entries of M non-zero),
  // the same risk, and the same m_kk, m_vv. At large ν the matched minimum is flat along m_kk
  // (𝓔 changes by ~1e-4 over a few per cent of m_kk ~ ν for the softplus kernel), so m_kk is
  // compared relatively.
  const bool same_overlaps = std::abs(m.m_kv) < 0.05 && std::abs(m.m_vk) < 0.05 &&
                             std::abs(std::abs(m.m_kk) - std::abs(e.m_kk)) < 0.05 * std::max(1.0, std::abs(e.m_kk)) &&
                             std::abs(std::abs(m.m_vv) - std::abs(e.m_vv)) < 0.05;
  if (std::abs(out.risk.value - matched_here) < 2e-4 && same_overlaps) {
    // The end point is the matched minimum: ℶ = E. Its order parameters are reported from the
    // matched minimisation on 𝓜, whose estimator integrates z* exactly: the seven-parameter
    // estimator samples z*, and along the flat m_kk direction its minimiser scatters several times
    // more between samples (max-SLR, L = 3, erf, ν ≥ 10: ±0.015 against ±0.004).
    out.outcome = mismatched_outcome::collapsed;
    out.argmin = e;
    out.risk = out.matched_in_box.risk;
  } else if (at_box || heading_out || on_runaway_path) {
    out.outcome = mismatched_outcome::runaway;
    if (linear) {
      // |k| → ∞, |v| → 0 with k vᵀ finite: f = Σ_l (1 + χ_l) z̄_l tends to the bilinear Σ_l χ_l z̄_l,
      // whose risk depends on (k, v) only through sym(k vᵀ). ℶ is its minimum over the basin the
      // descent ran into: 𝓔 at (s·k-side, v-side/s), s = 1e4 (the neglected Σ z̄_l/s moves 𝓔 by
      // O(1/s)), minimised from the end point in the balanced gauge (both sides O(1)). For
      // spiked-SLR at fixed L the limit is L/(L + ν) (docs/theory.md §3b; a test checks it).
      constexpr double s = 1e4;
      const auto scaled = [&](const std::array<double, 7>& x) {
        std::array<double, 7> y = x;
        for (const std::size_t i : {0u, 2u, 4u}) y[i] *= s;
        for (const std::size_t i : {1u, 3u, 5u, 6u}) y[i] /= s;
        return y;
      };
      auto limit_value = [&](const std::array<double, 7>& x, std::array<double, 7>& gx) {
        ++out.evaluations;
        const auto acc = evaluate(smp, *sigma, scaled(x), mc.threads, true);
        gx = acc.gradient;
        for (const std::size_t i : {0u, 2u, 4u}) gx[i] *= s;
        for (const std::size_t i : {1u, 3u, 5u, 6u}) gx[i] /= s;
        return delta2 + acc.value;
      };
      std::array<double, 7> x = balanced_gauge(t);
      for (const std::size_t i : {0u, 2u, 4u}) x[i] /= std::sqrt(s);
      for (const std::size_t i : {1u, 3u, 5u, 6u}) x[i] *= std::sqrt(s);
      x = balanced_gauge(x);
      std::array<double, 7> gx{};
      const double vx = limit_value(x, gx);
      const auto limit = lbfgs_with_restarts(objective_fn{limit_value, vx, x, gx},
                                             [](const std::array<double, 7>& y) { return balanced_gauge(y); });
      const auto limit_theta = scaled(limit.best);
      out.risk = stratified_estimate(smp.fields, per_sample_values(smp, *sigma, limit_theta));
      out.risk.value += delta2;
      out.limit_theta = limit.best;
    }
  } else if (!stationary) {
    out.outcome = mismatched_outcome::not_converged;
  } else {
    out.outcome = mismatched_outcome::distinct;
  }
  return out;
}

} // namespace slr::theory
