#include "slr/archive/reader.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <fstream>
#include <mutex>
#include <set>

#include <sys/stat.h>

#include "archive_model.hpp"
#include "hdf5_calls.hpp"
#include "isolated_read.hpp"
#include "journal_internal.hpp"
#include "slr/archive/journal.hpp"
#include "snapshot.hpp"

namespace slr::archive {

namespace {
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}
} // namespace

namespace {

// The global heap collections of a file (where HDF5 keeps variable-length strings: the text
// columns and attributes of a snapshot) carry no checksum in the file format, and HDF5 copies an
// object by the size the collection states: a flipped bit there is a read out of bounds, not an
// error. So before HDF5 opens a snapshot, every collection ("GCOL", version 1, HDF5 file format
// spec §III.E) is walked here: each object's size must fit in its collection, which must fit in
// the file. Returns why not, or "".
std::string global_heap_problem(const std::filesystem::path& path) {
  std::error_code error;
  const auto file_size = std::filesystem::file_size(path, error);
  if (error) return {}; // HDF5 reports an unreadable file itself
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(file_size), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  const auto u64 = [&](std::size_t at) {
    std::uint64_t v = 0;
    std::memcpy(&v, bytes.data() + at, 8);
    return v;
  };
  constexpr std::size_t header = 16, object_header = 16;
  for (std::size_t at = bytes.find("GCOL"); at != std::string::npos; at = bytes.find("GCOL", at + 1)) {
    if (at + header > bytes.size() || bytes[at + 4] != 1 || bytes[at + 5] != 0 || bytes[at + 6] != 0 ||
        bytes[at + 7] != 0)
      continue; // not a collection header (text that happens to read GCOL)
    const std::uint64_t size = u64(at + 8);
    if (size < 4096 || size > bytes.size() - at) return "a global heap collection at byte " + std::to_string(at) +
                                                        " states a size of " + std::to_string(size) + " bytes";
    std::size_t object = at + header;
    const std::size_t end = at + static_cast<std::size_t>(size);
    while (object + object_header <= end) {
      const unsigned index = static_cast<unsigned char>(bytes[object]) | static_cast<unsigned char>(bytes[object + 1]) << 8;
      const std::uint64_t length = u64(object + 8);
      if (index == 0) { // free space: the rest of the collection
        if (length > end - object) return "the free space of the global heap collection at byte " + std::to_string(at) +
                                          " overruns it";
        break;
      }
      const std::uint64_t padded = (length + 7) / 8 * 8;
      if (length > end - object || padded > end - object - object_header)
        return "object " + std::to_string(index) + " of the global heap collection at byte " + std::to_string(at) +
               " overruns it";
      object += object_header + static_cast<std::size_t>(padded);
    }
  }
  return {};
}

// Reads one member of a compound dataset by name (HDF5 converts by member name).
template <class T>
std::vector<T> read_number_column(const h5::handle& dataset, std::size_t rows, const std::string& name, hid_t native) {
  std::vector<T> values(rows);
  if (rows == 0) return values;
  const std::string what = dataset.what() + "." + name;
  auto type = h5::compound_type(sizeof(T), what);
  h5::check(H5Tinsert(type.get(), name.c_str(), 0, native), "H5Tinsert", what);
  h5::check(H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), "H5Dread", what);
  return values;
}

std::vector<std::string> read_text_column(const h5::handle& dataset, std::size_t rows, const std::string& name,
                                          hid_t file_member_type) {
  std::vector<std::string> values(rows);
  if (rows == 0) return values;
  const std::string what = dataset.what() + "." + name;
  const bool variable = h5::check(H5Tis_variable_str(file_member_type), "H5Tis_variable_str", what) > 0;
  if (variable) {
    auto string_type = h5::string_type(0, what);
    auto type = h5::compound_type(sizeof(char*), what);
    h5::check(H5Tinsert(type.get(), name.c_str(), 0, string_type.get()), "H5Tinsert", what);
    std::vector<char*> pointers(rows, nullptr);
    h5::check(H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()), "H5Dread", what);
    for (std::size_t i = 0; i < rows; ++i) values[i] = pointers[i] != nullptr ? pointers[i] : "";
    auto space = h5::simple_space(rows, false, what);
    h5::check(H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, pointers.data()), "H5Dvlen_reclaim", what);
    return values;
  }
  const std::size_t width = h5::check_size(H5Tget_size(file_member_type), "H5Tget_size", what);
  auto string_type = h5::string_type(width, what);
  auto type = h5::compound_type(width, what);
  h5::check(H5Tinsert(type.get(), name.c_str(), 0, string_type.get()), "H5Tinsert", what);
  std::vector<char> bytes(rows * width);
  h5::check(H5Dread(dataset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()), "H5Dread", what);
  for (std::size_t i = 0; i < rows; ++i) {
    const char* start = bytes.data() + i * width;
    values[i].assign(start, strnlen(start, width));
  }
  return values;
}

struct member {
  std::string name;
  H5T_class_t type_class;
  h5::handle type;
  std::size_t offset = 0, size = 0; ///< in a row of the file's compound type
};

std::vector<member> members_of(const h5::handle& dataset) {
  h5::handle type{h5::check(H5Dget_type(dataset.get()), "H5Dget_type", dataset.what()), H5Tclose, dataset.what()};
  if (h5::check(H5Tget_class(type.get()), "H5Tget_class", dataset.what()) != H5T_COMPOUND)
    throw archive_not_found_error(dataset.what() + " is not a compound table");
  const int n = h5::check(H5Tget_nmembers(type.get()), "H5Tget_nmembers", dataset.what());
  // A bit flipped in the datatype message would otherwise reach HDF5's conversion as an offset
  // or size outside the row (a read out of bounds, not an error): check the layout first.
  const std::size_t row_size = h5::check_size(H5Tget_size(type.get()), "H5Tget_size", dataset.what());
  const auto damaged = [&](const std::string& why) {
    return archive_not_found_error(dataset.what() + " is damaged (" + why + ")");
  };
  std::vector<member> members;
  for (int i = 0; i < n; ++i) {
    char* raw = h5::check(H5Tget_member_name(type.get(), static_cast<unsigned>(i)), "H5Tget_member_name",
                          dataset.what());
    std::string name = raw;
    h5::check(H5free_memory(raw), "H5free_memory", dataset.what());
    const auto type_class = h5::check(H5Tget_member_class(type.get(), static_cast<unsigned>(i)), "H5Tget_member_class",
                                      dataset.what() + "." + name);
    h5::handle member_type{h5::check(H5Tget_member_type(type.get(), static_cast<unsigned>(i)), "H5Tget_member_type",
                                     dataset.what() + "." + name),
                           H5Tclose, dataset.what() + "." + name};
    const std::size_t offset = H5Tget_member_offset(type.get(), static_cast<unsigned>(i));
    const std::size_t size = h5::check_size(H5Tget_size(member_type.get()), "H5Tget_size", dataset.what() + "." + name);
    const bool plausible_size = type_class == H5T_STRING ? size >= 1
                                : (type_class == H5T_INTEGER || type_class == H5T_FLOAT)
                                    ? (size == 1 || size == 2 || size == 4 || size == 8)
                                    : false;
    if (!plausible_size || offset > row_size || size > row_size - offset)
      throw damaged("column '" + name + "' of " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                    " in rows of " + std::to_string(row_size));
    members.push_back({std::move(name), type_class, std::move(member_type), offset, size});
  }
  return members;
}

// The layout the snapshot writer gives its tables (snapshot.cpp, table_buffer): columns packed
// in order, numbers little-endian IEEE doubles or 32/64-bit integers. A bit flipped in the
// datatype message (an offset, a byte order, a sign) would otherwise read intact bytes as other
// numbers; checked for archives whose attributes carry a checksum (written with this layout).
void check_packed_layout(const h5::handle& dataset, const std::vector<member>& members) {
  h5::handle type{h5::check(H5Dget_type(dataset.get()), "H5Dget_type", dataset.what()), H5Tclose, dataset.what()};
  const std::size_t row_size = h5::check_size(H5Tget_size(type.get()), "H5Tget_size", dataset.what());
  std::size_t end = 0;
  for (const auto& m : members) {
    bool expected = m.offset == end;
    if (m.type_class != H5T_STRING) {
      bool known = false;
      for (const hid_t t : {H5T_IEEE_F64LE, H5T_STD_U64LE, H5T_STD_I64LE, H5T_STD_U32LE, H5T_STD_I32LE})
        known = known || h5::check(H5Tequal(m.type.get(), t), "H5Tequal", dataset.what() + "." + m.name) > 0;
      expected = expected && known;
    }
    if (!expected)
      throw archive_not_found_error(dataset.what() + " is damaged (column '" + m.name + "' is not where or what the " +
                                    "snapshot writer puts it)");
    end = m.offset + m.size;
  }
  if (end != row_size)
    throw archive_not_found_error(dataset.what() + " is damaged (its columns do not fill its rows)");
}

std::size_t row_count(const h5::handle& dataset) {
  h5::handle space{h5::check(H5Dget_space(dataset.get()), "H5Dget_space", dataset.what()), H5Sclose, dataset.what()};
  const auto n = h5::check(H5Sget_simple_extent_npoints(space.get()), "H5Sget_simple_extent_npoints", dataset.what());
  return static_cast<std::size_t>(n);
}

// Every text column of a table, read once, by name.
std::map<std::string, std::vector<std::string>> read_text_columns(const h5::handle& dataset, std::size_t rows,
                                                                  const std::vector<member>& members) {
  std::map<std::string, std::vector<std::string>> columns;
  for (const auto& m : members)
    if (m.type_class == H5T_STRING) columns[m.name] = read_text_column(dataset, rows, m.name, m.type.get());
  return columns;
}

// The checksum of one row's texts as the writer computes it (snapshot.cpp, table_buffer::text_crc):
// every text column in table order.
std::uint32_t row_text_crc(const std::vector<member>& members,
                           const std::map<std::string, std::vector<std::string>>& texts, std::size_t row) {
  std::uint32_t crc = 0;
  for (const auto& m : members)
    if (m.type_class == H5T_STRING) crc = add_text_cell(crc, m.name, texts.at(m.name)[row]);
  return crc;
}

const member* find_member(const std::vector<member>& members, const std::string& name) {
  for (const auto& m : members)
    if (m.name == name) return &m;
  return nullptr;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

struct reader::state {
  std::filesystem::path path;
  h5::handle file;
  archive_attributes attributes;
};

namespace {
// Who a file is: a writer replaces the snapshot by rename, so a path may name another file later.
struct file_identity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = 0;
  std::int64_t modified_ns = 0;
  auto operator<=>(const file_identity&) const = default;
};

file_identity identity_of(const struct stat& s) {
  return {s.st_dev, s.st_ino, s.st_size, static_cast<std::int64_t>(s.st_mtim.tv_sec) * 1000000000 + s.st_mtim.tv_nsec};
}

archive_not_found_error damaged_file(const std::filesystem::path& path, const std::string& why) {
  return archive_not_found_error(path.string() + " is a damaged HDF5 file (" + why + ")" +
                                 (std::filesystem::exists(journal_path(path))
                                      ? "; `slr-sweep recover " + path.string() + "` rebuilds it from its journal"
                                      : ""));
}

// Files this process has read whole in a checking child without harm (a process reads the same
// snapshot several times while it resumes or recovers).
std::mutex checked_mutex;
std::set<file_identity> checked_files;
} // namespace

reader::reader(const std::filesystem::path& path) : reader(path, open_mode::checked) {}

reader::reader(const std::filesystem::path& path, open_mode mode) : state_(std::make_unique<state>()) {
  state_->path = path;
  if (!std::filesystem::exists(path)) {
    auto journal = journal_path(path);
    throw archive_not_found_error("no archive at " + path.string() +
                                  (std::filesystem::exists(journal) ? " (its journal exists: run `slr-sweep recover " +
                                                                          path.string() + "`)"
                                                                    : ""));
  }
  if (std::filesystem::is_directory(path)) throw archive_not_found_error(path.string() + " is a directory, not an archive");
  h5::silence_error_stack();
  if (mode == open_mode::trusted) {
    open_file();
    return;
  }
  // A flipped bit in HDF5 metadata that has no checksum can crash libhdf5 or make it allocate
  // gigabytes. So every file is first read whole (attributes, /points, /runs) in a child process
  // with its memory and time capped; this process opens it only once that read has ended well.
  for (int attempt = 0;; ++attempt) {
    struct stat before {};
    if (::stat(path.c_str(), &before) != 0) throw archive_not_found_error("no archive at " + path.string());
    const auto identity = identity_of(before);
    bool known = false;
    {
      const std::lock_guard lock(checked_mutex);
      known = checked_files.contains(identity);
    }
    if (!known) {
      const auto bytes = static_cast<std::size_t>(before.st_size);
      const auto outcome = run_isolated(
          [&] {
            const reader whole(path, open_mode::trusted);
            (void)whole.points();
            (void)whole.runs();
          },
          (std::size_t{1} << 30) + 16 * bytes, 60.0 + static_cast<double>(bytes) / 1e6);
      switch (outcome.result) {
      case isolated_outcome::kind::ok: break;
      case isolated_outcome::kind::refused: throw archive_not_found_error(outcome.message);
      case isolated_outcome::kind::error: throw archive_error(outcome.message);
      case isolated_outcome::kind::crashed: throw damaged_file(path, outcome.message);
      }
      const std::lock_guard lock(checked_mutex);
      checked_files.insert(identity);
    }
    open_file();
    // The file HDF5 opened must be the one that was checked (a writer may have renamed a newer
    // snapshot over the path in between: that one is checked in turn).
    void* handle = nullptr;
    struct stat opened {};
    if (H5Fget_vfd_handle(state_->file.get(), H5P_DEFAULT, &handle) >= 0 && handle != nullptr &&
        ::fstat(*static_cast<int*>(handle), &opened) == 0 && identity_of(opened) == identity)
      return;
    if (attempt >= 5) throw archive_locked_error(path.string() + " was replaced while it was being read; try again");
    state_->file = {};
    state_->attributes = {};
  }
}

void reader::open_file() {
  const auto& path = state_->path;
  htri_t is_hdf5 = 0;
  try {
    is_hdf5 = h5::check(H5Fis_hdf5(path.c_str()), "H5Fis_hdf5", path.string());
  } catch (const hdf5_error& e) {
    throw archive_not_found_error(path.string() + " cannot be read as HDF5: " + e.what());
  }
  if (is_hdf5 == 0) throw archive_not_found_error(path.string() + " is not an HDF5 file");
  if (const auto problem = global_heap_problem(path); !problem.empty()) throw damaged_file(path, problem);
  try {
    state_->file = h5::file_open_read_only(path.string());
  } catch (const hdf5_error&) {
    throw damaged_file(path, "HDF5 cannot open it: truncated, or its metadata damaged");
  }
  try {
    read_attributes();
  } catch (const hdf5_error& e) {
    // Metadata HDF5 cannot follow (an object header with a flipped bit): a damaged file.
    throw damaged_file(path, e.what());
  }
}

void reader::read_attributes() {
  const auto& path = state_->path;
  const auto& file = state_->file;
  if (!h5::has_attribute(file, "format") || h5::read_text_attribute(file, "format") != archive_format_name)
    throw archive_not_found_error(path.string() + " is an HDF5 file but not an slr-sweep archive");
  auto& a = state_->attributes;
  // Attributes (the job text and the schema version among them) have no checksum in the file
  // format: the snapshot carries its own, checked before any attribute is believed.
  a.checksummed = h5::has_attribute(file, attributes_crc_attribute);
  if (a.checksummed &&
      static_cast<std::uint32_t>(h5::read_int_attribute(file, attributes_crc_attribute)) != attributes_crc32c(file))
    throw damaged_file(path, "its attributes fail their CRC-32C checksum");
  a.schema_version = h5::read_int_attribute(file, "schema_version");
  if (a.schema_version > archive_schema_version)
    throw archive_error(path.string() + " has archive schema version " + std::to_string(a.schema_version) +
                        "; this slr-sweep reads up to " + std::to_string(archive_schema_version));
  a.tool_version = h5::read_text_attribute(file, "tool_version");
  a.git_revision = h5::read_text_attribute(file, "git_revision");
  a.compiler = h5::read_text_attribute(file, "compiler");
  for (const auto& name : h5::attribute_names(file))
    if (name.starts_with("version_")) a.library_versions[name.substr(8)] = h5::read_text_attribute(file, name.c_str());
  a.job_text = h5::read_text_attribute(file, "job_text");
  a.job_fingerprint = h5::read_text_attribute(file, "job_fingerprint");
  a.job_name = h5::read_text_attribute(file, "job_name");
  a.snapshot_unix = h5::read_double_attribute(file, "snapshot_unix");
  a.journal_bytes = static_cast<std::uint64_t>(h5::read_int_attribute(file, "journal_bytes"));
  a.journal_points = static_cast<std::uint64_t>(h5::read_int_attribute(file, "journal_points"));
  if (a.schema_version >= 2) {
    const auto points = h5::dataset_open(file, "points");
    if (h5::has_attribute(points, "parameter_descriptions"))
      a.parameter_descriptions = h5::read_text_attribute(points, "parameter_descriptions");
  }
}

reader::reader(reader&&) noexcept = default;
reader& reader::operator=(reader&&) noexcept = default;
reader::~reader() = default;

const archive_attributes& reader::attributes() const noexcept { return state_->attributes; }

std::uint64_t reader::point_count() const { return row_count(h5::dataset_open(state_->file, "points")); }

std::vector<point_row> reader::points(std::vector<refused_row>* refused) const {
  try {
    return read_points(refused);
  } catch (const hdf5_error& e) {
    // A chunk whose Fletcher-32 checksum fails, or metadata HDF5 cannot follow: a damaged file.
    throw archive_not_found_error(state_->path.string() + " is damaged: " + e.what());
  }
}

std::vector<run_row> reader::runs() const {
  try {
    return read_runs();
  } catch (const hdf5_error& e) {
    throw archive_not_found_error(state_->path.string() + " is damaged: " + e.what());
  }
}

std::vector<point_row> reader::read_points(std::vector<refused_row>* refused) const {
  const auto dataset = h5::dataset_open(state_->file, "points");
  const std::size_t n = row_count(dataset);
  const auto members = members_of(dataset);
  if (state_->attributes.checksummed) check_packed_layout(dataset, members);
  std::vector<point_row> rows(n);
  // Every text column is read once: the rows take their cells from here, and the checksum of
  // each row's texts is computed over all of them.
  const auto text_columns = read_text_columns(dataset, n, members);
  const auto u64 = [&](const char* name, auto setter) {
    if (find_member(members, name) == nullptr) return;
    const auto v = read_number_column<std::uint64_t>(dataset, n, name, H5T_NATIVE_UINT64);
    for (std::size_t i = 0; i < n; ++i) setter(rows[i], v[i]);
  };
  const auto f64 = [&](const char* name, double point_row::*field) {
    if (find_member(members, name) == nullptr) return;
    const auto v = read_number_column<double>(dataset, n, name, H5T_NATIVE_DOUBLE);
    for (std::size_t i = 0; i < n; ++i) rows[i].*field = v[i];
  };
  const auto text = [&](const char* name, std::string point_row::*field) {
    const auto it = text_columns.find(name);
    if (it == text_columns.end()) return;
    for (std::size_t i = 0; i < n; ++i) rows[i].*field = it->second[i];
  };
  u64("point_id", [](point_row& r, std::uint64_t v) { r.point_id = v; });
  u64("repeat", [](point_row& r, std::uint64_t v) { r.repeat = static_cast<std::uint32_t>(v); });
  u64("seed", [](point_row& r, std::uint64_t v) { r.seed = v; });
  u64("run_index", [](point_row& r, std::uint64_t v) { r.run_index = static_cast<std::uint32_t>(v); });
  text("method", &point_row::method);
  text("status", &point_row::status);
  text("message", &point_row::message);
  text("extra_json", &point_row::extra_json);
  f64("completed_unix", &point_row::completed_unix);
  const auto numbers = [&](const std::string& name) {
    return find_member(members, name) == nullptr ? std::vector<double>(n, std::nan(""))
                                                 : read_number_column<double>(dataset, n, name, H5T_NATIVE_DOUBLE);
  };
  const auto texts = [&](const std::string& name) {
    const auto it = text_columns.find(name);
    return it == text_columns.end() ? std::vector<std::string>(n) : it->second;
  };
  std::set<std::string> not_results = {"completed_unix"};
  std::set<std::string> parameter_names; // the table's parameter columns
  if (state_->attributes.schema_version < 2) {
    // The first schema: fixed SLR columns and the options text.
    std::vector<std::int64_t> L(n, -1);
    if (find_member(members, "L") != nullptr) L = read_number_column<std::int64_t>(dataset, n, "L", H5T_NATIVE_INT64);
    const auto task = texts("task"), L_pmf = texts("L_pmf"), activation = texts("activation"), options = texts("options");
    const auto nu = numbers("nu"), delta = numbers("delta"), erf_offset = numbers("erf_offset"), alpha = numbers("alpha"),
               r_k = numbers("r_k"), r_v = numbers("r_v");
    for (std::size_t i = 0; i < n; ++i)
      rows[i].parameters = schema1_parameters(task[i], nu[i], L[i], L_pmf[i], delta[i], activation[i], erf_offset[i],
                                              alpha[i], r_k[i], r_v[i], options[i]);
    not_results.insert({"nu", "delta", "erf_offset", "alpha", "r_k", "r_v"});
    parameter_names = {"task", "nu", "L", "L_pmf", "delta", "activation", "erf_offset", "alpha", "r_k", "r_v", "options"};
  } else {
    // Typed parameter columns, named by the table's own attribute: int64 (always present),
    // float64 (NaN = the point has no such parameter), text ("" = none).
    for (const auto& name : split_list(h5::read_text_attribute(dataset, "parameter_columns"))) {
      not_results.insert(name);
      parameter_names.insert(name);
      const auto* m = find_member(members, name);
      if (m == nullptr) throw archive_not_found_error(state_->path.string() + " is damaged: /points has no parameter column '" + name + "'");
      if (m->type_class == H5T_INTEGER) {
        const auto v = read_number_column<std::int64_t>(dataset, n, name, H5T_NATIVE_INT64);
        for (std::size_t i = 0; i < n; ++i) rows[i].parameters.push_back(grid::parameter_value::of_integer(name, v[i]));
      } else if (m->type_class == H5T_FLOAT) {
        const auto v = read_number_column<double>(dataset, n, name, H5T_NATIVE_DOUBLE);
        for (std::size_t i = 0; i < n; ++i)
          if (!std::isnan(v[i])) rows[i].parameters.push_back(grid::parameter_value::of_real(name, v[i]));
      } else {
        auto v = texts(name);
        for (std::size_t i = 0; i < n; ++i)
          if (!v[i].empty()) rows[i].parameters.push_back(grid::parameter_value::of_text(name, std::move(v[i])));
      }
    }
  }
  // Result columns back to the names rows and the journal use (the inverse of the writer's
  // result_column_of: ERM's "D_result" is the result "D").
  std::vector<std::string> columns, value_names;
  const auto is_parameter = [&](const std::string& name) { return parameter_names.contains(name); };
  for (const auto& m : members)
    if (m.type_class == H5T_FLOAT && !not_results.contains(m.name)) {
      columns.push_back(m.name);
      value_names.push_back(value_name_of(m.name, is_parameter));
    }
  if (const std::set<std::string> distinct(value_names.begin(), value_names.end()); distinct.size() != value_names.size())
    throw archive_not_found_error(state_->path.string() + " is damaged: /points has two result columns for one result name");
  // The column names live in the (unchecksummed) datatype message; the lists of parameter and
  // result columns in checksummed attributes: a name that differs is a flipped bit.
  if (state_->attributes.checksummed && h5::has_attribute(dataset, "result_columns") &&
      split_list(h5::read_text_attribute(dataset, "result_columns")) != columns)
    throw archive_not_found_error(state_->path.string() + " is damaged: the result columns of /points differ from "
                                                          "its result_columns attribute");
  for (auto& r : rows) {
    r.value_names = value_names;
    r.values.resize(value_names.size());
  }
  for (std::size_t c = 0; c < value_names.size(); ++c) {
    const auto v = read_number_column<double>(dataset, n, columns[c], H5T_NATIVE_DOUBLE);
    for (std::size_t i = 0; i < n; ++i) rows[i].values[c] = v[i];
  }
  if (find_member(members, text_crc_column) == nullptr) return rows; // written before text checksums
  const auto stored = read_number_column<std::uint32_t>(dataset, n, text_crc_column, H5T_NATIVE_UINT32);
  std::vector<point_row> intact;
  intact.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (row_text_crc(members, text_columns, i) == stored[i]) intact.push_back(std::move(rows[i]));
    else if (refused != nullptr)
      refused->push_back({rows[i].point_id, "its texts (message, extra_json, text parameters) fail their CRC-32C "
                                            "checksum in the .h5"});
  }
  return intact;
}

std::vector<run_row> reader::read_runs() const {
  const auto dataset = h5::dataset_open(state_->file, "runs");
  const std::size_t n = row_count(dataset);
  const auto members = members_of(dataset);
  if (state_->attributes.checksummed) check_packed_layout(dataset, members);
  std::vector<run_row> runs(n);
  const auto index = read_number_column<std::uint32_t>(dataset, n, "run_index", H5T_NATIVE_UINT32);
  const auto start = read_number_column<double>(dataset, n, "start_unix", H5T_NATIVE_DOUBLE);
  const auto end = read_number_column<double>(dataset, n, "end_unix", H5T_NATIVE_DOUBLE);
  const auto ranks = read_number_column<std::int32_t>(dataset, n, "ranks", H5T_NATIVE_INT32);
  const auto done = read_number_column<std::uint64_t>(dataset, n, "points_done", H5T_NATIVE_UINT64);
  auto texts = read_text_columns(dataset, n, members);
  if (find_member(members, text_crc_column) != nullptr) {
    const auto stored = read_number_column<std::uint32_t>(dataset, n, text_crc_column, H5T_NATIVE_UINT32);
    for (std::size_t i = 0; i < n; ++i) {
      if (row_text_crc(members, texts, i) != stored[i])
        throw archive_not_found_error(state_->path.string() + " is damaged: row " + std::to_string(i) +
                                      " of /runs fails its text checksum");
    }
  }
  const auto text = [&](const char* name) {
    const auto it = texts.find(name);
    if (it == texts.end())
      throw archive_not_found_error(state_->path.string() + " is damaged: /runs has no text column '" + name + "'");
    return std::move(it->second);
  };
  auto host = text("host"), command = text("command"), reason = text("exit_reason");
  for (std::size_t i = 0; i < n; ++i)
    runs[i] = {index[i], start[i], end[i], ranks[i], std::move(host[i]), std::move(command[i]), std::move(reason[i]),
               done[i]};
  return runs;
}

namespace {
// The journal's records replayed: rows with their result names spelled out (the model keeps
// standard columns without names), runs with the last one "running" while a writer holds the lock.
struct replayed {
  archive_model model;
  std::vector<point_row> rows;
  std::vector<run_row> runs;
};

replayed replay(const std::filesystem::path& journal, journal_contents&& contents) {
  replayed out;
  for (auto& e : contents.entries) out.model.apply(std::move(e));
  const auto& standard = standard_value_names();
  out.rows = out.model.rows();
  for (auto& r : out.rows)
    if (r.value_names.empty())
      r.value_names.assign(standard.begin(),
                           standard.begin() + static_cast<std::ptrdiff_t>(std::min(r.values.size(), standard.size())));
  out.runs = out.model.runs();
  if (!out.runs.empty()) {
    auto& last = out.runs.back();
    if (std::isnan(last.end_unix) && journal_lock_holder(journal) != 0) last.exit_reason = "running";
  }
  return out;
}

std::vector<point_row> in_table_order(std::vector<point_row>&& rows) {
  std::vector<const point_row*> order;
  order.reserve(rows.size());
  for (const auto& r : rows) order.push_back(&r);
  sort_rows(order);
  std::vector<point_row> sorted;
  sorted.reserve(rows.size());
  for (const auto* r : order) sorted.push_back(*r);
  return sorted;
}
} // namespace

reader::live_state reader::live() const {
  live_state live_rows{points(), runs()};
  const auto journal = journal_path(state_->path);
  if (!std::filesystem::exists(journal)) return live_rows;
  journal_contents contents;
  try {
    contents = read_journal(journal);
  } catch (const archive_error&) {
    return live_rows; // an unreadable journal: the snapshot is all there is to show
  }
  auto replay_of = replay(journal, std::move(contents));
  auto rows = std::move(replay_of.rows);
  for (auto& r : live_rows.points)
    if (!replay_of.model.row_of().contains(r.point_id)) rows.push_back(std::move(r));
  live_rows.points = in_table_order(std::move(rows));
  if (!replay_of.runs.empty()) live_rows.runs = std::move(replay_of.runs);
  return live_rows;
}

journal_view read_journal_view(const std::filesystem::path& archive_path) {
  const auto journal = journal_path(archive_path);
  if (!std::filesystem::exists(journal)) throw archive_not_found_error("no journal at " + journal.string());
  auto contents = read_journal(journal);
  journal_view view;
  view.fresh.snapshot_age_s = std::numeric_limits<double>::quiet_NaN();
  view.fresh.journal_present = true;
  view.fresh.journal_bytes = contents.file_bytes;
  view.fresh.damaged_stretches = contents.damage.size();
  view.fresh.damaged_bytes = contents.damaged_bytes();
  view.fresh.torn_bytes = contents.ignored_bytes;
  view.fresh.damage_text = describe_damage(contents);
  view.fresh.writer_pid = journal_lock_holder(journal);
  auto replay_of = replay(journal, std::move(contents));
  if (!replay_of.model.has_job())
    throw journal_damaged_error(journal.string() + " holds no intact job record");
  view.fresh.newer_points = replay_of.model.point_records();
  view.job = replay_of.model.job();
  view.points = in_table_order(std::move(replay_of.rows));
  view.runs = std::move(replay_of.runs);
  return view;
}

freshness reader::check_freshness() const {
  freshness f;
  f.snapshot_age_s = unix_now() - state_->attributes.snapshot_unix;
  const auto journal = journal_path(state_->path);
  std::error_code error;
  const auto size = std::filesystem::file_size(journal, error);
  if (!error) {
    f.journal_present = true;
    f.journal_bytes = size;
    const auto summary = summarize_journal(journal);
    const auto records = summary.point_records;
    const auto built_from = state_->attributes.journal_points;
    f.newer_points = records > built_from ? records - built_from : 0;
    f.missing_points = summary.readable && records < built_from ? built_from - records : 0;
    f.damaged_stretches = summary.damaged_stretches;
    f.damaged_bytes = summary.damaged_bytes;
    f.torn_bytes = summary.torn_bytes;
    f.damage_text = summary.damage_text;
    f.journal_problem = summary.error;
    f.writer_pid = journal_lock_holder(journal);
  }
  return f;
}

} // namespace slr::archive
