#pragma once
// Second-order Runge–Kutta–Chebyshev steps (RKC; van der Houwen & Sommeijer 1980, with the
// damping ε = 2/13 and the error estimate of Sommeijer, Shampine & Verwer 1998) for stiff
// dissipative flows dy/dt = f(y) whose Jacobian has real, non-positive eigenvalues in [−ρ, 0] —
// gradient flow, where the Jacobian is minus the Hessian. An s-stage step is stable for h·ρ ≤ β(s)
// ≈ 0.65 s², so the cost of crossing a stiff stretch grows like √ρ rather than like ρ for the
// classical explicit methods (Heun: h·ρ ≤ 2).
#include <cstddef>
#include <vector>

#include <Eigen/Core>

namespace slr::erm::rkc {

/// Coefficients of the s-stage scheme (index j = 1 … s; entry 0 unused).
struct scheme {
  int stages = 0;
  std::vector<double> mu, nu, mu_tilde, gamma_tilde;
  double stability_bound = 0; ///< β(s): the step is stable for h·ρ ≤ β(s)
};

/// The s-stage scheme, 2 ≤ s ≤ max_stages; throws std::invalid_argument otherwise.
[[nodiscard]] scheme make_scheme(int s);
inline constexpr int max_stages = 500;

/// Fewest stages (≥ 2, ≤ max_stages) whose stability bound covers h·ρ (h·ρ ≥ 0).
[[nodiscard]] int stages_for(double h_rho);

/// One step of size h from y with f0 = f(y): writes y_{n+1} to `out` after s − 1 evaluations
/// f(x, fx) (fx = f(x)). `out` must not alias y.
template <class Flow>
void step(const scheme& c, Flow&& f, const Eigen::VectorXd& y, const Eigen::VectorXd& f0, double h,
          Eigen::VectorXd& out) {
  Eigen::VectorXd previous = y;                       // Y_{j−2}
  Eigen::VectorXd current = y + (c.mu_tilde[1] * h) * f0; // Y_1
  Eigen::VectorXd f_current(y.size());
  for (int j = 2; j <= c.stages; ++j) {
    f(current, f_current);
    const auto k = static_cast<std::size_t>(j);
    // Y_j = (1 − μ_j − ν_j) Y_0 + μ_j Y_{j−1} + ν_j Y_{j−2} + μ̃_j h f(Y_{j−1}) + γ̃_j h f(Y_0)
    out = (1 - c.mu[k] - c.nu[k]) * y + c.mu[k] * current + c.nu[k] * previous + (c.mu_tilde[k] * h) * f_current +
          (c.gamma_tilde[k] * h) * f0;
    previous.swap(current);
    current.swap(out);
  }
  out.swap(current);
}

/// Estimate of the local error of the step y → y1 (f0 = f(y), f1 = f(y1)):
/// 0.8 (y − y1) + 0.4 h (f0 + f1), of order h³.
[[nodiscard]] inline Eigen::VectorXd error_estimate(const Eigen::VectorXd& y, const Eigen::VectorXd& y1,
                                                    const Eigen::VectorXd& f0, const Eigen::VectorXd& f1, double h) {
  return 0.8 * (y - y1) + (0.4 * h) * (f0 + f1);
}

} // namespace slr::erm::rkc
