#include "slr/grid/parameter.hpp"

#include <cctype>
#include <cmath>
#include <ostream>
#include <stdexcept>

#include "slr/grid/point.hpp"
#include "slr/grid/suggest.hpp"
#include "slr/model/length_law.hpp"

namespace slr::grid {

namespace {
// A number as a job file or a command line writes it: decimal digits with an optional sign,
// point and exponent, or inf/infinity (any case, optional sign). std::stod alone would also take
// hexadecimal ("0x10"), "nan" and leading blanks.
bool is_decimal_number(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::string rest(text.substr(i));
  for (auto& c : rest) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (rest == "inf" || rest == "infinity") return true;
  std::size_t digits = 0;
  const auto is_digit = [&](std::size_t k) { return k < text.size() && text[k] >= '0' && text[k] <= '9'; };
  while (is_digit(i)) ++i, ++digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (is_digit(i)) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (!is_digit(i)) return false;
    while (is_digit(i)) ++i;
  }
  return i == text.size();
}

// "[a, b]", "(a, b]", "[a, inf)" (inf itself refused), "[a, inf]" (accepted).
std::string range_text(const parameter_spec& spec) {
  std::string text = std::string(spec.minimum_exclusive || std::isinf(spec.minimum) ? "(" : "[") +
                     format_number(spec.minimum) + ", " + format_number(spec.maximum);
  text += std::isinf(spec.maximum) && !spec.allow_infinity ? ")" : "]";
  return text;
}
} // namespace

std::string canonical_value(const parameter_spec& spec, std::string_view value) {
  const std::string text(value);
  switch (spec.type) {
  case value_type::text: return text;
  case value_type::choice: {
    std::string list;
    for (const auto& c : spec.choices) {
      if (c == value) return c;
      list += (list.empty() ? "" : ", ") + c;
    }
    throw std::invalid_argument("'" + text + "' is not one of " + list + did_you_mean(text, spec.choices));
  }
  case value_type::length:
    try {
      return model::length_law::parse(text).to_string();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("'" + text + "' is not a length law (an integer L >= 1 or a pmf \"1:0.25,3:0.75\"): " +
                                  e.what());
    }
  case value_type::integer:
  case value_type::real: {
    double number = 0;
    if (!is_decimal_number(text)) throw std::invalid_argument("'" + text + "' is not a number");
    try {
      number = std::stod(text);
    } catch (const std::exception&) {
      throw std::invalid_argument("'" + text + "' is not a number");
    }
    if (std::isinf(number) && !spec.allow_infinity)
      throw std::invalid_argument("must be finite, got " + text);
    if (spec.type == value_type::integer && number != std::floor(number))
      throw std::invalid_argument("'" + text + "' is not an integer");
    const bool below = spec.minimum_exclusive ? !(number > spec.minimum) : number < spec.minimum;
    if (below && std::isinf(spec.maximum))
      throw std::invalid_argument(std::string("must be ") + (spec.minimum_exclusive ? "> " : ">= ") +
                                  format_number(spec.minimum) + ", got " + format_number(number));
    if (below || number > spec.maximum)
      throw std::invalid_argument(format_number(number) + " is out of range " + range_text(spec));
    if (number == 0) number = 0; // -0 and 0 are one value, so one point identity
    return format_number(number);
  }
  }
  throw std::invalid_argument("unsupported parameter type");
}

parameter_value parameter_value::of_integer(std::string name, std::int64_t value) {
  parameter_value v;
  v.name = std::move(name);
  v.type = kind::integer;
  v.integer = value;
  return v;
}

parameter_value parameter_value::of_real(std::string name, double value) {
  parameter_value v;
  v.name = std::move(name);
  v.type = kind::real;
  v.real = value;
  return v;
}

parameter_value parameter_value::of_text(std::string name, std::string value) {
  parameter_value v;
  v.name = std::move(name);
  v.type = kind::text;
  v.text = std::move(value);
  return v;
}

bool operator==(const parameter_value& a, const parameter_value& b) noexcept {
  if (a.name != b.name || a.type != b.type) return false;
  switch (a.type) {
  case parameter_value::kind::integer: return a.integer == b.integer;
  case parameter_value::kind::real: return a.real == b.real || (std::isnan(a.real) && std::isnan(b.real));
  case parameter_value::kind::text: return a.text == b.text;
  }
  return false;
}

std::ostream& operator<<(std::ostream& out, const parameter_value& v) {
  static constexpr const char* kinds[] = {"integer", "real", "text"};
  return out << v.name << "=" << v.to_text() << " (" << kinds[static_cast<int>(v.type)] << ")";
}

std::string parameter_value::to_text() const {
  switch (type) {
  case kind::integer: return std::to_string(integer);
  case kind::real: return format_number(real);
  case kind::text: return text;
  }
  return text;
}

double parameter_value::to_number() const {
  switch (type) {
  case kind::integer: return static_cast<double>(integer);
  case kind::real: return real;
  case kind::text: break;
  }
  try {
    std::size_t used = 0;
    const double x = std::stod(text, &used);
    if (used == text.size()) return x;
  } catch (const std::exception&) {
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<parameter_value> typed_values(const parameter_spec& spec, const std::string& canonical) {
  switch (spec.type) {
  case value_type::integer: {
    const double x = std::stod(canonical);
    // Integers beyond 2^63 do not occur (ranges are declared far below); keep them exact as reals.
    if (std::fabs(x) < 9.2e18) return {parameter_value::of_integer(spec.name, static_cast<std::int64_t>(x))};
    return {parameter_value::of_real(spec.name, x)};
  }
  case value_type::real: return {parameter_value::of_real(spec.name, std::stod(canonical))};
  case value_type::length: {
    const auto law = model::length_law::parse(canonical);
    std::vector<parameter_value> cells;
    if (law.is_fixed())
      cells.push_back(parameter_value::of_integer(spec.name, static_cast<std::int64_t>(law.support().front().length)));
    cells.push_back(parameter_value::of_text(spec.name + "_pmf", law.to_string()));
    return cells;
  }
  case value_type::choice:
  case value_type::text: break;
  }
  return {parameter_value::of_text(spec.name, canonical)};
}

parameter_value guess_typed_value(std::string name, const std::string& text) {
  try {
    std::size_t used = 0;
    const long long i = std::stoll(text, &used);
    if (used == text.size() && !text.empty()) return parameter_value::of_integer(std::move(name), i);
  } catch (const std::exception&) {
  }
  try {
    std::size_t used = 0;
    const double x = std::stod(text, &used);
    if (used == text.size() && !text.empty()) return parameter_value::of_real(std::move(name), x);
  } catch (const std::exception&) {
  }
  return parameter_value::of_text(std::move(name), text);
}

std::string_view type_name(value_type type) noexcept {
  switch (type) {
  case value_type::integer: return "integer";
  case value_type::real: return "real";
  case value_type::choice: return "choice";
  case value_type::text: return "text";
  case value_type::length: return "length law";
  }
  return "unknown";
}

std::string describe(const parameter_spec& spec) {
  std::string text(type_name(spec.type));
  if (spec.type == value_type::choice) {
    text += " {";
    for (std::size_t i = 0; i < spec.choices.size(); ++i) text += (i ? ", " : "") + spec.choices[i];
    text += "}";
  } else if (spec.type == value_type::integer || spec.type == value_type::real) {
    const bool bounded = std::isfinite(spec.minimum) || std::isfinite(spec.maximum);
    if (bounded) text += " in " + range_text(spec);
    else if (spec.allow_infinity) text += ", inf allowed";
  }
  text += spec.default_value.empty() ? ", no default" : ", default " + spec.default_value;
  if (!spec.unit.empty()) text += ", unit " + spec.unit;
  return text;
}

} // namespace slr::grid
