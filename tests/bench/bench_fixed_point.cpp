// One RS fixed-point solve at a reference setting (S = 8000, L = 3, softmax,
// spiked ν = 1, α = 4, r = 1, one thread, one repeat, no test-risk evaluation) and the
// throughput of the proximal solver (prox problems per second of channel time), once with
// plain damping (η = 0.3) and once with Anderson mixing (the default).
#include <benchmark/benchmark.h>

#include "benchmark_main.hpp"

#include "slr/theory/fixed_point.hpp"

namespace {
using namespace slr;

void BM_FixedPointSolve(benchmark::State& state, theory::fixed_point_acceleration acceleration,
                        theory::prox_start_policy starts) {
  model::problem p;
  p.task = model::task(model::task_kind::spiked, 1.0);
  p.lengths = model::length_law::fixed(3);
  theory::fixed_point_options o;
  o.samples = 8000;
  o.repeats = 1;
  o.test_samples = 0;
  o.threads = 1;
  o.acceleration = acceleration;
  o.prox_starts = starts;
  const theory::fixed_point_solver solver(p, 4.0, 1.0, 1.0, o);
  double prox = 0, samples = 0, channel_seconds = 0, iterations = 0, steps = 0;
  for (auto _ : state) {
    const auto rep = solver.solve_once(1);
    benchmark::DoNotOptimize(rep.state.M(0, 0));
    prox += static_cast<double>(rep.prox_problems);
    samples += static_cast<double>(rep.channel_samples);
    steps += static_cast<double>(rep.newton_steps);
    channel_seconds += rep.channel_seconds;
    iterations += rep.iterations;
  }
  const double runs = static_cast<double>(state.iterations());
  state.counters["fp_iterations"] = iterations / runs;
  state.counters["prox_per_second"] = prox / channel_seconds;
  state.counters["samples_per_second"] = samples / channel_seconds; // a sample = one prox per start
  state.counters["starts_per_sample"] = prox / samples;
  state.counters["newton_steps_per_prox"] = steps / prox;
}
// plain_both: the algorithm before acceleration; anderson_adaptive: the defaults.
BENCHMARK_CAPTURE(BM_FixedPointSolve, plain_both, theory::fixed_point_acceleration::none,
                  theory::prox_start_policy::both)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_FixedPointSolve, anderson_both, theory::fixed_point_acceleration::anderson,
                  theory::prox_start_policy::both)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_CAPTURE(BM_FixedPointSolve, anderson_adaptive, theory::fixed_point_acceleration::anderson,
                  theory::prox_start_policy::adaptive)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
} // namespace

int main(int argc, char** argv) { return slr::bench::run_benchmarks_with_cpu_context(argc, argv); }
