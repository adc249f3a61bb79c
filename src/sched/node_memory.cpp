#include "slr/sched/node_memory.hpp"

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <stdexcept>
#include <string>

namespace slr::sched {

std::size_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  // Not Linux (or an old kernel): free physical pages.
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size) : 0;
}

std::size_t parse_memory_size(std::string_view text) {
  const auto fail = [&](const std::string& reason) {
    return std::invalid_argument("memory size '" + std::string(text) + "': " + reason);
  };
  std::string number_text(text);
  double multiplier = 1;
  while (!number_text.empty() && std::isspace(static_cast<unsigned char>(number_text.back()))) number_text.pop_back();
  if (number_text.ends_with("iB") || number_text.ends_with("ib")) number_text.resize(number_text.size() - 2);
  else if ((number_text.ends_with('B') || number_text.ends_with('b')) && number_text.size() > 1 &&
           std::isalpha(static_cast<unsigned char>(number_text[number_text.size() - 2])))
    number_text.pop_back();
  if (!number_text.empty()) {
    switch (std::toupper(static_cast<unsigned char>(number_text.back()))) {
    case 'K': multiplier = 1024.0; break;
    case 'M': multiplier = 1024.0 * 1024; break;
    case 'G': multiplier = 1024.0 * 1024 * 1024; break;
    case 'T': multiplier = 1024.0 * 1024 * 1024 * 1024; break;
    default: break;
    }
    if (multiplier != 1) number_text.pop_back();
  }
  double value = 0;
  std::size_t used = 0;
  try {
    value = std::stod(number_text, &used);
  } catch (const std::exception&) {
    throw fail("expected a number with an optional unit K, M, G or T");
  }
  if (used != number_text.size()) throw fail("expected a number with an optional unit K, M, G or T");
  const double bytes = value * multiplier;
  if (!(bytes >= 1) || !std::isfinite(bytes) || bytes > 1e18) throw fail("must be at least 1 byte and finite");
  return static_cast<std::size_t>(bytes);
}

} // namespace slr::sched
