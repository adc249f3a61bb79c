// softplus-kernel: σ_l = s_l/S with s = sp(χ) = log(1 + e^χ), S = Σs, t = sp' = logistic(χ).
// J_lm = δ_lm t_l/S − s_l t_m/S², so (Jᵀu)_m = (t_m/S)(u_m − σ·u); contracted Hessian
// H_mn = δ_mn t'_m (u_m − σ·u)/S − (t_m t_n/S²)[(u_m − σ·u) + (u_n − σ·u)], t' = t(1 − t).
#include <algorithm>
#include <cmath>

#include "slr/model/activation.hpp"

namespace slr::model::detail {
namespace {
double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }
double logistic(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

class softplus_kernel_activation final : public activation {
public:
  activation_spec spec() const noexcept override { return {activation_kind::softplus_kernel, 0.0}; }
  void evaluate(std::span<const double> chi, std::span<double> sigma) const override {
    double total = 0;
    for (std::size_t l = 0; l < chi.size(); ++l) total += (sigma[l] = softplus(chi[l]));
    for (double& s : sigma) s /= total;
  }
  void vector_jacobian(std::span<const double> chi, std::span<const double> u, std::span<double> sigma,
                       std::span<double> out) const override {
    vector_jacobian_by_linearisation(chi, u, sigma, out);
  }
  // work_m = t_m/S, so that (Jᵀu)_m = work_m (u_m − σ·u).
  void linearise(std::span<const double> chi, std::span<double> sigma, std::span<double> work) const override {
    double total = 0;
    for (std::size_t l = 0; l < chi.size(); ++l) total += (sigma[l] = softplus(chi[l]));
    for (std::size_t l = 0; l < chi.size(); ++l) {
      sigma[l] /= total;
      work[l] = logistic(chi[l]) / total;
    }
  }
  void jacobian_transpose(std::span<const double> sigma, std::span<const double> work, std::span<const double> u,
                          std::span<double> out) const override {
    double mean = 0;
    for (std::size_t l = 0; l < sigma.size(); ++l) mean += sigma[l] * u[l];
    for (std::size_t m = 0; m < sigma.size(); ++m) out[m] = work[m] * (u[m] - mean);
  }
  void second_order(std::span<const double> chi, std::span<const double> u, std::span<double> sigma,
                    std::span<double> jacobian, std::span<double> hessian) const override {
    const std::size_t L = chi.size();
    evaluate(chi, sigma);
    double total = 0, mean = 0;
    for (std::size_t l = 0; l < L; ++l) {
      total += softplus(chi[l]);
      mean += sigma[l] * u[l];
    }
    for (std::size_t l = 0; l < L; ++l) {
      const double tl = logistic(chi[l]);
      for (std::size_t m = 0; m < L; ++m) {
        const double tm = logistic(chi[m]);
        jacobian[l * L + m] = (l == m ? tl / total : 0.0) - sigma[l] * tm / total;
        hessian[l * L + m] = (l == m ? tl * (1 - tl) * (u[l] - mean) / total : 0.0) -
                             tl * tm / (total * total) * ((u[l] - mean) + (u[m] - mean));
      }
    }
  }
};
} // namespace

std::unique_ptr<const activation> make_softplus_kernel(const activation_spec&) { return std::make_unique<softplus_kernel_activation>(); }

} // namespace slr::model::detail
