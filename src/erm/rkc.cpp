#include "slr/erm/rkc.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace slr::erm::rkc {

scheme make_scheme(int s) {
  if (s < 2 || s > max_stages)
    throw std::invalid_argument("RKC stages must be in [2, " + std::to_string(max_stages) + "], got " +
                                std::to_string(s));
  constexpr double damping = 2.0 / 13.0;
  const auto n = static_cast<std::size_t>(s);
  const double w0 = 1 + damping / (static_cast<double>(s) * static_cast<double>(s));
  // Chebyshev polynomials T_j and their first two derivatives at w0, by the three-term recurrence.
  std::vector<double> T(n + 1), dT(n + 1), ddT(n + 1);
  T[0] = 1, T[1] = w0;
  dT[0] = 0, dT[1] = 1;
  ddT[0] = 0, ddT[1] = 0;
  for (std::size_t j = 2; j <= n; ++j) {
    T[j] = 2 * w0 * T[j - 1] - T[j - 2];
    dT[j] = 2 * T[j - 1] + 2 * w0 * dT[j - 1] - dT[j - 2];
    ddT[j] = 4 * dT[j - 1] + 2 * w0 * ddT[j - 1] - ddT[j - 2];
  }
  const double w1 = dT[n] / ddT[n];
  // b_j = T_j''/T_j'² (j ≥ 2) makes every stage second-order consistent; b_0 = b_1 = b_2.
  std::vector<double> b(n + 1);
  for (std::size_t j = 2; j <= n; ++j) b[j] = ddT[j] / (dT[j] * dT[j]);
  b[0] = b[1] = b[2];
  scheme c;
  c.stages = s;
  c.mu.assign(n + 1, 0.0);
  c.nu.assign(n + 1, 0.0);
  c.mu_tilde.assign(n + 1, 0.0);
  c.gamma_tilde.assign(n + 1, 0.0);
  c.mu_tilde[1] = b[1] * w1;
  for (std::size_t j = 2; j <= n; ++j) {
    c.mu[j] = 2 * w0 * b[j] / b[j - 1];
    c.nu[j] = -b[j] / b[j - 2];
    c.mu_tilde[j] = 2 * w1 * b[j] / b[j - 1];
    const double a_previous = 1 - b[j - 1] * T[j - 1]; // a_{j−1} = 1 − b_{j−1} T_{j−1}(w0)
    c.gamma_tilde[j] = -a_previous * c.mu_tilde[j];
  }
  // The stability polynomial is a_s + b_s T_s(w0 + w1 z): bounded by 1 while w0 + w1 z ≥ −1.
  c.stability_bound = (1 + w0) / w1;
  return c;
}

int stages_for(double h_rho) {
  if (!(h_rho >= 0)) throw std::invalid_argument("RKC: h·rho must be >= 0");
  // β(s) ≈ 0.653 s² (Sommeijer et al.'s s = 1 + √(1 + 1.54 hρ) rule); then the exact bound decides.
  int s = std::max(2, static_cast<int>(std::sqrt(h_rho / 0.653)) - 1);
  while (s < max_stages && make_scheme(s).stability_bound < h_rho) ++s;
  return s;
}

} // namespace slr::erm::rkc
