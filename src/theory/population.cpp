#include "slr/theory/population.hpp"

#include <LBFGSB.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <utility>
#include <vector>

#include "slr/model/activation.hpp"
#include "slr/model/parallel.hpp"
#include "slr/model/random.hpp"

namespace slr::theory {
namespace {
constexpr std::size_t chunk_size = 2048;

void check(const model::problem& problem, const mc_settings& mc) {
  problem.validate();
  if (mc.samples == 0) throw std::invalid_argument("samples must be >= 1");
}

// Per-sample values computed in parallel; each index is independent, so the result does not
// depend on the thread count.
template <class Fn>
std::vector<double> per_sample(std::size_t n, unsigned threads, Fn&& fn) {
  std::vector<double> values(n);
  struct nothing {
    nothing& operator+=(const nothing&) { return *this; }
  };
  model::chunked_reduce(n, chunk_size, threads, nothing{}, [&](std::size_t begin, std::size_t end, nothing&) {
    for (std::size_t s = begin; s < end; ++s) values[s] = fn(s);
  });
  return values;
}

// The Monte Carlo sample of the on-manifold minimisation: teacher fields and one student-noise
// normal per token, fixed for the whole minimisation (common random numbers). With stride > 1
// the objective is that of every stride-th sample, its weights renormalised to sum to 1.
struct manifold_objective {
  const model::teacher_fields& fields;
  const model::activation& sigma;
  std::vector<double> noise; // S × max_length
  double delta;
  unsigned threads;
  int evaluations = 0;           // of the full sample
  int screening_evaluations = 0; // of the subsample
  std::size_t stride = 1;
  double weight_scale = 1.0; // 1 / Σ of the weights of the samples in use
  double best_value = std::numeric_limits<double>::infinity();
  Eigen::Vector2d best_x = Eigen::Vector2d::Zero();

  // Every stride-th sample and its noise, packed (stride > 1), as the swapped descent packs its
  // screening subsample: the same values in the same order, so the sums are bit for bit those of
  // a strided pass (here, with 3-token rows, no measurable gain: tests/bench/README.md).
  model::teacher_fields packed_fields{}; // filled by use_stride; the objective is built from the fields above
  std::vector<double> packed_noise{};

  // Uses every stride-th sample from now on and forgets the best point seen (its value belongs
  // to the previous sample).
  void use_stride(std::size_t new_stride) {
    if (new_stride > 1 && (new_stride != stride || packed_fields.size() == 0)) {
      packed_fields = fields.every(new_stride);
      packed_noise = model::every_row(noise, fields.max_length, new_stride);
    }
    stride = new_stride;
    weight_scale = fields.strided_weight_scale(stride);
    best_value = std::numeric_limits<double>::infinity();
    best_x.setZero();
  }

  struct sums {
    double A = 0, B = 0, dA_dm = 0, dA_ds = 0, dB_dm = 0, dB_ds = 0;
    sums& operator+=(const sums& o) {
      A += o.A, B += o.B, dA_dm += o.dA_dm, dA_ds += o.dA_ds, dB_dm += o.dB_dm, dB_ds += o.dB_ds;
      return *this;
    }
  };

  // A = E[Σ p_l σ_l(χ)], B = E[Σ σ_l²], χ = m χ* + s w, and their (m, s) derivatives via Jᵀp, Jᵀσ.
  sums moments(double m, double s) const {
    const std::size_t Lmax = fields.max_length;
    const auto& used_fields = stride > 1 ? packed_fields : fields;
    const auto& used_noise = stride > 1 ? packed_noise : noise;
    return model::chunked_reduce(used_fields.size(), chunk_size, threads, sums{},
                                 [&](std::size_t begin, std::size_t end, sums& acc) {
      std::vector<double> chi(Lmax), sig(Lmax), work(Lmax), jp(Lmax), js(Lmax);
      // The chunk's sums in locals (stores through acc may alias the work vectors); each chunk
      // starts from zero, so the sums are bit for bit those accumulated in acc.
      sums local;
      for (std::size_t i = begin; i < end; ++i) {
        const std::size_t L = used_fields.length[i];
        const auto cs = used_fields.chi(i);
        const auto p = used_fields.p(i);
        const double* w = used_noise.data() + i * Lmax;
        for (std::size_t l = 0; l < L; ++l) chi[l] = m * cs[l] + s * w[l];
        const std::span<const double> x(chi.data(), L);
        // σ once per sample, then Jᵀp and Jᵀσ from the same linearisation.
        sigma.linearise(x, {sig.data(), L}, {work.data(), L});
        sigma.jacobian_transpose({sig.data(), L}, {work.data(), L}, p, {jp.data(), L});
        sigma.jacobian_transpose({sig.data(), L}, {work.data(), L}, {sig.data(), L}, {js.data(), L});
        double a = 0, b = 0, am = 0, as = 0, bm = 0, bs = 0;
        for (std::size_t l = 0; l < L; ++l) {
          a += p[l] * sig[l];
          b += sig[l] * sig[l];
          am += jp[l] * cs[l];
          as += jp[l] * w[l];
          bm += 2 * js[l] * cs[l];
          bs += 2 * js[l] * w[l];
        }
        const double wt = used_fields.weight[i] * weight_scale; // exact for stride 1 (scale 1)
        local.A += wt * a, local.B += wt * b, local.dA_dm += wt * am, local.dA_ds += wt * as;
        local.dB_dm += wt * bm, local.dB_ds += wt * bs;
      }
      acc += local;
    });
  }

  // The LBFGS++ functor: F(m, s) = Δ² + 1 − A²/B and its gradient.
  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
    ++(stride == 1 ? evaluations : screening_evaluations);
    const sums t = moments(x[0], x[1]);
    const double value = delta * delta + 1.0 - t.A * t.A / t.B;
    grad[0] = -(2 * t.A * t.dA_dm * t.B - t.A * t.A * t.dB_dm) / (t.B * t.B);
    grad[1] = -(2 * t.A * t.dA_ds * t.B - t.A * t.A * t.dB_ds) / (t.B * t.B);
    if (value < best_value) {
      best_value = value;
      best_x = x.head<2>();
    }
    return value;
  }
};
} // namespace

mc_estimate stratified_estimate(const model::teacher_fields& fields, std::span<const double> values) {
  std::size_t strata = 0;
  for (auto k : fields.stratum) strata = std::max<std::size_t>(strata, k + 1);
  std::vector<double> sum(strata, 0.0), sum_sq(strata, 0.0), probability(strata, 0.0);
  std::vector<std::size_t> count(strata, 0);
  for (std::size_t s = 0; s < fields.size(); ++s) {
    const auto k = fields.stratum[s];
    sum[k] += values[s];
    ++count[k];
    probability[k] += fields.weight[s];
  }
  for (std::size_t s = 0; s < fields.size(); ++s) {
    const auto k = fields.stratum[s];
    const double d = values[s] - sum[k] / static_cast<double>(count[k]);
    sum_sq[k] += d * d;
  }
  mc_estimate estimate;
  double variance = 0;
  for (std::size_t k = 0; k < strata; ++k) {
    const auto n = static_cast<double>(count[k]);
    estimate.value += probability[k] * sum[k] / n;
    if (count[k] > 1) variance += probability[k] * probability[k] * sum_sq[k] / (n - 1) / n;
  }
  estimate.stderr = std::sqrt(variance);
  return estimate;
}

mc_estimate bayes_risk(const model::problem& problem, const mc_settings& mc) {
  check(problem, mc);
  const auto fields = model::draw_teacher_fields(problem.task, problem.lengths, mc.samples, mc.seed, mc.threads);
  const auto values = per_sample(fields.size(), mc.threads, [&](std::size_t s) {
    double total = 0;
    for (double p : fields.p(s)) total += p * p;
    return total;
  });
  auto estimate = stratified_estimate(fields, values);
  estimate.value = problem.delta * problem.delta + 1.0 - estimate.value;
  return estimate;
}

mc_estimate population_risk(const model::problem& problem, const model::order_parameters& op,
                            const mc_settings& mc) {
  check(problem, mc);
  const Eigen::Matrix2d root = model::psd_sqrt(op.residual(), 1e-10);
  const auto sigma = model::make_activation(problem.activation);
  const auto fields = model::draw_teacher_fields(problem.task, problem.lengths, mc.samples, mc.seed, mc.threads);
  const std::size_t Lmax = fields.max_length;
  const auto values = per_sample(fields.size(), mc.threads, [&](std::size_t s) {
    model::counter_rng rng(mc.seed, model::stream_purpose::student_noise, s);
    const std::size_t L = fields.length[s];
    const auto cs = fields.chi(s), zs = fields.z(s), p = fields.p(s);
    double chi[64], z[64], sig[64];
    std::vector<double> heap;
    double *chi_p = chi, *z_p = z, *sig_p = sig;
    if (L > 64) {
      heap.resize(3 * L);
      chi_p = heap.data(), z_p = heap.data() + L, sig_p = heap.data() + 2 * L;
    }
    for (std::size_t l = 0; l < L; ++l) {
      const double xi_1 = rng.normal(), xi_2 = rng.normal();
      // h_l = Mᵀ h*_l + R^{1/2} ξ_l with Mᵀ = [[m_kk, m_kv], [m_vk, m_vv]].
      chi_p[l] = op.m_kk * cs[l] + op.m_kv * zs[l] + root(0, 0) * xi_1 + root(0, 1) * xi_2;
      z_p[l] = op.m_vk * cs[l] + op.m_vv * zs[l] + root(1, 0) * xi_1 + root(1, 1) * xi_2;
    }
    sigma->evaluate({chi_p, L}, {sig_p, L});
    double f = 0;
    for (std::size_t l = 0; l < L; ++l) f += sig_p[l] * z_p[l];
    double loss = 0;
    for (std::size_t l = 0; l < L; ++l) loss += p[l] * (zs[l] - f) * (zs[l] - f);
    return loss;
  });
  (void)Lmax;
  auto estimate = stratified_estimate(fields, values);
  estimate.value += problem.delta * problem.delta;
  return estimate;
}

population_minimum minimise_population_risk(const model::problem& problem, const mc_settings& mc,
                                            const minimisation_settings& settings) {
  check(problem, mc);
  if (!(settings.cap > 0)) throw std::invalid_argument("the cap on m_kk must be > 0");
  const auto sigma = model::make_activation(problem.activation);
  const auto fields = model::draw_teacher_fields(problem.task, problem.lengths, mc.samples, mc.seed, mc.threads);
  manifold_objective objective{fields, *sigma, std::vector<double>(fields.size() * fields.max_length, 0.0),
                               problem.delta, mc.threads};
  for (std::size_t s = 0; s < fields.size(); ++s) {
    model::counter_rng rng(mc.seed, model::stream_purpose::student_noise, s);
    for (std::size_t l = 0; l < fields.length[s]; ++l) objective.noise[s * fields.max_length + l] = rng.normal();
  }

  LBFGSpp::LBFGSBParam<double> param;
  param.epsilon = 1e-9;
  param.epsilon_rel = 1e-9;
  param.max_iterations = 300;
  param.max_linesearch = 60;
  LBFGSpp::LBFGSBSolver<double> solver(param);
  const Eigen::Vector2d lower(-settings.cap, 0.0), upper(settings.cap, settings.cap);
  // One descent; a line search that cannot progress (flat MC objective) ends it, and the best
  // point seen is kept by the objective. Returns that point and its value.
  const auto descend = [&](Eigen::VectorXd x) {
    double fx = 0;
    try {
      solver.minimize(objective, x, fx, lower, upper);
    } catch (const std::exception&) {
    }
    return std::pair<Eigen::Vector2d, double>(objective.best_x, objective.best_value);
  };
  // Starts: below, near and above the scale where softmax reproduces the posterior (√ν or ν),
  // each slightly off R_kk = 0 so that the bound is approached from inside.
  constexpr std::array<double, 4> starts = {0.3, 1.0, 3.0, 10.0};
  const std::size_t stride = fields.size() / settings.screening_samples;
  if (stride < 2) {
    for (double m0 : starts) descend(Eigen::Vector2d(m0, 0.05));
  } else {
    // Which basin wins is decided on a subsample (every stride-th sample, ≥ screening_samples of
    // them): each start descends there, at 1/stride of the cost. Most of a descent's evaluations
    // are spent far from the minimum, and every start usually ends in one basin, so the full
    // sample then only polishes the subsample's minimiser: about 5x fewer evaluations of the full
    // objective than descending from every start on it, and the same minimum of the same sample.
    // End points that are distinct (5 % apart in m_kk or √R_kk) and whose subsample risk is
    // within `screening_margin` of the best are all polished, so that a near-tie between basins
    // is settled on the full sample.
    std::vector<std::pair<Eigen::Vector2d, double>> ends;
    for (double m0 : starts) {
      objective.use_stride(stride);
      ends.push_back(descend(Eigen::Vector2d(m0, 0.05)));
    }
    std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::vector<Eigen::Vector2d> polished;
    objective.use_stride(1);
    double best_value = std::numeric_limits<double>::infinity();
    Eigen::Vector2d best_x = Eigen::Vector2d::Zero();
    for (const auto& [x, value] : ends) {
      if (!std::isfinite(value) || value > ends.front().second + settings.screening_margin) break;
      const bool seen = std::any_of(polished.begin(), polished.end(), [&](const Eigen::Vector2d& y) {
        return std::abs(x[0] - y[0]) <= 0.05 * std::max(std::abs(y[0]), 1e-3) &&
               std::abs(x[1] - y[1]) <= 0.05 * std::max(y[1], 1e-3);
      });
      if (seen) continue;
      polished.push_back(x);
      const auto [end, end_value] = descend(x);
      if (end_value < best_value) best_value = end_value, best_x = end;
      objective.use_stride(1);
    }
    objective.best_value = best_value;
    objective.best_x = best_x;
    // A subsample's end point can lie where the whole sample's objective is not finite (the
    // softplus kernel at |k| ~ 10²–10³, where every sp(χ_l) of some sample underflows to 0): then
    // every start descends on the whole sample, which steers clear of such points.
    if (!std::isfinite(best_value)) {
      objective.use_stride(1);
      for (double m0 : starts) descend(Eigen::Vector2d(m0, 0.05));
    }
  }
  // The optimum may lie at |k| → ∞ (max-SLR ν = ∞): compare with the cap itself.
  for (double m_cap : {settings.cap, -settings.cap}) {
    Eigen::VectorXd x(2), grad(2);
    x << m_cap, 0.0;
    objective(x, grad);
  }

  const double m = objective.best_x[0], s = objective.best_x[1];
  const auto t = objective.moments(m, s);
  const double m_vv = t.A / t.B;
  // Risk at the minimiser with its per-sample error: 1 − 2 m_vv a + m_vv² b (+ Δ²).
  const auto values = per_sample(fields.size(), mc.threads, [&](std::size_t i) {
    const std::size_t L = fields.length[i];
    std::vector<double> chi(L), sig(L);
    const auto cs = fields.chi(i), p = fields.p(i);
    for (std::size_t l = 0; l < L; ++l) chi[l] = m * cs[l] + s * objective.noise[i * fields.max_length + l];
    sigma->evaluate(chi, sig);
    double a = 0, b = 0;
    for (std::size_t l = 0; l < L; ++l) a += p[l] * sig[l], b += sig[l] * sig[l];
    return 1.0 - 2.0 * m_vv * a + m_vv * m_vv * b;
  });
  population_minimum result;
  result.risk = stratified_estimate(fields, values);
  result.risk.value += problem.delta * problem.delta;
  result.argmin = model::order_parameters::on_manifold(m, s * s, m_vv, 0.0);
  result.unbounded = std::abs(m) >= 0.99 * settings.cap || s >= 0.99 * settings.cap;
  // In units of full-sample evaluations (a subsample evaluation costs 1/stride of one).
  result.evaluations = objective.evaluations +
                       (stride < 2 ? 0 : (objective.screening_evaluations + static_cast<int>(stride) - 1) / static_cast<int>(stride));
  return result;
}

double expected_maximum_of_normals(std::size_t L) {
  if (L == 0) throw std::invalid_argument("L must be >= 1");
  // μ_L = ∫ x L φ(x) Φ(x)^{L−1} dx by the composite Simpson rule on [−12, 12].
  const int n = 24000;
  const double a = -12, b = 12, h = (b - a) / n;
  double total = 0;
  for (int i = 0; i <= n; ++i) {
    const double x = a + i * h;
    const double phi = std::exp(-0.5 * x * x) * 0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2;
    const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
    const double f = x * static_cast<double>(L) * phi * std::pow(cdf, static_cast<double>(L) - 1);
    total += f * (i == 0 || i == n ? 1 : (i % 2 == 1 ? 4 : 2));
  }
  return total * h / 3;
}

double linear_spiked_minimal_risk(double nu, double mean_length, double delta) {
  const double L = mean_length;
  return delta * delta + L * (L - 1) / (L * L + (L - 1) * nu);
}

double linear_spiked_optimal_m_kk(double nu, double mean_length) {
  return std::sqrt(nu) * (mean_length - 1) / mean_length;
}

double linear_max_hard_minimal_risk(const model::length_law& lengths, double delta) {
  double mu = 0;
  for (const auto& e : lengths.support()) mu += e.probability * expected_maximum_of_normals(e.length);
  return delta * delta + 1.0 - (1.0 + mu * mu) / lengths.mean();
}

} // namespace slr::theory
