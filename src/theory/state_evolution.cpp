#include "slr/theory/state_evolution.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <span>
#include <stdexcept>

#include "slr/model/parallel.hpp"
#include "slr/model/random.hpp"
#include "slr/model/teacher_fields.hpp"

namespace slr::theory {

void state_evolution_options::validate() const {
  if (samples < 100) throw std::invalid_argument("samples must be >= 100 (got " + std::to_string(samples) + ")");
  if (inner_samples < 1) throw std::invalid_argument("inner-samples must be >= 1");
  if (quadrature_nodes < 4 || quadrature_nodes > 200) throw std::invalid_argument("quadrature-nodes must be in [4, 200]");
  if (!(damping > 0 && damping <= 1)) throw std::invalid_argument("damping must be in (0, 1]");
  if (!(tolerance > 0) || !std::isfinite(tolerance)) throw std::invalid_argument("tol must be finite and > 0");
  if (max_iterations < 1) throw std::invalid_argument("max-iter must be >= 1");
  if (!(wall_time_limit_s > 0)) throw std::invalid_argument("the wall-time limit must be > 0");
  if (!informed && !uninformed) throw std::invalid_argument("at least one of the informed and uninformed starts must run");
}

void gauss_hermite_normal(std::size_t n, std::vector<double>& nodes, std::vector<double>& weights) {
  if (n < 1) throw std::invalid_argument("Gauss-Hermite rule needs n >= 1");
  // Jacobi matrix of the probabilists' Hermite polynomials: zero diagonal, off-diagonal √k.
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  for (std::size_t k = 1; k < n; ++k) {
    const auto i = static_cast<Eigen::Index>(k);
    J(i, i - 1) = J(i - 1, i) = std::sqrt(static_cast<double>(k));
  }
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(J);
  nodes.resize(n);
  weights.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const auto i = static_cast<Eigen::Index>(j);
    nodes[j] = eig.eigenvalues()[i];
    weights[j] = eig.eigenvectors()(0, i) * eig.eigenvectors()(0, i);
  }
}

namespace {
using clock_type = std::chrono::steady_clock;
constexpr std::size_t chunk_size = 512;
constexpr double log_two_pi = 1.8378770664093454836;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// log Φ(x) and the inverse Mills ratio φ(x)/Φ(x) from one erfc, stable far in the lower tail
// (Φ(x) ≈ φ(x)/(−x)·(1 − 1/x² + 3/x⁴) below x = −30).
void log_cdf_and_mills(double x, double& log_cdf, double& mills) {
  const double log_pdf = -0.5 * x * x - 0.5 * log_two_pi;
  if (x > -30) {
    const double cdf = 0.5 * std::erfc(-x / std::numbers::sqrt2);
    log_cdf = std::log(cdf);
    mills = std::exp(log_pdf) / cdf;
    return;
  }
  const double x2 = x * x;
  mills = -x / (1.0 - 1.0 / x2 + 3.0 / (x2 * x2));
  log_cdf = log_pdf - std::log(mills);
}

double log_sum_exp(std::span<const double> a) {
  double top = -std::numeric_limits<double>::infinity();
  for (double v : a) top = std::max(top, v);
  if (!std::isfinite(top)) return top;
  double total = 0;
  for (double v : a) total += std::exp(v - top);
  return top + std::log(total);
}

// Everything one channel pass needs at the current q̂.
struct pass_inputs {
  Eigen::Matrix2d q, V, C_root;
  double delta = 0, nu = 0;
  model::task_kind kind = model::task_kind::spiked;
  bool hard = false;
  std::size_t inner = 0;
  std::vector<double> nodes, weights, log_weights; // log_weights[j] = log weights[j], once per solve
  std::uint64_t seed = 0;
};

struct pass_sums {
  Eigen::Matrix2d G = Eigen::Matrix2d::Zero(); // Σ_s w_s Σ_l g_l g_lᵀ
  pass_sums& operator+=(const pass_sums& o) {
    G += o.G;
    return *this;
  }
};

// Per-thread scratch for one chunk.
struct scratch {
  std::vector<double> omega_chi, omega_z, a, g_chi, g_z, table, sm, log_cdf, mills;
};

// One sample: fills g (g_chi, g_z), returns log Z_out and sets `prediction` = ŷ = E[y | x, data].
double sample_channel(const pass_inputs& in, std::size_t L, double y, scratch& w, model::counter_rng& rng,
                      double& prediction) {
  const double V_kk = in.V(0, 0), V_kv = 0.5 * (in.V(0, 1) + in.V(1, 0)), V_vv = in.V(1, 1);
  auto& oc = w.omega_chi;
  auto& oz = w.omega_z;
  std::fill(w.g_chi.begin(), w.g_chi.begin() + static_cast<std::ptrdiff_t>(L), 0.0);
  std::fill(w.g_z.begin(), w.g_z.begin() + static_cast<std::ptrdiff_t>(L), 0.0);

  if (in.kind == model::task_kind::spiked) {
    // Z = (1/L) Σ_ε exp(√ν ω_χε + ν(V_kk − 1)/2) N(y; ω_zε + √ν V_kv, Δ² + V_vv).
    const double root_nu = std::sqrt(in.nu);
    const double s2 = std::max(in.delta * in.delta + V_vv, 1e-300);
    const double shift = root_nu * V_kv;
    for (std::size_t l = 0; l < L; ++l) {
      const double u = y - oz[l] - shift;
      w.a[l] = root_nu * oc[l] + 0.5 * in.nu * (V_kk - 1) - 0.5 * std::log(2 * std::numbers::pi * s2) - 0.5 * u * u / s2;
    }
    const double lse = log_sum_exp({w.a.data(), L});
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t l = 0; l < L; ++l) top = std::max(top, root_nu * oc[l]);
    double norm = 0, pred = 0;
    for (std::size_t l = 0; l < L; ++l) {
      const double pi = std::exp(w.a[l] - lse);
      w.g_chi[l] = pi * root_nu;
      w.g_z[l] = pi * (y - oz[l] - shift) / s2;
      const double weight = std::exp(root_nu * oc[l] - top);
      norm += weight;
      pred += weight * (oz[l] + shift);
    }
    prediction = pred / norm;
    return lse - std::log(static_cast<double>(L));
  }

  const double s_k = std::sqrt(std::max(V_kk, 0.0));
  const bool degenerate = s_k < 1e-150;
  const double b = degenerate ? 0.0 : V_kv / s_k;
  const double s2 = std::max(in.delta * in.delta + V_vv - (degenerate ? 0.0 : V_kv * V_kv / V_kk), 1e-300);
  const double log_norm = -0.5 * std::log(2 * std::numbers::pi * s2);

  if (!in.hard) {
    // Z = E_u[Σ_ε softmax(νχ)_ε N(y; ω_zε + b u_ε, s2)], χ = ω_χ + √V_kk u, u ~ N(0, I_L),
    // by K inner samples fixed per outer sample (z is integrated exactly given χ).
    const std::size_t K = in.inner;
    double pred = 0;
    for (std::size_t k = 0; k < K; ++k) {
      double* u = w.table.data() + k * L * 2; // [u_1..u_L, log-term_1..L]
      double* sm = w.sm.data() + k * L;
      double top = -std::numeric_limits<double>::infinity();
      for (std::size_t l = 0; l < L; ++l) {
        u[l] = rng.normal();
        top = std::max(top, in.nu * (oc[l] + s_k * u[l]));
      }
      double total = 0;
      for (std::size_t l = 0; l < L; ++l) total += (sm[l] = std::exp(in.nu * (oc[l] + s_k * u[l]) - top));
      const double log_total = std::log(total);
      for (std::size_t l = 0; l < L; ++l) {
        const double mu = oz[l] + b * u[l];
        const double log_sm = in.nu * (oc[l] + s_k * u[l]) - top - log_total;
        sm[l] /= total;
        u[L + l] = log_sm + log_norm - 0.5 * (y - mu) * (y - mu) / s2;
        pred += sm[l] * mu;
      }
    }
    prediction = pred / static_cast<double>(K);
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t l = 0; l < L; ++l) top = std::max(top, w.table[k * L * 2 + L + l]);
    double total = 0;
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t l = 0; l < L; ++l) total += std::exp(w.table[k * L * 2 + L + l] - top);
    const double lse = top + std::log(total);
    for (std::size_t k = 0; k < K; ++k) {
      const double* u = w.table.data() + k * L * 2;
      const double* sm = w.sm.data() + k * L;
      double row = 0;
      for (std::size_t l = 0; l < L; ++l) row += std::exp(u[L + l] - lse);
      for (std::size_t l = 0; l < L; ++l) {
        const double W = std::exp(u[L + l] - lse);
        w.g_z[l] += W * (y - oz[l] - b * u[l]) / s2;
        w.g_chi[l] += in.nu * (W - sm[l] * row);
      }
    }
    return lse - std::log(static_cast<double>(K));
  }

  // ν = ∞: Z = Σ_ε E_t[Π_{m≠ε} Φ(t + c_εm) N(y; ω_zε + b t, s2)], c_εm = (ω_χε − ω_χm)/√V_kk,
  // t ~ N(0, 1), by Gauss–Hermite; the integrand is smooth on the unit scale in t.
  const std::size_t n = in.nodes.size();
  const double scale = degenerate ? 1e-150 : s_k;
  // log Φ(t_j + c_εm) and φ/Φ for every ordered pair (ε, m), m ≠ ε.
  for (std::size_t e = 0; e < L; ++e)
    for (std::size_t m = 0; m < L; ++m) {
      if (m == e) continue;
      const double c = (oc[e] - oc[m]) / scale;
      for (std::size_t j = 0; j < n; ++j) {
        const double x = in.nodes[j] + c;
        log_cdf_and_mills(x, w.log_cdf[(e * L + m) * n + j], w.mills[(e * L + m) * n + j]);
      }
    }
  double pred = 0;
  for (std::size_t e = 0; e < L; ++e)
    for (std::size_t j = 0; j < n; ++j) {
      double log_p = 0;
      for (std::size_t m = 0; m < L; ++m)
        if (m != e) log_p += w.log_cdf[(e * L + m) * n + j];
      const double mu = oz[e] + b * in.nodes[j];
      pred += in.weights[j] * std::exp(log_p) * mu;
      w.table[e * n + j] = in.log_weights[j] + log_p + log_norm - 0.5 * (y - mu) * (y - mu) / s2;
    }
  prediction = pred;
  const double lse = log_sum_exp({w.table.data(), L * n});
  for (std::size_t e = 0; e < L; ++e)
    for (std::size_t j = 0; j < n; ++j) {
      const double W = std::exp(w.table[e * n + j] - lse);
      if (W == 0) continue;
      w.g_z[e] += W * (y - oz[e] - b * in.nodes[j]) / s2;
      for (std::size_t m = 0; m < L; ++m) {
        if (m == e) continue;
        const double lambda = w.mills[(e * L + m) * n + j] / scale;
        w.g_chi[e] += W * lambda;  // ∂/∂ω_χε of log Φ(t + c_εm)
        w.g_chi[m] -= W * lambda;  // ∂/∂ω_χm
      }
    }
  return lse;
}

Eigen::Matrix2d q_of(const Eigen::Matrix2d& q_hat) {
  const Eigen::Matrix2d V = (Eigen::Matrix2d::Identity() + q_hat).inverse();
  return Eigen::Matrix2d::Identity() - V;
}
} // namespace

state_evolution::state_evolution(model::problem problem, double alpha, state_evolution_options options)
    : problem_(std::move(problem)), alpha_(alpha), options_(std::move(options)) {
  problem_.validate();
  if (!(alpha_ > 0) || !std::isfinite(alpha_)) throw std::invalid_argument("alpha must be finite and > 0");
  options_.validate();
}

state_evolution_branch state_evolution::solve_branch(std::uint64_t seed, const Eigen::Matrix2d& q_hat_start,
                                                     std::string start_name, double wall_time_limit_s) const {
  const auto fields =
      model::draw_teacher_fields(problem_.task, problem_.lengths, options_.samples, seed, options_.threads);
  return solve_branch(fields, seed, q_hat_start, std::move(start_name), wall_time_limit_s, nullptr);
}

state_evolution_branch state_evolution::solve_branch(const model::teacher_fields& fields, std::uint64_t seed,
                                                     const Eigen::Matrix2d& q_hat_start, std::string start_name,
                                                     double wall_time_limit_s, std::vector<double>* log_z_out) const {
  const auto start = clock_type::now();
  state_evolution_branch out;
  out.start = std::move(start_name);
  const std::size_t S = fields.size(), Lmax = fields.max_length;
  pass_inputs in;
  in.delta = problem_.delta;
  in.nu = problem_.task.nu();
  in.kind = problem_.task.kind();
  in.hard = problem_.task.is_hard();
  in.inner = options_.inner_samples;
  in.seed = seed;
  if (in.hard) {
    gauss_hermite_normal(options_.quadrature_nodes, in.nodes, in.weights);
    for (double weight : in.weights) in.log_weights.push_back(std::log(weight));
  }

  std::vector<double> log_z(S), risk(S);
  Eigen::Matrix2d q_hat = 0.5 * (q_hat_start + q_hat_start.transpose());
  // One pass at q̂: returns the new q̂ (α included) and fills log_z, risk.
  const auto pass = [&](const Eigen::Matrix2d& current) {
    in.V = (Eigen::Matrix2d::Identity() + current).inverse();
    in.V = 0.5 * (in.V + in.V.transpose());
    in.q = Eigen::Matrix2d::Identity() - in.V;
    // q − q² = V q̂ V (PSD by construction, no cancellation as q → I).
    const Eigen::Matrix2d C = in.V * current * in.V;
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig(0.5 * (C + C.transpose()));
    in.C_root = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal() *
                eig.eigenvectors().transpose();
    const pass_sums sums = model::chunked_reduce(
        S, chunk_size, options_.threads, pass_sums{}, [&](std::size_t begin, std::size_t end, pass_sums& acc) {
          scratch w;
          const std::size_t n = std::max<std::size_t>(in.nodes.size(), 1);
          w.omega_chi.resize(Lmax), w.omega_z.resize(Lmax), w.a.resize(Lmax), w.g_chi.resize(Lmax), w.g_z.resize(Lmax);
          w.table.resize(std::max(2 * in.inner * Lmax, Lmax * n));
          w.sm.resize(in.inner * Lmax);
          if (in.hard) w.log_cdf.resize(Lmax * Lmax * n), w.mills.resize(Lmax * Lmax * n);
          for (std::size_t s = begin; s < end; ++s) {
            const std::size_t L = fields.length[s];
            const auto cs = fields.chi(s), zs = fields.z(s), p = fields.p(s);
            model::counter_rng rng(in.seed, model::stream_purpose::channel_noise, s);
            const double y = zs[fields.location[s]] + in.delta * rng.normal();
            for (std::size_t l = 0; l < L; ++l) {
              const double xi_k = rng.normal(); // separate statements: argument order is unspecified
              const double xi_v = rng.normal();
              const Eigen::Vector2d xi(xi_k, xi_v);
              const Eigen::Vector2d omega = in.q * Eigen::Vector2d(cs[l], zs[l]) + in.C_root * xi;
              w.omega_chi[l] = omega[0];
              w.omega_z[l] = omega[1];
            }
            double prediction = 0;
            log_z[s] = sample_channel(in, L, y, w, rng, prediction);
            double loss = 0;
            for (std::size_t l = 0; l < L; ++l) loss += p[l] * (zs[l] - prediction) * (zs[l] - prediction);
            risk[s] = loss;
            Eigen::Matrix2d G = Eigen::Matrix2d::Zero();
            for (std::size_t l = 0; l < L; ++l) {
              const Eigen::Vector2d g(w.g_chi[l], w.g_z[l]);
              G += g * g.transpose();
            }
            acc.G += fields.weight[s] * G;
          }
        });
    Eigen::Matrix2d next = alpha_ * 0.5 * (sums.G + sums.G.transpose());
    if (options_.diagonal) next = Eigen::Matrix2d(next.diagonal().asDiagonal());
    return next;
  };

  out.status = solve_status::not_converged;
  Eigen::Matrix2d last_hat = q_hat;
  for (int iteration = 1; iteration <= options_.max_iterations; ++iteration) {
    if (seconds_since(start) > wall_time_limit_s) {
      out.status = solve_status::timeout;
      out.message = "wall-time limit reached after " + std::to_string(out.iterations) + " iterations";
      break;
    }
    const Eigen::Matrix2d next = pass(q_hat);
    out.iterations = iteration;
    last_hat = next;
    if (!next.allFinite()) {
      out.status = solve_status::diverged;
      out.message = "q-hat became non-finite at iteration " + std::to_string(iteration);
      break;
    }
    out.residual = (q_of(next) - q_of(q_hat)).cwiseAbs().maxCoeff();
    const Eigen::Matrix2d previous = q_hat;
    q_hat = (1 - options_.damping) * q_hat + options_.damping * next;
    if (out.residual < options_.tolerance) {
      out.status = solve_status::ok;
      q_hat = previous; // report the state whose pass produced the statistics below
      break;
    }
  }
  if (out.status == solve_status::not_converged)
    out.message = "no convergence in " + std::to_string(options_.max_iterations) + " iterations";
  if (out.status == solve_status::timeout || out.status == solve_status::not_converged) {
    // The statistics must belong to the reported state: one more pass at it.
    if (q_hat.allFinite()) last_hat = pass(q_hat);
  }
  out.q = q_of(q_hat);
  out.q_hat = last_hat;
  out.test_risk = stratified_estimate(fields, risk);
  out.test_risk.value += problem_.delta * problem_.delta;
  auto log_z_mean = stratified_estimate(fields, log_z);
  const Eigen::Matrix2d I = Eigen::Matrix2d::Identity();
  const double prior = 0.5 * (q_hat.trace() - std::log((I + q_hat).determinant()));
  out.free_entropy.value = -0.5 * (out.q * q_hat).trace() + prior + alpha_ * log_z_mean.value;
  out.free_entropy.stderr = alpha_ * log_z_mean.stderr;
  if (log_z_out != nullptr) *log_z_out = std::move(log_z);
  return out;
}

state_evolution_result state_evolution::solve(std::uint64_t seed) const {
  const auto start = clock_type::now();
  state_evolution_result result;
  const auto left = [&] { return options_.wall_time_limit_s - seconds_since(start); };
  // Both branches on the same samples: their free-entropy difference is estimated per sample.
  const auto fields =
      model::draw_teacher_fields(problem_.task, problem_.lengths, options_.samples, seed, options_.threads);
  std::vector<double> log_z_informed, log_z_uninformed;
  if (options_.informed)
    result.branches.push_back(
        solve_branch(fields, seed, 100.0 * Eigen::Matrix2d::Identity(), "informed", left(), &log_z_informed));
  if (options_.uninformed) {
    if (left() > 0) {
      result.branches.push_back(
          solve_branch(fields, seed, 0.01 * Eigen::Matrix2d::Identity(), "uninformed", left(), &log_z_uninformed));
    } else {
      state_evolution_branch skipped;
      skipped.start = "uninformed";
      skipped.status = solve_status::timeout;
      skipped.message = "not started: wall-time limit reached";
      result.branches.push_back(skipped);
    }
  }
  // The larger free entropy wins among converged branches; if none converged, the first branch.
  const state_evolution_branch* best = nullptr;
  for (const auto& b : result.branches) {
    if (b.status != solve_status::ok) continue;
    if (best == nullptr || b.free_entropy.value > best->free_entropy.value ||
        (std::isnan(best->free_entropy.value) && !std::isnan(b.free_entropy.value)))
      best = &b;
  }
  if (best == nullptr) best = &result.branches.front();
  result.chosen = *best;
  result.status = best->status;
  if (result.branches.size() == 2) {
    const double gap = (result.branches[0].q - result.branches[1].q).cwiseAbs().maxCoeff();
    result.coexistence = result.branches[0].status == solve_status::ok &&
                         result.branches[1].status == solve_status::ok && gap > 100 * options_.tolerance;
    if (result.coexistence && log_z_informed.size() == fields.size() && log_z_uninformed.size() == fields.size()) {
      // Φ_inf − Φ_un: its value from the two branches; its Monte Carlo error from the per-sample
      // difference of α log Z_out on the common samples (the terms in (q, q̂) carry no sampling error
      // of their own at first order: Φ is stationary in them at a fixed point).
      std::vector<double> difference(fields.size());
      for (std::size_t s = 0; s < difference.size(); ++s)
        difference[s] = alpha_ * (log_z_informed[s] - log_z_uninformed[s]);
      result.free_entropy_gap.value = result.branches[0].free_entropy.value - result.branches[1].free_entropy.value;
      result.free_entropy_gap.stderr = stratified_estimate(fields, difference).stderr;
    }
  }
  return result;
}

} // namespace slr::theory
