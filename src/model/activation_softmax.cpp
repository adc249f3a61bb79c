// softmax: σ_l = e^{χ_l}/Σe^{χ}. J = diag(σ) − σσᵀ, so (Jᵀu)_m = σ_m(u_m − σ·u), and with
// g = Jᵀu the contracted Hessian is H_mn = J_mn (u_m − σ·u) − σ_m g_n (symmetric).
#include <algorithm>
#include <cmath>
#include <limits>

#include "slr/model/activation.hpp"
#include "slr/model/vector_math.hpp"

namespace slr::model::detail {
namespace {
void softmax(std::span<const double> chi, std::span<double> sigma) {
  double top = -std::numeric_limits<double>::infinity();
  for (double c : chi) top = std::max(top, c);
  for (std::size_t l = 0; l < chi.size(); ++l) sigma[l] = chi[l] - top;
  vector_math::exp(sigma, sigma);
  double total = 0;
  for (double s : sigma) total += s;
  const double inverse = 1.0 / total;
  for (double& s : sigma) s *= inverse;
}

double dot(std::span<const double> a, std::span<const double> b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

class softmax_activation final : public activation {
public:
  activation_spec spec() const noexcept override { return {activation_kind::softmax, 0.0}; }
  void evaluate(std::span<const double> chi, std::span<double> sigma) const override { softmax(chi, sigma); }
  void vector_jacobian(std::span<const double> chi, std::span<const double> u, std::span<double> sigma,
                       std::span<double> out) const override {
    vector_jacobian_by_linearisation(chi, u, sigma, out);
  }
  // J depends on σ alone: nothing to keep in `work`.
  void linearise(std::span<const double> chi, std::span<double> sigma, std::span<double>) const override {
    softmax(chi, sigma);
  }
  void jacobian_transpose(std::span<const double> sigma, std::span<const double>, std::span<const double> u,
                          std::span<double> out) const override {
    const double mean = dot(sigma, u);
    for (std::size_t m = 0; m < sigma.size(); ++m) out[m] = sigma[m] * (u[m] - mean);
  }
  void second_order(std::span<const double> chi, std::span<const double> u, std::span<double> sigma,
                    std::span<double> jacobian, std::span<double> hessian) const override {
    const std::size_t L = chi.size();
    softmax(chi, sigma);
    const double mean = dot(sigma, u);
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t m = 0; m < L; ++m) jacobian[l * L + m] = sigma[l] * ((l == m ? 1.0 : 0.0) - sigma[m]);
    for (std::size_t m = 0; m < L; ++m)
      for (std::size_t n = 0; n < L; ++n)
        hessian[m * L + n] = jacobian[m * L + n] * (u[m] - mean) - sigma[m] * sigma[n] * (u[n] - mean);
  }
};
} // namespace

std::unique_ptr<const activation> make_softmax(const activation_spec&) { return std::make_unique<softmax_activation>(); }

} // namespace slr::model::detail
