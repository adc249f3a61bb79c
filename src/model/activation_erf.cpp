// element-wise erf with offset c: σ_l = 1 + erf(c + χ_l), σ' = (2/√π) e^{−(c+χ)²}, σ'' = −2(c+χ)σ'.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "slr/model/activation.hpp"
#include "slr/model/vector_math.hpp"

namespace slr::model::detail {
namespace {
class erf_activation final : public activation {
public:
  explicit erf_activation(double offset) : offset_(offset) {}
  activation_spec spec() const noexcept override { return {activation_kind::erf, offset_}; }
  void evaluate(std::span<const double> chi, std::span<double> sigma) const override {
    for (std::size_t l = 0; l < chi.size(); ++l) sigma[l] = offset_ + chi[l];
    vector_math::erf(sigma, sigma);
    for (double& s : sigma) s += 1.0;
  }
  void vector_jacobian(std::span<const double> chi, std::span<const double> u, std::span<double> sigma,
                       std::span<double> out) const override {
    vector_jacobian_by_linearisation(chi, u, sigma, out);
  }
  // work_l = e^{−(c+χ_l)²}, so that Jᵀu = u_l (2/√π) work_l.
  void linearise(std::span<const double> chi, std::span<double> sigma, std::span<double> work) const override {
    for (std::size_t l = 0; l < chi.size(); ++l) {
      const double t = offset_ + chi[l];
      sigma[l] = t;
      work[l] = -t * t;
    }
    vector_math::erf(sigma, sigma);
    vector_math::exp(work, work);
    for (double& s : sigma) s += 1.0;
  }
  void jacobian_transpose(std::span<const double> sigma, std::span<const double> work, std::span<const double> u,
                          std::span<double> out) const override {
    for (std::size_t l = 0; l < sigma.size(); ++l) out[l] = u[l] * slope * work[l];
  }
  void second_order(std::span<const double> chi, std::span<const double> u, std::span<double> sigma,
                    std::span<double> jacobian, std::span<double> hessian) const override {
    const std::size_t L = chi.size();
    // e^{−t²} in the first L entries of `hessian` (scratch until the Hessian is written).
    const std::span<double> gauss = hessian.first(L);
    for (std::size_t l = 0; l < L; ++l) {
      const double t = offset_ + chi[l];
      sigma[l] = t;
      gauss[l] = -t * t;
    }
    vector_math::exp(gauss, gauss);
    vector_math::erf(sigma, sigma);
    std::fill(jacobian.begin(), jacobian.begin() + static_cast<std::ptrdiff_t>(L * L), 0.0);
    for (std::size_t l = 0; l < L; ++l) jacobian[l * L + l] = slope * gauss[l];
    std::fill(hessian.begin(), hessian.begin() + static_cast<std::ptrdiff_t>(L * L), 0.0);
    for (std::size_t l = 0; l < L; ++l) {
      const double t = offset_ + chi[l];
      sigma[l] += 1.0;
      hessian[l * L + l] = -2.0 * t * jacobian[l * L + l] * u[l];
    }
  }

private:
  static constexpr double slope = 2.0 * std::numbers::inv_sqrtpi;
  double offset_;
};
} // namespace

std::unique_ptr<const activation> make_erf(const activation_spec& spec) {
  return std::make_unique<erf_activation>(spec.erf_offset);
}

} // namespace slr::model::detail
