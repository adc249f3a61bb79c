#include "slr/query/output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace slr::query {
namespace {

std::string short_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) value = 0; // no "-0" in a table
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

void write_aligned(std::ostream& out, const table& rows) {
  const std::size_t n = rows.rows();
  std::vector<std::vector<std::string>> cells(rows.columns.size());
  std::vector<std::size_t> width(rows.columns.size());
  for (std::size_t c = 0; c < rows.columns.size(); ++c) {
    const auto& col = rows.columns[c];
    width[c] = col.name.size();
    for (std::size_t r = 0; r < n; ++r) {
      auto text = col.kind == column_kind::number ? short_number(col.numbers[r]) : col.cell_text(r);
      // Keep the table on one line per row.
      std::replace(text.begin(), text.end(), '\n', ' ');
      width[c] = std::max(width[c], text.size());
      cells[c].push_back(std::move(text));
    }
  }
  const auto emit = [&](std::size_t c, const std::string& text, bool right) {
    if (c > 0) out << "  ";
    const std::string pad(width[c] - text.size(), ' ');
    const bool last = c + 1 == rows.columns.size();
    if (right) out << pad << text;
    else out << text << (last ? "" : pad);
  };
  for (std::size_t c = 0; c < rows.columns.size(); ++c)
    emit(c, rows.columns[c].name, rows.columns[c].kind != column_kind::text);
  out << '\n';
  for (std::size_t c = 0; c < rows.columns.size(); ++c) emit(c, std::string(width[c], '-'), false);
  out << '\n';
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < rows.columns.size(); ++c) emit(c, cells[c][r], rows.columns[c].kind != column_kind::text);
    out << '\n';
  }
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char ch : text) {
    if (ch == '"') quoted += '"';
    quoted += ch;
  }
  return quoted + "\"";
}

void write_csv(std::ostream& out, const table& rows) {
  for (std::size_t c = 0; c < rows.columns.size(); ++c) out << (c ? "," : "") << csv_field(rows.columns[c].name);
  out << "\n";
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    for (std::size_t c = 0; c < rows.columns.size(); ++c) out << (c ? "," : "") << csv_field(rows.columns[c].cell_text(r));
    out << "\n";
  }
}

void write_jsonl(std::ostream& out, const table& rows) {
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    nlohmann::ordered_json object = nlohmann::ordered_json::object();
    for (const auto& col : rows.columns) {
      switch (col.kind) {
      case column_kind::number: {
        const double v = col.numbers[r];
        if (std::isnan(v)) object[col.name] = nullptr;
        else if (std::isinf(v)) object[col.name] = v > 0 ? "inf" : "-inf";
        else object[col.name] = v;
        break;
      }
      case column_kind::integer: object[col.name] = col.integers[r]; break;
      case column_kind::text: object[col.name] = col.texts[r]; break;
      }
    }
    // Invalid UTF-8 in a message must not abort the output.
    out << object.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
  }
}

} // namespace

output_format parse_output_format(std::string_view name) {
  if (name == "table") return output_format::table;
  if (name == "csv") return output_format::csv;
  if (name == "jsonl") return output_format::jsonl;
  throw std::invalid_argument("--format: unknown format '" + std::string(name) + "' (expected table, csv or jsonl)");
}

void write_output(std::ostream& out, const table& rows, output_format format) {
  switch (format) {
  case output_format::table: write_aligned(out, rows); break;
  case output_format::csv: write_csv(out, rows); break;
  case output_format::jsonl: write_jsonl(out, rows); break;
  }
}

} // namespace slr::query
