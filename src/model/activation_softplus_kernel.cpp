// softplus-kernel: σ_l = s_l/S with s = sp(χ) = log(1 + e^χ), S = Σs, t = sp' = logistic(χ).
// J_lm = δ_lm t_l/S − s_l t_m/S², so (Jᵀu)_m = (t_m/S)(u_m − σ·u); contracted Hessian
// H_mn = δ_mn t'_m (u_m − σ·u)/S − (t_m t_n/S²)[(u_m − σ·u) + (u_n − σ·u)], t' = t(1 − t).
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "slr/model/activation.hpp"
#include "slr/model/vector_math.hpp"

namespace slr::model::detail {
namespace {
// Short sequences keep their scratch on the stack.
class scratch {
public:
  explicit scratch(std::size_t n) {
    if (n > small_.size()) large_.resize(n);
    data_ = n > small_.size() ? std::span<double>(large_) : std::span<double>(small_.data(), n);
  }
  scratch(const scratch&) = delete; // data_ may point into small_
  scratch& operator=(const scratch&) = delete;
  [[nodiscard]] std::span<double> span() const { return data_; }

private:
  std::array<double, 16> small_{};
  std::vector<double> large_;
  std::span<double> data_;
};

// sigma_l = sp(χ_l) = max(χ_l, 0) + log1p(e_l) and, if `logistic` is not empty, logistic_l = t_l,
// both from e_l = e^{−|χ_l|} (no overflow for either sign): t = 1/(1 + e) for χ ≥ 0, e/(1 + e)
// otherwise. Returns Σ sp(χ_l). `e` is scratch of length L.
double softplus(std::span<const double> chi, std::span<double> sigma, std::span<double> e, std::span<double> logistic) {
  for (std::size_t l = 0; l < chi.size(); ++l) e[l] = -std::abs(chi[l]);
  vector_math::exp(e, e);
  vector_math::log1p(e, sigma);
  double total = 0;
  for (std::size_t l = 0; l < chi.size(); ++l) total += (sigma[l] += std::max(chi[l], 0.0));
  if (!logistic.empty())
    for (std::size_t l = 0; l < chi.size(); ++l) logistic[l] = (chi[l] >= 0 ? 1.0 : e[l]) / (1.0 + e[l]);
  return total;
}

class softplus_kernel_activation final : public activation {
public:
  activation_spec spec() const noexcept override { return {activation_kind::softplus_kernel, 0.0}; }
  void evaluate(std::span<const double> chi, std::span<double> sigma) const override {
    const scratch e(chi.size());
    const double total = softplus(chi, sigma, e.span(), {});
    for (double& s : sigma) s /= total;
  }
  void vector_jacobian(std::span<const double> chi, std::span<const double> u, std::span<double> sigma,
                       std::span<double> out) const override {
    vector_jacobian_by_linearisation(chi, u, sigma, out);
  }
  // work_m = t_m/S, so that (Jᵀu)_m = work_m (u_m − σ·u).
  void linearise(std::span<const double> chi, std::span<double> sigma, std::span<double> work) const override {
    const scratch e(chi.size());
    const double total = softplus(chi, sigma, e.span(), work.first(chi.size()));
    for (std::size_t l = 0; l < chi.size(); ++l) {
      sigma[l] /= total;
      work[l] /= total;
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
    const scratch e(L), t(L);
    const double total = softplus(chi, sigma, e.span(), t.span());
    double mean = 0;
    for (std::size_t l = 0; l < L; ++l) {
      sigma[l] /= total;
      mean += sigma[l] * u[l];
    }
    for (std::size_t l = 0; l < L; ++l) {
      const double tl = t.span()[l];
      for (std::size_t m = 0; m < L; ++m) {
        const double tm = t.span()[m];
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
