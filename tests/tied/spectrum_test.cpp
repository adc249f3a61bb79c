// Prior side of the tied-attention RS theory: the free-convolution law of Y = S* + δG, the
// soft-threshold functionals and the prior update, against closed-form moments, a sampled
// d = 400 matrix, and the converged fixed points of tests/reference/tied_attention.json.
#include "slr/tied/spectrum.hpp"

#include <Eigen/Dense>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <utility>
#include <fstream>
#include <stdexcept>
#include <string>

#include "slr/model/random.hpp"

namespace {

using nlohmann::json;
using slr::tied::free_convolution;

json reference() {
  std::ifstream in(std::string(SLR_REFERENCE_DIR) + "/tied_attention.json");
  if (!in) throw std::runtime_error("cannot open tied_attention.json in " + std::string(SLR_REFERENCE_DIR));
  return json::parse(in);
}

struct moments {
  double m0 = 0, m1 = 0, m2 = 0;
};
moments moments_of(const free_convolution& law) {
  moments m;
  for (const auto& nd : law.nodes()) {
    m.m0 += nd.weight;
    m.m1 += nd.weight * nd.x;
    m.m2 += nd.weight * nd.x * nd.x;
  }
  return m;
}

TEST(TiedSpectrum, GaussLegendreIntegratesPolynomialsExactly) {
  const auto& rule = slr::tied::gauss_legendre(7);
  double s0 = 0, s12 = 0;
  for (std::size_t i = 0; i < rule.nodes.size(); ++i) {
    s0 += rule.weights[i];
    s12 += rule.weights[i] * std::pow(rule.nodes[i], 12);
  }
  EXPECT_NEAR(s0, 2.0, 1e-14);
  EXPECT_NEAR(s12, 2.0 / 13.0, 1e-14);
}

// Mass 1, mean √k0 (Tr S*/d; G is traceless) and second moment 1 + k0 + δ², exact for the free
// convolution. The quadrature reaches ~1e-12 on well-separated square-root edges; where a small bulk
// has just merged into the main one (k0 = 0.5, δ = 0.2) the density has a near-cusp inside the
// interval and 400 nodes give ~3e-8, hence the 1e-7 tolerance.
TEST(TiedSpectrum, FreeConvolutionHasExactMoments) {
  for (double k0 : {0.2, 0.5, 1.0})
    for (double delta : {0.05, 0.2, 0.5738704581413181, 2.830765487021279}) {
      const free_convolution law(k0, delta);
      const auto m = moments_of(law);
      EXPECT_NEAR(m.m0, 1.0, 1e-7) << k0 << " " << delta;
      EXPECT_NEAR(m.m1, std::sqrt(k0), 1e-7) << k0 << " " << delta;
      EXPECT_NEAR(m.m2, 1 + k0 + delta * delta, 1e-7) << k0 << " " << delta;
      EXPECT_NEAR(law.cdf(law.quantile(0.37)), 0.37, 1e-10);
    }
}

// Small δ with k0 < 1: the atom of S* at 0 becomes its own small bulk (two intervals), of mass
// 1 − k0 up to the O(δ²) exchange with the main bulk; large δ: one interval.
TEST(TiedSpectrum, SupportSplitsIntoTwoBulksForSmallNoise) {
  const free_convolution small(0.5, 0.05);
  ASSERT_EQ(small.support().size(), 2u);
  EXPECT_LT(small.support()[0].lo, 0.0);
  EXPECT_GT(small.support()[0].hi, 0.0);
  EXPECT_NEAR(small.cdf(0.5 * (small.support()[0].hi + small.support()[1].lo)), 0.5, 0.01);
  // The main bulk sits close to √k0 MP edges [0.1213, 4.1213].
  EXPECT_NEAR(small.support()[1].hi, 4.1213, 0.05);
  const free_convolution large(0.5, 0.6);
  EXPECT_EQ(large.support().size(), 1u);
  EXPECT_THROW(free_convolution(0.5, 0.0), std::invalid_argument);
  EXPECT_THROW(free_convolution(1.5, 0.1), std::invalid_argument);
}

// Direct sampling of Y = S* + δG at d = 300 (r* = 150), 6 independent draws: the spectral
// statistics of F(Y) = (Y − ε)_+ against A0, A2, Xf − 2δ²B1 and 2δB1. Linear spectral statistics
// fluctuate by O(1/d) per draw (dominated by the overall scale of W*, ~1 % on second moments) and
// have an O(1/d) bias (e.g. E (1/d)Tr S*² = Q0 + 1/d): the mean difference over draws must lie
// within 3 standard errors (computed from the draws) plus 2/d.
TEST(TiedSpectrum, PriorFunctionalsMatchASampledMatrix) {
  const int d = 300, r = 150, draws = 6;
  const std::array<std::pair<double, double>, 3> cases{std::pair{0.5738704581413181, 0.06838736578051084},
                                                      std::pair{2.830765487021279, 3.3}, std::pair{0.2, 0.3}};
  // diff[case][statistic][draw]
  std::array<std::array<std::array<double, draws>, 4>, 3> diff{};
  std::array<std::array<double, 4>, 3> theory{};
  for (int c = 0; c < 3; ++c) {
    const auto [delta, eps] = cases[c];
    const free_convolution law(0.5, delta);
    const auto fn = slr::tied::threshold_functionals(law, eps, eps);
    theory[c] = {fn.A0, fn.A2, fn.Xf - 2 * delta * delta * fn.B1, 2 * delta * fn.B1};
  }
  for (int s = 0; s < draws; ++s) {
    slr::model::counter_rng wr(2024, slr::model::stream_purpose::teacher_weights, s);
    Eigen::MatrixXd W(d, r);
    for (int j = 0; j < r; ++j)
      for (int i = 0; i < d; ++i) W(i, j) = wr.normal();
    const Eigen::MatrixXd S = W * W.transpose() / std::sqrt(double(r) * d);
    slr::model::counter_rng gr(2024, slr::model::stream_purpose::channel_noise, s);
    Eigen::MatrixXd G(d, d);
    for (int i = 0; i < d; ++i) {
      G(i, i) = gr.normal() * std::sqrt(2.0 / d);
      for (int j = i + 1; j < d; ++j) G(i, j) = G(j, i) = gr.normal() / std::sqrt(double(d));
    }
    for (int c = 0; c < 3; ++c) {
      const auto [delta, eps] = cases[c];
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(S + delta * G);
      const Eigen::VectorXd f = (es.eigenvalues().array() - eps).max(0.0);
      const Eigen::MatrixXd F = es.eigenvectors() * f.asDiagonal() * es.eigenvectors().transpose();
      const std::array<double, 4> sample{(f.array() > 0).cast<double>().mean(), F.squaredNorm() / d,
                                         F.cwiseProduct(S).sum() / d, F.cwiseProduct(G).sum() / d};
      for (int k = 0; k < 4; ++k) diff[c][k][s] = sample[k] - theory[c][k];
    }
  }
  const char* names[] = {"rank fraction A0", "A2", "<F,S*>/d", "<F,G>/d"};
  for (int c = 0; c < 3; ++c)
    for (int k = 0; k < 4; ++k) {
      double mean = 0, var = 0;
      for (double x : diff[c][k]) mean += x / draws;
      for (double x : diff[c][k]) var += (x - mean) * (x - mean) / (draws - 1);
      EXPECT_LE(std::abs(mean), 3 * std::sqrt(var / draws) + 2.0 / d)
          << names[k] << " delta = " << cases[c].first << " theory " << theory[c][k];
    }
}

// The reference fixed points: feeding their converged hats to the prior update must return their
// (q, m, V) and the spectral outputs (the prior side is exact quadrature there, the fixed point
// converged to a relative residual 1e-7; quantiles were rounded only by printing).
TEST(TiedSpectrum, PriorUpdateReproducesReferenceFixedPoints) {
  const auto ref = reference();
  for (const char* key : {"psd_nuclear_alpha0.05", "psd_nuclear_alpha0.5", "ridge_alpha0.05", "ridge_alpha0.5"}) {
    const auto& e = ref["theory"][key];
    slr::tied::problem p;
    p.alpha = e["alpha"].get<double>();
    p.param = e["reg"].get<std::string>() == "ridge" ? slr::tied::parametrisation::direct
                                                     : slr::tied::parametrisation::factorised;
    const slr::tied::hat_variables h{e["qhat"].get<double>(), e["mhat"].get<double>(), e["Vhat"].get<double>()};
    const auto pr = slr::tied::prior_update(p, h);
    const double tol = 1e-5;
    EXPECT_NEAR(pr.q / e["q"].get<double>(), 1, tol) << key;
    EXPECT_NEAR(pr.m / e["m"].get<double>(), 1, tol) << key;
    EXPECT_NEAR(pr.V / e["V"].get<double>(), 1, tol) << key;
    EXPECT_NEAR(pr.delta / e["delta"].get<double>(), 1, 1e-12) << key;
    EXPECT_NEAR(pr.eps, e["eps"].get<double>(), 1e-12) << key;
    EXPECT_NEAR(pr.scale / e["scale"].get<double>(), 1, 1e-12) << key;
    EXPECT_NEAR(pr.rank_fraction, e["rank_fraction"].get<double>(), 1e-6) << key;
    EXPECT_NEAR(pr.atom_at_0, e["atom_at_0"].get<double>(), 1e-6) << key;
    EXPECT_NEAR(pr.trace_per_d / e["trace_per_d"].get<double>(), 1, tol) << key;
    const auto sp = slr::tied::spectrum_of_estimator(p, pr);
    ASSERT_EQ(sp.quantiles.size(), 101u);
    const auto& qs = e["eig_quantiles"];
    for (std::size_t i = 0; i < qs.size(); ++i)
      EXPECT_NEAR(sp.quantiles[10 * i], qs[i].get<double>(), 1e-5 * (1 + std::abs(qs[i].get<double>())))
          << key << " p = " << i / 10.0;
    // The continuous part of the estimator's law carries mass 1 − atom.
    double mass = 0;
    for (std::size_t i = 0; i + 1 < sp.grid.size(); ++i)
      mass += 0.5 * (sp.density[i] + sp.density[i + 1]) * (sp.grid[i + 1] - sp.grid[i]);
    EXPECT_NEAR(mass, 1 - sp.atom_at_0, 5e-3) << key;
  }
}

TEST(TiedSpectrum, RankCapKeepsTheTopKdEigenvalues) {
  slr::tied::problem p;
  p.alpha = 0.5;
  p.k = 0.3;
  const slr::tied::hat_variables h{0.028166700614734724, 0.2924516798057403, 0.3101999300730452};
  const auto capped = slr::tied::prior_update(p, h);
  EXPECT_TRUE(capped.rank_capped);
  EXPECT_NEAR(capped.rank_fraction, 0.3, 1e-9);
  p.k = 0.75; // above the soft-threshold rank 0.644: inactive
  const auto free = slr::tied::prior_update(p, h);
  EXPECT_FALSE(free.rank_capped);
  EXPECT_LT(capped.q, free.q);
  EXPECT_THROW((void)slr::tied::prior_update(p, {0.0, 0.3, 0.3}), std::invalid_argument);
}

// The target's law: support √k0 (√c ∓ 1)², c = 1/k0 — in singular values [0.348, 2.030] for k0 = 0.5
// (the Fig 1 target curve) — mass k0 besides the atom 1 − k0, and the free convolution with a
// narrow semicircle (δ = 0.02: an independent route through the cubic of the resolvent) has the same
// density to 3 % inside the support.
TEST(TargetSpectrum, MarchenkoPasturLawOfTheTarget) {
  for (double k0 : {0.5, 0.2, 0.8}) {
    const auto t = slr::tied::target_spectrum(k0);
    ASSERT_EQ(t.grid.size(), 200u);
    EXPECT_NEAR(t.atom_at_0, 1 - k0, 1e-15);
    double mass = 0;
    for (std::size_t i = 1; i < t.grid.size(); ++i)
      mass += 0.5 * (t.density[i] + t.density[i - 1]) * (t.grid[i] - t.grid[i - 1]);
    // Trapezoid on the 200 grid points across square-root edges (k0 = 0.8: the lower edge is at
    // 0.012, where the density is large): 1.3 % of the mass at most.
    EXPECT_NEAR(mass, k0, 0.015) << "k0 " << k0;
    const slr::tied::free_convolution law(k0, 0.02);
    for (std::size_t i = 20; i < t.grid.size() - 20; i += 20)
      EXPECT_NEAR(t.density[i], law.density(t.grid[i]), 0.03 * t.density[i]) << "k0 " << k0 << " x " << t.grid[i];
  }
  const auto half = slr::tied::target_spectrum(0.5);
  EXPECT_NEAR(std::sqrt(half.grid.front()), 0.348, 5e-4);
  EXPECT_NEAR(std::sqrt(half.grid.back()), 2.030, 5e-4);
  EXPECT_THROW((void)slr::tied::target_spectrum(0.0), std::invalid_argument);
  EXPECT_THROW((void)slr::tied::target_spectrum(1.5), std::invalid_argument);
}

} // namespace
