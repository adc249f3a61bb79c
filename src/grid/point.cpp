#include "slr/grid/point.hpp"

#include <charconv>
#include <cmath>

#include "slr/model/random.hpp"

namespace slr::grid {

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return {buffer, result.ptr};
}

std::string point::canonical() const {
  if (!model.empty()) {
    std::string text = "model=" + model + ";method=" + method;
    for (const auto& [key, value] : options) text += ";" + key + "=" + value;
    return text;
  }
  std::string text = "method=" + method;
  text += ";task=" + problem.task.name();
  text += ";nu=" + format_number(problem.task.nu());
  text += ";L=" + problem.lengths.to_string();
  text += ";delta=" + format_number(problem.delta);
  text += ";activation=" + problem.activation.kind_name();
  if (problem.activation.kind == model::activation_kind::erf)
    text += ";erf_offset=" + format_number(problem.activation.erf_offset);
  text += ";alpha=" + format_number(alpha);
  text += ";r_k=" + format_number(r_k);
  text += ";r_v=" + format_number(r_v);
  for (const auto& [key, value] : options) text += ";" + key + "=" + value;
  return text;
}

std::uint64_t point::identity() const { return model::stable_hash(canonical()); }

} // namespace slr::grid
