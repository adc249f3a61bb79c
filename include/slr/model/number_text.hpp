#pragma once
// Numbers in user-supplied text (CLI values, option lists, weight files): the whole text must be
// one number, as std::strtod reads it ("1e-3", "-0.5", "inf", "nan"), with blanks allowed around it.
#include <optional>
#include <string_view>

namespace slr::model {

/// The number the whole of `text` spells (leading/trailing spaces and tabs allowed), or nullopt
/// if it is empty, has anything else in it, or is out of double's range. Never throws.
[[nodiscard]] std::optional<double> parse_number(std::string_view text) noexcept;

} // namespace slr::model
