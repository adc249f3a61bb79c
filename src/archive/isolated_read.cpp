#include "isolated_read.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <new>

#include "slr/archive/archive_error.hpp"

namespace slr::archive {
namespace {

// The address space the process has now (what the child starts with: fork copies it).
std::size_t current_address_space() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  if (!(statm >> pages)) return 0;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

[[noreturn]] void child(int fd, pid_t parent, const std::function<void()>& read, std::size_t limit) {
  // The child must not outlive its parent, nor keep what the parent holds open: an open file
  // description it shares keeps the parent's journal lock (an OFD lock) alive after the parent
  // is killed. Closing its copies releases nothing the parent holds.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) std::_Exit(1);
  if (fd > 3) close_range(3, static_cast<unsigned>(fd) - 1, 0);
  close_range(static_cast<unsigned>(fd) + 1, ~0U, 0);
  const rlimit no_core{0, 0}; // a crash here is expected and reported: no core file
  setrlimit(RLIMIT_CORE, &no_core);
  if (limit > 0) {
    const rlimit memory{limit, limit};
    setrlimit(RLIMIT_AS, &memory);
  }
  // The first byte says how the read ended; a child that dies writes none.
  char result = 'o';
  std::string message;
  try {
    read();
  } catch (const archive_not_found_error& e) {
    result = 'r';
    message = e.what();
  } catch (const archive_error& e) {
    result = 'e';
    message = e.what();
  } catch (const std::bad_alloc&) {
    result = 'm';
  } catch (const std::exception& e) { // not an error the read reports itself: the data misled it
    result = 'x';
    message = e.what();
  }
  write_all(fd, std::string(1, result) + message);
  ::close(fd);
  std::_Exit(0); // no destructors, atexit handlers or stdio flushes of the parent's state
}

std::string signal_text(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  return name != nullptr ? std::string("SIG") + name : "signal " + std::to_string(signal_number);
}

} // namespace

isolated_outcome run_isolated(const std::function<void()>& read, std::size_t memory_budget_bytes, double seconds) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return {isolated_outcome::kind::ok, std::string("unchecked: pipe: ") + std::strerror(errno)};
  const std::size_t limit = memory_budget_bytes > 0 ? current_address_space() + memory_budget_bytes : 0;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return {isolated_outcome::kind::ok, std::string("unchecked: fork: ") + std::strerror(error)};
  }
  if (pid == 0) {
    ::close(fds[0]);
    child(fds[1], parent, read, limit);
  }
  ::close(fds[1]);
  std::string reply;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  bool timed_out = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; // end of file: the child has ended
    reply.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const auto budget_mb = std::to_string(memory_budget_bytes >> 20);
  if (timed_out)
    return {isolated_outcome::kind::crashed,
            "reading it did not end within " + std::to_string(static_cast<long>(seconds)) + " s"};
  if (reply.empty()) {
    if (WIFSIGNALED(status))
      return {isolated_outcome::kind::crashed, "reading it crashed HDF5 (" + signal_text(WTERMSIG(status)) + ")"};
    return {isolated_outcome::kind::crashed, "reading it ended without an answer"};
  }
  switch (reply[0]) {
  case 'o': return {isolated_outcome::kind::ok, {}};
  case 'r': return {isolated_outcome::kind::refused, reply.substr(1)};
  case 'm': return {isolated_outcome::kind::crashed, "reading it needs more than " + budget_mb + " MiB of memory"};
  case 'x': return {isolated_outcome::kind::crashed, "reading it failed: " + reply.substr(1)};
  default: return {isolated_outcome::kind::error, reply.substr(1)};
  }
}

} // namespace slr::archive
