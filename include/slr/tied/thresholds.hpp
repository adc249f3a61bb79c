#pragma once
// Sample-complexity thresholds of tied attention (docs/theory.md §T5), α = n/d².
//
// Recovery (Δ = 0, λ → 0+): noiseless labels give L − 1 generic linear measurements of S per
// sequence (one is lost to the softmax gauge), so the minimum-trace PSD interpolator recovers S*
// once (L − 1)n exceeds the statistical dimension of the descent cone of Tr + ι_{S⪰0} at a rank-ρd
// PSD matrix (ρ = k0):
//   δ_sd(ρ)/d² = min_{t≥0} [ ρ²/2 + ρ(1 − ρ) + ρ(1 − ρ)t²/2 + ((1 − ρ)²/2) E_sc(x − t)²_+ ],
// x ~ semicircle on [−2, 2]; α_rec = δ_sd/d² / (L − 1). The direct (ridge) student exploits no
// structure: α_rec = (1/2)/(L − 1). Interpolation (Δ > 0) of the PSD student lies in
// [(1/4)/(L − 1), α_rec]; the direct student interpolates at (1/2)/(L − 1).
#include <string>
#include <vector>

#include "slr/tied/problem.hpp"
#include "slr/tied/theory.hpp"

namespace slr::tied {

/// Statistical dimension per d² of the descent cone of the PSD trace norm at rank fraction ρ, and the
/// minimising t. Throws std::invalid_argument "rho: ..." unless 0 < ρ ≤ 1.
struct statistical_dimension {
  double per_d2 = 0;
  double t_opt = 0;
};
[[nodiscard]] statistical_dimension psd_trace_statistical_dimension(double rho);

/// Closed-form thresholds for (T, k0, parametrisation) of problem p (other fields ignored).
struct conic_thresholds {
  double stat_dim_per_d2 = 0;      ///< δ_sd/d² (1/2 for direct)
  double t_opt = 0;                ///< minimiser of the PSD formula (0 for direct)
  double alpha_rec = 0;            ///< recovery threshold at Δ = 0
  double alpha_interp_lower = 0;   ///< lower end of the interpolation bracket (PSD); = α_rec for direct
};
/// Throws std::invalid_argument for an invalid problem.
[[nodiscard]] conic_thresholds conic_threshold(const problem& p);

/// Interpolation / recovery threshold from the RS fixed point (§5.3): the exponent
/// p(α) = log(V(λ2)/V(λ1)) / log(λ1/λ2) (→ 1 where the λ → 0+ solution interpolates, → 0 where it
/// does not) crosses 1/2 at the threshold; located by bisection in α on [alpha_lo, alpha_hi], whose
/// exponents must bracket 1/2. Uses p.delta, p.k0, p.T, p.param (p.lambda and p.alpha are
/// replaced). Throws std::invalid_argument for 0 < λ2 < λ1 violated, an empty bracket, or if the
/// exponents at the ends do not bracket 1/2; std::runtime_error if a fixed point diverges.
struct rs_threshold {
  double alpha = 0;           ///< the crossing (midpoint of the final bracket)
  double bracket_lo = 0, bracket_hi = 0;
  double exponent_lo = 0, exponent_hi = 0; ///< p at the final bracket ends
  int fixed_points = 0;       ///< solves performed
};
[[nodiscard]] rs_threshold rs_exponent_threshold(problem p, double lambda1, double lambda2, double alpha_lo,
                                                 double alpha_hi, double alpha_tolerance,
                                                 const theory_options& options = {});

/// The λ → 0+ limit of the RS crossing: the crossing of rs_exponent_threshold for every decade pair
/// (λ, λ/10) from lambda_max down to lambda_min (λ = lambda_max·10^{-j}; at least one pair), then an
/// extrapolation with an uncertainty that covers the drift (docs/theory.md §T5):
///  - geometric: ≥ 3 crossings whose last two steps have one sign and shrink (ratio r ∈ (0, 1)):
///    α = α_n + Δ_n r/(1 − r), Δ_n = α_n − α_{n−1}, r = Δ_n/Δ_{n−1}; uncertainty
///    max(|α − α_n|, |Δ_n|) (α_n inside, and no less than the last decade's drift) plus the
///    bisection half-width;
///  - last-step: 2 crossings, or steps that do not shrink monotonically: α = α_n, uncertainty the
///    larger of the last two steps |Δ_n|, |Δ_{n−1}| (the next decade is assumed to move it no more
///    than they did) plus the half-width;
///  - single: one pair: α = α_1, uncertainty the half-width only (the drift is unknown).
/// Each exponent solves the fixed point at every decade from lambda_max down to its λ2, each
/// solve warm-starting the next, so small λ start near their solution. A later pair bisects first
/// on ±rs_limit_bracket_step around the previous crossing and on [alpha_lo, alpha_hi] if that does not
/// bracket 1/2. Throws as rs_exponent_threshold, and std::invalid_argument "lambda: ..." unless
/// 0 < lambda_min ≤ lambda_max/10.
/// Half-width of the bracket a later decade pair bisects first, around the previous crossing: a
/// decade of λ moves the crossing by a few hundredths (docs/theory.md §T5).
inline constexpr double rs_limit_bracket_step = 0.05;
struct rs_threshold_limit {
  struct crossing {
    double lambda1 = 0, lambda2 = 0, alpha = 0, half_width = 0;
  };
  std::vector<crossing> crossings; ///< in order of decreasing λ
  double alpha = 0;                ///< extrapolated λ → 0+ threshold
  double uncertainty = 0;          ///< half-width of the interval claimed for it
  std::string extrapolation;       ///< "geometric", "last-step" or "single"
  double step_ratio = 0;           ///< r of the geometric extrapolation (0 otherwise)
  int fixed_points = 0;
};
[[nodiscard]] rs_threshold_limit rs_exponent_threshold_limit(const problem& p, double lambda_max, double lambda_min,
                                                             double alpha_lo, double alpha_hi, double alpha_tolerance,
                                                             const theory_options& options = {});

/// The extrapolation step of rs_exponent_threshold_limit alone, on given crossings (exposed for tests).
void extrapolate_threshold(rs_threshold_limit& limit);

} // namespace slr::tied
