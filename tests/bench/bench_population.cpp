// Population theory throughput: samples per second of the Bayes risk, of 𝓔(M, Q) at given
// order parameters, and of one full minimisation over the manifold (one thread).
#include <benchmark/benchmark.h>

#include <limits>

#include "benchmark_main.hpp"
#include "slr/theory/mismatched.hpp"
#include "slr/theory/population.hpp"
#include "slr/theory/state_evolution.hpp"

namespace {
using namespace slr;

model::problem make_problem(model::activation_kind kind) {
  model::problem p;
  p.task = model::task(model::task_kind::spiked, 1.0);
  p.lengths = model::length_law::fixed(3);
  p.activation = {kind, 0.0};
  return p;
}

void BM_BayesRisk(benchmark::State& state) {
  const auto p = make_problem(model::activation_kind::softmax);
  const auto samples = static_cast<std::size_t>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(theory::bayes_risk(p, {samples, 1, 1}));
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(samples) * static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BayesRisk)->Arg(200'000)->Unit(benchmark::kMillisecond);

void BM_PopulationRisk(benchmark::State& state) {
  const auto p = make_problem(static_cast<model::activation_kind>(state.range(1)));
  const auto samples = static_cast<std::size_t>(state.range(0));
  model::order_parameters op;
  op.m_kk = 0.8, op.m_kv = 0.05, op.m_vk = 0.02, op.m_vv = 0.9, op.q_kk = 0.9, op.q_kv = 0.01, op.q_vv = 1.0;
  for (auto _ : state) benchmark::DoNotOptimize(theory::population_risk(p, op, {samples, 1, 1}));
  state.counters["samples/s"] = benchmark::Counter(static_cast<double>(samples) * static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PopulationRisk)
    ->ArgsProduct({{200'000}, {static_cast<long>(model::activation_kind::softmax),
                               static_cast<long>(model::activation_kind::linear),
                               static_cast<long>(model::activation_kind::erf),
                               static_cast<long>(model::activation_kind::softplus_kernel)}})
    ->ArgNames({"S", "activation"})
    ->Unit(benchmark::kMillisecond);

// One minimisation at S samples, L = 3, spiked ν = 1. screened = 1: the defaults (the starts
// descend on a subsample of 2·10⁴, the minimum is polished on S); screened = 0: every start
// descends on the whole sample (the algorithm without screening, the baseline of the same run).
void BM_MinimisePopulationRisk(benchmark::State& state) {
  const auto p = make_problem(static_cast<model::activation_kind>(state.range(1)));
  const auto samples = static_cast<std::size_t>(state.range(0));
  theory::minimisation_settings settings;
  if (state.range(2) == 0) settings.screening_samples = samples;
  int evaluations = 0;
  for (auto _ : state) {
    const auto minimum = theory::minimise_population_risk(p, {samples, 1, 1}, settings);
    evaluations = minimum.evaluations;
    benchmark::DoNotOptimize(minimum);
  }
  state.counters["full_sample_evaluations"] = evaluations;
}
BENCHMARK(BM_MinimisePopulationRisk)
    ->ArgsProduct({{200'000}, {static_cast<long>(model::activation_kind::softmax),
                               static_cast<long>(model::activation_kind::linear),
                               static_cast<long>(model::activation_kind::erf),
                               static_cast<long>(model::activation_kind::softplus_kernel)}, {0, 1}})
    ->ArgNames({"S", "activation", "screened"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The descent from the swapped start (Fig 5: L = 10, spiked ν = 1, S = 10⁵), with and without
// the subsample screening of its flow.
void BM_MismatchedDescent(benchmark::State& state) {
  auto p = make_problem(static_cast<model::activation_kind>(state.range(0)));
  p.lengths = model::length_law::fixed(10);
  theory::mismatched_settings settings;
  const std::size_t samples = 100'000;
  if (state.range(1) == 0) settings.screening_samples = samples;
  int evaluations = 0;
  for (auto _ : state) {
    const auto minimum = theory::minimise_from_swapped_start(p, {samples, 1, 1}, settings);
    evaluations = minimum.evaluations;
    benchmark::DoNotOptimize(minimum);
  }
  state.counters["full_sample_evaluations"] = evaluations;
}
BENCHMARK(BM_MismatchedDescent)
    ->ArgsProduct({{static_cast<long>(model::activation_kind::softmax), static_cast<long>(model::activation_kind::erf)}, {0, 1}})
    ->ArgNames({"activation", "screened"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The Bayes-optimal state evolution at one α (both branches), spiked ν = 1 (S = 4·10⁵ as in
// Fig 3) and max-SLR ν = ∞ (Gauss–Hermite over χ, S = 2·10⁴): seconds per sample-iteration.
void BM_StateEvolution(benchmark::State& state) {
  model::problem p;
  const bool hard = state.range(0) == 1;
  p.task = hard ? model::task(model::task_kind::max, std::numeric_limits<double>::infinity())
                : model::task(model::task_kind::spiked, 1.0);
  p.lengths = model::length_law::fixed(3);
  theory::state_evolution_options o;
  o.samples = hard ? 20'000 : 400'000;
  const theory::state_evolution se(p, 2.0, o);
  double iterations = 0;
  for (auto _ : state) {
    const auto result = se.solve(1);
    for (const auto& b : result.branches) iterations += b.iterations;
    benchmark::DoNotOptimize(result.chosen.q(0, 0));
  }
  state.counters["iterations"] = iterations / static_cast<double>(state.iterations());
  state.counters["us_per_sample_iteration"] =
      benchmark::Counter(iterations * static_cast<double>(o.samples) * 1e-6, benchmark::Counter::kIsRate |
                                                                                  benchmark::Counter::kInvert);
}
BENCHMARK(BM_StateEvolution)->Arg(0)->Arg(1)->ArgNames({"max_inf"})->Unit(benchmark::kMillisecond)->Iterations(1);
} // namespace

int main(int argc, char** argv) { return slr::bench::run_benchmarks_with_cpu_context(argc, argv); }
