// Channel side of the tied-attention RS theory: loss derivatives against finite differences, the
// global prox, and the channel averages at the converged overlaps of tests/reference/tied_attention.json
// (which must return that fixed point's conjugates, training loss and test errors).
#include "slr/tied/channel.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>

#include "slr/model/random.hpp"

namespace {

using nlohmann::json;
using slr::tied::problem;

json reference() {
  std::ifstream in(std::string(SLR_REFERENCE_DIR) + "/tied_attention.json");
  if (!in) throw std::runtime_error("cannot open tied_attention.json in " + std::string(SLR_REFERENCE_DIR));
  return json::parse(in);
}

Eigen::VectorXd random_vector(int n, std::uint64_t index, double scale) {
  slr::model::counter_rng rng(7, slr::model::stream_purpose::channel_noise, index);
  Eigen::VectorXd v(n);
  for (int i = 0; i < n; ++i) v[i] = scale * rng.normal();
  return v;
}

// Central differences with step 1e-5: truncation ~1e-10 · third derivative, rounding ~1e-11.
TEST(TiedChannel, LossDerivativesMatchFiniteDifferences) {
  for (int T : {2, 3, 5})
    for (double beta : {1.0, 2.0}) {
      problem p;
      p.T = T;
      p.beta = beta;
      p.beta0 = 1.5;
      const int L = p.fields();
      const Eigen::VectorXd h = random_vector(L, 10 * T, 1.3), z = random_vector(L, 10 * T + 1, 1.1);
      const auto d = slr::tied::channel_loss(p, h, z);
      const double e = 1e-5;
      for (int i = 0; i < L; ++i) {
        Eigen::VectorXd hp = h, hm = h, zp = z, zm = z;
        hp[i] += e;
        hm[i] -= e;
        zp[i] += e;
        zm[i] -= e;
        const auto dp = slr::tied::channel_loss(p, hp, z), dm = slr::tied::channel_loss(p, hm, z);
        EXPECT_NEAR(d.gradient[i], (dp.value - dm.value) / (2 * e), 1e-8) << "T = " << T << " i = " << i;
        for (int j = 0; j < L; ++j)
          EXPECT_NEAR(d.hessian(j, i), (dp.gradient[j] - dm.gradient[j]) / (2 * e), 1e-8) << "T = " << T;
        const auto zp_d = slr::tied::channel_loss(p, h, zp), zm_d = slr::tied::channel_loss(p, h, zm);
        for (int j = 0; j < L; ++j)
          EXPECT_NEAR(d.mixed(j, i), (zp_d.gradient[j] - zm_d.gradient[j]) / (2 * e), 1e-8) << "T = " << T;
      }
      // The softmax gauge: the loss is constant along n ∝ (1/√2 diagonal, 1 off-diagonal).
      Eigen::VectorXd n(L);
      for (int a = 0, k = 0; a < T; ++a)
        for (int b = a; b < T; ++b) n[k++] = a == b ? 1 / std::sqrt(2.0) : 1.0;
      EXPECT_NEAR(slr::tied::channel_loss(p, h + 0.7 * n, z).value, d.value, 1e-13);
      EXPECT_LT((d.hessian * n).norm(), 1e-12);
    }
}

// The global prox is stationary and no worse than a local Newton descent from any of a set of
// random points; the exact-fit start makes the loss vanish when V is huge.
TEST(TiedChannel, ProxIsAStationaryGlobalMinimum) {
  for (int T : {2, 3}) {
    problem p;
    p.T = T;
    const int L = p.fields();
    for (std::uint64_t s = 0; s < 20; ++s) {
      const Eigen::VectorXd w = random_vector(L, 100 + 2 * s, 1.2), z = random_vector(L, 101 + 2 * s, 1.5);
      for (double V : {0.3, 3.0, 30.0}) {
        const auto sol = slr::tied::solve_prox(p, w, z, V);
        ASSERT_TRUE(sol.converged);
        const auto d = slr::tied::channel_loss(p, sol.h, z);
        EXPECT_LT(((sol.h - w) / V + d.gradient).cwiseAbs().maxCoeff(), 1e-9);
        EXPECT_NEAR(sol.objective, (sol.h - w).squaredNorm() / (2 * V) + d.value, 1e-12);
        // Brute force: 200 random points, each the objective at that point, must not beat the prox.
        for (std::uint64_t r = 0; r < 200; ++r) {
          const Eigen::VectorXd x = w + random_vector(L, 10000 + 200 * s + r, 2.0);
          const double ox = (x - w).squaredNorm() / (2 * V) + slr::tied::channel_loss(p, x, z).value;
          EXPECT_GE(ox, sol.objective - 1e-12);
        }
      }
    }
    const Eigen::VectorXd w = random_vector(L, 5, 1.0), z = random_vector(L, 6, 1.0);
    EXPECT_LT(slr::tied::solve_prox(p, w, z, 1e8).loss, 1e-6);
  }
}

TEST(TiedChannel, SobolNormalsAreDeterministicStandardNormals) {
  const slr::tied::qmc_normals a(4, 12, 3), b(4, 12, 3), c(4, 12, 4);
  double mean = 0, var = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (int j = 0; j < 4; ++j) {
      EXPECT_EQ(a.point(i)[j], b.point(i)[j]);
      mean += a.point(i)[j];
      var += a.point(i)[j] * a.point(i)[j];
    }
  mean /= 4.0 * a.size();
  var /= 4.0 * a.size();
  EXPECT_NEAR(mean, 0, 1e-3); // QMC: far below the MC error 1/√16384 ≈ 8e-3
  EXPECT_NEAR(var, 1, 3e-3);
  EXPECT_NE(a.point(5)[0], c.point(5)[0]);
  EXPECT_THROW(slr::tied::qmc_normals(0, 12, 0), std::invalid_argument);
}

// At the reference fixed point (q, m, V), one channel evaluation must return the reference
// conjugates. Trust (tied_attention.json): 3e-3 on order parameters, 2e-3 relative on test/train
// errors; the reference hats are Hessian-form, Stein-form agree within 1e-3 at β = 1.
TEST(TiedChannel, ReferenceFixedPointConjugates) {
  const auto ref = reference();
  for (const char* key : {"psd_nuclear_alpha0.05", "psd_nuclear_alpha0.5", "ridge_alpha0.5"}) {
    const auto& e = ref["theory"][key];
    problem p;
    p.alpha = e["alpha"].get<double>();
    const double q = e["q"].get<double>(), m = e["m"].get<double>(), V = e["V"].get<double>();
    const auto sample = slr::tied::channel_sample(p, 14, 1);
    const auto c = slr::tied::channel_average(p, q, m, V, sample);
    EXPECT_NEAR(c.stein.q_hat / e["qhat"].get<double>(), 1, 3e-3) << key;
    EXPECT_NEAR(c.hessian.m_hat / e["mhat"].get<double>(), 1, 3e-3) << key;
    EXPECT_NEAR(c.hessian.V_hat / e["Vhat"].get<double>(), 1, 3e-3) << key;
    EXPECT_NEAR(c.stein.m_hat / e["mhat"].get<double>(), 1, 3e-3) << key;
    EXPECT_NEAR(c.stein.V_hat / e["Vhat"].get<double>(), 1, 3e-3) << key;
    EXPECT_NEAR(c.train_loss / e["train_loss"].get<double>(), 1, 2e-3) << key;
    EXPECT_EQ(c.frac_two_minima, 0.0) << key;
    EXPECT_EQ(c.frac_not_converged, 0.0) << key;
    const auto t = slr::tied::test_error(p, q, m, sample);
    EXPECT_NEAR(t.clean / e["test_clean"].get<double>(), 1, 2e-3) << key;
    EXPECT_NEAR(t.noisy / e["test_noisy"].get<double>(), 1, 2e-3) << key;
    std::printf("%s: qhat %.6g/%.6g mhat S %.6g H %.6g/%.6g Vhat S %.6g H %.6g/%.6g train %.6g/%.6g clean %.6g/%.6g "
                "noisy %.6g/%.6g steps/pt %.2f\n",
                key, c.stein.q_hat, e["qhat"].get<double>(), c.stein.m_hat, c.hessian.m_hat, e["mhat"].get<double>(),
                c.stein.V_hat, c.hessian.V_hat, e["Vhat"].get<double>(), c.train_loss, e["train_loss"].get<double>(),
                t.clean, e["test_clean"].get<double>(), t.noisy, e["test_noisy"].get<double>(),
                double(c.newton_steps) / c.points);
  }
}

TEST(TiedChannel, RejectsInvalidArguments) {
  problem p;
  const auto sample = slr::tied::channel_sample(p, 4, 0);
  EXPECT_THROW((void)slr::tied::channel_average(p, 1.0, 2.0, 1.0, sample), std::invalid_argument); // m² ≥ Q̃0 q
  EXPECT_THROW((void)slr::tied::channel_average(p, 1.0, 0.5, 0.0, sample), std::invalid_argument);
  p.T = 7;
  EXPECT_THROW((void)slr::tied::channel_sample(p, 10, 0), std::invalid_argument);
  p.T = 3;
  EXPECT_THROW((void)slr::tied::channel_average(p, 1.0, 0.5, 1.0, sample), std::invalid_argument); // wrong dimension
}

} // namespace
