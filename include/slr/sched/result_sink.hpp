#pragma once
// Where the coordinator (rank 0) puts finished points. The archive sink (slr/sweep/archive_sink.hpp)
// implements it for real runs; memory_sink keeps rows in memory (tests, benchmarks). No MPI here.
#include <cstddef>
#include <utility>
#include <vector>

#include "slr/grid/point.hpp"
#include "slr/grid/result_record.hpp"

namespace slr::sched {

class result_sink {
public:
  virtual ~result_sink() = default;
  /// Takes one finished point: point `position` of work unit `unit` (indices into the unit list
  /// given to run_sweep). May buffer; the result is only guaranteed durable after flush().
  virtual void record(std::size_t unit, std::size_t position, const grid::point& point,
                      const grid::result_record& record) = 0;
  /// Makes every result recorded so far durable (survives SIGKILL / power loss on return).
  /// The coordinator only reports points as done after they have been flushed.
  virtual void flush() = 0;
  /// Called once when a stop signal arrives, after flush(): brings any derived view of the
  /// results up to date now (the archive rebuilds its .h5), because a launcher may follow the
  /// signal with SIGKILL within a second (Open MPI's mpirun does after SIGINT/SIGTERM:
  /// odls_base_sigkill_timeout = 1 s). Must not throw.
  virtual void checkpoint() noexcept {}
};

/// Keeps every recorded row in memory, in arrival order.
class memory_sink final : public result_sink {
public:
  void record(std::size_t unit, std::size_t position, const grid::point& point,
              const grid::result_record& record) override;
  void flush() override;

  std::vector<std::pair<grid::point, grid::result_record>> rows;
  std::size_t flushed_rows = 0; ///< rows covered by the last flush()
  std::size_t flushes = 0;      ///< number of flush() calls
};

} // namespace slr::sched
