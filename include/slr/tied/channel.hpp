#pragma once
// Channel side of the replica-symmetric theory of tied attention (docs/theory.md §T4): the
// L = T(T+1)/2 fields of a sequence, z_ab = h_ab (a < b) and z_aa = h_aa/√2, iid per component;
// the per-sequence loss ℓ(h; Y) = Σ_a ‖σ_β(M(h)_a) − Y_a‖² with M(h)_ab = h_ab, M(h)_aa = √2 h_aa and
// teacher rows Y_a = σ_β0(M(z̃*)_a); the proximal problem
//   h⋆ = argmin_h ‖h − ω‖²/(2V) + ℓ(h; Y)
// solved globally over 2^T Levenberg–Marquardt starts; and its Gaussian average over scrambled
// Sobol points of the gauge-reduced 2(L − 1)-dimensional space (the loss is invariant along the
// softmax gauge vector n ∝ (1/√2 on diagonal fields, 1 off the diagonal)). Implemented for
// 2 ≤ T ≤ max_channel_T (2^T starts). Deterministic: results depend only on (problem, overlaps, sample seed).
#include <Eigen/Core>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "slr/tied/problem.hpp"
#include "slr/tied/spectrum.hpp"

namespace slr::tied {

/// Largest sequence length of the channel solver.
inline constexpr int max_channel_T = 6;

/// Loss ℓ(h; Y(z̃*)) with its derivatives in the field coordinates (for tests and diagnostics).
/// h, z_teacher have L = T(T+1)/2 entries ordered (a, b) for a = 0..T−1, b = a..T−1.
struct loss_derivatives {
  double value = 0;
  Eigen::VectorXd gradient; ///< ∇_h ℓ
  Eigen::MatrixXd hessian;  ///< ∇²_h ℓ
  Eigen::MatrixXd mixed;    ///< ∂²ℓ/∂h ∂z̃* (rows h, columns z̃*)
};
/// Throws std::invalid_argument for T outside [2, max_channel_T] ("T: ...") or sizes ≠ L.
[[nodiscard]] loss_derivatives channel_loss(const problem& p, const Eigen::VectorXd& h, const Eigen::VectorXd& z_teacher);

/// Global solution of the proximal problem for one channel point.
struct prox_solution {
  Eigen::VectorXd h;          ///< h⋆
  double objective = 0;       ///< ‖h⋆ − ω‖²/(2V) + ℓ(h⋆)
  double loss = 0;            ///< ℓ(h⋆)
  bool converged = false;     ///< the best start reached ‖∇‖∞ < tolerance
  bool competing_minima = false; ///< converged starts ended at different points
  int newton_steps = 0;       ///< over all starts
};
struct prox_options {
  double tolerance = 1e-10; ///< on ‖∇‖∞ of the prox objective, > 0
  int max_steps = 100;      ///< Newton steps per start, ≥ 1
};
/// Throws std::invalid_argument for T outside [2, max_channel_T], sizes ≠ L, or V ≤ 0.
[[nodiscard]] prox_solution solve_prox(const problem& p, const Eigen::VectorXd& omega, const Eigen::VectorXd& z_teacher,
                                       double V, const prox_options& options = {});

/// Standard normals of 2^log2_points scrambled Sobol points in `dimension` dimensions (Boost's
/// Sobol sequence with a random digital shift per coordinate drawn from (seed, coordinate), then the
/// inverse normal CDF). Row i is point i. Throws std::invalid_argument for dimension outside
/// [1, 64] or log2_points outside [4, 24].
class qmc_normals {
public:
  qmc_normals(int dimension, int log2_points, std::uint64_t seed);
  [[nodiscard]] int dimension() const noexcept { return dim_; }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] const double* point(std::size_t i) const noexcept { return data_.data() + i * dim_; }
  [[nodiscard]] std::uint64_t seed() const noexcept { return seed_; }

private:
  int dim_;
  std::size_t n_;
  std::uint64_t seed_;
  std::vector<double> data_;
};
/// The QMC sample the channel of problem p needs: dimension 2(L − 1).
[[nodiscard]] qmc_normals channel_sample(const problem& p, int log2_points, std::uint64_t seed);

/// Channel averages at the overlaps (q, m, V) with Q̃0 = 1 + k0 + Δ/2, D = Q̃0 q − m² > 0:
///   q̂ = 2α E‖f‖², Stein: m̂ = 2α E f·(q z̃* − m ω)/D, V̂ = −2α E f·(Q̃0 ω − m z̃*)/D,
///   Hessian: V̂ = (2α/V) E tr[I − (I + VH)⁻¹], m̂ = (2α/V) E tr[−(I/V + H)⁻¹ C], f = (h⋆ − ω)/V.
struct channel_result {
  hat_variables stein;           ///< the recommended conjugates (valid with prox jumps)
  hat_variables hessian;         ///< smooth-prox forms (q̂ identical); differ where minima compete
  double train_loss = 0;         ///< E ℓ(h⋆; Y)
  double frac_two_minima = 0;    ///< fraction of points whose starts converged to different minima
  double frac_not_converged = 0; ///< fraction of points whose best start missed the gradient tolerance
  double frac_non_pd = 0;        ///< fraction of points with I/V + H not positive definite at h⋆ (skipped in the Hessian forms)
  std::size_t points = 0;
  std::size_t newton_steps = 0;
  bool all_starts = true;        ///< every point ran all 2^T starts (false: warm starts from memory)
};

/// Per-point memory of the previous evaluation on the same sample, for warm starts. When a valid
/// memory is passed, a point whose 2^T starts all ended at one minimum (and converged) last time
/// runs a single Newton solve from its previous h⋆; points with competing minima keep all 2^T
/// starts plus the warm one. An empty (or foreign) memory triggers all starts and is filled.
struct channel_memory {
  bool valid = false;
  std::uint64_t seed = 0;
  std::vector<double> h;                 ///< previous h⋆, L per point
  std::vector<unsigned char> competing;  ///< 1: run all starts at this point
};
/// Throws std::invalid_argument for an invalid problem, T > max_channel_T, a sample of the wrong
/// dimension, or overlaps with q ≤ 0, V ≤ 0, m² ≥ Q̃0 q (messages "q: ...", "V: ...", "m: ...").
[[nodiscard]] channel_result channel_average(const problem& p, double q, double m, double V, const qmc_normals& sample,
                                             const prox_options& options = {}, channel_memory* memory = nullptr);

/// Test errors per sequence: E‖σ_β0(M(z*)) − σ_β(M(z))‖² with (z*_l, z_l) ~ N(0, [[Q, m], [m, q]]),
/// Q = 1 + k0 (clean) or 1 + k0 + Δ/2 (noisy labels). Same argument checks as channel_average.
struct test_errors {
  double clean = 0;
  double noisy = 0;
};
[[nodiscard]] test_errors test_error(const problem& p, double q, double m, const qmc_normals& sample);

} // namespace slr::tied
