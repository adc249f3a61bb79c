#include "slr/tied/channel.hpp"

#include <Eigen/Cholesky>
#include <Eigen/SVD>
#include <boost/math/special_functions/erf.hpp>
#include <boost/random/sobol.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "slr/model/random.hpp"

namespace slr::tied {

namespace {

void require(bool ok, const char* name, const std::string& reason) {
  if (!ok) throw std::invalid_argument(std::string(name) + ": " + reason);
}

void check_T(const problem& p) {
  p.validate();
  require(p.T >= 2 && p.T <= max_channel_T, "T",
          "the RS channel is implemented for 2 <= T <= " + std::to_string(max_channel_T));
}

// Solves (H + c I) x = b by an in-place Cholesky factorisation of the small fixed-size matrix;
// false if H + c I is not (numerically) positive definite. Hand-written because the generic
// factorisation dominated the prox cost at L = 3.
template <int L>
bool cholesky_solve(const Eigen::Matrix<double, L, L>& H, double c, const Eigen::Matrix<double, L, 1>& b,
                    Eigen::Matrix<double, L, 1>& x) {
  double a[L][L];
  for (int i = 0; i < L; ++i) {
    for (int j = 0; j <= i; ++j) {
      double v = H(i, j) + (i == j ? c : 0.0);
      for (int k = 0; k < j; ++k) v -= a[i][k] * a[j][k];
      if (i == j) {
        if (!(v > 0)) return false;
        a[i][i] = std::sqrt(v);
      } else {
        a[i][j] = v / a[j][j];
      }
    }
  }
  double y[L];
  for (int i = 0; i < L; ++i) {
    double v = b[i];
    for (int k = 0; k < i; ++k) v -= a[i][k] * y[k];
    y[i] = v / a[i][i];
  }
  for (int i = L - 1; i >= 0; --i) {
    double v = y[i];
    for (int k = i + 1; k < L; ++k) v -= a[k][i] * x[k];
    x[i] = v / a[i][i];
  }
  return true;
}

// Everything about one sequence length T at compile time: field layout, gauge basis, start projectors.
template <int T>
class kernel {
public:
  static constexpr int L = T * (T + 1) / 2;
  static constexpr int R = L - 1; // gauge-reduced dimension
  using vec = Eigen::Matrix<double, L, 1>;
  using mat = Eigen::Matrix<double, L, L>;
  using row = Eigen::Matrix<double, T, 1>;
  using tmat = Eigen::Matrix<double, T, T>;

  kernel(double beta, double beta0) : beta_(beta), beta0_(beta0) {
    int k = 0;
    for (int a = 0; a < T; ++a)
      for (int b = a; b < T; ++b) {
        idx_[a][b] = idx_[b][a] = k++;
        coef_[a][b] = coef_[b][a] = a == b ? std::sqrt(2.0) : 1.0;
      }
    // Gauge vector: M(h + c n) = M(h) + c' 11ᵀ leaves every row softmax unchanged.
    vec n;
    for (int a = 0; a < T; ++a)
      for (int b = a; b < T; ++b) n[idx_[a][b]] = a == b ? 1 / std::sqrt(2.0) : 1.0;
    n.normalize();
    // Orthonormal basis of n⊥: the last R left singular vectors of n (any completion works).
    Eigen::JacobiSVD<Eigen::Matrix<double, L, L>> svd(mat(n * n.transpose()), Eigen::ComputeFullU);
    basis_ = svd.matrixU().template rightCols<R>();
    // Start projectors: the point closest to ω whose rows in the subset S have the logit
    // differences of the exact fit is ω + P_S (h_fit − ω), with P_S the projector on the row
    // space of the constraints "M(h)_ab − M(h)_a0 = M(h_fit)_ab − M(h_fit)_a0, b ≥ 1, a ∈ S".
    for (int s = 0; s < (1 << T); ++s) {
      Eigen::Matrix<double, Eigen::Dynamic, L> C(0, L);
      for (int a = 0; a < T; ++a) {
        if (!(s >> a & 1)) continue;
        for (int b = 1; b < T; ++b) {
          C.conservativeResize(C.rows() + 1, Eigen::NoChange);
          C.row(C.rows() - 1).setZero();
          C(C.rows() - 1, idx_[a][b]) += coef_[a][b];
          C(C.rows() - 1, idx_[a][0]) -= coef_[a][0];
        }
      }
      mat P = mat::Zero();
      if (C.rows() > 0) {
        Eigen::JacobiSVD<Eigen::MatrixXd> csvd(C, Eigen::ComputeFullV);
        const auto& sv = csvd.singularValues();
        for (int i = 0; i < sv.size(); ++i)
          if (sv[i] > 1e-10 * sv[0]) P += csvd.matrixV().col(i) * csvd.matrixV().col(i).transpose();
      }
      projectors_[s] = P;
    }
  }

  [[nodiscard]] const Eigen::Matrix<double, L, R>& basis() const noexcept { return basis_; }

  // Teacher rows Y_a = σ_β0(M(z)_a) (and J*_a if asked).
  void teacher(const vec& z, tmat& Y) const {
    for (int a = 0; a < T; ++a) Y.row(a) = softmax(z, a, beta0_).transpose();
  }

  // ℓ(h; Y) and optionally its gradient and Hessian in h. Per row a (logits g = M(h)_a, p = σ_β(g),
  // r = p − y, s = pᵀr, J = diag p − ppᵀ): ∇_g ℓ_a = 2βJr and
  // ∇²_g ℓ_a = 2β²[JJ + diag(p∘(r − s)) − p_b p_c (r_b + r_c − 2s)], where
  // (JJ)_bc = δ_bc p_b² + p_b p_c (Σp² − p_b − p_c); then chained through M(h).
  // Written with plain arrays: this is the innermost loop of the theory.
  double loss(const vec& h, const tmat& Y, vec* g, mat* H) const {
    double l = 0;
    if (g) g->setZero();
    if (H) H->setZero();
    const double f1 = 2 * beta_, f2 = 2 * beta_ * beta_;
    for (int a = 0; a < T; ++a) {
      double p[T], r[T];
      int imax = 0;
      for (int b = 0; b < T; ++b) {
        p[b] = beta_ * coef_[a][b] * h[idx_[a][b]];
        if (p[b] > p[imax]) imax = b;
      }
      const double mx = p[imax];
      double sum = 0;
      for (int b = 0; b < T; ++b) {
        p[b] = b == imax ? 1.0 : std::exp(p[b] - mx);
        sum += p[b];
      }
      const double inv = 1 / sum;
      double s = 0, p2 = 0;
      for (int b = 0; b < T; ++b) {
        p[b] *= inv;
        r[b] = p[b] - Y(a, b);
        l += r[b] * r[b];
        s += p[b] * r[b];
        p2 += p[b] * p[b];
      }
      if (g)
        for (int b = 0; b < T; ++b) (*g)[idx_[a][b]] += f1 * coef_[a][b] * p[b] * (r[b] - s);
      if (H)
        for (int b = 0; b < T; ++b) {
          const int ib = idx_[a][b];
          const double cb = f2 * coef_[a][b];
          (*H)(ib, ib) += cb * coef_[a][b] *
                          (p[b] * p[b] + p[b] * (r[b] - s) + p[b] * p[b] * (p2 - 2 * p[b] - 2 * r[b] + 2 * s));
          for (int c = b + 1; c < T; ++c) {
            const double v = cb * coef_[a][c] * p[b] * p[c] * (p2 - p[b] - p[c] - r[b] - r[c] + 2 * s);
            (*H)(ib, idx_[a][c]) += v;
            (*H)(idx_[a][c], ib) += v;
          }
        }
    }
    return l;
  }

  // ∂²ℓ/∂h∂z̃*: rows a contribute −2ββ0 J_a J*_a chained on both sides.
  mat mixed(const vec& h, const vec& z) const {
    mat C = mat::Zero();
    for (int a = 0; a < T; ++a) {
      const row p = softmax(h, a, beta_), ps = softmax(z, a, beta0_);
      tmat J = -p * p.transpose(), Js = -ps * ps.transpose();
      J.diagonal() += p;
      Js.diagonal() += ps;
      const tmat JJ = J * Js;
      for (int b = 0; b < T; ++b)
        for (int c = 0; c < T; ++c)
          C(idx_[a][b], idx_[a][c]) += -2 * beta_ * beta0_ * coef_[a][b] * coef_[a][c] * JJ(b, c);
    }
    return C;
  }

  struct start_result {
    vec h;
    mat H; // ∇²ℓ at h
    double objective;
    double loss;
    bool converged;
    int steps;
  };

  // Newton on φ(h) = ‖h − ω‖²/(2V) + ℓ(h): where I/V + H is indefinite, a Levenberg–Marquardt
  // shift makes it positive definite (grown ×10 from 1e-3 of the diagonal scale until Cholesky
  // succeeds); Armijo backtracking on φ. Once the predicted decrease is below the rounding level of
  // φ the full Newton step is taken unchecked (quadratic convergence region), otherwise rounding
  // noise in the Armijo test would shrink steps forever. The full step is evaluated with its
  // derivatives, so an accepted full step costs one loss evaluation.
  start_result newton(vec h, const vec& omega, double V, const tmat& Y, const prox_options& o) const {
    const double iV = 1 / V;
    vec g;
    mat H;
    double l = loss(h, Y, &g, &H);
    double obj = 0.5 * iV * (h - omega).squaredNorm() + l;
    int steps = 0;
    bool converged = false;
    for (; steps < o.max_steps; ++steps) {
      const vec G = g + iV * (h - omega);
      if (G.cwiseAbs().maxCoeff() < o.tolerance) {
        converged = true;
        break;
      }
      vec step;
      double shift = 0;
      for (int tries = 0;; ++tries) {
        if (cholesky_solve(H, iV + shift, G, step)) {
          step = -step;
          break;
        }
        shift = std::max(10 * shift, 1e-3 * (iV + H.diagonal().cwiseAbs().maxCoeff()));
        if (tries > 60) return {h, H, obj, l, false, steps};
      }
      const double slope = G.dot(step);
      vec hn = h + step;
      vec gn;
      mat Hn;
      double ln = loss(hn, Y, &gn, &Hn);
      double on = 0.5 * iV * (hn - omega).squaredNorm() + ln;
      if ((shift == 0 && -slope < 1e-13 * (1 + std::abs(obj))) || on <= obj + 1e-4 * slope) {
        h = hn;
        g = gn;
        H = Hn;
        l = ln;
        obj = on;
        continue;
      }
      double t = 0.5;
      bool accepted = false;
      for (int ls = 0; ls < 50; ++ls, t *= 0.5) {
        hn = h + t * step;
        ln = loss(hn, Y, nullptr, nullptr);
        on = 0.5 * iV * (hn - omega).squaredNorm() + ln;
        if (on <= obj + 1e-4 * t * slope) {
          accepted = true;
          break;
        }
      }
      if (!accepted) {
        // No decrease representable: at the minimiser up to rounding.
        converged = G.cwiseAbs().maxCoeff() < 1e3 * o.tolerance;
        break;
      }
      h = hn;
      obj = on;
      l = loss(h, Y, &g, &H);
    }
    return {h, H, obj, l, converged, steps};
  }

  struct prox_out {
    vec h;
    mat H;
    double objective, loss;
    bool converged, competing;
    int steps;
  };

  // Global prox: Newton from the 2^T subset starts (and from `warm` if given), lowest objective kept.
  // With all_starts = false only the warm start is run.
  prox_out prox(const vec& omega, const vec& z, double V, const tmat& Y, const prox_options& o,
                const vec* warm = nullptr, bool all_starts = true) const {
    const vec fit = (beta0_ / beta_) * z;
    const vec d = fit - omega;
    prox_out best{omega, mat::Zero(), std::numeric_limits<double>::infinity(), 0, false, false, 0};
    constexpr int S = 1 << T;
    std::array<vec, S + 1> ends;
    std::array<bool, S + 1> conv{};
    int count = 0;
    const auto run = [&](const vec& h0) {
      const auto r = newton(h0, omega, V, Y, o);
      best.steps += r.steps;
      ends[count] = r.h;
      conv[count++] = r.converged;
      if (r.objective < best.objective) {
        best.h = r.h;
        best.H = r.H;
        best.objective = r.objective;
        best.loss = r.loss;
        best.converged = r.converged;
      }
    };
    if (warm) run(*warm);
    if (all_starts || !warm)
      for (int s = 0; s < S; ++s) run(s == 0 ? omega : vec(omega + projectors_[s] * d));
    const double scale = 1 + best.h.cwiseAbs().maxCoeff();
    for (int s = 0; s < count; ++s)
      if (conv[s] && (ends[s] - best.h).cwiseAbs().maxCoeff() > 1e-6 * scale) best.competing = true;
    return best;
  }

private:
  row softmax(const vec& h, int a, double beta) const {
    row x;
    for (int b = 0; b < T; ++b) x[b] = beta * coef_[a][b] * h[idx_[a][b]];
    const double mx = x.maxCoeff();
    row p = (x.array() - mx).exp();
    return p / p.sum();
  }

  double beta_, beta0_;
  int idx_[T][T];
  double coef_[T][T];
  Eigen::Matrix<double, L, R> basis_;
  std::array<mat, (1 << T)> projectors_;
};

template <int T, class F>
auto with_kernel_impl(const problem& p, F&& f) {
  return f(kernel<T>(p.beta, p.beta0));
}

// Calls f(kernel<T>) for the run-time T of the problem.
template <class F>
auto with_kernel(const problem& p, F&& f) {
  check_T(p);
  switch (p.T) {
  case 2: return with_kernel_impl<2>(p, f);
  case 3: return with_kernel_impl<3>(p, f);
  case 4: return with_kernel_impl<4>(p, f);
  case 5: return with_kernel_impl<5>(p, f);
  default: return with_kernel_impl<6>(p, f);
  }
}

void check_overlaps(const problem& p, double q, double m, double V, double Q) {
  require(std::isfinite(q) && q > 0, "q", "must be finite and > 0");
  require(std::isfinite(m) && m * m < Q * q, "m", "must satisfy m^2 < Q q (a positive-definite field covariance)");
  require(std::isfinite(V) && V > 0, "V", "must be finite and > 0");
  (void)p;
}

} // namespace

loss_derivatives channel_loss(const problem& p, const Eigen::VectorXd& h, const Eigen::VectorXd& z) {
  return with_kernel(p, [&](const auto& k) {
    using K = std::decay_t<decltype(k)>;
    require(h.size() == K::L && z.size() == K::L, "h", "field vectors must have T(T+1)/2 entries");
    typename K::vec hv = h, zv = z, g;
    typename K::mat H;
    typename K::tmat Y;
    k.teacher(zv, Y);
    loss_derivatives out;
    out.value = k.loss(hv, Y, &g, &H);
    out.gradient = g;
    out.hessian = H;
    out.mixed = k.mixed(hv, zv);
    return out;
  });
}

prox_solution solve_prox(const problem& p, const Eigen::VectorXd& omega, const Eigen::VectorXd& z, double V,
                         const prox_options& o) {
  require(std::isfinite(V) && V > 0, "V", "must be finite and > 0");
  require(o.tolerance > 0 && o.max_steps >= 1, "prox_options", "tolerance must be > 0 and max_steps >= 1");
  return with_kernel(p, [&](const auto& k) {
    using K = std::decay_t<decltype(k)>;
    require(omega.size() == K::L && z.size() == K::L, "omega", "field vectors must have T(T+1)/2 entries");
    typename K::tmat Y;
    const typename K::vec zv = z, wv = omega;
    k.teacher(zv, Y);
    const auto r = k.prox(wv, zv, V, Y, o);
    prox_solution out;
    out.h = r.h;
    out.objective = r.objective;
    out.loss = r.loss;
    out.converged = r.converged;
    out.competing_minima = r.competing;
    out.newton_steps = r.steps;
    return out;
  });
}

qmc_normals::qmc_normals(int dimension, int log2_points, std::uint64_t seed)
    : dim_(dimension), n_(0), seed_(seed) {
  require(dimension >= 1 && dimension <= 64, "dimension", "must be in [1, 64]");
  require(log2_points >= 4 && log2_points <= 24, "log2_points", "must be in [4, 24]");
  n_ = std::size_t{1} << log2_points;
  // Random digital shift per coordinate: XOR of the 64-bit Sobol integers with a word derived from
  // (seed, coordinate), keeping the (t, m, s)-net structure of every 2^k-point prefix.
  std::vector<std::uint64_t> shift(dim_);
  const std::uint64_t base = model::derive_seed(seed, model::stable_hash("tied-channel-sobol-shift"));
  for (int j = 0; j < dim_; ++j) shift[j] = model::derive_seed(base, static_cast<std::uint64_t>(j));
  boost::random::sobol engine(static_cast<std::size_t>(dim_));
  data_.resize(n_ * dim_);
  for (std::size_t i = 0; i < n_; ++i)
    for (int j = 0; j < dim_; ++j) {
      const std::uint64_t bits = (static_cast<std::uint64_t>(engine()) ^ shift[j]) >> 11;
      const double u = (static_cast<double>(bits) + 0.5) * 0x1p-53; // in (0, 1)
      data_[i * dim_ + j] = -std::sqrt(2.0) * boost::math::erfc_inv(2 * u);
    }
}

qmc_normals channel_sample(const problem& p, int log2_points, std::uint64_t seed) {
  check_T(p);
  return qmc_normals(2 * (p.fields() - 1), log2_points, seed);
}

channel_result channel_average(const problem& p, double q, double m, double V, const qmc_normals& sample,
                               const prox_options& o, channel_memory* memory) {
  const double Q = p.target_second_moment() + 0.5 * p.delta;
  check_overlaps(p, q, m, V, Q);
  require(o.tolerance > 0 && o.max_steps >= 1, "prox_options", "tolerance must be > 0 and max_steps >= 1");
  return with_kernel(p, [&](const auto& k) {
    using K = std::decay_t<decltype(k)>;
    constexpr int L = K::L, R = K::R;
    require(sample.dimension() == 2 * R, "sample", "dimension must be 2(L - 1) for this T");
    // Warm starts need the memory of an evaluation on this very sample.
    const bool warm = memory && memory->valid && memory->seed == sample.seed() &&
                      memory->h.size() == sample.size() * L && memory->competing.size() == sample.size();
    if (memory && !warm) {
      memory->h.assign(sample.size() * L, 0.0);
      memory->competing.assign(sample.size(), 1);
      memory->seed = sample.seed();
    }
    // (a_i, b_i) = (√Q ξ_i, (m/√Q) ξ_i + √(q − m²/Q) η_i): iid pairs with covariance [[Q, m], [m, q]].
    const double sQ = std::sqrt(Q), cm = m / sQ, cr = std::sqrt(q - m * m / Q), iV = 1 / V, D = Q * q - m * m;
    double sq = 0, sm = 0, sv = 0, hm = 0, hv = 0, train = 0;
    std::size_t two = 0, notconv = 0, nonpd = 0, steps = 0, counted = 0;
    typename K::tmat Y;
    for (std::size_t i = 0; i < sample.size(); ++i) {
      const double* u = sample.point(i);
      Eigen::Matrix<double, R, 1> a, b;
      for (int j = 0; j < R; ++j) {
        a[j] = sQ * u[j];
        b[j] = cm * u[j] + cr * u[R + j];
      }
      const typename K::vec z = k.basis() * a, w = k.basis() * b;
      k.teacher(z, Y);
      typename K::vec h_prev;
      if (warm) h_prev = Eigen::Map<const typename K::vec>(memory->h.data() + i * L);
      const bool all = !warm || memory->competing[i];
      const auto r = k.prox(w, z, V, Y, o, warm ? &h_prev : nullptr, all);
      if (memory) {
        Eigen::Map<typename K::vec>(memory->h.data() + i * L) = r.h;
        // A point keeps its full set of starts while its starts disagree or its warm start failed.
        memory->competing[i] = static_cast<unsigned char>(r.competing || !r.converged);
      }
      steps += r.steps;
      two += r.competing;
      notconv += !r.converged;
      const typename K::vec f = (r.h - w) * iV;
      sq += f.squaredNorm();
      sm += f.dot(q * z - m * w);
      sv += f.dot(Q * w - m * z);
      train += r.loss;
      typename K::mat A = r.H;
      A.diagonal().array() += iV;
      Eigen::LLT<typename K::mat> llt(A);
      if (llt.info() != Eigen::Success) {
        ++nonpd;
        continue;
      }
      const typename K::mat Ainv = llt.solve(K::mat::Identity());
      hv += L - Ainv.trace() * iV;
      hm += -(Ainv * k.mixed(r.h, z)).trace();
      ++counted;
    }
    if (memory) memory->valid = true;
    const double N = static_cast<double>(sample.size()), c = 2 * p.alpha;
    channel_result out;
    out.points = sample.size();
    out.newton_steps = steps;
    out.all_starts = !warm;
    out.stein = {c * sq / N, c * sm / (N * D), -c * sv / (N * D)};
    const double Nh = std::max<double>(1, static_cast<double>(counted));
    out.hessian = {out.stein.q_hat, c * iV * hm / Nh, c * iV * hv / Nh};
    out.train_loss = train / N;
    out.frac_two_minima = two / N;
    out.frac_not_converged = notconv / N;
    out.frac_non_pd = nonpd / N;
    return out;
  });
}

test_errors test_error(const problem& p, double q, double m, const qmc_normals& sample) {
  const double Q0 = p.target_second_moment(), Qn = Q0 + 0.5 * p.delta;
  check_overlaps(p, q, m, 1.0, Q0);
  return with_kernel(p, [&](const auto& k) {
    using K = std::decay_t<decltype(k)>;
    constexpr int R = K::R;
    require(sample.dimension() == 2 * R, "sample", "dimension must be 2(L - 1) for this T");
    double clean = 0, noisy = 0;
    typename K::tmat Y;
    for (std::size_t i = 0; i < sample.size(); ++i) {
      const double* u = sample.point(i);
      Eigen::Matrix<double, R, 1> a, b;
      for (const auto& [Q, acc] : {std::pair<double, double*>{Q0, &clean}, std::pair<double, double*>{Qn, &noisy}}) {
        const double sQ = std::sqrt(Q), cm = m / sQ, cr = std::sqrt(q - m * m / Q);
        for (int j = 0; j < R; ++j) {
          a[j] = sQ * u[j];
          b[j] = cm * u[j] + cr * u[R + j];
        }
        const typename K::vec z = k.basis() * a, w = k.basis() * b;
        k.teacher(z, Y);
        *acc += k.loss(w, Y, nullptr, nullptr);
      }
    }
    const double N = static_cast<double>(sample.size());
    return test_errors{clean / N, noisy / N};
  });
}

} // namespace slr::tied
