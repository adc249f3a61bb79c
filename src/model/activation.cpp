#include "slr/model/activation.hpp"

#include <cmath>
#include <stdexcept>

namespace slr::model {

activation_kind activation_spec::parse_kind(std::string_view name) {
  std::string known;
  for (const auto& entry : activation_names()) {
    if (name == entry.name) return entry.kind;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw std::invalid_argument("unknown activation '" + std::string(name) + "' (expected one of: " + known + ")");
}

std::string activation_spec::kind_name() const {
  for (const auto& entry : activation_names())
    if (entry.kind == kind) return entry.name;
  return "unknown";
}

std::unique_ptr<const activation> make_activation(const activation_spec& spec) {
  if (spec.kind == activation_kind::erf && !std::isfinite(spec.erf_offset))
    throw std::invalid_argument("erf offset must be finite");
  for (const auto& entry : activation_names())
    if (entry.kind == spec.kind) return entry.make(spec);
  throw std::invalid_argument("unknown activation kind");
}

} // namespace slr::model
