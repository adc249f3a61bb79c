#pragma once
// Private: the coordinator–worker protocol.
//  coordinator → worker, tag_order: one fixed-size array of 2 + max_batch int64
//     [kind, argument, unit indices…]: assign `argument` units, drain (drop queued units, finish
//     the running one), or stop (leave with exit code `argument`).
//  worker → coordinator, tag_report: a Boost.Serialization archive of a report (results of
//     finished points, units whose memory is free again, units dropped unstarted, drained and
//     goodbye flags); the coordinator probes for its size, then receives it.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/mpi/communicator.hpp>
#include <boost/mpi/request.hpp>

#include "slr/grid/result_record.hpp"

namespace slr::sched::protocol {

inline constexpr int tag_order = 7101;
inline constexpr int tag_report = 7102;
inline constexpr std::size_t max_batch = 64;

enum class order_kind : std::int64_t { assign = 1, drain = 2, stop = 3 };

struct order {
  order_kind kind = order_kind::assign;
  std::int64_t argument = 0; ///< assign: number of units; stop: exit code
  std::array<std::int64_t, max_batch> units{};
};

struct point_result {
  std::int64_t unit = 0;
  std::int64_t position = 0; ///< index of the point within its unit
  grid::result_record record;
};

struct report {
  std::vector<point_result> results;
  std::vector<std::int64_t> released; ///< units whose solver work ended (their memory is free)
  std::vector<std::int64_t> dropped;  ///< units dropped unstarted on drain (never run)
  bool drained = false;               ///< nothing queued, nothing running (after a drain order)
  bool goodbye = false;               ///< last report after a stop order
  int stop_signal = 0;                ///< a stop signal this worker received (e.g. only workers were signalled)
  [[nodiscard]] bool empty() const {
    return results.empty() && released.empty() && dropped.empty() && !drained && !goodbye && stop_signal == 0;
  }
};

void send_order(const boost::mpi::communicator& comm, int worker, const order& message);
/// Non-blocking: an order from rank 0 if one is waiting.
std::optional<order> try_receive_order(const boost::mpi::communicator& comm);

void send_report(const boost::mpi::communicator& comm, const report& message);
/// A report on its way (non-blocking send): keep it until done() says the buffer is free.
class report_in_flight {
public:
  report_in_flight(const boost::mpi::communicator& comm, const report& message);
  [[nodiscard]] bool done(); ///< tests the request (and drives MPI progress)
  void wait();

private:
  std::shared_ptr<std::string> bytes_;
  boost::mpi::request request_;
  bool done_ = false;
};
struct incoming_report {
  int source = 0;
  report message;
};
/// Non-blocking: probes for a report from any worker, then receives it with the probed size.
std::optional<incoming_report> try_receive_report(const boost::mpi::communicator& comm);

/// Serialized form (Boost.Serialization binary archive), exposed for tests.
std::string encode(const report& message);
report decode(const std::string& bytes);

} // namespace slr::sched::protocol
