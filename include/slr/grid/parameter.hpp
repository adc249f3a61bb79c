#pragma once
// Declared parameters. Every parameter of a point — of its model (task, ν, L, …, α, r_k, r_v) or
// of its method (samples, D, tol, …) — is declared once as a parameter_spec: name, type, meaning,
// unit, range, default. The declarations drive the job parser (any parameter may be a value, a
// list, a generator, zipped with any other), validation and its error messages, `point --help`,
// `plan --list`, the typed archive columns and the query/export/Python layers.
//
// A parameter's value travels as canonical text (canonical_value; the text enters the point's
// identity), and is stored typed (typed_values): integer → int64 column, real → float64, choice and
// text → UTF-8 text; a length law L → an int64 column "L" (absent for a pmf) and a text column "L_pmf".
#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace slr::grid {

enum class value_type { integer, real, choice, text, length };

struct parameter_spec {
  using value_type = grid::value_type;
  std::string name;          ///< job-file key, CLI flag without dashes and archive column, e.g. "samples", "r_k"
  value_type type = value_type::real;
  // Members without a default of their own get {}: the declaration tables list the fields in
  // order and stop after the last one they set.
  std::string default_value{}; ///< canonical text; empty: no default (required where used)
  std::string help{};          ///< what it means (one line, with its symbol)
  std::vector<std::string> choices{};                        ///< for value_type::choice
  double minimum = -std::numeric_limits<double>::infinity(); ///< for integer/real
  double maximum = std::numeric_limits<double>::infinity();  ///< for integer/real (inclusive)
  /// For parameters added after archives exist: while at its default the parameter is left out of
  /// a point's canonical text, so points of existing archives keep their identities (and seeds).
  bool omitted_when_default = false;
  /// Points that differ only in this parameter (same repeat) get the same seed, so they draw the
  /// same random numbers: a paired comparison (the seed derives from the identity without it).
  bool paired_seed = false;
  std::string unit{};            ///< physical unit or "" (dimensionless)
  bool allow_infinity = false;   ///< real: "inf" is a value (ν = ∞ of max-SLR)
  bool minimum_exclusive = false;///< real: value > minimum rather than ≥
};

/// The canonical text of a value (shortest round-trip numbers, "inf"; a length law in its
/// canonical form). Throws std::invalid_argument with the reason (without the parameter's name),
/// e.g. "'abc' is not a number", "-1 is out of range [0, inf]", "'x' is not one of a, b".
[[nodiscard]] std::string canonical_value(const parameter_spec& spec, std::string_view value);

/// One typed cell of a point's row in the archive.
struct parameter_value {
  enum class kind { integer, real, text }; ///< values fixed by the journal's point record (0, 1, 2)
  std::string name;
  kind type = kind::real;
  std::int64_t integer = 0;
  double real = std::numeric_limits<double>::quiet_NaN();
  std::string text;

  static parameter_value of_integer(std::string name, std::int64_t value);
  static parameter_value of_real(std::string name, double value);
  static parameter_value of_text(std::string name, std::string value);
  /// The value as text (numbers in shortest round-trip form).
  [[nodiscard]] std::string to_text() const;
  /// The value as a number (NaN for text that is not a number).
  [[nodiscard]] double to_number() const;
  /// Same name, kind and value (the unused fields do not count).
  friend bool operator==(const parameter_value& a, const parameter_value& b) noexcept;
  friend std::ostream& operator<<(std::ostream& out, const parameter_value& v);
};

/// The typed archive cells of one canonical value: one cell, or two for a length law
/// ("L" int64 when fixed, and "L_pmf" text always).
[[nodiscard]] std::vector<parameter_value> typed_values(const parameter_spec& spec, const std::string& canonical);

/// Best-effort typing of an untyped "key=value" (archives written before parameters were typed):
/// an integer if the text is one, else a real if it is a number, else text.
[[nodiscard]] parameter_value guess_typed_value(std::string name, const std::string& text);

/// "integer", "real", "choice", "text", "length law".
[[nodiscard]] std::string_view type_name(value_type type) noexcept;
/// One line for help texts: "<type>, <range or choices>, default <d>[, unit]".
[[nodiscard]] std::string describe(const parameter_spec& spec);

} // namespace slr::grid
