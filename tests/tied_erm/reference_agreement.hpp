#pragma once
// ERM at d = 60 against the finite-d ERM blocks of tests/reference/tied_attention.json (`erm`,
// independent implementation, 8 seeds, n_test = 4000). Our seeds are independent draws of the same
// experiment, so each seed-mean must agree with the reference mean within 3 combined standard
// errors √(sem_ours² + sem_ref²).
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "slr/tied_erm/measure.hpp"

namespace tied_erm_reference {

inline nlohmann::json erm_block(const std::string& name) {
  std::ifstream in(std::string(SLR_REFERENCE_DIR) + "/tied_attention.json");
  if (!in) throw std::runtime_error("cannot open tied_attention.json");
  const auto all = nlohmann::json::parse(in);
  return all.at("erm").at(name);
}

inline void expect_agreement(const std::string& block, slr::tied::parametrisation param, double alpha,
                             std::uint64_t seeds) {
  const auto ref = erm_block(block);
  slr::tied::problem p; // the reference parameters: T = 2, k0 = 0.5, λ = 0.01, Δ = 0.5, β = β0 = 1, k = 1
  p.param = param;
  p.alpha = alpha;
  slr::tied_erm::erm_settings s;
  s.d = 60;
  s.n_test = 4000;
  using m_t = slr::tied_erm::measurements;
  const std::map<std::string, std::function<double(const m_t&)>> observables{
      {"test_clean", [](const m_t& m) { return m.test_clean; }},
      {"test_noisy", [](const m_t& m) { return m.test_noisy; }},
      {"train_loss", [](const m_t& m) { return m.train_loss; }},
      {"objective_per_d2", [](const m_t& m) { return m.objective_per_d2; }},
      {"q", [](const m_t& m) { return m.q; }},
      {"m", [](const m_t& m) { return m.m; }},
      {"mse_S", [](const m_t& m) { return m.mse_S; }},
      {"trace_per_d", [](const m_t& m) { return m.trace_per_d; }},
      {"rank_rel1e3", [](const m_t& m) { return m.rank_rel_1e3; }},
  };
  std::map<std::string, std::vector<double>> values;
  double worst_kkt = 0;
  for (std::uint64_t seed = 0; seed < seeds; ++seed) {
    s.seed = seed;
    const auto m = slr::tied_erm::run_erm(p, s);
    EXPECT_EQ(m.optimiser.status, slr::tied_erm::solver_status::converged)
        << "seed " << seed << ": " << m.optimiser.message << ", relative gradient " << m.optimiser.relative_gradient;
    if (param == slr::tied::parametrisation::factorised) worst_kkt = std::max(worst_kkt, m.kkt_residual);
    for (const auto& [name, get] : observables) values[name].push_back(get(m));
  }
  if (param == slr::tied::parametrisation::factorised) {
    EXPECT_LT(worst_kkt, 1e-4);
  }
  std::cout << block << " (" << seeds << " seeds), worst KKT " << worst_kkt << "\n";
  for (const auto& [name, v] : values) {
    if (!ref.contains(name)) continue;
    const auto n = static_cast<double>(v.size());
    double mean = 0, var = 0;
    for (double x : v) mean += x;
    mean /= n;
    for (double x : v) var += (x - mean) * (x - mean);
    const double sem = std::sqrt(var / (n - 1) / n);
    const double ref_mean = ref.at(name).at("erm_mean").get<double>();
    const double ref_sem = ref.at(name).at("erm_sem").get<double>();
    const double combined = std::sqrt(sem * sem + ref_sem * ref_sem);
    std::cout << "  " << name << ": " << mean << " ± " << sem << " vs " << ref_mean << " ± " << ref_sem << " ("
              << (mean - ref_mean) / combined << " s.e.)\n";
    EXPECT_LE(std::abs(mean - ref_mean), 3 * combined) << block << " " << name;
  }
}

} // namespace tied_erm_reference
