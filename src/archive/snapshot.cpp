#include "snapshot.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <tuple>
#include <unordered_map>

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

void write_points(const h5::handle& file, const std::vector<const point_row*>& rows) {
  using k = column::kind;
  const auto value_names = value_column_union(rows);
  std::vector<column> columns = {
      {k::u64, "point_id"},
      {k::u32, "repeat"},
      {k::u64, "seed"},
      {k::fixed_text, "method", text_width(rows, &point_row::method)},
      {k::fixed_text, "task", text_width(rows, &point_row::task)},
      {k::f64, "nu"},
      {k::i64, "L"},
      {k::fixed_text, "L_pmf", text_width(rows, &point_row::L_pmf)},
      {k::f64, "delta"},
      {k::fixed_text, "activation", text_width(rows, &point_row::activation)},
      {k::f64, "erf_offset"},
      {k::f64, "alpha"},
      {k::f64, "r_k"},
      {k::f64, "r_v"},
      {k::vlen_text, "options"},
      {k::fixed_text, "status", text_width(rows, &point_row::status)},
      {k::vlen_text, "message"},
      {k::u32, "run_index"},
      {k::f64, "completed_unix"},
  };
  const std::size_t first_value = columns.size();
  for (const auto& name : value_names) columns.push_back({k::f64, name});
  columns.push_back({k::vlen_text, "extra_json"});
  const std::size_t extra = columns.size() - 1;

  table_buffer table(columns);
  table.resize(rows.size());
  std::unordered_map<std::string, std::size_t> value_index;
  for (std::size_t i = 0; i < value_names.size(); ++i) value_index[value_names[i]] = first_value + i;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = *rows[i];
    table.put(i, 0, r.point_id);
    table.put(i, 1, r.repeat);
    table.put(i, 2, r.seed);
    table.put_text(i, 3, r.method);
    table.put_text(i, 4, r.task);
    table.put(i, 5, r.nu);
    table.put(i, 6, r.L);
    table.put_text(i, 7, r.L_pmf);
    table.put(i, 8, r.delta);
    table.put_text(i, 9, r.activation);
    table.put(i, 10, r.erf_offset);
    table.put(i, 11, r.alpha);
    table.put(i, 12, r.r_k);
    table.put(i, 13, r.r_v);
    table.put_text(i, 14, r.options);
    table.put_text(i, 15, r.status);
    table.put_text(i, 16, r.message);
    table.put(i, 17, r.run_index);
    table.put(i, 18, r.completed_unix);
    for (std::size_t v = first_value; v < extra; ++v) table.put(i, v, std::nan(""));
    if (r.value_names.empty()) { // the standard columns, first in value_names order
      for (std::size_t v = 0; v < r.values.size() && v < grid::result_columns.size(); ++v)
        table.put(i, first_value + v, r.values[v]);
    } else {
      for (std::size_t v = 0; v < r.values.size(); ++v) table.put(i, value_index.at(r.value_names[v]), r.values[v]);
    }
    table.put_text(i, extra, r.extra_json);
  }
  table.write(file, "points", rows.size());
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
                      {k::u64, "points_done"}});
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
  }
  table.write(file, "runs", runs.size());
}

// NaN sorts last and equal to NaN, keeping the order strict-weak.
std::tuple<bool, double> number_key(double v) { return {std::isnan(v), std::isnan(v) ? 0.0 : v}; }

} // namespace

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

void sort_rows(std::vector<const point_row*>& rows) {
  const auto key = [](const point_row* r) {
    return std::make_tuple(std::cref(r->method), std::cref(r->task), std::cref(r->activation), number_key(r->erf_offset),
                           number_key(r->nu), r->L, std::cref(r->L_pmf), number_key(r->delta), number_key(r->alpha),
                           number_key(r->r_k), number_key(r->r_v), std::cref(r->options), r->repeat, r->point_id);
  };
  std::sort(rows.begin(), rows.end(), [&](const point_row* a, const point_row* b) { return key(a) < key(b); });
}

void write_snapshot(const std::filesystem::path& archive_path, const snapshot_content& content) {
  // Built in memory and written by save_image(): a full disk fails one write(2) cleanly.
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
  h5::save_image(file, archive_path);
}

} // namespace slr::archive
