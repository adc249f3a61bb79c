// Analytic first and second derivatives of every activation against central finite differences.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "slr/model/activation.hpp"

namespace {
using slr::model::activation_kind;
using slr::model::activation_spec;

class ActivationDerivatives : public ::testing::TestWithParam<activation_spec> {};

TEST_P(ActivationDerivatives, MatchFiniteDifferences) {
  const auto sigma = slr::model::make_activation(GetParam());
  const std::vector<double> chi = {0.3, -1.1, 0.7, 2.0};
  const std::vector<double> u = {0.5, -0.2, 1.3, -0.8};
  const std::size_t L = chi.size();
  std::vector<double> s(L), s2(L), g(L), J(L * L), H(L * L);
  sigma->second_order(chi, u, s, J, H);
  sigma->vector_jacobian(chi, u, s2, g);
  for (std::size_t l = 0; l < L; ++l) EXPECT_DOUBLE_EQ(s[l], s2[l]);

  const double h = 1e-5;
  for (std::size_t m = 0; m < L; ++m) {
    auto plus = chi, minus = chi;
    plus[m] += h;
    minus[m] -= h;
    std::vector<double> sp(L), sm(L), gp(L), gm(L), tmp(L);
    sigma->evaluate(plus, sp);
    sigma->evaluate(minus, sm);
    double vjp = 0;
    for (std::size_t l = 0; l < L; ++l) {
      const double fd = (sp[l] - sm[l]) / (2 * h);
      EXPECT_NEAR(J[l * L + m], fd, 1e-8) << "J(" << l << "," << m << ")";
      vjp += u[l] * fd;
    }
    EXPECT_NEAR(g[m], vjp, 1e-8) << "J^T u at " << m;
    // Hessian row m: derivative of J^T u with respect to chi_m.
    sigma->vector_jacobian(plus, u, tmp, gp);
    sigma->vector_jacobian(minus, u, tmp, gm);
    for (std::size_t n = 0; n < L; ++n) EXPECT_NEAR(H[n * L + m], (gp[n] - gm[n]) / (2 * h), 1e-7) << "H(" << n << "," << m << ")";
  }
  for (std::size_t m = 0; m < L; ++m)
    for (std::size_t n = 0; n < L; ++n) EXPECT_NEAR(H[m * L + n], H[n * L + m], 1e-14);
}

// linearise + jacobian_transpose is vector_jacobian split in two: the same bits, for two vectors u
// at one linearisation, and σ equal to evaluate's.
TEST_P(ActivationDerivatives, LinearisationGivesVectorJacobianBitForBit) {
  const auto sigma = slr::model::make_activation(GetParam());
  const std::vector<double> chi = {0.3, -1.1, 0.7, 2.0, -4.5};
  const std::vector<double> u1 = {0.5, -0.2, 1.3, -0.8, 0.1}, u2 = {-1.7, 0.4, 0.0, 2.2, -0.6};
  const std::size_t L = chi.size();
  std::vector<double> s(L), work(L), out1(L), out2(L), s_ref(L), ref1(L), ref2(L), s_eval(L);
  sigma->linearise(chi, s, work);
  sigma->jacobian_transpose(s, work, u1, out1);
  sigma->jacobian_transpose(s, work, u2, out2);
  sigma->vector_jacobian(chi, u1, s_ref, ref1);
  sigma->evaluate(chi, s_eval);
  for (std::size_t l = 0; l < L; ++l) {
    EXPECT_EQ(s[l], s_ref[l]);
    EXPECT_EQ(s[l], s_eval[l]);
    EXPECT_EQ(out1[l], ref1[l]);
  }
  sigma->vector_jacobian(chi, u2, s_ref, ref2);
  for (std::size_t l = 0; l < L; ++l) EXPECT_EQ(out2[l], ref2[l]);
  // Against central differences too, so that the split is right and not only self-consistent.
  const double h = 1e-6;
  for (std::size_t m = 0; m < L; ++m) {
    auto plus = chi, minus = chi;
    plus[m] += h;
    minus[m] -= h;
    std::vector<double> sp(L), sm(L);
    sigma->evaluate(plus, sp);
    sigma->evaluate(minus, sm);
    double fd = 0;
    for (std::size_t l = 0; l < L; ++l) fd += u2[l] * (sp[l] - sm[l]) / (2 * h);
    EXPECT_NEAR(out2[m], fd, 1e-7);
  }
}

INSTANTIATE_TEST_SUITE_P(All, ActivationDerivatives,
                         ::testing::Values(activation_spec{activation_kind::softmax, 0.0},
                                           activation_spec{activation_kind::linear, 0.0},
                                           activation_spec{activation_kind::erf, 0.0},
                                           activation_spec{activation_kind::erf, -1.0},
                                           activation_spec{activation_kind::softplus_kernel, 0.0}));

TEST(Softmax, StableForHugeFields) {
  const auto sigma = slr::model::make_activation({activation_kind::softmax, 0.0});
  const std::vector<double> chi = {1000.0, 999.0, -1000.0};
  std::vector<double> s(3);
  sigma->evaluate(chi, s);
  EXPECT_NEAR(s[0], 1.0 / (1.0 + std::exp(-1.0)), 1e-14);
  EXPECT_NEAR(s[1], std::exp(-1.0) / (1.0 + std::exp(-1.0)), 1e-14);
  EXPECT_EQ(s[2], 0.0);
}

TEST(SoftplusKernel, SumsToOneAndIsStable) {
  const auto sigma = slr::model::make_activation({activation_kind::softplus_kernel, 0.0});
  const std::vector<double> chi = {800.0, -800.0, 0.0};
  std::vector<double> s(3);
  sigma->evaluate(chi, s);
  EXPECT_NEAR(s[0] + s[1] + s[2], 1.0, 1e-15);
  EXPECT_NEAR(s[2], std::log(2.0) / 800.0, 1e-6);
}

TEST(ActivationSpec, ParsesNamesAndRejectsUnknown) {
  EXPECT_EQ(activation_spec::parse_kind("softplus-kernel"), activation_kind::softplus_kernel);
  EXPECT_EQ((activation_spec{activation_kind::erf, 0.5}).kind_name(), "erf");
  EXPECT_THROW((void)activation_spec::parse_kind("relu"), std::invalid_argument);
  EXPECT_THROW((void)slr::model::make_activation({activation_kind::erf, NAN}), std::invalid_argument);
}
} // namespace
