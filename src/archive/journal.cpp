#include "slr/archive/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "journal_internal.hpp"
#include "slr/archive/archive_error.hpp"
#include "slr/model/random.hpp"

namespace slr::archive {
namespace {

constexpr char frame_magic[4] = {'S', 'L', 'R', 'J'};
constexpr std::size_t frame_header_size = 24; // magic, type, length, reserved, checksum
constexpr std::uint32_t max_payload = 1u << 30;
constexpr std::string_view header_text = "slr-sweep journal v1";

enum record_type : std::uint32_t { header = 1, job = 2, run_begin = 3, run_end = 4, point = 5, schema = 6 };

std::string errno_text() { return std::strerror(errno); }

// ---- little-endian payload encoding -------------------------------------------------------
class encoder {
public:
  void u32(std::uint32_t v) { raw(&v, 4); }
  void u64(std::uint64_t v) { raw(&v, 8); }
  void i64(std::int64_t v) { raw(&v, 8); }
  void f64(double v) { raw(&v, 8); }
  void str(std::string_view s) {
    u32(static_cast<std::uint32_t>(s.size()));
    bytes_.append(s);
  }
  std::string& bytes() { return bytes_; }

private:
  void raw(const void* p, std::size_t n) {
    static_assert(std::endian::native == std::endian::little, "the journal format is little endian");
    bytes_.append(static_cast<const char*>(p), n);
  }
  std::string bytes_;
};

class decoder {
public:
  explicit decoder(std::string_view bytes) : bytes_(bytes) {}
  std::uint32_t u32() { return raw<std::uint32_t>(); }
  std::uint64_t u64() { return raw<std::uint64_t>(); }
  std::int64_t i64() { return raw<std::int64_t>(); }
  double f64() { return raw<double>(); }
  std::string str() {
    const auto n = u32();
    need(n);
    std::string s(bytes_.substr(position_, n));
    position_ += n;
    return s;
  }
  bool done() const { return position_ == bytes_.size(); }

private:
  void need(std::size_t n) const {
    if (bytes_.size() - position_ < n) throw journal_error("malformed journal record (payload too short)");
  }
  template <class T>
  T raw() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + position_, sizeof(T));
    position_ += sizeof(T);
    return v;
  }
  std::string_view bytes_;
  std::size_t position_ = 0;
};

std::uint64_t checksum(std::uint32_t type, std::uint32_t length, std::string_view payload) {
  std::string text;
  text.reserve(8 + payload.size());
  text.append(reinterpret_cast<const char*>(&type), 4);
  text.append(reinterpret_cast<const char*>(&length), 4);
  text.append(payload);
  return model::stable_hash(text);
}

std::string frame(std::uint32_t type, std::string_view payload) {
  const auto length = static_cast<std::uint32_t>(payload.size());
  const std::uint32_t reserved = 0;
  const std::uint64_t sum = checksum(type, length, payload);
  std::string out;
  out.reserve(frame_header_size + payload.size());
  out.append(frame_magic, 4);
  out.append(reinterpret_cast<const char*>(&type), 4);
  out.append(reinterpret_cast<const char*>(&length), 4);
  out.append(reinterpret_cast<const char*>(&reserved), 4);
  out.append(reinterpret_cast<const char*>(&sum), 8);
  out.append(payload);
  return out;
}

std::uint64_t schema_hash(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += n + '\n';
  return model::stable_hash(text);
}

std::string encode_schema(const std::vector<std::string>& names) {
  encoder e;
  e.u64(schema_hash(names));
  e.u32(static_cast<std::uint32_t>(names.size()));
  for (const auto& n : names) e.str(n);
  return frame(schema, e.bytes());
}

std::string encode_header() {
  encoder e;
  e.str(header_text);
  return frame(header, e.bytes());
}

struct entry_encoder {
  std::string operator()(const journal_job& j) const {
    encoder e;
    e.str(j.text);
    e.str(j.fingerprint);
    e.str(j.source_name);
    e.str(j.name);
    return frame(job, e.bytes());
  }
  std::string operator()(const journal_run_begin& b) const {
    encoder e;
    e.u32(b.run.run_index);
    e.f64(b.run.start_unix);
    e.u32(static_cast<std::uint32_t>(b.run.ranks));
    e.str(b.run.host);
    e.str(b.run.command);
    return frame(run_begin, e.bytes());
  }
  std::string operator()(const journal_run_end& r) const {
    encoder e;
    e.u32(r.run_index);
    e.f64(r.end_unix);
    e.str(r.exit_reason);
    return frame(run_end, e.bytes());
  }
  std::string operator()(const point_row& p) const {
    if (p.values.size() != p.value_names.size())
      throw journal_error("point record: " + std::to_string(p.values.size()) + " values for " +
                          std::to_string(p.value_names.size()) + " column names");
    encoder e;
    e.u64(p.point_id);
    e.u32(p.repeat);
    e.u64(p.seed);
    e.u32(p.run_index);
    e.f64(p.completed_unix);
    e.str(p.method);
    e.str(p.task);
    e.f64(p.nu);
    e.i64(p.L);
    e.str(p.L_pmf);
    e.f64(p.delta);
    e.str(p.activation);
    e.f64(p.erf_offset);
    e.f64(p.alpha);
    e.f64(p.r_k);
    e.f64(p.r_v);
    e.str(p.options);
    e.str(p.status);
    e.str(p.message);
    e.str(p.extra_json);
    e.u64(schema_hash(p.value_names));
    e.u32(static_cast<std::uint32_t>(p.values.size()));
    for (double v : p.values) e.f64(v);
    return frame(point, e.bytes());
  }
};

// Replays frames from a file descriptor, from `offset`, until the end or the first bad frame.
class journal_scanner {
public:
  journal_scanner(int fd, std::string what) : fd_(fd), what_(std::move(what)) {}

  // Calls on_entry for every decoded entry; returns the end of the intact prefix.
  template <class OnEntry>
  std::uint64_t scan(std::uint64_t offset, bool expect_header, OnEntry&& on_entry) {
    struct stat st;
    if (fstat(fd_, &st) != 0) throw journal_error("cannot stat " + what_ + ": " + errno_text());
    file_size_ = static_cast<std::uint64_t>(st.st_size);
    std::uint64_t position = offset;
    bool first = expect_header;
    std::string header_bytes(frame_header_size, '\0');
    std::string payload;
    while (position + frame_header_size <= file_size_) {
      read_at(position, header_bytes.data(), frame_header_size);
      if (std::memcmp(header_bytes.data(), frame_magic, 4) != 0) break;
      std::uint32_t type, length;
      std::uint64_t sum;
      std::memcpy(&type, header_bytes.data() + 4, 4);
      std::memcpy(&length, header_bytes.data() + 8, 4);
      std::memcpy(&sum, header_bytes.data() + 16, 8);
      if (length > max_payload || position + frame_header_size + length > file_size_) break;
      payload.resize(length);
      read_at(position + frame_header_size, payload.data(), length);
      if (checksum(type, length, payload) != sum) break;
      if (first) {
        if (type != header || decoder(payload).str() != header_text)
          throw journal_error(what_ + " is not an slr-sweep journal (or a newer format)");
        first = false;
      } else {
        decode(type, payload, on_entry);
      }
      position += frame_header_size + length;
    }
    if (first) throw journal_error(what_ + " has no intact header record (not an slr-sweep journal, or empty)");
    return position;
  }

  std::uint64_t file_size() const { return file_size_; }
  std::unordered_map<std::uint64_t, std::vector<std::string>>& schemas() { return schemas_; }

private:
  void read_at(std::uint64_t position, char* out, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      const ssize_t got = pread(fd_, out + done, n - done, static_cast<off_t>(position + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw journal_error("cannot read " + what_ + ": " + errno_text());
      if (got == 0) throw journal_error("unexpected end of " + what_);
      done += static_cast<std::size_t>(got);
    }
  }

  template <class OnEntry>
  void decode(std::uint32_t type, std::string_view payload, OnEntry& on_entry) {
    decoder d(payload);
    switch (type) {
    case job: {
      journal_job j;
      j.text = d.str();
      j.fingerprint = d.str();
      j.source_name = d.str();
      j.name = d.str();
      on_entry(journal_entry{std::move(j)});
      return;
    }
    case run_begin: {
      journal_run_begin b;
      b.run.run_index = d.u32();
      b.run.start_unix = d.f64();
      b.run.ranks = static_cast<std::int32_t>(d.u32());
      b.run.host = d.str();
      b.run.command = d.str();
      on_entry(journal_entry{std::move(b)});
      return;
    }
    case run_end: {
      journal_run_end r;
      r.run_index = d.u32();
      r.end_unix = d.f64();
      r.exit_reason = d.str();
      on_entry(journal_entry{std::move(r)});
      return;
    }
    case schema: {
      const auto hash = d.u64();
      const auto n = d.u32();
      std::vector<std::string> names;
      for (std::uint32_t i = 0; i < n; ++i) names.push_back(d.str());
      schemas_[hash] = std::move(names);
      return;
    }
    case point: {
      point_row p;
      p.point_id = d.u64();
      p.repeat = d.u32();
      p.seed = d.u64();
      p.run_index = d.u32();
      p.completed_unix = d.f64();
      p.method = d.str();
      p.task = d.str();
      p.nu = d.f64();
      p.L = d.i64();
      p.L_pmf = d.str();
      p.delta = d.f64();
      p.activation = d.str();
      p.erf_offset = d.f64();
      p.alpha = d.f64();
      p.r_k = d.f64();
      p.r_v = d.f64();
      p.options = d.str();
      p.status = d.str();
      p.message = d.str();
      p.extra_json = d.str();
      const auto hash = d.u64();
      const auto n = d.u32();
      const auto it = schemas_.find(hash);
      if (it == schemas_.end() || it->second.size() != n)
        throw journal_error(what_ + ": a point record refers to an unknown column schema");
      p.value_names = it->second;
      p.values.resize(n);
      for (auto& v : p.values) v = d.f64();
      on_entry(journal_entry{std::move(p)});
      return;
    }
    default:
      throw journal_error(what_ + ": unsupported record type " + std::to_string(type) +
                          " (written by a newer slr-sweep?)");
    }
  }

  int fd_;
  std::string what_;
  std::uint64_t file_size_ = 0;
  std::unordered_map<std::uint64_t, std::vector<std::string>> schemas_;
};

bool locking_disabled() {
  const char* value = std::getenv("HDF5_USE_FILE_LOCKING");
  if (value == nullptr) return false;
  std::string v(value);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return v == "FALSE" || v == "0";
}

// An exclusive open-file-description lock: not released when this process closes another
// descriptor of the same file (unlike classic POSIX record locks).
void take_lock(int fd, const std::filesystem::path& path) {
  if (locking_disabled()) return;
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (fcntl(fd, F_OFD_SETLK, &lock) == 0) return;
  if (errno == EAGAIN || errno == EACCES)
    throw archive_locked_error("archive journal " + path.string() +
                               " is locked by another process (a sweep is running on this archive)");
  throw journal_error("cannot lock " + path.string() + ": " + errno_text() +
                      " (on a file system without fcntl locks set HDF5_USE_FILE_LOCKING=FALSE)");
}

void fsync_directory(const std::filesystem::path& file) {
  auto dir = file.parent_path();
  if (dir.empty()) dir = ".";
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw journal_error("cannot open directory " + dir.string() + ": " + errno_text());
  const int rc = fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0 && saved != EINVAL) {
    errno = saved;
    throw journal_error("cannot fsync directory " + dir.string() + ": " + errno_text());
  }
}

void write_all(int fd, std::string_view bytes, const std::string& what) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw journal_error("cannot write " + what + ": " + errno_text());
    done += static_cast<std::size_t>(n);
  }
}

} // namespace

std::filesystem::path journal_path(const std::filesystem::path& archive_path) {
  auto p = archive_path;
  p += ".journal";
  return p;
}

std::string encode_record(const journal_entry& entry) { return std::visit(entry_encoder{}, entry); }

journal_contents read_journal(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw journal_error("cannot open journal " + path.string() + ": " + errno_text());
  journal_contents contents;
  try {
    journal_scanner scanner(fd, "journal " + path.string());
    contents.valid_bytes =
        scanner.scan(0, true, [&](journal_entry&& e) { contents.entries.push_back(std::move(e)); });
    contents.ignored_bytes = scanner.file_size() - contents.valid_bytes;
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return contents;
}

journal_writer::journal_writer(int fd, std::filesystem::path path, std::uint64_t size) noexcept
    : fd_(fd), path_(std::move(path)), size_(size) {}

journal_writer::journal_writer(journal_writer&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), size_(other.size_),
      schemas_(std::move(other.schemas_)) {}

journal_writer& journal_writer::operator=(journal_writer&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_ = other.size_;
    schemas_ = std::move(other.schemas_);
  }
  return *this;
}

journal_writer::~journal_writer() {
  if (fd_ >= 0) ::close(fd_); // releases the lock
}

journal_writer journal_writer::create(const std::filesystem::path& path, const journal_job& job) {
  if (std::filesystem::exists(path)) throw archive_exists_error("journal " + path.string() + " already exists");
  auto temporary = path;
  temporary += ".tmp." + std::to_string(::getpid());
  const std::string bytes = encode_header() + encode_record(job);
  {
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw journal_error("cannot create " + temporary.string() + ": " + errno_text());
    try {
      write_all(fd, bytes, temporary.string());
      if (fsync(fd) != 0) throw journal_error("cannot fsync " + temporary.string() + ": " + errno_text());
    } catch (...) {
      ::close(fd);
      ::unlink(temporary.c_str());
      throw;
    }
    ::close(fd);
  }
  // link(2) instead of rename(2): fails rather than replacing a journal created meanwhile.
  if (::link(temporary.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(temporary.c_str());
    if (saved == EEXIST) throw archive_exists_error("journal " + path.string() + " already exists");
    errno = saved;
    throw journal_error("cannot create " + path.string() + ": " + errno_text());
  }
  ::unlink(temporary.c_str());
  fsync_directory(path);
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw journal_error("cannot open " + path.string() + ": " + errno_text());
  journal_writer writer(fd, path, bytes.size());
  take_lock(fd, path);
  return writer;
}

journal_writer journal_writer::open(const std::filesystem::path& path, journal_contents& contents) {
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) throw archive_not_found_error("no journal at " + path.string());
    throw journal_error("cannot open " + path.string() + ": " + errno_text());
  }
  journal_writer writer(fd, path, 0);
  take_lock(fd, path);
  contents = {};
  journal_scanner scanner(fd, "journal " + path.string());
  contents.valid_bytes = scanner.scan(0, true, [&](journal_entry&& e) { contents.entries.push_back(std::move(e)); });
  contents.ignored_bytes = scanner.file_size() - contents.valid_bytes;
  for (const auto& [hash, names] : scanner.schemas()) writer.schemas_.insert(hash);
  if (contents.ignored_bytes > 0) {
    // A torn tail: cut it so new records follow the intact prefix.
    if (ftruncate(fd, static_cast<off_t>(contents.valid_bytes)) != 0 || fsync(fd) != 0)
      throw journal_error("cannot truncate the torn tail of " + path.string() + ": " + errno_text());
  }
  writer.size_ = contents.valid_bytes;
  return writer;
}

void journal_writer::append(const journal_entry& entry) {
  std::string bytes;
  if (const auto* p = std::get_if<point_row>(&entry)) {
    const auto hash = schema_hash(p->value_names);
    if (!schemas_.contains(hash)) bytes = encode_schema(p->value_names);
  }
  bytes += encode_record(entry);
  try {
    write_all(fd_, bytes, path_.string());
  } catch (...) {
    // Do not leave a partial record in front of later ones (e.g. after ENOSPC).
    if (ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
      // The scanner will treat the partial record as a torn tail; nothing more to do here.
    }
    throw;
  }
  size_ += bytes.size();
  if (const auto* p = std::get_if<point_row>(&entry)) schemas_.insert(schema_hash(p->value_names));
}

void journal_writer::sync() {
  if (fdatasync(fd_) != 0) throw journal_error("cannot fsync " + path_.string() + ": " + errno_text());
}

long journal_lock_holder(const std::filesystem::path& path) {
  if (locking_disabled()) return 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  long holder = 0;
  if (fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK) holder = lock.l_pid > 0 ? lock.l_pid : -1;
  ::close(fd);
  return holder;
}

std::uint64_t count_point_records(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::uint64_t count = 0;
  try {
    journal_scanner scanner(fd, "journal " + path.string());
    scanner.scan(0, true, [&](journal_entry&& e) { count += std::holds_alternative<point_row>(e) ? 1 : 0; });
  } catch (const archive_error&) {
    count = 0;
  }
  ::close(fd);
  return count;
}

} // namespace slr::archive
