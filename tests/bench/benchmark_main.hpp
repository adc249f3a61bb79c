#pragma once
// The main of the Google Benchmark programs: the CPU's model and flags in the report's context.
#include <benchmark/benchmark.h>

#include "cpu_info.hpp"

namespace slr::bench {

/// Google Benchmark's main with the CPU's model and flags in the context of the report.
inline int run_benchmarks_with_cpu_context(int argc, char** argv) {
  const auto [model, flags] = cpu_model_and_flags();
  benchmark::AddCustomContext("cpu_model", model);
  benchmark::AddCustomContext("cpu_flags", flags);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

} // namespace slr::bench
