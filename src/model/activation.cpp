#include "slr/model/activation.hpp"

#include <cmath>
#include <stdexcept>

#include "activation_kinds.hpp"

namespace slr::model {

activation_kind activation_spec::parse_kind(std::string_view name) {
  if (name == "softmax") return activation_kind::softmax;
  if (name == "linear") return activation_kind::linear;
  if (name == "erf") return activation_kind::erf;
  if (name == "softplus-kernel") return activation_kind::softplus_kernel;
  throw std::invalid_argument("unknown activation '" + std::string(name) +
                              "' (expected softmax, linear, erf or softplus-kernel)");
}

std::string activation_spec::kind_name() const {
  switch (kind) {
  case activation_kind::softmax: return "softmax";
  case activation_kind::linear: return "linear";
  case activation_kind::erf: return "erf";
  case activation_kind::softplus_kernel: return "softplus-kernel";
  }
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
