#pragma once
// Progress of a sweep on a stream: a live bar (carriage return) on a terminal, one log line
// every interval otherwise (Slurm logs). Rate is points per second of this run; the ETA weights
// the remaining points by their estimated cost. No MPI here.
#include <chrono>
#include <cstddef>
#include <limits>
#include <map>
#include <ostream>
#include <string>

namespace slr::sched {

/// Remaining wall time of a sweep from the methods' cost models, each calibrated by what its
/// finished points actually took: remaining = Σ_m c_m · (estimated seconds of m's points still to
/// run), with c_m = (measured seconds) / (estimated seconds) over m's finished points (the
/// calibration of all methods together where m has none yet, else 1), divided by the workers.
/// Used by the progress line and by `status`, so that both give the same number.
class eta_model {
public:
  /// A point still to run, with its cost-model estimate (single-thread seconds).
  void add_planned(const std::string& method, double estimated_s);
  /// A point finished in this sweep: its estimate and the wall time it took (NaN: unknown).
  void add_finished(const std::string& method, double estimated_s, double measured_s);
  /// Seconds of wall time left with `workers` busy workers (∞ if nothing can be estimated), and
  /// at least the calibrated time of the largest unit still to run (a unit runs on one worker):
  /// `largest_unit` maps a method to the estimate of its largest unfinished unit.
  [[nodiscard]] double remaining_s(double workers, const std::map<std::string, double>& largest_unit = {}) const;
  /// Calibration factor of one method (measured / estimated; 1 without data).
  [[nodiscard]] double factor(const std::string& method) const;

private:
  struct tally {
    double planned_s = 0;   // estimates of the points still to run
    double estimated_s = 0; // estimates of the finished points with a measured time
    double measured_s = 0;  // their measured times
  };
  std::map<std::string, tally> methods_;
};

struct progress_state {
  std::size_t total = 0;      ///< points of the sweep
  std::size_t done = 0;       ///< finished (including those done before this run)
  std::size_t done_before = 0;///< done before this run started (resume)
  /// Points of this run whose status is not ok, by status name ("not_converged", "failed", …).
  std::map<std::string, std::size_t> not_ok;
  double total_cost = 0;      ///< estimated seconds of the points to run in this run
  double done_cost = 0;       ///< estimated seconds of the points finished in this run
  /// Calibrated remaining wall time (eta_model), used for the ETA when finite.
  double remaining_s = std::numeric_limits<double>::quiet_NaN();
};

class progress_meter {
public:
  /// live: redraw one line with '\r' (use for terminals); otherwise print a line every interval_s.
  progress_meter(std::ostream& out, bool live, double interval_s);
  /// Prints if due (live: at most 10 times a second).
  void update(const progress_state& state);
  /// Prints the final line (always).
  void finish(const progress_state& state, const std::string& note);
  /// The text of one progress line, e.g. "1200/5000 points (24.0%), not ok: 2 diverged, 1 failed, 410 points/s,
  /// elapsed 3s, ETA 9s" ("all ok" when every point of this run is ok).
  [[nodiscard]] std::string line(const progress_state& state) const;

  /// True if the file descriptor of stderr is a terminal.
  [[nodiscard]] static bool stderr_is_terminal();

private:
  std::ostream& out_;
  bool live_;
  double interval_s_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_print_;
  bool printed_ = false;
};

} // namespace slr::sched
