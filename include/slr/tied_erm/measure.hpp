#pragma once
// One ERM run of tied attention at finite d and what is measured (docs/theory.md §T1, §8):
// teacher, n = round(α d²) training sequences (stream training_data), n_test fresh sequences
// (stream test_data), the minimiser of the problem's parametrisation, and its observables.
// Everything is a deterministic function of (problem, settings): all random numbers are addressed
// by (seed, purpose, index).
#include <cstddef>
#include <cstdint>
#include <limits>

#include <Eigen/Core>

#include "slr/tied/problem.hpp"
#include "slr/tied_erm/data.hpp"
#include "slr/tied_erm/solver.hpp"

namespace slr::tied_erm {

struct erm_settings {
  std::size_t d = 60;          ///< token dimension, ≥ 2
  std::uint64_t seed = 0;      ///< teacher, data, test data and initialisation streams
  std::size_t n_test = 4000;   ///< fresh test sequences, ≥ 2
  solver_settings solver;
  /// Refuse (std::invalid_argument) a run whose memory_estimate_bytes exceeds this, in bytes.
  double memory_limit_bytes = std::numeric_limits<double>::infinity();
  /// Throws std::invalid_argument "<name>: <reason>" for the first out-of-range value.
  void validate() const;
};

/// All per sequence unless stated; test errors are means over the test set with their standard
/// errors (sample s.d./√n_test). The test errors are those of the attention matrix for both label
/// forms (what the theory predicts); the training loss and objective are those of the trained form.
struct measurements {
  double test_clean = 0, test_clean_se = 0; ///< ‖σ_β(h(Ŝ)) − σ_β0(h(S*))‖²_F
  double test_noisy = 0, test_noisy_se = 0; ///< ‖σ_β(h(Ŝ)) − Y‖²_F against fresh noisy labels
  std::size_t n_train = 0, n_test = 0;
  double train_loss = 0;           ///< ℒ(Ŝ)/n
  double objective_per_d2 = 0;     ///< (ℒ(Ŝ) + penalty)/d²
  double q = 0;                    ///< (1/d)‖Ŝ‖²_F
  double m = 0;                    ///< (1/d)⟨Ŝ, S*⟩
  double target_second_moment = 0; ///< realised (1/d) Tr S*² (1 + k0 + 1/d on average)
  double mse_S = 0;                ///< (1/d)‖Ŝ − S*‖²_F
  double trace_per_d = 0;          ///< (1/d) Tr Ŝ
  double rank_rel_1e3 = 0;         ///< fraction of eigenvalues with |λ| > 1e-3 max|λ|
  double rank_rel_1e2 = 0;         ///< fraction of eigenvalues with |λ| > 1e-2 max|λ|
  /// KKT residual of Ŝ in the PSD-nuclear program (solver.hpp) for factorised and psd-nuclear;
  /// NaN for direct.
  double kkt_residual = std::numeric_limits<double>::quiet_NaN();
  Eigen::VectorXd eigenvalues;     ///< all d eigenvalues of Ŝ, ascending
  solver_report optimiser;
};

/// Bytes a run allocates at its peak (training and test data, block scratch, optimiser state,
/// d×d work matrices), without allocating. Throws like problem::validate / erm_settings::validate.
[[nodiscard]] double memory_estimate_bytes(const tied::problem& problem, const erm_settings& settings);

/// Observables of a solution Ŝ on its training set and a test set.
/// Throws std::invalid_argument if the shapes disagree.
[[nodiscard]] measurements measure(const tied::problem& problem, const teacher& teacher, const dataset& train,
                                   const dataset& test, const solution& solution);

/// The whole run: validates, checks the memory estimate against settings.memory_limit_bytes
/// (std::invalid_argument "memory_limit_bytes: …" above it) before allocating, draws, solves, measures.
/// If S_hat is non-null it receives Ŝ.
[[nodiscard]] measurements run_erm(const tied::problem& problem, const erm_settings& settings,
                                   Eigen::MatrixXd* S_hat = nullptr);

/// The same problem with sequence-to-label labels (the form of the test errors).
[[nodiscard]] tied::problem attention_form(tied::problem problem);

/// n = round(α d²), at least 1.
[[nodiscard]] std::size_t training_size(double alpha, std::size_t d) noexcept;

} // namespace slr::tied_erm
