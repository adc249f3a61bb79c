// Population theory throughput: samples per second of the Bayes risk, of 𝓔(M, Q) at given
// order parameters, and of one full minimisation over the manifold (one thread).
#include <benchmark/benchmark.h>

#include "slr/theory/population.hpp"

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

void BM_MinimisePopulationRisk(benchmark::State& state) {
  const auto p = make_problem(model::activation_kind::softmax);
  const auto samples = static_cast<std::size_t>(state.range(0));
  int evaluations = 0;
  for (auto _ : state) {
    const auto minimum = theory::minimise_population_risk(p, {samples, 1, 1});
    evaluations = minimum.evaluations;
    benchmark::DoNotOptimize(minimum);
  }
  state.counters["objective_evaluations"] = evaluations;
  state.counters["samples/s"] = benchmark::Counter(
      static_cast<double>(samples) * evaluations * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MinimisePopulationRisk)->Arg(60'000)->Unit(benchmark::kMillisecond)->Iterations(2);
} // namespace

BENCHMARK_MAIN();
