#include "snapshot.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "crc32c.hpp"
#include "hdf5_calls.hpp"
#include "slr/archive/provenance.hpp"

namespace slr::archive {
namespace {

// One column of a compound table and where it lives in a row of the memory buffer.
struct column {
  enum class kind { u64, u32, i64, i32, f64, fixed_text, vlen_text } type;
  std::string name;
  std::size_t width = 0;  // fixed_text only
  std::size_t offset = 0; // in the memory row
  std::size_t size() const {
    switch (type) {
    case kind::u32:
    case kind::i32: return 4;
    case kind::fixed_text: return width;
    case kind::vlen_text: return sizeof(char*);
    default: return 8;
    }
  }
};

hid_t native_type(column::kind k) {
  switch (k) {
  case column::kind::u64: return H5T_NATIVE_UINT64;
  case column::kind::u32: return H5T_NATIVE_UINT32;
  case column::kind::i64: return H5T_NATIVE_INT64;
  case column::kind::i32: return H5T_NATIVE_INT32;
  default: return H5T_NATIVE_DOUBLE;
  }
}

// A row-major byte buffer of a compound table; the same layout is used in memory and on disk
// (packed), so h5py sees exactly these columns.
class table_buffer {
public:
  explicit table_buffer(std::vector<column> columns) : columns_(std::move(columns)) {
    for (auto& c : columns_) {
      c.offset = row_size_;
      row_size_ += c.size();
    }
  }
  void resize(std::size_t rows) { bytes_.assign(rows * row_size_, 0); }
  template <class T>
  void put(std::size_t row, std::size_t col, T value) {
    std::memcpy(bytes_.data() + row * row_size_ + columns_[col].offset, &value, sizeof(T));
  }
  void put_text(std::size_t row, std::size_t col, const std::string& text) {
    const auto& c = columns_[col];
    char* slot = bytes_.data() + row * row_size_ + c.offset;
    if (c.type == column::kind::fixed_text) {
      std::memcpy(slot, text.data(), std::min(text.size(), c.width));
    } else {
      const char* pointer = text.c_str(); // valid while the rows live (the whole write)
      std::memcpy(slot, &pointer, sizeof pointer);
    }
  }

  /// row_text_crc32c over the row's text cells as they are stored (a vlen text up to its first
  /// NUL, a fixed one within its width), in column order.
  [[nodiscard]] std::uint32_t text_crc(std::size_t row) const {
    std::uint32_t crc = 0;
    for (const auto& c : columns_) {
      const char* slot = bytes_.data() + row * row_size_ + c.offset;
      if (c.type == column::kind::fixed_text) {
        crc = add_text_cell(crc, c.name, std::string_view(slot, strnlen(slot, c.width)));
      } else if (c.type == column::kind::vlen_text) {
        const char* pointer = nullptr;
        std::memcpy(&pointer, slot, sizeof pointer);
        crc = add_text_cell(crc, c.name, pointer != nullptr ? std::string_view(pointer) : std::string_view());
      }
    }
    return crc;
  }

  void write(const h5::handle& file, const char* name, std::size_t rows) const {
    const std::string what = file.what() + ":" + name;
    auto type = h5::compound_type(row_size_, what);
    std::vector<h5::handle> member_types;
    for (const auto& c : columns_) {
      hid_t member = native_type(c.type);
      if (c.type == column::kind::fixed_text || c.type == column::kind::vlen_text) {
        member_types.push_back(h5::string_type(c.type == column::kind::fixed_text ? c.width : 0, what + "." + c.name));
        member = member_types.back().get();
      }
      h5::check(H5Tinsert(type.get(), c.name.c_str(), c.offset, member), "H5Tinsert", what + "." + c.name);
    }
    auto space = h5::simple_space(rows, true, what);
    auto dcpl = h5::property_list(H5P_DATASET_CREATE, what);
    const hsize_t chunk[1] = {std::clamp<hsize_t>(rows, 1, std::max<hsize_t>(1, (1u << 20) / row_size_))};
    h5::check(H5Pset_chunk(dcpl.get(), 1, chunk), "H5Pset_chunk", what);
    // Fletcher-32 per chunk: bit rot in the rows is an error on reading, never a wrong number.
    h5::check(H5Pset_fletcher32(dcpl.get()), "H5Pset_fletcher32", what);
    h5::handle dataset{h5::check(H5Dcreate2(file.get(), name, type.get(), space.get(), H5P_DEFAULT, dcpl.get(),
                                            H5P_DEFAULT),
                                 "H5Dcreate2", what),
                       H5Dclose, what};
    if (rows > 0)
      h5::check(H5Dwrite(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes_.data()), "H5Dwrite", what);
    dataset.close();
  }

private:
  std::vector<column> columns_;
  std::size_t row_size_ = 0;
  std::vector<char> bytes_;
};

std::size_t text_width(const std::vector<const point_row*>& rows, std::string point_row::*field) {
  std::size_t width = 8;
  for (const auto* r : rows) width = std::max(width, (r->*field).size());
  return width;
}

// A parameter column of /points: its name and the type that holds every row's cell losslessly.
struct parameter_column {
  std::string name;
  column::kind type = column::kind::i64;
  std::size_t width = 8; // text
};

std::string json_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out;
}

std::vector<parameter_column> parameter_columns(const std::vector<const point_row*>& rows) {
  using k = column::kind;
  std::vector<parameter_column> columns;
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::size_t> present;
  for (const auto* r : rows)
    for (const auto& cell : r->parameters) {
      auto [it, inserted] = index.emplace(cell.name, columns.size());
      if (inserted) {
        columns.push_back({cell.name, k::i64, 8});
        present.push_back(0);
      }
      auto& c = columns[it->second];
      ++present[it->second];
      // int64 while every cell is an integer; float64 once a real appears; text once a text does.
      if (cell.type == grid::parameter_value::kind::text) c.type = k::fixed_text;
      else if (cell.type == grid::parameter_value::kind::real && c.type == k::i64) c.type = k::f64;
      c.width = std::max(c.width, cell.to_text().size());
    }
  for (std::size_t i = 0; i < columns.size(); ++i) {
    auto& c = columns[i];
    if (c.type == k::i64 && present[i] < rows.size()) c.type = k::f64; // a missing integer is NaN
    if (c.type == k::fixed_text && c.width > 64) c.type = k::vlen_text;
  }
  return columns;
}

void write_points(const h5::handle& file, const std::vector<const point_row*>& rows) {
  using k = column::kind;
  const auto value_names = value_column_union(rows);
  const auto parameters = parameter_columns(rows);
  std::vector<column> columns = {
      {k::u64, "point_id"},
      {k::u32, "repeat"},
      {k::u64, "seed"},
      {k::fixed_text, "method", text_width(rows, &point_row::method)},
  };
  const std::size_t first_parameter = columns.size();
  for (const auto& p : parameters) columns.push_back({p.type, p.name, p.width});
  const std::size_t status = columns.size();
  columns.push_back({k::fixed_text, "status", text_width(rows, &point_row::status)});
  columns.push_back({k::vlen_text, "message"});
  columns.push_back({k::u32, "run_index"});
  columns.push_back({k::f64, "completed_unix"});
  const std::size_t first_value = columns.size();
  const auto is_parameter = [&](const std::string& name) {
    return std::any_of(parameters.begin(), parameters.end(), [&](const parameter_column& p) { return p.name == name; });
  };
  std::vector<std::string> result_names;
  for (const auto& name : value_names) {
    result_names.push_back(result_column_of(name, is_parameter));
    columns.push_back({k::f64, result_names.back()});
  }
  columns.push_back({k::vlen_text, "extra_json"});
  const std::size_t extra = columns.size() - 1;
  columns.push_back({k::u32, text_crc_column});

  table_buffer table(columns);
  table.resize(rows.size());
  std::unordered_map<std::string, std::size_t> value_index, parameter_index;
  for (std::size_t i = 0; i < value_names.size(); ++i) value_index[value_names[i]] = first_value + i;
  for (std::size_t i = 0; i < parameters.size(); ++i) parameter_index[parameters[i].name] = first_parameter + i;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = *rows[i];
    table.put(i, 0, r.point_id);
    table.put(i, 1, r.repeat);
    table.put(i, 2, r.seed);
    table.put_text(i, 3, r.method);
    // Absent cells: NaN in a float64 column, "" in a text column (an int64 column has no absent cell).
    for (std::size_t c = 0; c < parameters.size(); ++c)
      if (parameters[c].type == k::f64) table.put(i, first_parameter + c, std::nan(""));
    for (const auto& cell : r.parameters) {
      const std::size_t c = parameter_index.at(cell.name);
      switch (columns[c].type) {
      case k::i64: table.put(i, c, cell.integer); break;
      case k::f64: table.put(i, c, cell.to_number()); break;
      default: table.put_text(i, c, cell.type == grid::parameter_value::kind::text ? cell.text : cell.to_text()); break;
      }
    }
    table.put_text(i, status, r.status);
    table.put_text(i, status + 1, r.message);
    table.put(i, status + 2, r.run_index);
    table.put(i, status + 3, r.completed_unix);
    for (std::size_t v = first_value; v < extra; ++v) table.put(i, v, std::nan(""));
    if (r.value_names.empty()) { // the standard columns, first in value_names order
      for (std::size_t v = 0; v < r.values.size() && v < grid::result_columns.size(); ++v)
        table.put(i, first_value + v, r.values[v]);
    } else {
      for (std::size_t v = 0; v < r.values.size(); ++v) table.put(i, value_index.at(r.value_names[v]), r.values[v]);
    }
    table.put_text(i, extra, r.extra_json);
    table.put(i, extra + 1, table.text_crc(i));
  }
  table.write(file, "points", rows.size());
  // Which columns are parameters and which results, so that readers need no list of their own.
  std::string parameter_list, result_list, descriptions;
  const auto& described = parameter_descriptions();
  for (const auto& p : parameters) {
    parameter_list += (parameter_list.empty() ? "" : ",") + p.name;
    if (const auto it = described.find(p.name); it != described.end())
      descriptions += std::string(descriptions.empty() ? "" : ",") + "\"" + json_escaped(p.name) +
                      "\": {\"long_name\": \"" + json_escaped(it->second.long_name) + "\", \"units\": \"" +
                      json_escaped(it->second.units) + "\"}";
  }
  for (const auto& name : result_names) result_list += (result_list.empty() ? "" : ",") + name;
  auto points = h5::dataset_open(file, "points");
  h5::write_text_attribute(points, "parameter_columns", parameter_list);
  h5::write_text_attribute(points, "result_columns", result_list);
  h5::write_text_attribute(points, "parameter_descriptions", "{" + descriptions + "}");
}

void write_runs(const h5::handle& file, const std::vector<run_row>& runs) {
  using k = column::kind;
  table_buffer table({{k::u32, "run_index"},
                      {k::f64, "start_unix"},
                      {k::f64, "end_unix"},
                      {k::i32, "ranks"},
                      {k::vlen_text, "host"},
                      {k::vlen_text, "command"},
                      {k::vlen_text, "exit_reason"},
                      {k::u64, "points_done"},
                      {k::u32, text_crc_column}});
  table.resize(runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    table.put(i, 0, runs[i].run_index);
    table.put(i, 1, runs[i].start_unix);
    table.put(i, 2, runs[i].end_unix);
    table.put(i, 3, runs[i].ranks);
    table.put_text(i, 4, runs[i].host);
    table.put_text(i, 5, runs[i].command);
    table.put_text(i, 6, runs[i].exit_reason);
    table.put(i, 7, runs[i].points_done);
    table.put(i, 8, table.text_crc(i));
  }
  table.write(file, "runs", runs.size());
}

// NaN sorts last and equal to NaN, keeping the order strict-weak.
std::tuple<bool, double> number_key(double v) { return {std::isnan(v), std::isnan(v) ? 0.0 : v}; }

} // namespace

std::uint32_t add_text_cell(std::uint32_t crc, std::string_view column, std::string_view text) {
  constexpr std::string_view nul("\0", 1);
  crc = crc32c(column, crc);
  crc = crc32c(nul, crc);
  crc = crc32c(text, crc);
  return crc32c(nul, crc);
}

std::uint32_t attributes_crc32c(const h5::handle& file) {
  const auto crc = h5::attributes_crc32c(file, attributes_crc_attribute, 0);
  return h5::attributes_crc32c(h5::dataset_open(file, "points"), attributes_crc_attribute, crc);
}

std::vector<std::string> value_column_union(const std::vector<const point_row*>& rows) {
  std::vector<std::string> names;
  for (const auto& c : grid::result_columns) names.push_back(archive_column_name(c));
  std::unordered_map<std::string, bool> known;
  for (const auto& n : names) known[n] = true;
  for (const auto* r : rows)
    for (const auto& n : r->value_names)
      if (known.emplace(n, true).second) names.push_back(n);
  return names;
}

namespace {
// Orders two cells of one parameter: numbers numerically (NaN last), text by bytes.
int compare_cells(const grid::parameter_value& a, const grid::parameter_value& b) {
  if (a.name != b.name) return a.name < b.name ? -1 : 1;
  const bool a_text = a.type == grid::parameter_value::kind::text, b_text = b.type == grid::parameter_value::kind::text;
  if (a_text || b_text) {
    const auto x = a.to_text(), y = b.to_text();
    return x == y ? 0 : (x < y ? -1 : 1);
  }
  const auto x = number_key(a.to_number()), y = number_key(b.to_number());
  return x == y ? 0 : (x < y ? -1 : 1);
}
} // namespace

void sort_rows(std::vector<const point_row*>& rows) {
  std::sort(rows.begin(), rows.end(), [](const point_row* a, const point_row* b) {
    if (a->method != b->method) return a->method < b->method;
    const std::size_t n = std::min(a->parameters.size(), b->parameters.size());
    for (std::size_t i = 0; i < n; ++i)
      if (const int c = compare_cells(a->parameters[i], b->parameters[i]); c != 0) return c < 0;
    if (a->parameters.size() != b->parameters.size()) return a->parameters.size() < b->parameters.size();
    return std::tie(a->repeat, a->point_id) < std::tie(b->repeat, b->point_id);
  });
}

namespace {
// The whole snapshot as an in-memory HDF5 file.
h5::handle snapshot_image(const std::filesystem::path& archive_path, const snapshot_content& content) {
  auto file = h5::file_create_in_memory(archive_path.string());
  write_points(file, content.rows);
  write_runs(file, content.runs);
  const auto& build = build_provenance();
  h5::write_text_attribute(file, "format", archive_format_name);
  h5::write_int_attribute(file, "schema_version", archive_schema_version);
  h5::write_text_attribute(file, "tool_version", build.tool_version);
  h5::write_text_attribute(file, "git_revision", build.git_revision);
  h5::write_text_attribute(file, "compiler", build.compiler);
  for (const auto& [library, version] : build.library_versions)
    h5::write_text_attribute(file, ("version_" + library).c_str(), version);
  h5::write_text_attribute(file, "job_text", content.job_text);
  h5::write_text_attribute(file, "job_fingerprint", content.job_fingerprint);
  h5::write_text_attribute(file, "job_name", content.job_name);
  h5::write_double_attribute(
      file, "snapshot_unix",
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
  h5::write_int_attribute(file, "journal_bytes", static_cast<long long>(content.journal_bytes));
  h5::write_int_attribute(file, "journal_points", static_cast<long long>(content.journal_points));
  h5::write_int_attribute(file, attributes_crc_attribute, attributes_crc32c(file));
  return file;
}
} // namespace

void check_snapshot(const std::filesystem::path& archive_path, const snapshot_content& content) {
  auto file = snapshot_image(archive_path, content);
  file.close();
}

void write_snapshot(const std::filesystem::path& archive_path, const snapshot_content& content) {
  // Built in memory and written by save_image(): a full disk fails one write(2) cleanly.
  auto file = snapshot_image(archive_path, content);
  h5::save_image(file, archive_path);
}

} // namespace slr::archive
