#include "slr/sweep/archive_sink.hpp"

#include <exception>
#include <iostream>

#include "slr/sweep/point_row.hpp"

namespace slr::sweep {

void archive_sink::record(std::size_t unit, std::size_t position, const grid::point& /*point*/,
                          const grid::result_record& record) {
  pending_.push_back({unit, position});
  records_.push_back(record);
}

void archive_sink::flush() {
  if (pending_.empty()) return;
  std::vector<archive::point_row> batch;
  batch.reserve(pending_.size());
  for (std::size_t i = 0; i < pending_.size(); ++i)
    batch.push_back(make_point_row(units_[pending_[i].first].points[pending_[i].second], records_[i]));
  writer_.record_batch(batch);
  pending_.clear();
  records_.clear();
}

void archive_sink::checkpoint() noexcept {
  try {
    flush();
    writer_.rebuild_now();
  } catch (const std::exception& e) {
    // Everything is in the journal; the .h5 is rebuilt at the end or by `recover`.
    std::cerr << "slr-sweep: warning: could not update the .h5 on the stop signal: " << e.what() << std::endl;
  }
}

} // namespace slr::sweep
