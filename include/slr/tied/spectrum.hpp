#pragma once
// Prior side of the replica-symmetric theory of tied attention: spectral laws and spectral
// shrinkage (matrix denoising). Everything is per dimension d (eigenvalues of O(1) matrices,
// traces divided by d), in the d → ∞ limit. Pure numerics: no I/O.
//
// Y = S* + δ G, with S* the Marchenko–Pastur-type target of problem.hpp (spectrum √k0·MP(1/k0):
// atom 1 − k0 at 0, mean √k0, second moment 1 + k0) and G a GOE with semicircle on [−2, 2].
// The law μ_δ of Y is the free convolution of law(S*) with a semicircle of variance δ²; its
// resolvent g(z) = ∫ρ(x)/(z − x)dx solves the cubic
//   −δ² g³ + (z + √k0 δ²) g² − (√k0 z − k0 + 1) g + √k0 = 0.
// The estimator is Ŝ = s · f(Y) spectrally, f(x) = (x − ε)_+ for the PSD-nuclear / factorised
// student (optionally keeping only the top k d eigenvalues) and f(x) = x for the direct (ridge) one.
#include <array>
#include <cstddef>
#include <vector>

#include "slr/tied/problem.hpp"

namespace slr::tied {

/// A closed interval [lo, hi] of the real line (lo ≤ hi).
struct interval {
  double lo = 0;
  double hi = 0;
};

/// Gauss–Legendre rule with n nodes on [−1, 1] (n ≥ 1; cached, thread-safe). Throws
/// std::invalid_argument for n < 1 or n > 4096.
struct gauss_legendre_rule {
  std::vector<double> nodes;
  std::vector<double> weights;
};
[[nodiscard]] const gauss_legendre_rule& gauss_legendre(int n);

/// The law μ_δ of Y = S* + δG for the MP target of rank ratio k0.
class free_convolution {
public:
  /// Throws std::invalid_argument "k0: ..." unless 0 < k0 ≤ 1, "delta: ..." unless δ > 0 finite.
  free_convolution(double k0, double delta, int nodes_per_interval = 400);

  [[nodiscard]] double k0() const noexcept { return k0_; }
  [[nodiscard]] double delta() const noexcept { return delta_; }
  /// Support of μ_δ: one or two disjoint intervals, increasing (two when δ is small and k0 < 1:
  /// the atom of S* at 0 becomes a separate small bulk).
  [[nodiscard]] const std::vector<interval>& support() const noexcept { return support_; }

  /// Boundary value g(x + i0) = re − iπ·density. Outside the support density = 0 and re = g(x)
  /// (the real root continuous from infinity is not tracked there: re is NaN outside the support).
  struct boundary_value {
    double re = 0;
    double density = 0;
  };
  [[nodiscard]] boundary_value at(double x) const noexcept;
  [[nodiscard]] double density(double x) const noexcept { return at(x).density; }

  /// Quadrature nodes of ∫_{max(lo, a)}^{b} F(x) ρ(x) dx over each support interval [a, b], with the
  /// substitution x = a' + (b − a')(1 − cos θ)/2 (square-root edges become smooth) and Gauss–Legendre
  /// in θ. weight already includes ρ(x) dx, so ∫F dμ ≈ Σ w_i F(x_i). re_g = Re g(x_i).
  struct node {
    double x = 0;
    double weight = 0;
    double re_g = 0;
  };
  [[nodiscard]] std::vector<node> nodes(double lo = -1e300) const;

  /// μ_δ((−∞, x]); accurate to ~1e-12.
  [[nodiscard]] double cdf(double x) const;
  /// The x with cdf(x) = p, p ∈ [0, 1] (p = 0 / 1: the support ends). Throws std::invalid_argument
  /// for p outside [0, 1].
  [[nodiscard]] double quantile(double p) const;

private:
  double k0_, delta_;
  int n_;
  std::vector<interval> support_;
};

/// Functionals of a scalar denoiser f(x) = (x − ε) 1[x > lo] (lo ≥ ε) against μ_δ:
/// A0 = μ(x > lo), A1 = ∫fρ, A2 = ∫f²ρ, B1 = ∫fρ Re g, Xf = ∫x f ρ.
/// With lo = −∞ and ε = 0 this is the identity (ridge).
struct spectral_functionals {
  double A0 = 0, A1 = 0, A2 = 0, B1 = 0, Xf = 0;
};
[[nodiscard]] spectral_functionals threshold_functionals(const free_convolution& law, double eps, double lo);

/// Conjugate ("hat") variables of the RS fixed point (α included), all > 0.
struct hat_variables {
  double q_hat = 0, m_hat = 0, V_hat = 0;
};

/// Result of the prior-side (matrix denoising) update for given hats.
struct prior_result {
  double q = 0;              ///< (1/d)‖Ŝ‖²
  double m = 0;              ///< (1/d)⟨Ŝ, S*⟩
  double V = 0;              ///< response E⟨Ŝ, G⟩/(d√q̂)
  double delta = 0;          ///< √q̂/m̂: noise level of Y = S* + δG
  double eps = 0;            ///< 2λ/m̂: soft threshold (0 for direct)
  double scale = 0;          ///< s = m̂/V̂ (PSD) or m̂/(V̂ + 4λ) (direct): Ŝ = s f(Y)
  double cut = 0;            ///< lower end of the kept eigenvalues of Y (ε, or x_k when the rank cap binds; −∞ for direct)
  bool rank_capped = false;  ///< the factorised width k < 1 caps the rank below the soft-threshold rank
  double rank_fraction = 1;  ///< fraction of non-zero eigenvalues of Ŝ (A0)
  double atom_at_0 = 0;      ///< 1 − rank_fraction (PSD); 0 for direct
  double trace_per_d = 0;    ///< (1/d) Tr Ŝ
  spectral_functionals functionals; ///< of μ_δ for the applied denoiser (PSD only)
};

/// Prior-side update (docs/theory.md §T4): PSD/factorised q = s²A2, V = 2B1/V̂,
/// m = s(Xf − 2δ²B1); direct closed form. Throws std::invalid_argument for hats that are not
/// finite and > 0 ("q_hat: ...", "m_hat: ...", "V_hat: ...") or an invalid problem.
[[nodiscard]] prior_result prior_update(const problem& p, const hat_variables& hats, int nodes_per_interval = 400);

/// Spectral law of the estimator Ŝ (eigenvalues, per the d → ∞ limit).
struct estimator_spectrum {
  double atom_at_0 = 0;               ///< mass of the exact zero eigenvalues
  std::vector<interval> support;      ///< support of the continuous part
  std::vector<double> quantile_p;     ///< 101 levels 0, 0.01, …, 1
  std::vector<double> quantiles;      ///< quantiles of the full law (atom included)
  std::vector<double> grid;           ///< 200 equispaced points over [min, max] of the continuous part
  std::vector<double> density;        ///< density of the continuous part on grid (integrates to 1 − atom)
};
/// From a prior_result of the same problem (uses its delta, eps, scale, cut).
[[nodiscard]] estimator_spectrum spectrum_of_estimator(const problem& p, const prior_result& prior);

/// Spectral law of the target S* itself (eigenvalues): √k0 times a Marchenko–Pastur law of ratio
/// c = 1/k0, density ρ(w) = √(4cw − (w − 1 + c)²)/(2πcw) on [(√c − 1)², (√c + 1)²] (mass k0), and
/// the atom 1 − k0 at 0 (docs/theory.md §T1). grid/density as for the estimator (200 points over
/// the support, edges included); quantile_p/quantiles left empty. Throws std::invalid_argument
/// "k0: ..." unless 0 < k0 ≤ 1.
[[nodiscard]] estimator_spectrum target_spectrum(double k0);

} // namespace slr::tied
