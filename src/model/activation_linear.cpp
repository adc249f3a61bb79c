// linear: σ_l = 1 + χ_l; J = I, no curvature.
#include <algorithm>

#include "slr/model/activation.hpp"

namespace slr::model::detail {
namespace {
class linear_activation final : public activation {
public:
  activation_spec spec() const noexcept override { return {activation_kind::linear, 0.0}; }
  void evaluate(std::span<const double> chi, std::span<double> sigma) const override {
    for (std::size_t l = 0; l < chi.size(); ++l) sigma[l] = 1.0 + chi[l];
  }
  void vector_jacobian(std::span<const double> chi, std::span<const double> u, std::span<double> sigma,
                       std::span<double> out) const override {
    vector_jacobian_by_linearisation(chi, u, sigma, out);
  }
  void linearise(std::span<const double> chi, std::span<double> sigma, std::span<double>) const override {
    evaluate(chi, sigma);
  }
  void jacobian_transpose(std::span<const double>, std::span<const double>, std::span<const double> u,
                          std::span<double> out) const override {
    std::copy(u.begin(), u.end(), out.begin());
  }
  void second_order(std::span<const double> chi, std::span<const double>, std::span<double> sigma,
                    std::span<double> jacobian, std::span<double> hessian) const override {
    const std::size_t L = chi.size();
    evaluate(chi, sigma);
    std::fill(hessian.begin(), hessian.begin() + static_cast<std::ptrdiff_t>(L * L), 0.0);
    std::fill(jacobian.begin(), jacobian.begin() + static_cast<std::ptrdiff_t>(L * L), 0.0);
    for (std::size_t l = 0; l < L; ++l) jacobian[l * L + l] = 1.0;
  }
};
} // namespace

std::unique_ptr<const activation> make_linear(const activation_spec&) { return std::make_unique<linear_activation>(); }

} // namespace slr::model::detail
