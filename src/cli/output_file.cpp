#include "slr/cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "slr/archive/journal.hpp"

namespace slr::cli {
namespace {

bool same_file(const struct stat& a, const std::filesystem::path& other) {
  struct stat b;
  if (::stat(other.c_str(), &b) != 0) return false;
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::filesystem::path temporary_for(const std::filesystem::path& output) {
  auto temporary = output;
  temporary += ".tmp-" + std::to_string(::getpid());
  return temporary;
}

void sync_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string() + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  if (rc != 0) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(saved));
}

} // namespace

void check_output_path(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs,
                       bool force) {
  struct stat st;
  if (::stat(output.c_str(), &st) == 0) {
    for (const auto& input : inputs)
      if (same_file(st, input) || same_file(st, archive::journal_path(input)))
        throw std::invalid_argument("--output: " + output.string() + " is the archive being read (" + input.string() +
                                    ") or its journal; choose another file");
    if (S_ISDIR(st.st_mode)) throw std::invalid_argument("--output: " + output.string() + " is a directory");
    if (!force)
      throw std::invalid_argument("--output: " + output.string() + " exists; add --force to overwrite it");
  }
  const auto parent = output.parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    throw std::invalid_argument("--output: directory " + parent.string() + " does not exist");
}

void write_output_file(const std::filesystem::path& output,
                       const std::function<void(const std::filesystem::path&)>& write_to) {
  const auto temporary = temporary_for(output);
  try {
    write_to(temporary);
    sync_file(temporary);
    if (std::rename(temporary.c_str(), output.c_str()) != 0)
      throw std::runtime_error("cannot rename " + temporary.string() + " to " + output.string() + ": " +
                               std::strerror(errno));
  } catch (const std::exception& e) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    const std::string reason = e.what();
    throw std::runtime_error("writing " + output.string() + " failed: " + reason.substr(0, reason.find('\n')));
  }
}

void write_output_text(const std::filesystem::path& output, const std::string& text) {
  write_output_file(output, [&](const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(std::string("cannot create it: ") + std::strerror(errno));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int saved = errno;
        ::close(fd);
        throw std::runtime_error(std::strerror(saved));
      }
      done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0) throw std::runtime_error(std::strerror(errno));
  });
}

} // namespace slr::cli
