#include "hdf5_calls.hpp"

#include "crc32c.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace slr::archive::h5 {

void silence_error_stack() {
  static std::once_flag once;
  std::call_once(once, [] { check(H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr), "H5Eset_auto2", "error stack"); });
}

namespace {
herr_t collect(unsigned depth, const H5E_error2_t* error, void* data) {
  auto& text = *static_cast<std::string*>(data);
  if (depth > 0) text += " <- ";
  text += error->func_name != nullptr ? error->func_name : "?";
  text += ": ";
  text += error->desc != nullptr ? error->desc : "";
  return 0;
}
} // namespace

std::string error_stack_text() {
  // Part of the checked wrapper itself: its own failures cannot be reported further.
  std::string text;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, &text);
  H5Eclear2(H5E_DEFAULT);
  return text.empty() ? "no HDF5 error message" : text;
}

handle file_create(const std::string& path) {
  silence_error_stack();
  auto fcpl = property_list(H5P_FILE_CREATE, "file creation properties of " + path);
  auto fapl = property_list(H5P_FILE_ACCESS, "file access properties of " + path);
  // Compatible with HDF5 ≥ 1.8 readers (h5py builds with older HDF5 still read it).
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST), "H5Pset_libver_bounds", path);
  return {check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), "H5Fcreate", path), H5Fclose, path};
}

handle file_create_in_memory(const std::string& name) {
  silence_error_stack();
  auto fcpl = property_list(H5P_FILE_CREATE, "file creation properties of " + name);
  auto fapl = property_list(H5P_FILE_ACCESS, "file access properties of " + name);
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_EARLIEST, H5F_LIBVER_LATEST), "H5Pset_libver_bounds", name);
  check(H5Pset_fapl_core(fapl.get(), 1 << 20, 0), "H5Pset_fapl_core", name);
  // The core driver registers files by name: a per-process counter keeps names distinct.
  static std::atomic<unsigned long> counter{0};
  const std::string label = name + " (in memory #" + std::to_string(++counter) + ")";
  return {check(H5Fcreate(label.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), "H5Fcreate", name), H5Fclose, name};
}

void save_image(handle& file, const std::filesystem::path& path) {
  check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "H5Fflush", file.what());
  const ssize_t size = check(H5Fget_file_image(file.get(), nullptr, 0), "H5Fget_file_image", file.what());
  std::string image(static_cast<std::size_t>(size), '\0');
  check(H5Fget_file_image(file.get(), image.data(), image.size()), "H5Fget_file_image", file.what());
  file.close();

  auto temporary = path;
  temporary += ".tmp";
  const auto fail = [&](const std::string& action, const std::filesystem::path& subject, int error) {
    ::unlink(temporary.c_str());
    throw archive_error("cannot " + action + " " + subject.string() + ": " + std::strerror(error));
  };
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw archive_error("cannot create " + temporary.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < image.size()) {
    const ssize_t n = ::write(fd, image.data() + done, image.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      fail("write", temporary, error);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    fail("write", temporary, error);
  }
  if (::close(fd) != 0) fail("write", temporary, errno);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail("rename " + temporary.string() + " to", path, errno);
  auto directory = path.parent_path();
  if (directory.empty()) directory = ".";
  const int dfd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    const int rc = ::fsync(dfd);
    const int error = errno;
    ::close(dfd);
    if (rc != 0 && error != EINVAL)
      throw archive_error("cannot fsync directory " + directory.string() + ": " + std::strerror(error));
  }
}

handle file_open_read_only(const std::string& path) {
  silence_error_stack();
  // File locking follows HDF5_USE_FILE_LOCKING (the library reads it); read-only opens take a
  // shared lock at most, and the writer never opens this file (it renames a new one over it).
  return {check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "H5Fopen", path), H5Fclose, path};
}

handle dataset_open(const handle& file, const char* name) {
  const std::string what = file.what() + ":" + name;
  return {check(H5Dopen2(file.get(), name, H5P_DEFAULT), "H5Dopen2", what), H5Dclose, what};
}

handle property_list(hid_t cls, const std::string& what) {
  return {check(H5Pcreate(cls), "H5Pcreate", what), H5Pclose, what};
}

handle simple_space(hsize_t rows, bool extendable, const std::string& what) {
  const hsize_t dims[1] = {rows};
  const hsize_t maxdims[1] = {extendable ? H5S_UNLIMITED : rows};
  return {check(H5Screate_simple(1, dims, maxdims), "H5Screate_simple", what), H5Sclose, what};
}

handle scalar_space(const std::string& what) {
  return {check(H5Screate(H5S_SCALAR), "H5Screate", what), H5Sclose, what};
}

handle compound_type(std::size_t size, const std::string& what) {
  return {check(H5Tcreate(H5T_COMPOUND, size), "H5Tcreate", what), H5Tclose, what};
}

handle string_type(std::size_t fixed_size, const std::string& what) {
  handle type{check(H5Tcopy(H5T_C_S1), "H5Tcopy", what), H5Tclose, what};
  check(H5Tset_size(type.get(), fixed_size == 0 ? H5T_VARIABLE : fixed_size), "H5Tset_size", what);
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "H5Tset_cset", what);
  if (fixed_size != 0) check(H5Tset_strpad(type.get(), H5T_STR_NULLPAD), "H5Tset_strpad", what);
  return type;
}

handle copy_type(hid_t type, const std::string& what) {
  return {check(H5Tcopy(type), "H5Tcopy", what), H5Tclose, what};
}

namespace {
void write_attribute(const handle& object, const char* name, hid_t type, const void* data) {
  const std::string what = object.what() + " attribute " + name;
  auto space = scalar_space(what);
  if (check(H5Aexists(object.get(), name), "H5Aexists", what) > 0)
    check(H5Adelete(object.get(), name), "H5Adelete", what);
  handle attribute{check(H5Acreate2(object.get(), name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT), "H5Acreate2", what),
                   H5Aclose, what};
  check(H5Awrite(attribute.get(), type, data), "H5Awrite", what);
  attribute.close();
}

handle open_attribute(const handle& object, const char* name) {
  const std::string what = object.what() + " attribute " + name;
  return {check(H5Aopen(object.get(), name, H5P_DEFAULT), "H5Aopen", what), H5Aclose, what};
}
} // namespace

void write_text_attribute(const handle& object, const char* name, const std::string& value) {
  // Variable-length: the text lives in the global heap, so long job files fit.
  auto type = string_type(0, object.what() + " attribute " + name);
  const char* data = value.c_str();
  write_attribute(object, name, type.get(), &data);
}

void write_int_attribute(const handle& object, const char* name, long long value) {
  write_attribute(object, name, H5T_NATIVE_LLONG, &value);
}

void write_double_attribute(const handle& object, const char* name, double value) {
  write_attribute(object, name, H5T_NATIVE_DOUBLE, &value);
}

bool has_attribute(const handle& object, const char* name) {
  return check(H5Aexists(object.get(), name), "H5Aexists", object.what() + " attribute " + name) > 0;
}

std::string read_text_attribute(const handle& object, const char* name) {
  auto attribute = open_attribute(object, name);
  handle file_type{check(H5Aget_type(attribute.get()), "H5Aget_type", attribute.what()), H5Tclose, attribute.what()};
  if (check(H5Tget_class(file_type.get()), "H5Tget_class", attribute.what()) != H5T_STRING)
    throw hdf5_error(attribute.what() + " is not a string");
  if (check(H5Tis_variable_str(file_type.get()), "H5Tis_variable_str", attribute.what()) > 0) {
    auto type = string_type(0, attribute.what());
    char* data = nullptr;
    check(H5Aread(attribute.get(), type.get(), &data), "H5Aread", attribute.what());
    std::string value = data != nullptr ? data : "";
    auto space = scalar_space(attribute.what());
    check(H5Dvlen_reclaim(type.get(), space.get(), H5P_DEFAULT, &data), "H5Dvlen_reclaim", attribute.what());
    return value;
  }
  const std::size_t size = check_size(H5Tget_size(file_type.get()), "H5Tget_size", attribute.what());
  auto type = string_type(size, attribute.what());
  std::string value(size, '\0');
  check(H5Aread(attribute.get(), type.get(), value.data()), "H5Aread", attribute.what());
  value.resize(value.find('\0') == std::string::npos ? size : value.find('\0'));
  return value;
}

long long read_int_attribute(const handle& object, const char* name) {
  auto attribute = open_attribute(object, name);
  long long value = 0;
  check(H5Aread(attribute.get(), H5T_NATIVE_LLONG, &value), "H5Aread", attribute.what());
  return value;
}

double read_double_attribute(const handle& object, const char* name) {
  auto attribute = open_attribute(object, name);
  double value = 0;
  check(H5Aread(attribute.get(), H5T_NATIVE_DOUBLE, &value), "H5Aread", attribute.what());
  return value;
}

std::vector<std::string> attribute_names(const handle& object) {
  H5O_info_t info;
  check(H5Oget_info2(object.get(), &info, H5O_INFO_NUM_ATTRS), "H5Oget_info2", object.what());
  std::vector<std::string> names;
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    const ssize_t length = check(H5Aget_name_by_idx(object.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0,
                                                    H5P_DEFAULT),
                                 "H5Aget_name_by_idx", object.what());
    std::string name(static_cast<std::size_t>(length) + 1, '\0');
    check(H5Aget_name_by_idx(object.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(), H5P_DEFAULT),
          "H5Aget_name_by_idx", object.what());
    name.resize(static_cast<std::size_t>(length));
    names.push_back(std::move(name));
  }
  return names;
}

std::uint32_t attributes_crc32c(const handle& object, const char* except, std::uint32_t crc) {
  for (const auto& name : attribute_names(object)) {
    if (name == except) continue;
    const auto type_class = [&] {
      auto attribute = open_attribute(object, name.c_str());
      handle type{check(H5Aget_type(attribute.get()), "H5Aget_type", attribute.what()), H5Tclose, attribute.what()};
      return check(H5Tget_class(type.get()), "H5Tget_class", attribute.what());
    }();
    std::string value(1, '?'); // another class: only its name counts
    if (type_class == H5T_STRING) {
      value = read_text_attribute(object, name.c_str());
    } else if (type_class == H5T_INTEGER) {
      value = std::to_string(read_int_attribute(object, name.c_str()));
    } else if (type_class == H5T_FLOAT) {
      char hex[64];
      std::snprintf(hex, sizeof hex, "%a", read_double_attribute(object, name.c_str()));
      value = hex;
    }
    crc = crc32c(name, crc);
    crc = crc32c(std::string_view("\0", 1), crc);
    crc = crc32c(value, crc);
    crc = crc32c(std::string_view("\0", 1), crc);
  }
  return crc;
}

} // namespace slr::archive::h5
