#pragma once
// Private to src/archive: the one checked wrapper every HDF5 call goes through, and an RAII
// owner per HDF5 identifier. Nothing outside src/archive includes hdf5.h.
#include <hdf5.h>

#include <filesystem>
#include <string>
#include <vector>
#include <utility>

#include "slr/archive/archive_error.hpp"

namespace slr::archive::h5 {

/// Turns off HDF5's automatic error printing (once per process); our wrapper reports instead.
void silence_error_stack();

/// HDF5's current error stack as one line (innermost message last).
[[nodiscard]] std::string error_stack_text();

/// The checked wrapper: a negative return value (HDF5's failure convention for herr_t, hid_t,
/// htri_t, hssize_t) throws hdf5_error naming the call, the object and HDF5's messages.
template <class Result>
Result check(Result result, const char* call, const std::string& object) {
  if (result < 0) throw hdf5_error(std::string(call) + " failed for " + object + ": " + error_stack_text());
  return result;
}

/// The same wrapper for the calls whose failure value is 0 (H5Tget_size) or null (H5Tget_member_name).
inline std::size_t check_size(std::size_t result, const char* call, const std::string& object) {
  if (result == 0) throw hdf5_error(std::string(call) + " failed for " + object + ": " + error_stack_text());
  return result;
}
template <class T>
T* check(T* result, const char* call, const std::string& object) {
  if (result == nullptr) throw hdf5_error(std::string(call) + " failed for " + object + ": " + error_stack_text());
  return result;
}

/// Owner of one HDF5 identifier, closed with the matching H5?close in the destructor (errors
/// there cannot be reported and are ignored; use close() where failure matters, e.g. files).
class handle {
public:
  using closer = herr_t (*)(hid_t);
  handle() = default;
  handle(hid_t id, closer close_fn, std::string what) : id_(id), close_(close_fn), what_(std::move(what)) {}
  handle(handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), close_(other.close_), what_(std::move(other.what_)) {}
  handle& operator=(handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      close_ = other.close_;
      what_ = std::move(other.what_);
    }
    return *this;
  }
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;
  ~handle() { reset(); }

  [[nodiscard]] hid_t get() const noexcept { return id_; }
  [[nodiscard]] const std::string& what() const noexcept { return what_; }
  /// Closes now and throws hdf5_error if HDF5 reports a failure (e.g. while flushing a file).
  void close() {
    if (id_ >= 0) {
      const hid_t id = std::exchange(id_, H5I_INVALID_HID);
      check(close_(id), "H5?close", what_);
    }
  }

private:
  void reset() noexcept {
    if (id_ >= 0) close_(std::exchange(id_, H5I_INVALID_HID));
  }
  hid_t id_ = H5I_INVALID_HID;
  closer close_ = nullptr;
  std::string what_;
};

// Checked constructors of owned handles.
[[nodiscard]] handle file_create(const std::string& path);
/// A new HDF5 file held in memory (core driver, no backing store): nothing reaches the disk
/// until save_image(). `name` only labels it in messages.
[[nodiscard]] handle file_create_in_memory(const std::string& name);
/// Closes an in-memory `file` (checked) and writes its image to `path` atomically with plain
/// POSIX calls: "<path>.tmp", fsync, rename, fsync of the directory. A full disk or an I/O
/// error is then one errno in an archive_error naming the path, the temporary file is removed,
/// and no HDF5 file is left half-closed for the library's shutdown to trip over.
void save_image(handle& file, const std::filesystem::path& path);
[[nodiscard]] handle file_open_read_only(const std::string& path);
[[nodiscard]] handle dataset_open(const handle& file, const char* name);
[[nodiscard]] handle property_list(hid_t cls, const std::string& what);
[[nodiscard]] handle simple_space(hsize_t rows, bool extendable, const std::string& what);
[[nodiscard]] handle scalar_space(const std::string& what);
[[nodiscard]] handle compound_type(std::size_t size, const std::string& what);
[[nodiscard]] handle string_type(std::size_t fixed_size_or_zero_for_vlen, const std::string& what);
[[nodiscard]] handle copy_type(hid_t type, const std::string& what);

/// Root attributes.
void write_text_attribute(const handle& object, const char* name, const std::string& value);
void write_int_attribute(const handle& object, const char* name, long long value);
void write_double_attribute(const handle& object, const char* name, double value);
[[nodiscard]] bool has_attribute(const handle& object, const char* name);
[[nodiscard]] std::string read_text_attribute(const handle& object, const char* name);
[[nodiscard]] long long read_int_attribute(const handle& object, const char* name);
[[nodiscard]] double read_double_attribute(const handle& object, const char* name);
/// Names of all attributes of an object.
[[nodiscard]] std::vector<std::string> attribute_names(const handle& object);
/// CRC-32C (continuing `crc`) of the object's attributes, in name order, leaving out `except`:
/// each as its name, a NUL, its value (a text as stored; an integer in decimal; a float by its
/// 64 bits in hex), a NUL. Attributes live in object headers, which the snapshot's file format
/// does not checksum.
[[nodiscard]] std::uint32_t attributes_crc32c(const handle& object, const char* except, std::uint32_t crc);

} // namespace slr::archive::h5
