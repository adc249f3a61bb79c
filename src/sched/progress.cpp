#include "slr/sched/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <sstream>

namespace slr::sched {
namespace {
std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  const auto total = static_cast<long long>(std::llround(seconds));
  std::ostringstream out;
  if (total >= 86400) out << total / 86400 << "d " << (total % 86400) / 3600 << "h";
  else if (total >= 3600) out << total / 3600 << "h " << (total % 3600) / 60 << "m";
  else if (total >= 60) out << total / 60 << "m " << total % 60 << "s";
  else out << total << "s";
  return out.str();
}
// Every kind of non-ok result by name, so that a diverged or unconverged point is never hidden
// behind a count of failures only.
std::string not_ok_text(const progress_state& s) {
  std::string text;
  for (const auto& [name, count] : s.not_ok)
    if (count > 0) text += (text.empty() ? "not ok: " : ", ") + std::to_string(count) + " " + name;
  return text.empty() ? "all ok" : text;
}
} // namespace

void eta_model::add_planned(const std::string& method, double estimated_s) {
  methods_[method].planned_s += std::max(0.0, estimated_s);
}

void eta_model::add_finished(const std::string& method, double estimated_s, double measured_s) {
  auto& t = methods_[method];
  t.planned_s = std::max(0.0, t.planned_s - std::max(0.0, estimated_s));
  if (std::isfinite(measured_s) && measured_s >= 0 && estimated_s > 0) {
    t.estimated_s += estimated_s;
    t.measured_s += measured_s;
  }
}

double eta_model::factor(const std::string& method) const {
  const auto it = methods_.find(method);
  if (it != methods_.end() && it->second.estimated_s > 0) return it->second.measured_s / it->second.estimated_s;
  double estimated = 0, measured = 0;
  for (const auto& [name, t] : methods_) {
    estimated += t.estimated_s;
    measured += t.measured_s;
  }
  return estimated > 0 ? measured / estimated : 1.0;
}

double eta_model::remaining_s(double workers, const std::map<std::string, double>& largest_unit) const {
  if (!(workers > 0)) return std::numeric_limits<double>::infinity();
  double total = 0;
  for (const auto& [name, t] : methods_) total += factor(name) * t.planned_s;
  double floor = 0;
  for (const auto& [name, estimate] : largest_unit) floor = std::max(floor, factor(name) * estimate);
  return std::max(total / workers, floor);
}

progress_meter::progress_meter(std::ostream& out, bool live, double interval_s)
    : out_(out), live_(live), interval_s_(interval_s), start_(std::chrono::steady_clock::now()),
      last_print_(start_) {}

bool progress_meter::stderr_is_terminal() { return isatty(fileno(stderr)) == 1; }

std::string progress_meter::line(const progress_state& s) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::size_t done_now = s.done - s.done_before;
  const double rate = elapsed > 0 ? static_cast<double>(done_now) / elapsed : 0.0;
  // Most expensive points run first, so a count-based ETA would be pessimistic; weigh by cost
  // when the cost model gives one, else by count.
  double eta = std::numeric_limits<double>::infinity();
  if (s.done >= s.total) eta = 0;
  else if (std::isfinite(s.remaining_s)) eta = s.remaining_s;
  else if (s.total_cost > 0 && s.done_cost > 0) eta = elapsed * (s.total_cost - s.done_cost) / s.done_cost;
  else if (done_now > 0) eta = static_cast<double>(s.total - s.done) / rate;
  const double percent = s.total > 0 ? 100.0 * static_cast<double>(s.done) / static_cast<double>(s.total) : 100.0;
  std::ostringstream text;
  text << s.done << "/" << s.total << " points (" << std::fixed << std::setprecision(1) << percent << "%), "
       << not_ok_text(s) << ", " << std::setprecision(rate < 10 ? 2 : 0) << rate << " points/s, elapsed "
       << format_duration(elapsed) << ", ETA " << format_duration(eta);
  return text.str();
}

void progress_meter::update(const progress_state& state) {
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_print_).count();
  if (live_) {
    if (printed_ && since < 0.1) return;
    const double fraction = state.total > 0 ? static_cast<double>(state.done) / static_cast<double>(state.total) : 1;
    constexpr int width = 30;
    const int filled = static_cast<int>(fraction * width);
    out_ << "\r[" << std::string(static_cast<std::size_t>(filled), '#')
         << std::string(static_cast<std::size_t>(width - filled), '.') << "] " << line(state) << "\033[K"
         << std::flush;
  } else {
    if (since < interval_s_) return;
    out_ << "slr-sweep: progress: " << line(state) << std::endl;
  }
  last_print_ = now;
  printed_ = true;
}

void progress_meter::finish(const progress_state& state, const std::string& note) {
  if (live_) out_ << "\r\033[K";
  out_ << "slr-sweep: " << note << ": " << line(state) << std::endl;
}

} // namespace slr::sched
