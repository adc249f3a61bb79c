#include "slr/model/length_law.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace slr::model {
namespace {
std::string shortest(double x) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return {buffer, result.ptr};
}

template <class T>
T parse_number(std::string_view text, std::string_view what) {
  T value{};
  const auto* end = text.data() + text.size();
  const auto result = std::from_chars(text.data(), end, value);
  if (result.ec != std::errc{} || result.ptr != end)
    throw std::invalid_argument("length law: cannot read " + std::string(what) + " from '" + std::string(text) + "'");
  return value;
}
} // namespace

length_law length_law::fixed(std::size_t length) {
  if (length == 0) throw std::invalid_argument("length law: L must be >= 1");
  length_law law;
  law.pmf_ = {{length, 1.0}};
  return law;
}

length_law length_law::from_pmf(std::vector<entry> pmf) {
  if (pmf.empty()) throw std::invalid_argument("length law: the pmf is empty");
  std::sort(pmf.begin(), pmf.end(), [](const entry& a, const entry& b) { return a.length < b.length; });
  double total = 0;
  for (std::size_t i = 0; i < pmf.size(); ++i) {
    const auto& e = pmf[i];
    if (e.length == 0) throw std::invalid_argument("length law: lengths must be >= 1");
    if (i > 0 && pmf[i - 1].length == e.length)
      throw std::invalid_argument("length law: length " + std::to_string(e.length) + " appears twice");
    if (!(e.probability > 0 && e.probability <= 1))
      throw std::invalid_argument("length law: P(L=" + std::to_string(e.length) + ") must be in (0, 1]");
    total += e.probability;
  }
  if (std::abs(total - 1.0) > 1e-9)
    throw std::invalid_argument("length law: probabilities sum to " + shortest(total) + ", not 1");
  length_law law;
  law.pmf_ = std::move(pmf);
  return law;
}

length_law length_law::parse(std::string_view text) {
  if (text.find(':') == std::string_view::npos) return fixed(parse_number<std::size_t>(text, "L"));
  std::vector<entry> pmf;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const auto item = text.substr(0, comma);
    const auto colon = item.find(':');
    if (colon == std::string_view::npos)
      throw std::invalid_argument("length law: expected 'L:probability', got '" + std::string(item) + "'");
    pmf.push_back({parse_number<std::size_t>(item.substr(0, colon), "L"),
                   parse_number<double>(item.substr(colon + 1), "probability")});
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  }
  return from_pmf(std::move(pmf));
}

std::size_t length_law::max_length() const noexcept { return pmf_.empty() ? 0 : pmf_.back().length; }

double length_law::mean() const noexcept {
  double m = 0;
  for (const auto& e : pmf_) m += static_cast<double>(e.length) * e.probability;
  return m;
}

std::string length_law::to_string() const {
  if (is_fixed()) return std::to_string(pmf_.front().length);
  std::string text;
  for (const auto& e : pmf_) {
    if (!text.empty()) text += ',';
    text += std::to_string(e.length) + ":" + shortest(e.probability);
  }
  return text;
}

} // namespace slr::model
