#pragma once
// The sweep over MPI_COMM_WORLD, behind an interface without MPI types, for `run`/`resume`
// (slr::sweep) and the CLI (MPI stays in src/sched and the CLI's main, which owns the
// boost::mpi::environment).
// Every function here is collective unless it says otherwise, and needs MPI initialised.
#include <string>
#include <vector>

#include "slr/grid/work_unit.hpp"
#include "slr/sched/result_sink.hpp"
#include "slr/sched/sweep_types.hpp"

namespace slr::sched {

/// This process's rank and the number of ranks in MPI_COMM_WORLD (not collective).
[[nodiscard]] int world_rank();
[[nodiscard]] int world_size();
/// The name of this node (MPI_Get_processor_name; not collective).
[[nodiscard]] std::string processor_name();

/// Rank 0's value on every rank.
void broadcast_from_root(std::string& text);
void broadcast_from_root(int& value);

/// Waits until every rank got here.
void barrier();

/// run_sweep over MPI_COMM_WORLD.
sweep_outcome run_world_sweep(const std::vector<grid::work_unit>& units, const done_predicate& already_done,
                              result_sink* sink, const sweep_options& options, const stored_record& stored = {});

/// Ends every rank at once (MPI_Abort), e.g. after an error only some ranks saw. Not collective.
[[noreturn]] void abort_world(int exit_code);

} // namespace slr::sched
