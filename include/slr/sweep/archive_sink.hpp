#pragma once
// The archive as the coordinator's result sink: rows are buffered and journaled in one fsync'd
// batch per flush (the coordinator flushes at least every 0.25 s and whenever it is idle).
#include <cstddef>
#include <utility>
#include <vector>

#include "slr/archive/writer.hpp"
#include "slr/grid/point.hpp"
#include "slr/grid/result_record.hpp"
#include "slr/job/expansion.hpp"
#include "slr/sched/result_sink.hpp"

namespace slr::sweep {

class archive_sink final : public sched::result_sink {
public:
  /// `units`: the expanded job whose work units the coordinator runs (same indices).
  archive_sink(archive::writer& writer, const std::vector<job::sweep_unit>& units) : writer_(writer), units_(units) {}
  void record(std::size_t unit, std::size_t position, const grid::point& point,
              const grid::result_record& record) override;
  void flush() override;
  /// Flushes and rebuilds the .h5; a failure is reported on stderr (the journal holds everything).
  void checkpoint() noexcept override;

private:
  archive::writer& writer_;
  const std::vector<job::sweep_unit>& units_;
  std::vector<std::pair<std::size_t, std::size_t>> pending_;
  std::vector<grid::result_record> records_;
};

} // namespace slr::sweep
