#pragma once
// The CPU's model name and flags line (Linux /proc/cpuinfo; "unknown" elsewhere), so that a
// benchmark table states the instruction sets it was measured with.
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

} // namespace slr::bench
