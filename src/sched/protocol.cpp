#include "protocol.hpp"

#include <sstream>

#include <boost/archive/binary_iarchive.hpp>
#include <boost/archive/binary_oarchive.hpp>
#include <boost/serialization/array.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

namespace boost::serialization {
template <class Archive>
void serialize(Archive& archive, slr::grid::result_record& record, unsigned /*version*/) {
  int status = static_cast<int>(record.status);
  archive & status;
  record.status = static_cast<slr::grid::status>(status);
  archive & record.message;
  archive & record.extra_json;
  archive & record.values;
  archive & record.method_values;
}
template <class Archive>
void serialize(Archive& archive, slr::sched::protocol::point_result& result, unsigned /*version*/) {
  archive & result.unit;
  archive & result.position;
  archive & result.record;
}
template <class Archive>
void serialize(Archive& archive, slr::sched::protocol::report& message, unsigned /*version*/) {
  archive & message.results;
  archive & message.released;
  archive & message.dropped;
  archive & message.drained;
  archive & message.goodbye;
  archive & message.stop_signal;
}
} // namespace boost::serialization

namespace slr::sched::protocol {
namespace {
constexpr int order_length = static_cast<int>(2 + max_batch);
}

void send_order(const boost::mpi::communicator& comm, int worker, const order& message) {
  std::array<std::int64_t, 2 + max_batch> buffer{};
  buffer[0] = static_cast<std::int64_t>(message.kind);
  buffer[1] = message.argument;
  std::copy(message.units.begin(), message.units.end(), buffer.begin() + 2);
  comm.send(worker, tag_order, buffer.data(), order_length);
}

std::optional<order> try_receive_order(const boost::mpi::communicator& comm) {
  if (!comm.iprobe(0, tag_order)) return std::nullopt;
  std::array<std::int64_t, 2 + max_batch> buffer{};
  comm.recv(0, tag_order, buffer.data(), order_length);
  order message;
  message.kind = static_cast<order_kind>(buffer[0]);
  message.argument = buffer[1];
  std::copy(buffer.begin() + 2, buffer.end(), message.units.begin());
  return message;
}

std::string encode(const report& message) {
  std::ostringstream stream;
  {
    boost::archive::binary_oarchive archive(stream, boost::archive::no_header);
    archive << message;
  }
  return std::move(stream).str();
}

report decode(const std::string& bytes) {
  std::istringstream stream(bytes);
  boost::archive::binary_iarchive archive(stream, boost::archive::no_header);
  report message;
  archive >> message;
  return message;
}

void send_report(const boost::mpi::communicator& comm, const report& message) {
  const auto bytes = encode(message);
  comm.send(0, tag_report, bytes.data(), static_cast<int>(bytes.size()));
}

report_in_flight::report_in_flight(const boost::mpi::communicator& comm, const report& message)
    : bytes_(std::make_shared<std::string>(encode(message))),
      request_(comm.isend(0, tag_report, bytes_->data(), static_cast<int>(bytes_->size()))) {}

bool report_in_flight::done() {
  if (!done_) done_ = request_.test().has_value();
  return done_;
}

void report_in_flight::wait() {
  if (!done_) request_.wait();
  done_ = true;
}

std::optional<incoming_report> try_receive_report(const boost::mpi::communicator& comm) {
  const auto status = comm.iprobe(boost::mpi::any_source, tag_report);
  if (!status) return std::nullopt;
  const auto size = status->count<char>();
  std::string bytes(static_cast<std::size_t>(size.value_or(0)), '\0');
  comm.recv(status->source(), tag_report, bytes.data(), static_cast<int>(bytes.size()));
  return incoming_report{status->source(), decode(bytes)};
}

} // namespace slr::sched::protocol
