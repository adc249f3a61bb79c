#pragma once
// The empirical risk of the attention predictor f(X) = Σ_l σ_l(χ) z_l, χ = Xk/√D, z = Xv/√D
// (docs/theory.md §4):  F(k, v) = Σ_μ ½(y_μ − f(X_μ))² + (r_k/2)|k|² + (r_v/2)|v|²,
// with its gradient, in one streaming pass over the tokens: per sequence the L×D block is read
// once from memory for (χ, z) and re-read from cache for the gradient contributions. The
// pass is cut into chunks of sequences whose size depends only on N; chunk sums are combined
// in chunk order, so values are bit-identical for any thread count.
#include <cstddef>
#include <memory>

#include <Eigen/Core>

#include "slr/erm/data.hpp"
#include "slr/model/activation.hpp"

namespace slr::erm {

struct loss_value {
  double loss = 0;      ///< Σ_μ ½(y_μ − f_μ)² (unregularised)
  double objective = 0; ///< loss + (r_k/2)|k|² + (r_v/2)|v|²
};

class empirical_risk {
public:
  /// The data must outlive this object. Throws std::invalid_argument if r_k or r_v is negative
  /// or not finite.
  empirical_risk(const sequence_data& data, const model::activation_spec& activation, double r_k, double r_v,
                 unsigned threads = 1);
  ~empirical_risk();
  empirical_risk(const empirical_risk&) = delete;
  empirical_risk& operator=(const empirical_risk&) = delete;

  /// Parameters w = [k; v] (size 2D). Returns F(w) and writes ∇F(w) into `gradient` (resized).
  loss_value evaluate(const Eigen::VectorXd& w, Eigen::VectorXd& gradient) const;
  /// F(w) only (no gradient pass).
  [[nodiscard]] loss_value evaluate(const Eigen::VectorXd& w) const;

  /// Mean and standard error over sequences of (y_μ − f(X_μ))² at w (a test risk when the data
  /// are fresh sequences).
  struct squared_error {
    double mean = 0;
    double stderr = 0;
    double sum = 0;         ///< Σ (y − f)²
    double sum_squares = 0; ///< Σ (y − f)⁴
  };
  [[nodiscard]] squared_error squared_errors(const Eigen::VectorXd& w) const;

  [[nodiscard]] std::size_t dimension() const noexcept { return data_.dimension(); }
  [[nodiscard]] std::size_t samples() const noexcept { return data_.size(); }
  [[nodiscard]] double r_k() const noexcept { return r_k_; }
  [[nodiscard]] double r_v() const noexcept { return r_v_; }
  [[nodiscard]] unsigned threads() const noexcept { return threads_; }

private:
  const sequence_data& data_;
  std::unique_ptr<const model::activation> activation_;
  double r_k_, r_v_;
  unsigned threads_;
};

/// Test risk E[(y − f)²] (includes Δ²) on `samples` fresh sequences of the stream
/// (seed, test_data), generated and evaluated in blocks so that memory stays O(block·L·D).
/// Returns mean and standard error; identical for any thread count.
[[nodiscard]] empirical_risk::squared_error fresh_test_risk(const model::problem& problem, const teacher& teacher,
                                                            const Eigen::VectorXd& w, std::size_t samples,
                                                            std::uint64_t seed, precision storage, unsigned threads);

} // namespace slr::erm
