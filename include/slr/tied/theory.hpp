#pragma once
// Replica-symmetric fixed point of tied single-head attention trained by ERM (docs/theory.md §T4):
//   (q, m, V) = PRIOR(CHANNEL(q, m, V)),
// with the prior side of spectrum.hpp (spectral soft threshold / ridge) and the channel side of
// channel.hpp (global prox averaged over scrambled Sobol points, common random numbers throughout a
// phase). Solved by Anderson-accelerated iteration, first on a coarse QMC sample, then continued on
// the fine one. Per-d / per-sequence units throughout (q = (1/d)‖Ŝ‖², errors per sequence).
// Parametrisations: factorised ≡ psd_nuclear (penalty λ d Tr S on S ⪰ 0, soft-thresholded spectrum),
// except that factorised with width k < 1 caps the rank at kd when the soft-threshold rank exceeds
// it (top-kd conjecture); direct = ridge (closed-form prior). Implemented for 2 ≤ T ≤ max_channel_T (slr/tied/channel.hpp).
// Deterministic: results depend only on (problem, options) — no threads, no global state.
// Known limit: at Δ = 0 well above the recovery threshold (Q̃0 q − m² → 0) the iteration may stall
// (not_converged) or leave the admissible region (diverged).
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "slr/tied/channel.hpp"
#include "slr/tied/problem.hpp"
#include "slr/tied/spectrum.hpp"

namespace slr::tied {

/// ok: relative residual below tolerance in the last phase; not_converged: iteration cap reached
/// (the last state is returned); diverged: the state left the admissible region (q ≤ 0, V ≤ 0,
/// m² ≥ Q̃0 q, non-finite or non-positive hats) and could not be repaired.
enum class theory_status { ok, not_converged, diverged };
[[nodiscard]] std::string_view theory_status_name(theory_status s) noexcept;

/// Which conjugates drive the iteration (both are always computed; see channel_result). stein:
/// valid where prox minima compete; hessian: lower variance, valid for a smooth prox, and the safe
/// choice at Δ = 0 where the Stein forms divide by Q̃0 q − m² → 0 above the recovery threshold;
/// automatic: hessian when Δ = 0, stein otherwise.
enum class hat_form { stein, hessian, automatic };
inline constexpr std::array all_hat_forms{hat_form::stein, hat_form::hessian, hat_form::automatic};
/// "stein", "hessian", "automatic".
[[nodiscard]] std::string_view hat_form_name(hat_form form) noexcept;
/// Throws std::invalid_argument "hats: unknown value ..." naming the accepted names.
[[nodiscard]] hat_form parse_hat_form(std::string_view name);

/// The primal overlaps of the fixed point.
struct overlaps {
  double q = 0; ///< (1/d)‖Ŝ‖² > 0
  double m = 0; ///< (1/d)⟨Ŝ, S*⟩
  double V = 0; ///< response > 0
};

struct theory_options {
  int log2_points_coarse = 12;  ///< first phase QMC points 2^n (n in [4, 24]); 0 skips the phase
  int log2_points = 16;         ///< final phase QMC points, in [4, 24]
  std::uint64_t seed = 0;       ///< Sobol scramble seed (the same sample for every map evaluation of a phase)
  double tolerance = 1e-7;      ///< on ‖w∘(F(x) − x)‖₂/‖w∘F(x)‖₂, w = 1/|phase start| per overlap; > 0
  int max_iterations = 100;     ///< map evaluations per phase, ≥ 1
  int anderson_depth = 3;       ///< Anderson memory, in [0, 10] (0: plain damped iteration)
  double mixing = 1.0;          ///< damping η ∈ (0, 1] of the Anderson/plain step
  hat_form hats = hat_form::automatic;
  prox_options prox;
  /// Warm starts across map evaluations (channel_memory): all 2^T starts at the first evaluation of
  /// a phase, whenever the state moved by more than warm_radius since the last such evaluation, at
  /// points with competing minima, and in a final confirming evaluation; a single warm Newton solve
  /// elsewhere. false: all 2^T starts at every point of every evaluation (slower).
  bool warm_starts = true;
  /// Warm starts are used only while every overlap is within this relative distance of the state
  /// of the last all-starts evaluation (≥ 0; 10× larger in the coarse phase, whose result is only a
  /// starting point); further away all starts run again.
  double warm_radius = 0.01;
  std::optional<overlaps> initial; ///< start; (0.5 Q0, 0.4 Q0, 1) when empty
  bool spectrum = true;         ///< compute the estimator's spectrum (quantiles, density grid)
  /// Called after every map evaluation with (phase 0 coarse / 1 final, evaluation index, x, F(x),
  /// relative residual); for tracing. Must not throw.
  std::function<void(int, int, const overlaps&, const overlaps&, double)> observer;
  /// Throws std::invalid_argument "<field>: <reason>".
  void validate() const;
};

struct theory_result {
  theory_status status = theory_status::not_converged;
  std::string message;
  double residual = 0;          ///< relative residual of the last map evaluation
  int iterations_coarse = 0;    ///< map evaluations in the coarse phase
  int iterations = 0;           ///< map evaluations in the final phase
  overlaps x;                   ///< q, m, V
  hat_variables hats;           ///< the conjugates that drove the iteration (α included)
  hat_variables hats_stein, hats_hessian; ///< both forms at the last channel evaluation
  double hat_m_rel_diff = 0;    ///< (m̂_Stein − m̂_Hessian)/m̂_Stein: flags competing prox minima
  double hat_V_rel_diff = 0;    ///< (V̂_Stein − V̂_Hessian)/V̂_Stein
  double delta = 0, eps = 0, scale = 0; ///< δ = √q̂/m̂, ε = 2λ/m̂ (0 for direct), s (Ŝ = s f(S* + δG))
  double mse_S = 0;             ///< (1/d)‖Ŝ − S*‖² = Q0 + q − 2m
  double test_clean = 0;        ///< E‖σ_β(h(Ŝ)) − σ_β0(h(S*))‖² per fresh sequence
  double test_noisy = 0;        ///< the same against fresh noisy labels
  double train_loss = 0;        ///< (1/n) Σ_μ ‖σ_β(h(Ŝ; X_μ)) − Y_μ‖²
  double objective_per_d2 = 0;  ///< α train_loss + λ (1/d)Tr Ŝ (PSD) or + λ q (direct)
  double rank_fraction = 1;     ///< fraction of non-zero eigenvalues of Ŝ
  double atom_at_0 = 0;         ///< 1 − rank_fraction (PSD), 0 (direct)
  double trace_per_d = 0;       ///< (1/d) Tr Ŝ
  bool rank_capped = false;     ///< factorised k < 1 below the soft-threshold rank (top-kd conjecture used)
  double frac_two_minima = 0;   ///< channel points with competing prox minima (last evaluation)
  double frac_prox_not_converged = 0;
  estimator_spectrum spectrum;  ///< empty when options.spectrum is false
  std::size_t newton_steps = 0; ///< prox Newton steps over the whole solve
  double seconds = 0;           ///< wall time
};

/// Solves the RS fixed point. Throws std::invalid_argument for an invalid problem / options or
/// T > max_channel_T; a solve that does not converge is reported through status, never thrown.
[[nodiscard]] theory_result solve_theory(const problem& p, const theory_options& options = {});

} // namespace slr::tied
