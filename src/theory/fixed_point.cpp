#include "slr/theory/fixed_point.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <span>
#include <stdexcept>

#include "slr/model/parallel.hpp"
#include "slr/model/random.hpp"
#include "slr/model/teacher_fields.hpp"

namespace slr::theory {

std::string_view solve_status_name(solve_status s) noexcept {
  switch (s) {
  case solve_status::ok: return "ok";
  case solve_status::not_converged: return "not_converged";
  case solve_status::diverged: return "diverged";
  case solve_status::failed: return "failed";
  case solve_status::timeout: return "timeout";
  }
  return "failed";
}

solve_status worse(solve_status a, solve_status b) noexcept {
  const auto rank = [](solve_status s) {
    switch (s) {
    case solve_status::ok: return 0;
    case solve_status::not_converged: return 1;
    case solve_status::diverged: return 2;
    case solve_status::timeout: return 3;
    case solve_status::failed: return 4;
    }
    return 4;
  };
  return rank(a) >= rank(b) ? a : b;
}

fixed_point_check check_fixed_point(const fixed_point_result& result, const model::problem& problem, double margin) {
  fixed_point_check check;
  const auto number = [](double x) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", x);
    return std::string(buffer);
  };
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig(0.5 * (result.state.V + result.state.V.transpose()),
                                                          Eigen::EigenvaluesOnly);
  const double trivial = 0.5 * (1 + problem.delta * problem.delta);
  if (!(eig.eigenvalues().minCoeff() > 0)) {
    check.verdict = fixed_point_verdict::unphysical;
    check.message = "V is not positive definite (smallest eigenvalue " + number(eig.eigenvalues().minCoeff()) + ")";
    return check;
  }
  if (result.train_loss_regularised > trivial) {
    check.verdict = fixed_point_verdict::unphysical;
    check.message = "regularised training objective " + number(result.train_loss_regularised) +
                    " per sample is above the zero predictor's " + number(trivial) +
                    ": this state cannot be the ERM minimum";
    return check;
  }
  const auto op = result.order_parameters();
  const bool mirror = problem.activation.kind == model::activation_kind::linear && op.m_kk < 0 && op.m_vv < 0;
  if (!mirror && (op.m_kk < -margin || op.m_vv < -margin)) {
    check.verdict = fixed_point_verdict::other_branch;
    check.message = std::string("converged to a state anti-aligned with the teacher (") +
                    (op.m_kk < -margin ? "m_kk* = " + number(op.m_kk) : "m_vv* = " + number(op.m_vv)) +
                    " < 0; test risk " + number(result.test_risk.value) + ", training loss " +
                    number(result.train_loss.value) +
                    "): not the informed branch that ERM follows (docs/theory.md §6)";
  }
  return check;
}

fixed_point_state fixed_point_state::informed() { return {}; }

fixed_point_state fixed_point_state::uninformed() {
  fixed_point_state s;
  s.M = 0.01 * Eigen::Matrix2d::Identity();
  s.Q = 0.5 * Eigen::Matrix2d::Identity();
  s.V = 0.5 * Eigen::Matrix2d::Identity();
  return s;
}

void fixed_point_options::validate() const {
  if (samples < 100) throw std::invalid_argument("samples must be >= 100 (got " + std::to_string(samples) + ")");
  if (repeats < 1) throw std::invalid_argument("repeats must be >= 1");
  if (!(damping > 0 && damping <= 1)) throw std::invalid_argument("damping must be in (0, 1]");
  if (!(tolerance > 0) || !std::isfinite(tolerance)) throw std::invalid_argument("tol must be finite and > 0");
  if (max_iterations < 1) throw std::invalid_argument("max-iter must be >= 1");
  if (!(wall_time_limit_s > 0)) throw std::invalid_argument("the wall-time limit must be > 0");
  if (!(divergence_bound > 0)) throw std::invalid_argument("the divergence bound must be > 0");
  if (anderson_memory < 1 || anderson_memory > 20)
    throw std::invalid_argument("anderson-memory must be in [1, 20] (got " + std::to_string(anderson_memory) + ")");
  if (prox_max_steps < 1) throw std::invalid_argument("prox_max_steps must be >= 1");
  if (!(prox_tolerance > 0)) throw std::invalid_argument("prox_tolerance must be > 0");
  if (initial_state) {
    const auto& s = *initial_state;
    if (!s.M.allFinite() || !s.Q.allFinite() || !s.V.allFinite())
      throw std::invalid_argument("initial state: M, Q, V must be finite");
    const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig(0.5 * (s.V + s.V.transpose()));
    if (!(eig.eigenvalues().minCoeff() > 0)) throw std::invalid_argument("initial state: V must be positive definite");
  }
}

namespace {
using clock_type = std::chrono::steady_clock;
constexpr std::size_t chunk_size = 256;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// Symmetric square root and pseudo-inverse square root of a PSD 2×2 matrix (eigenvalues clipped
// at 0; the inverse drops directions below a relative floor, where ω does not depend on ξ).
void psd_roots(const Eigen::Matrix2d& C, Eigen::Matrix2d& root, Eigen::Matrix2d& inverse_root) {
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig(0.5 * (C + C.transpose()));
  const Eigen::Vector2d lambda = eig.eigenvalues().cwiseMax(0.0);
  const double floor = 1e-12 * std::max(1.0, lambda.maxCoeff());
  Eigen::Vector2d sq, inv;
  for (int i = 0; i < 2; ++i) {
    sq[i] = std::sqrt(lambda[i]);
    inv[i] = lambda[i] > floor ? 1.0 / sq[i] : 0.0;
  }
  root = eig.eigenvectors() * sq.asDiagonal() * eig.eigenvectors().transpose();
  inverse_root = eig.eigenvectors() * inv.asDiagonal() * eig.eigenvectors().transpose();
}

// Projects Q onto {Q : Q − MᵀM ⪰ 0} by clipping the eigenvalues of the residual at 0
// (damping a convex combination of admissible states can leave it slightly, docs/theory.md §6).
void clip_residual(fixed_point_state& s) {
  const Eigen::Matrix2d MtM = s.M.transpose() * s.M;
  Eigen::Matrix2d C = s.Q - MtM;
  C = 0.5 * (C + C.transpose());
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig(C);
  if (eig.eigenvalues().minCoeff() >= 0) return;
  const Eigen::Vector2d lambda = eig.eigenvalues().cwiseMax(0.0);
  s.Q = MtM + eig.eigenvectors() * lambda.asDiagonal() * eig.eigenvectors().transpose();
  s.Q = 0.5 * (s.Q + s.Q.transpose());
}

// The fixed MC sample of one solve: teacher fields, label noise ξ_0, ω-noise ξ_l, and the
// displacement ĥ − ω of the last accepted prox solution of each sample (the warm start).
struct channel_sample {
  model::teacher_fields fields;
  std::vector<double> label_noise;  // S
  std::vector<double> omega_noise;  // S × Lmax × 2
  std::vector<double> displacement; // S × 2Lmax, layout [χ_1..χ_L, z_1..z_L]
  bool has_displacement = false;
};

struct channel_inputs {
  Eigen::Matrix2d M, V, A, C_root, C_inverse_root;
  double delta = 0;
  const model::task* task = nullptr;
  const model::activation* sigma = nullptr;
  bool tilt = false; // compute the tilt-score M̂
  bool skip_dominated_start = false;
  int max_steps = 60;
  double tolerance = 1e-9;
};

struct channel_sums {
  Eigen::Matrix2d Q_hat = Eigen::Matrix2d::Zero(), V_hat = Eigen::Matrix2d::Zero();
  Eigen::Matrix2d M_stein = Eigen::Matrix2d::Zero(), M_tilt = Eigen::Matrix2d::Zero();
  Eigen::Matrix2d difference_squares = Eigen::Matrix2d::Zero(); // Σ w² d∘d, d = per-sample (Stein − tilt)
  double weight_squares = 0;                                    // Σ w²
  double train = 0, nonpd = 0;
  std::size_t prox = 0, steps = 0;
  channel_sums& operator+=(const channel_sums& o) {
    Q_hat += o.Q_hat, V_hat += o.V_hat, M_stein += o.M_stein, M_tilt += o.M_tilt;
    difference_squares += o.difference_squares, weight_squares += o.weight_squares;
    train += o.train, nonpd += o.nonpd, prox += o.prox, steps += o.steps;
    return *this;
  }
};


// GCC's vectoriser pairs entries of the small unrolled factorisation and substitutions below into
// 16-byte loads of values just stored 8 bytes at a time; each such load waits for the stores to
// retire (a failed store-to-load forward: the hot spots of the profile). Scalar code is faster:
// 1.70 against 2.17 µs per sample-iteration of the softmax fixed point at α = 4, r = 0.1.
#if defined(__GNUC__) && !defined(__clang__)
#define SLR_SCALAR_CODE [[gnu::optimize("no-tree-vectorize")]]
#else
#define SLR_SCALAR_CODE
#endif

// Small dense LDLᵀ factorisation in place: K = L D Lᵀ with L unit lower triangular, stored below
// the diagonal, D on the diagonal and its reciprocals in inverse_diagonal; the upper triangle
// holds L(i, j) d_j at (j, i) (the unscaled column, reused by the next columns). Hand-written
// because Eigen's LLT sends 6×6 inverses to its blocked GEMM path; with a compile-time size these
// loops unroll. LDLᵀ rather than Cholesky: the factorisation is a chain of dependent operations
// column after column, and a square root in every link of that chain made it the costliest part of
// the prox steps (a 6×6 factorisation is too small for anything else to overlap it). False if K is
// not positive definite (a pivot d_j ≤ 0 or NaN).
template <class Mat, class Vec>
SLR_SCALAR_CODE bool ldlt_in_place(Mat& K, Vec& inverse_diagonal) {
  const Eigen::Index n = K.rows();
  inverse_diagonal.resize(n);
  for (Eigen::Index j = 0; j < n; ++j) {
    double d = K(j, j);
    for (Eigen::Index k = 0; k < j; ++k) d -= K(j, k) * K(k, j);
    if (!(d > 0)) return false;
    K(j, j) = d;
    const double inverse = 1.0 / d;
    inverse_diagonal[j] = inverse;
    for (Eigen::Index i = j + 1; i < n; ++i) {
      double v = K(i, j);
      for (Eigen::Index k = 0; k < j; ++k) v -= K(i, k) * K(k, j);
      K(j, i) = v;
      K(i, j) = v * inverse;
    }
  }
  return true;
}

template <class Vec>
SLR_SCALAR_CODE void ldlt_substitute(const auto& K, const Vec& inverse_diagonal, Vec& b) {
  const Eigen::Index n = K.rows();
  for (Eigen::Index i = 0; i < n; ++i) {
    double v = b[i];
    for (Eigen::Index k = 0; k < i; ++k) v -= K(i, k) * b[k];
    b[i] = v;
  }
  for (Eigen::Index i = 0; i < n; ++i) b[i] *= inverse_diagonal[i];
  for (Eigen::Index i = n - 1; i >= 0; --i) {
    double v = b[i];
    for (Eigen::Index k = i + 1; k < n; ++k) v -= K(k, i) * b[k];
    b[i] = v;
  }
}

// Solves (L D Lᵀ) x = b in place, from ldlt_in_place. For compile-time sizes on local copies: the
// compiler cannot prove that stores into b do not alias K, and would reload K after every store.
template <class Mat, class Vec>
SLR_SCALAR_CODE void ldlt_solve(const Mat& K, const Vec& inverse_diagonal, Vec& b) {
  if constexpr (Mat::RowsAtCompileTime != Eigen::Dynamic) {
    const Mat local = K;
    const Vec inverse = inverse_diagonal;
    Vec x = b;
    ldlt_substitute(local, inverse, x);
    b = x;
  } else {
    ldlt_substitute(K, inverse_diagonal, b);
  }
}

// Overwrites the strictly lower triangle of the unit lower factor L with that of L⁻¹ (also unit
// lower; the diagonal is set to 1), so that (L D Lᵀ)⁻¹_ij = Σ_{k ≥ max(i,j)} L⁻¹_ki d_k⁻¹ L⁻¹_kj.
template <class Mat>
void invert_unit_lower_in_place(Mat& K) {
  const Eigen::Index n = K.rows();
  for (Eigen::Index j = 0; j < n; ++j) {
    K(j, j) = 1.0;
    for (Eigen::Index i = j + 1; i < n; ++i) {
      double v = -K(i, j);
      for (Eigen::Index k = j + 1; k < i; ++k) v -= K(i, k) * K(k, j);
      K(i, j) = v;
    }
  }
}

// Scratch arrays for the activation calls: on the stack for bounded L, on the heap otherwise.
template <int MaxL>
struct activation_scratch {
  std::array<double, MaxL> chi{}, z{}, sigma{};
  std::array<double, MaxL * MaxL> jacobian{}, hessian{};
  explicit activation_scratch(std::size_t) {}
};
template <>
struct activation_scratch<Eigen::Dynamic> {
  std::vector<double> chi, z, sigma, jacobian, hessian;
  explicit activation_scratch(std::size_t L) : chi(L), z(L), sigma(L), jacobian(L * L), hessian(L * L) {}
};

// The proximal problem of one sample in 2L dimensions (layout [χ_1..χ_L, z_1..z_L]):
//   Φ(h) = ½(y − f(h))² + ½ Σ_l (h_l − ω_l)ᵀ A (h_l − ω_l),  f = Σ σ_l(χ) z_l,  A = V⁻¹.
// N = 2L at compile time for small L (fixed-size Eigen, no heap), else Dynamic with MaxN.
template <int N, int MaxN>
struct prox_problem {
  using vec = Eigen::Matrix<double, N, 1, 0, MaxN, 1>;
  using mat = Eigen::Matrix<double, N, N, 0, MaxN, MaxN>;
  static constexpr int MaxL = MaxN == Eigen::Dynamic ? Eigen::Dynamic : MaxN / 2;

  const model::activation& sigma;
  std::size_t runtime_length;
  // L as a compile-time constant for fixed N, so the loops over tokens unroll.
  [[nodiscard]] std::size_t length() const {
    if constexpr (N == Eigen::Dynamic) return runtime_length;
    else return static_cast<std::size_t>(N / 2);
  }
  double y;
  double a_kk, a_kv, a_vv;
  vec omega;
  activation_scratch<MaxL> scratch;

  struct point {
    vec h, grad, grad_f;
    mat hess; // H + A⊗I
    double value = 0, residual = 0;
    explicit point(Eigen::Index n) : h(vec::Zero(n)), grad(vec::Zero(n)), grad_f(vec::Zero(n)), hess(mat::Zero(n, n)) {}
  };

  prox_problem(const model::activation& s, std::size_t token_count, double label, const Eigen::Matrix2d& A)
      : sigma(s), runtime_length(token_count), y(label), a_kk(A(0, 0)), a_kv(0.5 * (A(0, 1) + A(1, 0))), a_vv(A(1, 1)),
        omega(vec::Zero(static_cast<Eigen::Index>(2 * token_count))), scratch(token_count) {}

  [[nodiscard]] std::span<double> chi() { return {scratch.chi.data(), length()}; }
  [[nodiscard]] std::span<double> z() { return {scratch.z.data(), length()}; }
  [[nodiscard]] std::span<double> sig() { return {scratch.sigma.data(), length()}; }

  double quadratic(const vec& h) const {
    const std::size_t L = length();
    double q = 0;
    for (std::size_t l = 0; l < L; ++l) {
      const double dc = h[l] - omega[l], dz = h[L + l] - omega[L + l];
      q += a_kk * dc * dc + 2 * a_kv * dc * dz + a_vv * dz * dz;
    }
    return 0.5 * q;
  }

  double value(const vec& h) {
    const std::size_t L = length();
    for (std::size_t l = 0; l < L; ++l) scratch.chi[l] = h[l];
    sigma.evaluate(chi(), sig());
    double f = 0;
    for (std::size_t l = 0; l < L; ++l) f += scratch.sigma[l] * h[L + l];
    const double r = y - f;
    return 0.5 * r * r + quadratic(h);
  }

  // Value, gradient and Hessian of Φ, and ∇f, at p.h. ∇f = [Jᵀz; σ]; ∇²f has the χχ block
  // Σ_l z_l∇²σ_l, the χ_m z_l entries J_lm and a zero zz block; ∇²ℓ = ∇f∇fᵀ − (y − f)∇²f.
  void evaluate(point& p) {
    const std::size_t L = length();
    const Eigen::Index n = static_cast<Eigen::Index>(2 * L);
    for (std::size_t l = 0; l < L; ++l) scratch.chi[l] = p.h[l], scratch.z[l] = p.h[L + l];
    sigma.second_order(chi(), z(), sig(), {scratch.jacobian.data(), L * L}, {scratch.hessian.data(), L * L});
    p.grad_f.resize(n);
    p.grad.resize(n);
    p.hess.resize(n, n);
    double f = 0;
    for (std::size_t l = 0; l < L; ++l) f += scratch.sigma[l] * scratch.z[l];
    const double r = y - f;
    p.residual = r;
    for (std::size_t m = 0; m < L; ++m) {
      double g = 0;
      for (std::size_t l = 0; l < L; ++l) g += scratch.jacobian[l * L + m] * scratch.z[l];
      p.grad_f[m] = g;
      p.grad_f[L + m] = scratch.sigma[m];
    }
    p.hess.noalias() = p.grad_f * p.grad_f.transpose();
    for (std::size_t m = 0; m < L; ++m) {
      for (std::size_t k = 0; k < L; ++k) p.hess(m, k) -= r * scratch.hessian[m * L + k];
      for (std::size_t l = 0; l < L; ++l) {
        const double cross = r * scratch.jacobian[l * L + m];
        p.hess(m, L + l) -= cross;
        p.hess(L + l, m) -= cross;
      }
    }
    double quad = 0;
    for (std::size_t l = 0; l < L; ++l) {
      const double dc = p.h[l] - omega[l], dz = p.h[L + l] - omega[L + l];
      p.hess(l, l) += a_kk;
      p.hess(L + l, L + l) += a_vv;
      p.hess(l, L + l) += a_kv;
      p.hess(L + l, l) += a_kv;
      p.grad[l] = -r * p.grad_f[l] + a_kk * dc + a_kv * dz;
      p.grad[L + l] = -r * p.grad_f[L + l] + a_kv * dc + a_vv * dz;
      quad += a_kk * dc * dc + 2 * a_kv * dc * dz + a_vv * dz * dz;
    }
    p.value = 0.5 * r * r + 0.5 * quad;
  }

  // Damped Newton (Levenberg–Marquardt): a step is accepted only if Φ does not increase, so the
  // result is a local minimiser reached by descent from the start. Returns accepted steps.
  int minimise(point& p, int max_steps, double tolerance) {
    evaluate(p);
    const double lambda_floor = 1e-6 * (1.0 + std::abs(a_kk) + std::abs(a_vv));
    double lambda = 0;
    int accepted = 0;
    for (int step = 0; step < max_steps; ++step) {
      if (p.grad.template lpNorm<Eigen::Infinity>() <= tolerance) break;
      bool moved = false, stuck = false;
      while (!moved && !stuck) {
        mat K = p.hess;
        K.diagonal().array() += lambda;
        vec inverse_diagonal;
        if (!ldlt_in_place(K, inverse_diagonal)) {
          lambda = std::max(10 * lambda, lambda_floor);
          stuck = lambda > 1e12;
          continue;
        }
        vec delta = -p.grad;
        ldlt_solve(K, inverse_diagonal, delta);
        const vec trial = p.h + delta;
        const double trial_value = value(trial);
        if (trial_value <= p.value) {
          p.h = trial;
          moved = true;
          lambda = lambda * 0.1 < lambda_floor ? 0.0 : lambda * 0.1;
        } else if (delta.template lpNorm<Eigen::Infinity>() <= 1e-14 * (1.0 + p.h.template lpNorm<Eigen::Infinity>())) {
          stuck = true; // at the floating-point resolution of a minimiser
        } else {
          lambda = std::max(10 * lambda, lambda_floor);
          stuck = lambda > 1e12;
        }
      }
      if (!moved) break;
      ++accepted;
      evaluate(p);
    }
    return accepted;
  }
};

template <int N, int MaxN>
void process_sample(std::size_t s, const channel_inputs& in, channel_sample& sample, channel_sums& acc) {
  using problem_type = prox_problem<N, MaxN>;
  using vec = typename problem_type::vec;
  using mat = typename problem_type::mat;
  const auto& fields = sample.fields;
  const std::size_t L = fields.length[s];
  const std::size_t Lmax = fields.max_length;
  const Eigen::Index n = static_cast<Eigen::Index>(2 * L);
  const auto chi_star = fields.chi(s), z_star = fields.z(s);
  const std::size_t location = fields.location[s];
  const double y = z_star[location] + in.delta * sample.label_noise[s];
  problem_type prox(*in.sigma, L, y, in.A);

  // ω_l = Mᵀh*_l + C^{1/2}ξ_l.
  const double* xi = sample.omega_noise.data() + s * Lmax * 2;
  for (std::size_t l = 0; l < L; ++l) {
    const Eigen::Vector2d h_star(chi_star[l], z_star[l]);
    const Eigen::Vector2d w = in.M.transpose() * h_star + in.C_root * Eigen::Vector2d(xi[2 * l], xi[2 * l + 1]);
    prox.omega[static_cast<Eigen::Index>(l)] = w[0];
    prox.omega[static_cast<Eigen::Index>(L + l)] = w[1];
  }

  // Start 1: the prox of the problem with f linearised at ω (one Gauss–Newton step from ω):
  //   h = ω + (y − f(ω)) V_L∇f / (1 + ∇fᵀV_L∇f).
  typename problem_type::point first(n), second(n);
  {
    // ∇f(ω) = [Jᵀz; σ] from one vector–Jacobian product.
    for (std::size_t l = 0; l < L; ++l) {
      prox.scratch.chi[l] = prox.omega[static_cast<Eigen::Index>(l)];
      prox.scratch.z[l] = prox.omega[static_cast<Eigen::Index>(L + l)];
    }
    std::array<double, 64> jtz_buffer{};
    std::vector<double> jtz_heap;
    std::span<double> jtz(jtz_buffer.data(), std::min<std::size_t>(L, 64));
    if (L > 64) {
      jtz_heap.resize(L);
      jtz = jtz_heap;
    }
    in.sigma->vector_jacobian(prox.chi(), prox.z(), prox.sig(), jtz);
    double f = 0;
    vec g(n), Vg(n);
    for (std::size_t l = 0; l < L; ++l) {
      f += prox.scratch.sigma[l] * prox.scratch.z[l];
      g[static_cast<Eigen::Index>(l)] = jtz[l];
      g[static_cast<Eigen::Index>(L + l)] = prox.scratch.sigma[l];
    }
    for (std::size_t l = 0; l < L; ++l) {
      const auto li = static_cast<Eigen::Index>(l), zi = static_cast<Eigen::Index>(L + l);
      Vg[li] = in.V(0, 0) * g[li] + in.V(0, 1) * g[zi];
      Vg[zi] = in.V(1, 0) * g[li] + in.V(1, 1) * g[zi];
    }
    first.h = prox.omega + ((y - f) / (1.0 + g.dot(Vg))) * Vg;
  }
  // Start 2: the previous iteration's solution ω + (ĥ − ω)_old (warm start), or ω itself.
  double* displacement = sample.displacement.data() + s * Lmax * 2;
  second.h = prox.omega;
  if (sample.has_displacement)
    for (Eigen::Index i = 0; i < n; ++i) second.h[i] += displacement[i];
  // The warm start first. With adaptive starts, once it has converged to an objective no higher
  // than the value at the linearised start, that start is skipped as dominated: descent from it
  // would have to pass below the warm minimum to change the choice (measured: it then wins in ~6
  // of 1.5e5 sample-iterations at r = 0.1, never at r = 1), and it is half the prox work.
  acc.steps += static_cast<std::size_t>(prox.minimise(second, in.max_steps, in.tolerance));
  ++acc.prox;
  const bool dominated = in.skip_dominated_start && sample.has_displacement &&
                         second.grad.template lpNorm<Eigen::Infinity>() <= in.tolerance &&
                         second.value <= prox.value(first.h);
  if (!dominated) {
    acc.steps += static_cast<std::size_t>(prox.minimise(first, in.max_steps, in.tolerance));
    ++acc.prox;
  }
  const auto& best = dominated || second.value < first.value ? second : first;
  for (Eigen::Index i = 0; i < n; ++i) displacement[i] = best.h[i] - prox.omega[i];

  const double w = fields.weight[s];
  // (H + A_L)⁻¹: V̂ needs its diagonal 2×2 blocks, ∂_y ĥ = (H + A_L)⁻¹∇f.
  // With H + A_L = LDLᵀ only the needed entries of the inverse are formed from L⁻¹ and D⁻¹.
  mat K = best.hess;
  mat P(n, n);
  vec dy_h = best.grad_f, inverse_diagonal;
  if (ldlt_in_place(K, inverse_diagonal)) {
    ldlt_solve(K, inverse_diagonal, dy_h);
    invert_unit_lower_in_place(K);
    for (std::size_t l = 0; l < L; ++l) {
      const auto li = static_cast<Eigen::Index>(l), zi = static_cast<Eigen::Index>(L + l);
      double pcc = 0, pcz = 0, pzz = 0;
      for (Eigen::Index k = li; k < n; ++k) {
        const double c = K(k, li), scaled = inverse_diagonal[k] * c;
        pcc += scaled * c;
        if (k >= zi) pcz += scaled * K(k, zi), pzz += inverse_diagonal[k] * K(k, zi) * K(k, zi);
      }
      P(li, li) = pcc, P(li, zi) = P(zi, li) = pcz, P(zi, zi) = pzz;
    }
  } else {
    acc.nonpd += w;
    P = best.hess.fullPivLu().inverse();
    dy_h = P * best.grad_f;
  }
  const Eigen::Matrix2d& A = in.A;

  Eigen::Matrix2d stein = Eigen::Matrix2d::Zero(), tilt = Eigen::Matrix2d::Zero();
  std::array<double, 64> score_buffer{};
  std::vector<double> score_heap;
  std::span<double> score(score_buffer.data(), std::min<std::size_t>(L, 64));
  if (L > 64) {
    score_heap.resize(L);
    score = score_heap;
  }
  if (in.tilt) in.task->tilt_score(location, chi_star, score);
  for (std::size_t l = 0; l < L; ++l) {
    const auto li = static_cast<Eigen::Index>(l), zi = static_cast<Eigen::Index>(L + l);
    const Eigen::Vector2d d(best.h[li] - prox.omega[li], best.h[zi] - prox.omega[zi]);
    const Eigen::Vector2d f_out = A * d;
    acc.Q_hat += w * f_out * f_out.transpose();
    Eigen::Matrix2d block;
    block << P(li, li), P(li, zi), P(zi, li), P(zi, zi);
    acc.V_hat += w * (A - A * block * A);
    // Stein-free: (h*_l − M C⁻¹(ω_l − Mᵀh*_l)) f_outᵀ with ω_l − Mᵀh*_l = C^{1/2}ξ_l.
    const Eigen::Vector2d h_star(chi_star[l], z_star[l]);
    const Eigen::Vector2d corrected =
        h_star - in.M * (in.C_inverse_root * Eigen::Vector2d(xi[2 * l], xi[2 * l + 1]));
    stein += corrected * f_out.transpose();
    if (in.tilt) tilt.row(0) += score[l] * f_out.transpose();
  }
  if (in.tilt) {
    const auto ei = static_cast<Eigen::Index>(location), ez = static_cast<Eigen::Index>(L + location);
    tilt.row(1) = (A * Eigen::Vector2d(dy_h[ei], dy_h[ez])).transpose();
    const Eigen::Matrix2d difference = stein - tilt;
    acc.difference_squares += (w * w) * difference.cwiseProduct(difference);
    acc.M_tilt += w * tilt;
  }
  acc.M_stein += w * stein;
  acc.weight_squares += w * w;
  acc.train += w * 0.5 * best.residual * best.residual;
}

// Dispatch on L: compile-time sizes for L ≤ 4, bounded stack storage up to L = 16, heap beyond.
void process_range(std::size_t begin, std::size_t end, const channel_inputs& in, channel_sample& sample,
                   channel_sums& acc) {
  for (std::size_t s = begin; s < end; ++s) {
    switch (sample.fields.length[s]) {
    case 1: process_sample<2, 2>(s, in, sample, acc); break;
    case 2: process_sample<4, 4>(s, in, sample, acc); break;
    case 3: process_sample<6, 6>(s, in, sample, acc); break;
    case 4: process_sample<8, 8>(s, in, sample, acc); break;
    default:
      if (sample.fields.length[s] <= 16) process_sample<Eigen::Dynamic, 32>(s, in, sample, acc);
      else process_sample<Eigen::Dynamic, Eigen::Dynamic>(s, in, sample, acc);
    }
  }
}

double max_abs_difference(const fixed_point_state& a, const fixed_point_state& b) {
  return std::max({(a.M - b.M).cwiseAbs().maxCoeff(), (a.Q - b.Q).cwiseAbs().maxCoeff(),
                   (a.V - b.V).cwiseAbs().maxCoeff()});
}

double max_abs(const fixed_point_state& s) {
  return std::max({s.M.cwiseAbs().maxCoeff(), s.Q.cwiseAbs().maxCoeff(), s.V.cwiseAbs().maxCoeff()});
}

bool finite(const fixed_point_state& s) { return s.M.allFinite() && s.Q.allFinite() && s.V.allFinite(); }

Eigen::Matrix2d off_diagonal_removed(const Eigen::Matrix2d& m) { return m.diagonal().asDiagonal(); }

// The state as a vector for the mixing algebra: M (4 entries), the upper triangles of Q and V.
using state_vector = Eigen::Matrix<double, 10, 1>;

state_vector pack(const fixed_point_state& s) {
  state_vector x;
  x << s.M(0, 0), s.M(0, 1), s.M(1, 0), s.M(1, 1), s.Q(0, 0), 0.5 * (s.Q(0, 1) + s.Q(1, 0)), s.Q(1, 1), s.V(0, 0),
      0.5 * (s.V(0, 1) + s.V(1, 0)), s.V(1, 1);
  return x;
}

fixed_point_state unpack(const state_vector& x) {
  fixed_point_state s;
  s.M << x[0], x[1], x[2], x[3];
  s.Q << x[4], x[5], x[5], x[6];
  s.V << x[7], x[8], x[8], x[9];
  return s;
}

bool positive_definite(const Eigen::Matrix2d& V) { return V(0, 0) > 0 && V(1, 1) > 0 && V.determinant() > 0; }

// Type-II Anderson mixing (Walker & Ni 2011) for x = G(x) with residual f = G(x) − x:
//   γ = argmin ‖f_k − ΔF γ‖₂,  x_{k+1} = x_k + βf_k − (ΔX + βΔF)γ,
// ΔX, ΔF the differences of the last m iterates and residuals. β = 1 would be the undamped
// secant step; with β = η the step reduces to plain damping when the history is empty.
class anderson_mixer {
public:
  anderson_mixer(int memory, double mixing) : memory_(memory), mixing_(mixing) {}

  void reset() { count_ = 0, next_slot_ = 0, has_previous_ = false; }
  [[nodiscard]] bool has_history() const noexcept { return count_ > 0; }

  // Records the evaluated pair (x, f) and returns the next iterate.
  state_vector step(const state_vector& x, const state_vector& f) {
    if (has_previous_) {
      // Ring buffer of the last m differences; the column order does not matter to the fit.
      const int slot = next_slot_;
      dx_.col(slot) = x - previous_x_;
      df_.col(slot) = f - previous_f_;
      next_slot_ = (next_slot_ + 1) % memory_;
      count_ = std::min(count_ + 1, memory_);
    }
    previous_x_ = x, previous_f_ = f, has_previous_ = true;
    state_vector next = x + mixing_ * f;
    if (count_ == 0) return next;
    const auto DF = df_.leftCols(count_);
    // Least squares by a rank-revealing QR: the columns become nearly dependent close to
    // convergence and in the directions the diagonal projection keeps at zero.
    Eigen::CompleteOrthogonalDecomposition<Eigen::Matrix<double, 10, Eigen::Dynamic>> qr(DF);
    qr.setThreshold(1e-10);
    const Eigen::VectorXd gamma = qr.solve(f);
    if (!gamma.allFinite()) return next;
    next -= (dx_.leftCols(count_) + mixing_ * DF) * gamma;
    return next;
  }

private:
  int memory_;
  double mixing_;
  int count_ = 0, next_slot_ = 0;
  bool has_previous_ = false;
  state_vector previous_x_ = state_vector::Zero(), previous_f_ = state_vector::Zero();
  Eigen::Matrix<double, 10, 20> dx_ = Eigen::Matrix<double, 10, 20>::Zero(), df_ = Eigen::Matrix<double, 10, 20>::Zero();
};
} // namespace

fixed_point_solver::fixed_point_solver(model::problem problem, double alpha, double r_k, double r_v,
                                       fixed_point_options options,
                                       std::shared_ptr<const model::activation> activation)
    : problem_(std::move(problem)), alpha_(alpha), r_k_(r_k), r_v_(r_v), options_(std::move(options)),
      activation_(std::move(activation)) {
  problem_.validate();
  if (!(alpha_ > 0) || !std::isfinite(alpha_)) throw std::invalid_argument("alpha must be finite and > 0");
  if (!(r_k_ >= 0) || !std::isfinite(r_k_)) throw std::invalid_argument("r_k must be finite and >= 0");
  if (!(r_v_ >= 0) || !std::isfinite(r_v_)) throw std::invalid_argument("r_v must be finite and >= 0");
  options_.validate();
  if (options_.estimator == hat_m_estimator::tilt_score && problem_.task.is_hard())
    throw std::invalid_argument("the tilt-score estimator of M-hat does not exist for max-SLR at nu = inf");
  if (!activation_) activation_ = model::make_activation(problem_.activation);
}

fixed_point_state fixed_point_solver::prior_update(const hat_variables& hats) const {
  const Eigen::Matrix2d Lambda = Eigen::Vector2d(r_k_, r_v_).asDiagonal();
  const Eigen::Matrix2d precision = Lambda + 0.5 * (hats.V_hat + hats.V_hat.transpose());
  const Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eig(precision);
  if (!(eig.eigenvalues().minCoeff() > 0))
    throw std::domain_error("Lambda + V-hat is not positive definite (V would be infinite or negative)");
  fixed_point_state next;
  next.V = precision.inverse();
  next.V = 0.5 * (next.V + next.V.transpose());
  next.M = hats.M_hat * next.V;
  next.Q = next.V * (hats.M_hat.transpose() * hats.M_hat + hats.Q_hat) * next.V;
  next.Q = 0.5 * (next.Q + next.Q.transpose());
  return next;
}

fixed_point_repeat fixed_point_solver::solve_once(std::uint64_t sample_seed, double wall_time_limit_s) const {
  const auto start = clock_type::now();
  fixed_point_repeat out;
  out.seed = sample_seed;
  const auto& task = problem_.task;
  const bool tilt_available = !task.is_hard();
  const bool use_tilt = options_.estimator == hat_m_estimator::tilt_score ||
                        (options_.estimator == hat_m_estimator::automatic && tilt_available);

  channel_sample sample;
  sample.fields = model::draw_teacher_fields(task, problem_.lengths, options_.samples, sample_seed, options_.threads);
  const std::size_t S = sample.fields.size(), Lmax = sample.fields.max_length;
  sample.label_noise.assign(S, 0.0);
  sample.omega_noise.assign(S * Lmax * 2, 0.0);
  sample.displacement.assign(S * Lmax * 2, 0.0);
  for (std::size_t s = 0; s < S; ++s) {
    model::counter_rng rng(sample_seed, model::stream_purpose::channel_noise, s);
    sample.label_noise[s] = rng.normal();
    for (std::size_t i = 0; i < 2 * sample.fields.length[s]; ++i) sample.omega_noise[s * Lmax * 2 + i] = rng.normal();
  }

  fixed_point_state state = options_.initial_state.value_or(fixed_point_state::informed());
  clip_residual(state);
  channel_inputs in;
  in.delta = problem_.delta;
  in.task = &task;
  in.sigma = activation_.get();
  in.tilt = tilt_available; // both estimators are always computed where possible (diagnostics)
  in.max_steps = options_.prox_max_steps;
  in.skip_dominated_start = options_.prox_starts == prox_start_policy::adaptive;
  in.tolerance = options_.prox_tolerance;

  // Anderson safeguards: a restart when the residual exceeds restart_growth × the best one so far
  // after an extrapolation; plain damping for the rest of the solve after max_restarts.
  constexpr double restart_growth = 2.0;
  constexpr int max_restarts = 5;
  bool accelerate = options_.acceleration == fixed_point_acceleration::anderson;
  anderson_mixer mixer(options_.anderson_memory, options_.damping);
  double best_residual = std::numeric_limits<double>::infinity();
  state_vector best_x = pack(state), best_f = state_vector::Zero();

  out.status = solve_status::not_converged;
  for (int iteration = 1; iteration <= options_.max_iterations; ++iteration) {
    if (seconds_since(start) > wall_time_limit_s) {
      out.status = solve_status::timeout;
      out.message = "wall-time limit reached after " + std::to_string(out.iterations) + " iterations";
      break;
    }
    in.M = state.M;
    in.V = 0.5 * (state.V + state.V.transpose());
    in.A = in.V.inverse();
    psd_roots(state.Q - state.M.transpose() * state.M, in.C_root, in.C_inverse_root);

    const auto channel_start = clock_type::now();
    const channel_sums sums = model::chunked_reduce(
        S, chunk_size, options_.threads, channel_sums{},
        [&](std::size_t begin, std::size_t end, channel_sums& acc) { process_range(begin, end, in, sample, acc); });
    sample.has_displacement = true;
    out.channel_seconds += seconds_since(channel_start);
    out.prox_problems += sums.prox;
    out.channel_samples += S;
    out.newton_steps += sums.steps;
    out.iterations = iteration;

    hat_variables hats;
    hats.Q_hat = alpha_ * 0.5 * (sums.Q_hat + sums.Q_hat.transpose());
    hats.V_hat = alpha_ * 0.5 * (sums.V_hat + sums.V_hat.transpose());
    out.M_hat_stein_free = alpha_ * sums.M_stein;
    if (tilt_available) {
      out.M_hat_tilt_score = alpha_ * sums.M_tilt;
      // Var of the mean of per-sample differences ≈ Σw²d² − (Σwd)² Σw² (exact for one stratum).
      const Eigen::Matrix2d mean = sums.M_stein - sums.M_tilt;
      out.M_hat_difference_stderr =
          alpha_ * (sums.difference_squares - sums.weight_squares * mean.cwiseProduct(mean)).cwiseMax(0.0).cwiseSqrt();
    } else {
      out.M_hat_tilt_score.setConstant(std::numeric_limits<double>::quiet_NaN());
      out.M_hat_difference_stderr.setConstant(std::numeric_limits<double>::quiet_NaN());
    }
    hats.M_hat = use_tilt ? out.M_hat_tilt_score : out.M_hat_stein_free;
    if (options_.diagonal) {
      hats.M_hat = off_diagonal_removed(hats.M_hat);
      hats.Q_hat = off_diagonal_removed(hats.Q_hat);
      hats.V_hat = off_diagonal_removed(hats.V_hat);
    }
    out.hats = hats;
    out.train_loss = sums.train;
    out.nonpd_fraction = sums.nonpd;

    fixed_point_state next;
    try {
      next = prior_update(hats);
    } catch (const std::domain_error& e) {
      out.status = solve_status::diverged;
      out.message = std::string(e.what()) + " at iteration " + std::to_string(iteration);
      break;
    }
    out.residual = finite(next) ? max_abs_difference(next, state) : std::numeric_limits<double>::infinity();
    const double eta = options_.damping;
    const state_vector x = pack(state), f = pack(next) - x;
    // The plain damped step; also what a converged solve returns (the last damped state).
    state_vector step = x + eta * f;
    if (accelerate && out.residual < options_.tolerance) {
      // converged: keep the damped step
    } else if (accelerate && std::isfinite(out.residual)) {
      if (mixer.has_history() && out.residual > restart_growth * best_residual) {
        // The last extrapolation made things worse: restart from the best iterate seen, with the
        // damped step whose residual is already known. After repeated failures, plain damping.
        ++out.acceleration_restarts;
        mixer.reset();
        step = best_x + eta * best_f;
        if (out.acceleration_restarts >= max_restarts) accelerate = false;
      } else {
        if (out.residual < best_residual) best_residual = out.residual, best_x = x, best_f = f;
        const state_vector candidate = mixer.step(x, f);
        const fixed_point_state s = unpack(candidate);
        if (candidate.allFinite() && positive_definite(s.V) && candidate.cwiseAbs().maxCoeff() <= options_.divergence_bound) {
          if (mixer.has_history()) ++out.accelerated_steps;
          step = candidate;
        } else {
          ++out.acceleration_restarts; // inadmissible extrapolation: damped step, fresh history
          mixer.reset();
          if (out.acceleration_restarts >= max_restarts) accelerate = false;
        }
      }
    }
    state = unpack(step);
    if (!finite(state) || max_abs(state) > options_.divergence_bound) {
      out.status = solve_status::diverged;
      out.message = "the order parameters left the bound |M|, |Q|, |V| <= " +
                    std::to_string(options_.divergence_bound) + " at iteration " + std::to_string(iteration);
      break;
    }
    clip_residual(state);
    if (out.residual < options_.tolerance) {
      out.status = solve_status::ok;
      break;
    }
  }
  if (out.status == solve_status::not_converged)
    out.message = "no convergence in " + std::to_string(options_.max_iterations) + " iterations (residual " +
                  std::to_string(out.residual) + ")";
  out.state = state;

  if (options_.test_samples > 0 && finite(state) && out.status != solve_status::diverged) {
    const mc_settings mc{options_.test_samples, model::derive_seed(sample_seed, model::stable_hash("test-risk")),
                         options_.threads};
    out.test_risk = population_risk(problem_, state.order_parameters(), mc);
  }
  return out;
}

fixed_point_result fixed_point_solver::solve(std::uint64_t seed) const {
  const auto start = clock_type::now();
  fixed_point_result result;
  for (unsigned r = 0; r < options_.repeats; ++r) {
    const double left = options_.wall_time_limit_s - seconds_since(start);
    if (!(left > 0)) {
      result.status = worse(result.status, solve_status::timeout);
      result.message = "wall-time limit reached after " + std::to_string(r) + " repeats";
      break;
    }
    result.repeats.push_back(solve_once(model::derive_seed(seed, r), left));
  }
  // Averages over the repeats with a usable state (not diverged); all repeats if none is.
  std::vector<const fixed_point_repeat*> used;
  for (const auto& rep : result.repeats)
    if (rep.status != solve_status::diverged && finite(rep.state)) used.push_back(&rep);
  if (used.empty())
    for (const auto& rep : result.repeats) used.push_back(&rep);
  if (used.empty()) return result;
  const double count = static_cast<double>(used.size());
  result.state.M.setZero(), result.state.Q.setZero(), result.state.V.setZero();
  double risk_sum = 0, risk_sq = 0, train_sum = 0, train_sq = 0;
  for (const auto* rep : used) {
    result.state.M += rep->state.M / count;
    result.state.Q += rep->state.Q / count;
    result.state.V += rep->state.V / count;
    result.hats.M_hat += rep->hats.M_hat / count;
    result.hats.Q_hat += rep->hats.Q_hat / count;
    result.hats.V_hat += rep->hats.V_hat / count;
    risk_sum += rep->test_risk.value, risk_sq += rep->test_risk.value * rep->test_risk.value;
    train_sum += rep->train_loss, train_sq += rep->train_loss * rep->train_loss;
    result.nonpd_fraction += rep->nonpd_fraction / count;
  }
  for (const auto& rep : result.repeats) {
    result.status = worse(result.status, rep.status);
    result.iterations = std::max(result.iterations, rep.iterations);
    result.residual = std::max(result.residual, rep.residual);
    if (rep.status != solve_status::ok && result.message.empty())
      result.message = "repeat seed " + std::to_string(rep.seed) + ": " + rep.message;
  }
  const auto spread = [&](double sum, double sq) {
    if (used.size() < 2) return std::numeric_limits<double>::quiet_NaN();
    const double mean = sum / count;
    return std::sqrt(std::max(0.0, (sq - count * mean * mean) / (count - 1)) / count);
  };
  result.test_risk = {risk_sum / count, spread(risk_sum, risk_sq)};
  result.train_loss = {train_sum / count, spread(train_sum, train_sq)};
  result.train_loss_regularised =
      result.train_loss.value + (r_k_ * result.state.Q(0, 0) + r_v_ * result.state.Q(1, 1)) / (2 * alpha_);
  return result;
}

} // namespace slr::theory
