#include "slr/sched/result_sink.hpp"

namespace slr::sched {

void memory_sink::record(std::size_t /*unit*/, std::size_t /*position*/, const grid::point& point,
                         const grid::result_record& record) {
  rows.emplace_back(point, record);
}

void memory_sink::flush() {
  flushed_rows = rows.size();
  ++flushes;
}

} // namespace slr::sched
