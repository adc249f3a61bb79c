#pragma once
// Population level theory (docs/theory.md §2–§3): the Bayes risk, the population risk of an
// attention predictor as a function of its 7 order parameters, and its minimum over the
// symmetric manifold. Risks include the label noise Δ² (the trivial predictor has 1 + Δ²).
// All Monte Carlo estimates use common random numbers: the same seed gives the same sample,
// whatever the thread count.
#include <cstddef>
#include <cstdint>
#include <span>

#include "slr/model/order_parameters.hpp"
#include "slr/model/problem.hpp"
#include "slr/model/teacher_fields.hpp"

namespace slr::theory {

struct mc_estimate {
  double value = 0;
  double stderr = 0; ///< Monte Carlo standard error
};

struct mc_settings {
  std::size_t samples = 200'000; ///< S ≥ 1 (stratified over the length law)
  std::uint64_t seed = 0;
  unsigned threads = 1;          ///< 0 = all hardware threads; results do not depend on it
};

/// Mean and standard error of per-sample values over a stratified teacher sample
/// (Σ_s w_s v_s, with the stratified variance Σ_L P_L² var_L / n_L).
[[nodiscard]] mc_estimate stratified_estimate(const model::teacher_fields& fields, std::span<const double> values);

/// 𝓔_Bayes = Δ² + 1 − E[Σ_l p_l²]. Throws std::invalid_argument on bad settings.
[[nodiscard]] mc_estimate bayes_risk(const model::problem& problem, const mc_settings& mc);

/// 𝓔(M, Q) for any admissible order parameters (Q − MᵀM ⪰ 0, on or off 𝓜), Rao–Blackwellised
/// over the location. Throws std::invalid_argument if Q − MᵀM is not PSD.
[[nodiscard]] mc_estimate population_risk(const model::problem& problem, const model::order_parameters& op,
                                          const mc_settings& mc);

struct population_minimum {
  mc_estimate risk;                ///< minimal risk, with the MC error of the risk at the minimiser
  model::order_parameters argmin;  ///< on 𝓜, R_vv = 0
  bool unbounded = false;          ///< the optimum ran to the cap on |m_kk| or √R_kk (|k| → ∞)
  int evaluations = 0;             ///< objective evaluations (all starts), in full-sample units
};

struct minimisation_settings {
  double cap = 1e4; ///< bound on |m_kk| and √R_kk; reaching it flags `unbounded`
  /// Samples of the subsample on which the starts descend when S ≥ 2× this (then only the
  /// subsample's minimisers are polished on the full sample); below, every start descends on S.
  std::size_t screening_samples = 20'000;
  /// Distinct subsample minima within this of the best (risk units) are all polished.
  double screening_margin = 0.01;
};

/// min over 𝓜 of 𝓔: closed-form v-part (m_vv = A/B, R_vv = 0, 𝓔 = Δ² + 1 − A²/B), then L-BFGS-B
/// with analytic gradients over (m_kk, √R_kk) from several starts (screened on a subsample when
/// S is large, see minimisation_settings), plus the cap itself.
[[nodiscard]] population_minimum minimise_population_risk(const model::problem& problem, const mc_settings& mc,
                                                          const minimisation_settings& settings = {});

// Exact results of docs/theory.md §3 (no Monte Carlo).

/// E[max of L iid standard normals] (μ_1 = 0, μ_2 = 1/√π, μ_3 = 3/(2√π)), by quadrature to ~1e-12.
[[nodiscard]] double expected_maximum_of_normals(std::size_t L);

/// Minimal population risk of linear attention for spiked-SLR (any P_L, through E[L]):
/// Δ² + E[L](E[L]−1)/(E[L]² + (E[L]−1)ν); the optimum is m_kk = √ν (E[L]−1)/E[L].
[[nodiscard]] double linear_spiked_minimal_risk(double nu, double mean_length, double delta);
[[nodiscard]] double linear_spiked_optimal_m_kk(double nu, double mean_length);

/// Minimal population risk of linear attention for max-SLR at ν = ∞: Δ² + 1 − (1 + μ̄²)/E[L],
/// μ̄ = E_L[μ_L]. Only for constant or mixed L as stated in docs/theory.md §3.
[[nodiscard]] double linear_max_hard_minimal_risk(const model::length_law& lengths, double delta);

} // namespace slr::theory
