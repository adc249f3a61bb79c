// Gradient flow (Fig 4's protocol: spiked ν = 1, L = 3, α = 4, informed start with noise 0.1,
// horizon 100, 0 and 30 log-spaced recording times from 0.01): loss + gradient evaluations and
// wall time of the two integrators at their default tolerances, and their distance to a reference
// trajectory (Heun at local error 1e-7): the largest deviation of any of the 7 order parameters
// over the recording times, and at the horizon. A program printing a table.
//   Usage: bench_flow [D=1000] [threads=1]
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cpu_info.hpp"
#include "slr/erm/data.hpp"
#include "slr/erm/loss.hpp"
#include "slr/erm/trainer.hpp"

namespace {
using namespace slr;

std::vector<double> recording_times() {
  std::vector<double> times{0.0};
  for (int i = 0; i < 30; ++i) times.push_back(1e-2 * std::pow(1e4, i / 29.0));
  return times;
}

std::array<double, 7> values(const model::order_parameters& o) {
  return {o.m_kk, o.m_kv, o.m_vk, o.m_vv, o.q_kk, o.q_kv, o.q_vv};
}

// Largest |difference| of any order parameter over all recording times, and at the last one.
std::pair<double, double> deviation(const erm::training_result& a, const erm::training_result& b) {
  double largest = 0, last = 0;
  const std::size_t n = std::min(a.trajectory.size(), b.trajectory.size());
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = values(a.trajectory[i].overlaps), y = values(b.trajectory[i].overlaps);
    double here = 0;
    for (std::size_t j = 0; j < 7; ++j) here = std::max(here, std::abs(x[j] - y[j]));
    largest = std::max(largest, here);
    if (i + 1 == n) last = here;
  }
  return {largest, last};
}
} // namespace

int main(int argc, char** argv) {
  const std::size_t D = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 1000;
  const unsigned threads = argc > 2 ? static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)) : 1;
  const auto [cpu, flags] = bench::cpu_model_and_flags();
  std::printf("cpu: %s\nflags: %s\n", cpu.c_str(), flags.c_str());
  std::printf("gradient flow, spiked nu = 1, L = 3, alpha = 4, D = %zu, informed start 0.1, horizon 100, %u thread(s)\n",
              D, threads);
  std::printf("%-8s %5s %-14s %8s %7s %9s %12s %12s\n", "sigma", "r", "integrator", "evals", "steps", "wall s",
              "max |dOP|", "|dOP| at 100");
  constexpr std::uint64_t seed = 1;
  for (auto kind : {model::activation_kind::softmax, model::activation_kind::linear}) {
    for (double r : {0.1, 1.0}) {
      model::problem p;
      p.task = model::task(model::task_kind::spiked, 1.0);
      p.activation.kind = kind;
      const auto teacher = erm::teacher::draw(D, seed);
      const auto data = erm::sequence_data::generate(p, teacher, 4 * D, seed, model::stream_purpose::training_data,
                                                     erm::precision::f64, threads);
      const erm::empirical_risk risk(data, p.activation, r, r, threads);
      const auto w0 = erm::initial_weights(teacher, erm::initialisation::informed, 0.1, seed);
      erm::trainer_settings settings;
      settings.method = erm::optimizer::gradient_flow;
      settings.record_times = recording_times();
      settings.max_iterations = 100000000;
      const auto run = [&](erm::flow_integrator integrator, double tolerance, const char* label,
                           const erm::training_result* reference) {
        settings.integrator = integrator;
        settings.flow_error_tolerance = tolerance;
        const auto t0 = std::chrono::steady_clock::now();
        auto result = erm::train(risk, teacher, w0, settings);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const auto [largest, last] = reference != nullptr ? deviation(result, *reference) : std::pair{0.0, 0.0};
        std::printf("%-8s %5g %-14s %8zu %7zu %9.2f %12.2e %12.2e\n", kind == model::activation_kind::softmax ? "softmax" : "linear",
                    r, label, result.gradient_evaluations, result.iterations, wall, largest, last);
        std::fflush(stdout);
        return result;
      };
      const auto reference = run(erm::flow_integrator::heun, 1e-7, "heun 1e-7 ref", nullptr);
      (void)run(erm::flow_integrator::heun, std::nan(""), "heun default", &reference);
      (void)run(erm::flow_integrator::rkc, std::nan(""), "rkc default", &reference);
    }
  }
  return 0;
}
