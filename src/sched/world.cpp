#include "slr/sched/world.hpp"

#include <mpi.h>

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>

#include "slr/sched/sweep.hpp"

namespace slr::sched {

int world_rank() { return boost::mpi::communicator().rank(); }
int world_size() { return boost::mpi::communicator().size(); }

std::string processor_name() {
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return {name, static_cast<std::size_t>(length)};
}

void broadcast_from_root(std::string& text) { boost::mpi::broadcast(boost::mpi::communicator(), text, 0); }
void broadcast_from_root(int& value) { boost::mpi::broadcast(boost::mpi::communicator(), value, 0); }

void barrier() { boost::mpi::communicator().barrier(); }

sweep_outcome run_world_sweep(const std::vector<grid::work_unit>& units, const done_predicate& already_done,
                              result_sink* sink, const sweep_options& options, const stored_record& stored) {
  return run_sweep(boost::mpi::communicator(), units, already_done, sink, options, stored);
}

void abort_world(int exit_code) {
  boost::mpi::communicator().abort(exit_code);
  std::abort(); // not reached
}

} // namespace slr::sched
