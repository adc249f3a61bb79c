#include "slr/archive/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include <sys/mman.h>

#include "crc32c.hpp"
#include "journal_internal.hpp"
#include "slr/archive/archive_error.hpp"
#include "slr/model/random.hpp"

namespace slr::archive {
namespace {

constexpr char frame_magic_v1[4] = {'S', 'L', 'R', 'J'};
constexpr char frame_magic_v2[4] = {'S', 'L', 'R', '2'};
constexpr std::size_t frame_header_v1 = 24; // magic, type, length, reserved, FNV-1a-64
constexpr std::size_t frame_header_v2 = 20; // magic, type, length, payload CRC, header CRC
constexpr std::uint32_t max_payload = 1u << 30;
constexpr std::string_view header_text_v1 = "slr-sweep journal v1";
constexpr std::string_view header_text_v2 = "slr-sweep journal v2";

// point (5) is the first schema's fixed-column point record, read only; point_kv (7) the
// self-describing one written now.
enum record_type : std::uint32_t { header = 1, job = 2, run_begin = 3, run_end = 4, point = 5, schema = 6, point_kv = 7 };

const char* record_type_name(std::uint32_t type) {
  switch (type) {
  case header: return "header";
  case job: return "job";
  case run_begin: return "run-begin";
  case run_end: return "run-end";
  case point:
  case point_kv: return "point";
  case schema: return "column-schema";
  default: return "unknown";
  }
}

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

std::uint64_t checksum_v1(std::uint32_t type, std::uint32_t length, std::string_view payload) {
  std::string text;
  text.reserve(8 + payload.size());
  text.append(reinterpret_cast<const char*>(&type), 4);
  text.append(reinterpret_cast<const char*>(&length), 4);
  text.append(payload);
  return model::stable_hash(text);
}

std::string frame(std::uint32_t type, std::string_view payload) {
  const auto length = static_cast<std::uint32_t>(payload.size());
  const std::uint32_t payload_crc = crc32c(payload);
  std::string out;
  out.reserve(frame_header_v2 + payload.size());
  out.append(frame_magic_v2, 4);
  out.append(reinterpret_cast<const char*>(&type), 4);
  out.append(reinterpret_cast<const char*>(&length), 4);
  out.append(reinterpret_cast<const char*>(&payload_crc), 4);
  const std::uint32_t header_crc = crc32c(out);
  out.append(reinterpret_cast<const char*>(&header_crc), 4);
  out.append(payload);
  return out;
}

std::uint64_t schema_hash(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += n + '\n';
  return model::stable_hash(text);
}


std::string encode_header() {
  encoder e;
  e.str(header_text_v2);
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
  // Self-describing: every parameter as (name, kind, value), every result that was produced as
  // (name, value); a result left out is NaN (not produced by the method).
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
    e.u32(static_cast<std::uint32_t>(p.parameters.size()));
    for (const auto& cell : p.parameters) {
      e.str(cell.name);
      e.u32(static_cast<std::uint32_t>(cell.type));
      switch (cell.type) {
      case grid::parameter_value::kind::integer: e.i64(cell.integer); break;
      case grid::parameter_value::kind::real: e.f64(cell.real); break;
      case grid::parameter_value::kind::text: e.str(cell.text); break;
      }
    }
    e.str(p.status);
    e.str(p.message);
    e.str(p.extra_json);
    std::uint32_t produced = 0;
    for (double v : p.values) produced += std::isnan(v) ? 0 : 1;
    e.u32(produced);
    for (std::size_t i = 0; i < p.values.size(); ++i)
      if (!std::isnan(p.values[i])) {
        e.str(p.value_names[i]);
        e.f64(p.values[i]);
      }
    return frame(point_kv, e.bytes());
  }
};

// The whole journal as bytes, read with pread (not mmap: a writer may truncate a torn tail
// meanwhile, which would turn a mapped read into SIGBUS).
std::string read_whole(int fd, const std::string& what) {
  struct stat st;
  if (fstat(fd, &st) != 0) throw journal_error("cannot stat " + what + ": " + errno_text());
  if (S_ISDIR(st.st_mode)) throw journal_error(what + " is a directory, not a journal");
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t got = pread(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw journal_error("cannot read " + what + ": " + errno_text());
    if (got == 0) break; // truncated meanwhile: what is there is what counts
    done += static_cast<std::size_t>(got);
  }
  bytes.resize(done);
  return bytes;
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// What the bytes at one position are.
struct frame_view {
  enum class state { intact, incomplete, bad } status = state::bad;
  bool header_ok = false;  // the type and length can be trusted (v2 header CRC, or a plausible v1 header)
  std::uint32_t type = 0;
  std::size_t size = 0;    // header + payload (when header_ok)
  std::string_view payload;
};

frame_view look_at(std::string_view file, std::size_t position) {
  frame_view f;
  const std::size_t rest = file.size() - position;
  const char* p = file.data() + position;
  const auto starts_with = [&](const char* magic) { return std::memcmp(p, magic, std::min<std::size_t>(4, rest)) == 0; };
  using state = frame_view::state;
  if (rest < 4) {
    f.status = starts_with(frame_magic_v1) || starts_with(frame_magic_v2) ? state::incomplete : state::bad;
    return f;
  }
  if (std::memcmp(p, frame_magic_v2, 4) == 0) {
    if (rest < frame_header_v2) {
      f.status = state::incomplete;
      return f;
    }
    if (crc32c(std::string_view(p, 16)) != load<std::uint32_t>(p + 16)) return f; // bad header
    f.type = load<std::uint32_t>(p + 4);
    const auto length = load<std::uint32_t>(p + 8);
    if (length > max_payload) return f;
    f.header_ok = true;
    f.size = frame_header_v2 + length;
    if (rest < f.size) {
      f.status = state::incomplete;
      return f;
    }
    f.payload = std::string_view(p + frame_header_v2, length);
    f.status = crc32c(f.payload) == load<std::uint32_t>(p + 12) ? state::intact : state::bad;
    return f;
  }
  if (std::memcmp(p, frame_magic_v1, 4) == 0) {
    if (rest < frame_header_v1) {
      f.status = state::incomplete;
      return f;
    }
    f.type = load<std::uint32_t>(p + 4);
    const auto length = load<std::uint32_t>(p + 8);
    if (length > max_payload) return f;
    f.header_ok = true; // unprotected in v1: plausible only
    f.size = frame_header_v1 + length;
    if (rest < f.size) {
      f.status = state::incomplete;
      return f;
    }
    f.payload = std::string_view(p + frame_header_v1, length);
    f.status = checksum_v1(f.type, length, f.payload) == load<std::uint64_t>(p + 16) ? state::intact : state::bad;
    return f;
  }
  return f;
}

// The next position ≥ from where an intact frame starts, or npos.
std::size_t next_intact(std::string_view file, std::size_t from) {
  while (from < file.size()) {
    const auto hit = file.find("SLR", from);
    if (hit == std::string_view::npos || hit + 4 > file.size()) return std::string_view::npos;
    if ((file[hit + 3] == 'J' || file[hit + 3] == '2') && look_at(file, hit).status == frame_view::state::intact)
      return hit;
    from = hit + 1;
  }
  return std::string_view::npos;
}

std::vector<std::string> standard_schema() {
  std::vector<std::string> names;
  for (const auto& c : grid::result_columns) names.push_back(archive_column_name(c));
  return names;
}

// Replays every intact record of a journal image; see the file comment of journal.hpp for how
// damage, torn tails and intact records are told apart.
class journal_scanner {
public:
  explicit journal_scanner(std::string what) : what_(std::move(what)) {
    // Point records with the standard result columns stay decodable even if the schema record
    // they refer to is the damaged one.
    auto names = standard_schema();
    fallback_schemas_[schema_hash(names)] = std::move(names);
  }

  template <class OnEntry>
  void scan(std::string_view file, journal_contents& contents, OnEntry&& on_entry) {
    contents.file_bytes = file.size();
    std::size_t position = 0;
    bool seen_header = false;
    while (position < file.size()) {
      const auto f = look_at(file, position);
      if (f.status == frame_view::state::intact) {
        if (!seen_header) {
          check_header(f, position);
          seen_header = true;
        }
        if (f.type != header && !decode(f.type, f.payload, on_entry)) {
          journal_damage d;
          d.begin = position;
          d.end = position + f.size;
          d.record_type = "point (its column-schema record is damaged)";
          d.records = 1;
          d.point_ids.push_back(load<std::uint64_t>(f.payload.data()));
          contents.damage.push_back(std::move(d));
        }
        position += f.size;
        contents.valid_bytes = position;
        continue;
      }
      // Not an intact record here. A v2 header that survived tells where the next record starts.
      std::size_t next = std::string_view::npos;
      if (f.header_ok && f.status == frame_view::state::bad && position + f.size <= file.size() &&
          (position + f.size == file.size() ||
           look_at(file, position + f.size).status == frame_view::state::intact))
        next = position + f.size;
      else
        next = next_intact(file, position + 1);
      if (next == std::string_view::npos || next == file.size()) {
        // Nothing intact follows. A prefix of one record is a torn write (a crash or a full disk
        // mid-append): never acknowledged, cut without a word. Anything else at the end (a
        // complete frame whose checksum fails, zeros, garbage) may have been acknowledged: damage.
        if (f.status == frame_view::state::incomplete) {
          contents.ignored_bytes = file.size() - position;
        } else {
          contents.damage.push_back(describe(file, position, file.size(), f));
          contents.damage.back().at_end = true;
        }
        break;
      }
      contents.damage.push_back(describe(file, position, next, f));
      position = next;
    }
    if (!seen_header)
      throw archive_not_found_error(what_ + " holds no intact slr-sweep journal record (not a journal, or empty)");
  }

  std::unordered_map<std::uint64_t, std::vector<std::string>>& schemas() { return schemas_; }

private:
  void check_header(const frame_view& f, std::size_t position) {
    if (f.type != header) {
      // The first intact record is not the header: fine if the header itself was damaged
      // (reported as damage), foreign otherwise.
      if (position == 0) throw archive_not_found_error(what_ + " is not an slr-sweep journal (or a newer format)");
      return;
    }
    std::string text;
    try {
      text = decoder(f.payload).str();
    } catch (const journal_error&) {
    }
    if (text != header_text_v1 && text != header_text_v2)
      throw archive_not_found_error(what_ + " is not an slr-sweep journal (or a newer format: \"" + text + "\")");
  }

  // What a damaged stretch held, as far as its bytes tell: every v2 frame header inside it whose
  // header checksum holds gives a record's type (and a point's id, the first 8 payload bytes).
  static journal_damage describe(std::string_view file, std::size_t begin, std::size_t end, const frame_view& f) {
    journal_damage d;
    d.begin = begin;
    d.end = end;
    d.record_type = f.header_ok ? record_type_name(f.type) : "unknown";
    const auto stretch = file.substr(0, end);
    std::size_t covered = 0, covered_to = begin;
    for (std::size_t at = stretch.find("SLR", begin); at != std::string_view::npos; at = stretch.find("SLR", at + 1)) {
      if (at + frame_header_v2 > end) break;
      const char* p = file.data() + at;
      std::uint32_t type = 0;
      if (std::memcmp(p, frame_magic_v2, 4) == 0) {
        if (crc32c(std::string_view(p, 16)) != load<std::uint32_t>(p + 16)) continue;
        type = load<std::uint32_t>(p + 4);
      } else if (std::memcmp(p, frame_magic_v1, 4) == 0 && at == begin && f.header_ok) {
        type = f.type; // v1 headers carry no checksum: trusted only where the scanner did
      } else {
        continue;
      }
      if (d.records == 0) d.record_type = record_type_name(type);
      ++d.records;
      const std::size_t header_size = p[3] == '2' ? frame_header_v2 : frame_header_v1;
      const std::size_t frame_end = std::min<std::size_t>(end, at + header_size + load<std::uint32_t>(p + 8));
      covered += frame_end > std::max(at, covered_to) ? frame_end - std::max(at, covered_to) : 0;
      covered_to = std::max(covered_to, frame_end);
      if ((type == point || type == point_kv) && at + header_size + 8 <= end)
        d.point_ids.push_back(load<std::uint64_t>(p + header_size));
    }
    d.unaccounted_bytes = (end - begin) - std::min(covered, end - begin);
    return d;
  }

  // The fields both point record formats begin with (the id first: damage reports read it).
  static point_row point_head(decoder& d) {
    point_row p;
    p.point_id = d.u64();
    p.repeat = d.u32();
    p.seed = d.u64();
    p.run_index = d.u32();
    p.completed_unix = d.f64();
    p.method = d.str();
    return p;
  }

  // Decodes one intact record; false if it is a point record whose column schema is unknown.
  template <class OnEntry>
  bool decode(std::uint32_t type, std::string_view payload, OnEntry& on_entry) {
    decoder d(payload);
    switch (type) {
    case job: {
      journal_job j;
      j.text = d.str();
      j.fingerprint = d.str();
      j.source_name = d.str();
      j.name = d.str();
      on_entry(journal_entry{std::move(j)});
      return true;
    }
    case run_begin: {
      journal_run_begin b;
      b.run.run_index = d.u32();
      b.run.start_unix = d.f64();
      b.run.ranks = static_cast<std::int32_t>(d.u32());
      b.run.host = d.str();
      b.run.command = d.str();
      on_entry(journal_entry{std::move(b)});
      return true;
    }
    case run_end: {
      journal_run_end r;
      r.run_index = d.u32();
      r.end_unix = d.f64();
      r.exit_reason = d.str();
      on_entry(journal_entry{std::move(r)});
      return true;
    }
    case schema: {
      const auto hash = d.u64();
      const auto n = d.u32();
      std::vector<std::string> names;
      for (std::uint32_t i = 0; i < n; ++i) names.push_back(d.str());
      schemas_[hash] = std::move(names);
      return true;
    }
    case point: { // the first schema's fixed columns, typed on reading
      ++first_schema_points_;
      point_row p = point_head(d);
      const auto task = d.str();
      const auto nu = d.f64();
      const auto L = d.i64();
      const auto L_pmf = d.str();
      const auto delta = d.f64();
      const auto activation = d.str();
      const auto erf_offset = d.f64();
      const auto alpha = d.f64();
      const auto r_k = d.f64();
      const auto r_v = d.f64();
      const auto options = d.str();
      p.parameters = schema1_parameters(task, nu, L, L_pmf, delta, activation, erf_offset, alpha, r_k, r_v, options);
      p.status = d.str();
      p.message = d.str();
      p.extra_json = d.str();
      const auto hash = d.u64();
      const auto n = d.u32();
      const std::vector<std::string>* names = nullptr;
      if (const auto it = schemas_.find(hash); it != schemas_.end()) names = &it->second;
      else if (const auto jt = fallback_schemas_.find(hash); jt != fallback_schemas_.end()) names = &jt->second;
      if (names == nullptr || names->size() != n) return false;
      p.value_names = *names;
      p.values.resize(n);
      for (auto& v : p.values) v = d.f64();
      on_entry(journal_entry{std::move(p)});
      return true;
    }
    case point_kv: {
      point_row p = point_head(d);
      const auto n_parameters = d.u32();
      for (std::uint32_t i = 0; i < n_parameters; ++i) {
        auto name = d.str();
        switch (d.u32()) {
        case 0: p.parameters.push_back(grid::parameter_value::of_integer(std::move(name), d.i64())); break;
        case 1: p.parameters.push_back(grid::parameter_value::of_real(std::move(name), d.f64())); break;
        case 2: p.parameters.push_back(grid::parameter_value::of_text(std::move(name), d.str())); break;
        default: throw journal_error(what_ + ": point record with an unknown parameter kind");
        }
      }
      p.status = d.str();
      p.message = d.str();
      p.extra_json = d.str();
      // Every result column of this build, NaN unless the record holds it; then the others.
      p.value_names = standard_schema();
      p.values.assign(p.value_names.size(), std::numeric_limits<double>::quiet_NaN());
      const auto n_values = d.u32();
      for (std::uint32_t i = 0; i < n_values; ++i) {
        auto name = d.str();
        const double value = d.f64();
        const auto it = std::find(p.value_names.begin(), p.value_names.end(), name);
        if (it != p.value_names.end()) {
          p.values[static_cast<std::size_t>(it - p.value_names.begin())] = value;
        } else {
          p.value_names.push_back(std::move(name));
          p.values.push_back(value);
        }
      }
      on_entry(journal_entry{std::move(p)});
      return true;
    }
    default:
      throw journal_error(what_ + ": unsupported record type " + std::to_string(type) +
                          " (written by a newer slr-sweep?)");
    }
  }

public:
  [[nodiscard]] std::uint64_t first_schema_points() const noexcept { return first_schema_points_; }

private:
  std::uint64_t first_schema_points_ = 0;
  std::string what_;
  std::unordered_map<std::uint64_t, std::vector<std::string>> schemas_;          // recorded in the file
  std::unordered_map<std::uint64_t, std::vector<std::string>> fallback_schemas_; // known to this build
};

journal_contents scan_descriptor(int fd, const std::string& what) {
  const std::string bytes = read_whole(fd, what);
  journal_contents contents;
  journal_scanner scanner(what);
  scanner.scan(bytes, contents, [&](journal_entry&& e) { contents.entries.push_back(std::move(e)); });
  contents.first_schema_point_records = scanner.first_schema_points();
  return contents;
}

std::string archive_of(const std::filesystem::path& journal) {
  auto text = journal.string();
  constexpr std::string_view suffix = ".journal";
  if (text.ends_with(suffix)) text.resize(text.size() - suffix.size());
  return text;
}

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

std::uint64_t journal_contents::damaged_bytes() const noexcept {
  std::uint64_t total = 0;
  for (const auto& d : damage) total += d.end - d.begin;
  return total;
}

std::string describe_damage(const journal_contents& contents, std::size_t max_lines) {
  std::string out;
  for (std::size_t i = 0; i < contents.damage.size() && i < max_lines; ++i) {
    const auto& d = contents.damage[i];
    if (!out.empty()) out += "\n";
    out += "  bytes " + std::to_string(d.begin) + "-" + std::to_string(d.end) + " (" +
           std::to_string(d.end - d.begin) + " bytes" + (d.at_end ? ", at the end of the file" : "") + "): ";
    if (d.records == 0) out += "no record header survived";
    else if (d.records == 1) out += d.record_type + " record";
    else out += std::to_string(d.records) + " records whose header survived";
    if (!d.point_ids.empty()) {
      out += d.point_ids.size() == 1 ? ", point" : ", points";
      for (std::size_t k = 0; k < d.point_ids.size() && k < 6; ++k) out.append(" ").append(point_id_text(d.point_ids[k]));
      if (d.point_ids.size() > 6) out += " …";
      out += " (ids unverified)";
    }
    if (d.records > 0 && d.unaccounted_bytes > 0)
      out += "; " + std::to_string(d.unaccounted_bytes) + " bytes without a surviving record header";
  }
  if (contents.damage.size() > max_lines)
    out += "\n  … and " + std::to_string(contents.damage.size() - max_lines) + " more damaged stretches";
  return out;
}

journal_contents read_journal(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw journal_error("cannot open journal " + path.string() + ": " + errno_text());
  try {
    auto contents = scan_descriptor(fd, "journal " + path.string());
    ::close(fd);
    return contents;
  } catch (...) {
    ::close(fd);
    throw;
  }
}

journal_writer::journal_writer(int fd, std::filesystem::path path, std::uint64_t size) noexcept
    : fd_(fd), path_(std::move(path)), size_(size) {}

journal_writer::journal_writer(journal_writer&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), size_(other.size_) {}

journal_writer& journal_writer::operator=(journal_writer&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_ = other.size_;
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

journal_writer journal_writer::open(const std::filesystem::path& path, journal_contents& contents,
                                   bool accept_damage) {
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) throw archive_not_found_error("no journal at " + path.string());
    throw journal_error("cannot open " + path.string() + ": " + errno_text());
  }
  journal_writer writer(fd, path, 0);
  take_lock(fd, path);
  journal_scanner scanner("journal " + path.string());
  contents = {};
  const std::string bytes = read_whole(fd, "journal " + path.string());
  scanner.scan(bytes, contents, [&](journal_entry&& e) { contents.entries.push_back(std::move(e)); });
  contents.first_schema_point_records = scanner.first_schema_points();
  if (contents.damaged()) {
    if (!accept_damage)
      throw journal_damaged_error(
          "journal " + path.string() + " is damaged: " + std::to_string(contents.damaged_bytes()) + " bytes in " +
          std::to_string(contents.damage.size()) + " stretch(es) are not intact records:\n" +
          describe_damage(contents) + "\nnothing was changed; `slr-sweep recover --salvage " + archive_of(path) +
          "` rebuilds the journal from its " + std::to_string(contents.entries.size()) +
          " intact records (keeping the damaged file beside it) and merges back every row the .h5 still holds");
    writer.size_ = contents.file_bytes;
    return writer;
  }
  if (contents.ignored_bytes > 0) {
    // A torn tail (an append that never completed, so never acknowledged): cut it so new
    // records follow the intact ones.
    if (ftruncate(fd, static_cast<off_t>(contents.valid_bytes)) != 0 || fsync(fd) != 0)
      throw journal_error("cannot truncate the torn tail of " + path.string() + ": " + errno_text());
  }
  writer.size_ = contents.valid_bytes;
  return writer;
}

void journal_writer::rewrite(const std::vector<journal_entry>& entries, const std::filesystem::path& keep_old_as) {
  auto temporary = path_;
  temporary += ".salvage.tmp";
  ::unlink(temporary.c_str()); // a leftover of an interrupted salvage holds nothing of value
  const int fd = ::open(temporary.c_str(), O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw journal_error("cannot create " + temporary.string() + ": " + errno_text());
  try {
    // Lock the new file before it becomes visible under the journal's name.
    take_lock(fd, temporary);
    std::string bytes = encode_header();
    for (const auto& entry : entries) bytes += encode_record(entry);
    write_all(fd, bytes, temporary.string());
    if (fsync(fd) != 0) throw journal_error("cannot fsync " + temporary.string() + ": " + errno_text());
    if (!keep_old_as.empty() && ::link(path_.c_str(), keep_old_as.c_str()) != 0)
      throw journal_error("cannot keep the damaged journal as " + keep_old_as.string() + ": " + errno_text());
    if (std::rename(temporary.c_str(), path_.c_str()) != 0)
      throw journal_error("cannot rename " + temporary.string() + " to " + path_.string() + ": " + errno_text());
    fsync_directory(path_);
    size_ = bytes.size();
  } catch (...) {
    ::close(fd);
    ::unlink(temporary.c_str());
    throw;
  }
  ::close(fd_); // the old journal (still reachable as keep_old_as) and its lock
  fd_ = fd;
}

void journal_writer::append(const journal_entry& entry) {
  const std::string bytes = encode_record(entry);
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

journal_summary summarize_journal(const std::filesystem::path& path) {
  journal_summary summary;
  try {
    const auto contents = read_journal(path);
    summary.readable = true;
    for (const auto& e : contents.entries) summary.point_records += std::holds_alternative<point_row>(e) ? 1 : 0;
    summary.damaged_stretches = contents.damage.size();
    summary.damaged_bytes = contents.damaged_bytes();
    summary.torn_bytes = contents.ignored_bytes;
    summary.damage_text = describe_damage(contents, 4);
  } catch (const archive_error& e) {
    summary.error = e.what();
  }
  return summary;
}

} // namespace slr::archive
