#pragma once
// The CPU's model name and flags line (Linux /proc/cpuinfo; "unknown" elsewhere), so that a
// benchmark table states the instruction sets it was measured with.
#include <benchmark/benchmark.h>

#include <fstream>
#include <string>
#include <utility>

namespace slr::bench {

inline std::pair<std::string, std::string> cpu_model_and_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const auto key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const auto value = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
    if (key == "model name" && model.empty()) model = value;
    if (key == "flags" && flags.empty()) flags = value;
  }
  return {model.empty() ? "unknown" : model, flags.empty() ? "unknown" : flags};
}

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
