#include "slr/tied/problem.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace slr::tied {

std::string_view parametrisation_name(parametrisation p) noexcept {
  switch (p) {
  case parametrisation::factorised: return "factorised";
  case parametrisation::direct: return "direct";
  case parametrisation::psd_nuclear: return "psd-nuclear";
  }
  return "factorised";
}

using detail::parse_named;

parametrisation parse_parametrisation(std::string_view name) {
  return parse_named("parametrisation", all_parametrisations, parametrisation_name, name);
}

std::string_view label_form_name(label_form form) noexcept {
  return form == label_form::seq2seq ? "seq2seq" : "seq2label";
}

label_form parse_label_form(std::string_view name) {
  return parse_named("labels", all_label_forms, label_form_name, name);
}

namespace {
void require(bool ok, const char* name, const char* reason) {
  if (!ok) throw std::invalid_argument(std::string(name) + ": " + reason);
}
} // namespace

void problem::validate() const {
  if (!(T >= 2 && T <= max_tokens))
    throw std::invalid_argument("T: must be an integer in [2, " + std::to_string(max_tokens) + "]");
  require(std::isfinite(alpha) && alpha > 0, "alpha", "must be finite and > 0");
  require(std::isfinite(k0) && k0 > 0 && k0 <= 1, "k0", "must be in (0, 1]");
  require(std::isfinite(k) && k > 0, "k", "must be finite and > 0");
  require(std::isfinite(lambda) && lambda >= 0, "lambda", "must be finite and >= 0");
  require(std::isfinite(delta) && delta >= 0, "delta", "must be finite and >= 0");
  require(std::isfinite(beta) && beta > 0, "beta", "must be finite and > 0");
  require(std::isfinite(beta0) && beta0 > 0, "beta0", "must be finite and > 0");
}

} // namespace slr::tied
