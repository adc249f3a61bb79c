#pragma once
// Deterministic thread-parallel reduction: the index range is cut into chunks of a fixed
// size that does not depend on the thread count, each chunk is reduced on its own, and the
// chunk results are combined in chunk order. Results are bit-identical for any thread count.
#include <algorithm>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace slr::model {

/// Threads to use when the caller passes 0: the hardware concurrency (at least 1).
[[nodiscard]] inline unsigned resolve_threads(unsigned requested) noexcept {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1U : hw;
}

/// Reduces body(begin, end, accumulator&) over [0, n) in chunks of `chunk` indices.
/// `Acc` must be copyable from `init` and provide `operator+=`. Exceptions thrown by `body`
/// are rethrown on the calling thread.
template <class Acc, class Body>
Acc chunked_reduce(std::size_t n, std::size_t chunk, unsigned threads, const Acc& init, Body&& body) {
  chunk = std::max<std::size_t>(chunk, 1);
  const std::size_t chunks = (n + chunk - 1) / chunk;
  std::vector<Acc> partial(chunks, init);
  auto run_chunk = [&](std::size_t c) {
    body(c * chunk, std::min(n, (c + 1) * chunk), partial[c]);
  };
  const unsigned workers = static_cast<unsigned>(std::min<std::size_t>(resolve_threads(threads), chunks));
  if (workers <= 1) {
    for (std::size_t c = 0; c < chunks; ++c) run_chunk(c);
  } else {
    std::exception_ptr failure;
    std::mutex failure_mutex;
    std::vector<std::jthread> pool;
    pool.reserve(workers);
    for (unsigned w = 0; w < workers; ++w) {
      pool.emplace_back([&, w] {
        try {
          for (std::size_t c = w; c < chunks; c += workers) run_chunk(c);
        } catch (...) {
          const std::lock_guard lock(failure_mutex);
          if (!failure) failure = std::current_exception();
        }
      });
    }
    pool.clear(); // joins
    if (failure) std::rethrow_exception(failure);
  }
  Acc total = init;
  for (auto& p : partial) total += p;
  return total;
}

} // namespace slr::model
