#include "slr/model/activation.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

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

void activation::linearise(std::span<const double> chi, std::span<double> sigma, std::span<double> work) const {
  evaluate(chi, sigma);
  std::copy(chi.begin(), chi.end(), work.begin());
}

void activation::jacobian_transpose(std::span<const double> sigma, std::span<const double> work,
                                    std::span<const double> u, std::span<double> out) const {
  std::vector<double> again(sigma.size());
  vector_jacobian(work, u, again, out);
}

void activation::vector_jacobian_by_linearisation(std::span<const double> chi, std::span<const double> u,
                                                  std::span<double> sigma, std::span<double> out) const {
  // Sequences are short (L is a few tokens); a heap buffer only for long ones.
  constexpr std::size_t on_stack = 64;
  double buffer[on_stack];
  std::vector<double> heap;
  double* work = buffer;
  if (chi.size() > on_stack) {
    heap.resize(chi.size());
    work = heap.data();
  }
  linearise(chi, sigma, {work, chi.size()});
  jacobian_transpose(sigma, {work, chi.size()}, u, out);
}

std::unique_ptr<const activation> make_activation(const activation_spec& spec) {
  if (spec.kind == activation_kind::erf && !std::isfinite(spec.erf_offset))
    throw std::invalid_argument("erf offset must be finite");
  for (const auto& entry : activation_names())
    if (entry.kind == spec.kind) return entry.make(spec);
  throw std::invalid_argument("unknown activation kind");
}

} // namespace slr::model
