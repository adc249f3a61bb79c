// Brute force at finite D: draw k*, v*, a student (k, v) with prescribed overlaps, sequences
// X from the task, and compare the empirical mean of (y − f(X))² with the order-parameter
// formula 𝓔(M, Q) evaluated at the student's exact finite-D overlaps. Because x is Gaussian,
// (h*, h) is exactly Gaussian given the overlaps, so the two agree up to Monte Carlo error
// for every activation, on and off the manifold.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>

#include "slr/model/activation.hpp"
#include "slr/model/random.hpp"
#include "slr/theory/population.hpp"

namespace {
using namespace slr;

struct brute_case {
  model::task_kind kind;
  double nu;
  std::size_t L;
  model::activation_spec activation;
  bool off_manifold;
};

class BruteForce : public ::testing::TestWithParam<brute_case> {};

TEST_P(BruteForce, FormulaMatchesSimulation) {
  const auto& c = GetParam();
  const int D = 400;
  const int sequences = 20000;
  const double delta = 0.3;
  model::counter_rng rng(17, model::stream_purpose::teacher_weights, 0);
  auto gaussian = [&](int n) {
    Eigen::VectorXd x(n);
    for (int i = 0; i < n; ++i) x[i] = rng.normal();
    return x;
  };
  // Teacher: |k*|² = |v*|² = D, k* ⟂ v*.
  Eigen::VectorXd k_star = gaussian(D), v_star = gaussian(D);
  k_star *= std::sqrt(D) / k_star.norm();
  v_star -= v_star.dot(k_star) / k_star.squaredNorm() * k_star;
  v_star *= std::sqrt(D) / v_star.norm();
  // Student with m_kk ≈ 0.8, R_kk ≈ 0.25, m_vv ≈ 0.9, R_vv ≈ 0.16 (+ cross terms off 𝓜).
  Eigen::VectorXd g1 = gaussian(D), g2 = gaussian(D);
  Eigen::VectorXd k = 0.8 * k_star + 0.5 * g1, v = 0.9 * v_star + 0.4 * g2;
  if (c.off_manifold) {
    k += 0.3 * v_star;
    v += 0.25 * k_star + 0.2 * g1;
  }
  model::order_parameters op;
  op.m_kk = k_star.dot(k) / D, op.m_vk = k_star.dot(v) / D, op.m_kv = v_star.dot(k) / D, op.m_vv = v_star.dot(v) / D;
  op.q_kk = k.dot(k) / D, op.q_kv = k.dot(v) / D, op.q_vv = v.dot(v) / D;

  model::problem p;
  p.task = model::task(c.kind, c.nu);
  p.lengths = model::length_law::fixed(c.L);
  p.delta = delta;
  p.activation = c.activation;
  const auto sigma = model::make_activation(c.activation);

  const double root_d = std::sqrt(static_cast<double>(D));
  double sum = 0, sum_sq = 0;
  Eigen::MatrixXd X(c.L, D);
  std::vector<double> chi(c.L), chi_star(c.L), s(c.L);
  for (int mu = 0; mu < sequences; ++mu) {
    model::counter_rng data(29, model::stream_purpose::training_data, static_cast<std::uint64_t>(mu));
    for (std::size_t l = 0; l < c.L; ++l)
      for (int i = 0; i < D; ++i) X(static_cast<Eigen::Index>(l), i) = data.normal();
    std::size_t eps = 0;
    if (c.kind == model::task_kind::spiked) {
      eps = std::min(c.L - 1, static_cast<std::size_t>(data.uniform() * static_cast<double>(c.L)));
      X.row(static_cast<Eigen::Index>(eps)) += std::sqrt(c.nu) * k_star.transpose() / root_d;
    } else {
      // max-SLR: the location is drawn from the posterior given the teacher fields.
      for (std::size_t l = 0; l < c.L; ++l) chi_star[l] = X.row(static_cast<Eigen::Index>(l)).dot(k_star) / root_d;
      std::vector<double> post(c.L);
      p.task.posterior(chi_star, post);
      const double u = data.uniform();
      double acc = 0;
      eps = c.L - 1;
      for (std::size_t l = 0; l < c.L; ++l)
        if (u < (acc += post[l])) {
          eps = l;
          break;
        }
    }
    const Eigen::VectorXd chi_vec = X * k / root_d, z = X * v / root_d;
    const double y = X.row(static_cast<Eigen::Index>(eps)).dot(v_star) / root_d + delta * data.normal();
    for (std::size_t l = 0; l < c.L; ++l) chi[l] = chi_vec[static_cast<Eigen::Index>(l)];
    sigma->evaluate(chi, s);
    double f = 0;
    for (std::size_t l = 0; l < c.L; ++l) f += s[l] * z[static_cast<Eigen::Index>(l)];
    sum += (y - f) * (y - f);
    sum_sq += (y - f) * (y - f) * (y - f) * (y - f);
  }
  const double brute = sum / sequences;
  const double brute_err = std::sqrt((sum_sq / sequences - brute * brute) / sequences);
  const auto formula = theory::population_risk(p, op, {200'000, 3, 2});
  const double tolerance = 4 * std::hypot(brute_err, formula.stderr);
  EXPECT_NEAR(formula.value, brute, tolerance) << "brute " << brute << " ± " << brute_err;
}

using model::activation_kind;
INSTANTIATE_TEST_SUITE_P(
    EveryActivation, BruteForce,
    ::testing::Values(brute_case{model::task_kind::spiked, 1.0, 3, {activation_kind::softmax, 0}, false},
                      brute_case{model::task_kind::spiked, 1.0, 3, {activation_kind::linear, 0}, false},
                      brute_case{model::task_kind::spiked, 1.0, 3, {activation_kind::erf, 0}, false},
                      brute_case{model::task_kind::spiked, 1.0, 3, {activation_kind::erf, -1}, false},
                      brute_case{model::task_kind::spiked, 1.0, 3, {activation_kind::softplus_kernel, 0}, false},
                      brute_case{model::task_kind::max, 2.0, 3, {activation_kind::softmax, 0}, true},
                      brute_case{model::task_kind::max, 2.0, 3, {activation_kind::linear, 0}, true},
                      brute_case{model::task_kind::spiked, 5.0, 2, {activation_kind::erf, 0}, true},
                      brute_case{model::task_kind::spiked, 5.0, 2, {activation_kind::softplus_kernel, 0}, true}));
} // namespace
