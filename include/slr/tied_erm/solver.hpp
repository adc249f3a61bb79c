#pragma once
// Minimisers of the tied-attention objectives (docs/theory.md §T1, §2, §6):
//   factorised   L-BFGS (LBFGS++, strong-Wolfe line search) on u = W/(r d³)^{1/4} from W_ij ~ η N(0,1);
//   direct       L-BFGS on u = S/√d from S = 0;
//   psd-nuclear  accelerated proximal gradient (FISTA, backtracking, adaptive restart) on S ⪰ 0 from
//                S = 0, prox S ↦ U (Λ − t λ d)_+ Uᵀ (eigenvalue soft threshold).
// Factorised training = PSD-nuclear program (§2.1): the factorised minimiser is certified by the KKT
// residual of its S in the convex program.
//
// Units: objective values are per d² (objective_per_d2 = (ℒ + penalty)/d²); the relative gradient of
// L-BFGS is ‖∇_u f‖/‖u‖ in the normalised coordinates of risk.hpp (dimensionless, O(1) far from a
// minimum, independent of d); the APG stopping quantity is the relative proximal step
// ‖S_{k+1} − Y_k‖_F/‖S_{k+1}‖_F.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <Eigen/Core>

#include "slr/tied/problem.hpp"
#include "slr/tied_erm/data.hpp"
#include "slr/tied_erm/risk.hpp"

namespace slr::tied_erm {

/// How a minimisation ended.
enum class solver_status {
  converged,     ///< the tolerance was met
  iteration_cap, ///< max_iterations reached first
  stalled,       ///< L-BFGS: no further decrease within rounding (line search failed, or f unchanged
                 ///< to 1e-15 over 10 iterations) before the tolerance; the best point seen is returned
};
/// "converged", "iteration-cap", "stalled".
[[nodiscard]] std::string_view solver_status_name(solver_status s) noexcept;

struct solver_settings {
  /// L-BFGS: relative gradient ‖∇_u f‖/‖u‖; APG: relative proximal step. > 0. (L-BFGS reaches
  /// ~1e-8 at the rounding floor of f; 1e-7 leaves the minimiser's S accurate to ~1e-5 relative.)
  double tolerance = 1e-7;
  std::size_t max_iterations = 20000; ///< ≥ 1
  std::size_t lbfgs_memory = 20;      ///< L-BFGS correction pairs, ≥ 1
  double init_scale = 1.0;            ///< factorised start W_ij ~ η N(0, 1), η > 0
  /// Factorised only: start L-BFGS from the factorisation W = V_r Λ_r^{1/2} (r d)^{1/4} of the top r
  /// eigenpairs of the PSD-nuclear (APG) solution instead of a random W. Same minimiser whenever
  /// rank Ŝ ≤ k d (§2.1; otherwise L-BFGS continues from the truncation); much faster at large α,
  /// where the convex program is well conditioned. The report sums both stages.
  bool convex_start = false;
  /// Throws std::invalid_argument "<name>: <reason>" for the first out-of-range value.
  void validate() const;
};

struct solver_report {
  solver_status status = solver_status::converged;
  std::string message;         ///< exit detail (line-search error, convex start); empty if none
  std::size_t iterations = 0;  ///< (after an L-BFGS line-search failure: decreases of the best value)
  std::size_t evaluations = 0; ///< loss evaluations (with or without gradient)
  double gradient_norm = 0;    ///< L-BFGS: ‖∇_u f‖; APG: L‖S_{k+1} − Y_k‖_F (gradient mapping, per d²)
  double relative_gradient = 0; ///< the stopping quantity (see above)
  double objective_per_d2 = 0;
  double wall_seconds = 0;
};

struct solution {
  Eigen::MatrixXd S; ///< the minimiser Ŝ (d×d, symmetric)
  Eigen::MatrixXd W; ///< factorised only: the weights in paper units (S = W Wᵀ/√(r d)); else empty
  solver_report report;
};

/// W_ij = η g_ij, g from normal_stream(seed, initialisation, 0, j) (column j, positions 0..d−1).
/// Throws std::invalid_argument if d < 2, r < 1 or η is not finite and > 0.
[[nodiscard]] Eigen::MatrixXd initial_weights(std::size_t d, std::size_t r, double scale, std::uint64_t seed);

/// L-BFGS on f from u0 (coordinates of risk.hpp). Throws std::invalid_argument on bad settings or
/// a u0 of the wrong size.
[[nodiscard]] solution minimise_lbfgs(objective& f, Eigen::VectorXd u0, const solver_settings& settings);

/// APG on ℒ(S) + λ d Tr S over S ⪰ 0, from the projection of S0 onto the PSD cone. Throws
/// std::invalid_argument on bad settings or a S0 that is not d×d.
[[nodiscard]] solution minimise_psd_nuclear(const tied::problem& problem, empirical_risk& risk,
                                            const Eigen::MatrixXd& S0, const solver_settings& settings);

/// The problem's parametrisation from its default start (factorised: initial_weights(seed), or the
/// convex start; direct and psd-nuclear: S = 0). Throws as the functions above or as problem::validate.
[[nodiscard]] solution solve(const tied::problem& problem, const dataset& data, const solver_settings& settings,
                             std::uint64_t seed);

/// KKT residual of S in the convex program min ℒ(S) + λ d Tr S over S ⪰ 0:
///   ‖S − Π₊(S − τ G)‖_F / ‖S‖_F,  G = ∇ℒ(S) + λ d I,  τ = 1/(α d β²),
/// Π₊ the projection onto the PSD cone. Zero exactly at the convex minimiser; τ is the inverse of
/// the typical curvature of ℒ per unit Frobenius norm, so the value is a relative error of S.
/// S is projected onto the PSD cone first (factorised solutions are PSD up to rounding).
/// Throws std::invalid_argument if S is not d×d or is zero.
[[nodiscard]] double kkt_residual(const tied::problem& problem, empirical_risk& risk, const Eigen::MatrixXd& S);

} // namespace slr::tied_erm
