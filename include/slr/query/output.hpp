#pragma once
// Output of query results:
//   table  aligned columns for a terminal (numbers with 6 significant digits, right-aligned)
//   csv    RFC 4180, header row, numbers in shortest round-trip form ("nan", "inf" as pandas reads them)
//   jsonl  one JSON object per row, keys in column order; NaN → null, ±inf → "inf" / "-inf"
#include <ostream>
#include <string_view>

#include "slr/query/table.hpp"

namespace slr::query {

enum class output_format { table, csv, jsonl };

/// Parses "table", "csv" or "jsonl"; throws std::invalid_argument "--format: …" otherwise.
[[nodiscard]] output_format parse_output_format(std::string_view name);

void write_output(std::ostream& out, const table& rows, output_format format);

} // namespace slr::query
