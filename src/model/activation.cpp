#include "slr/model/activation.hpp"

#include <cmath>
#include <stdexcept>

#include "activation_kinds.hpp"

namespace slr::model {

const std::array<activation_name, 4>& activation_names() noexcept {
  static constexpr std::array<activation_name, 4> names = {{{activation_kind::softmax, "softmax"},
                                                            {activation_kind::linear, "linear"},
                                                            {activation_kind::erf, "erf"},
                                                            {activation_kind::softplus_kernel, "softplus-kernel"}}};
  return names;
}

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
  switch (spec.kind) {
  case activation_kind::softmax: return detail::make_softmax();
  case activation_kind::linear: return detail::make_linear();
  case activation_kind::erf:
    if (!std::isfinite(spec.erf_offset)) throw std::invalid_argument("erf offset must be finite");
    return detail::make_erf(spec.erf_offset);
  case activation_kind::softplus_kernel: return detail::make_softplus_kernel();
  }
  throw std::invalid_argument("unknown activation kind");
}

} // namespace slr::model
