// ERM at the paper's size (default D = N = 10^4, L = 3, spiked ν = 1, softmax, r = 1, one
// thread, float64): data generation, one loss + gradient evaluation against a plain read pass
// over the same token array, a full L-BFGS training from the informed start, and memory.
// A program printing a table (each measurement is seconds long; Google Benchmark's
// repetition machinery adds nothing here).
//   Usage: bench_erm [D] [alpha] [threads] [f64|f32] [full|kernel]
// `kernel` stops after the read pass and the loss + gradient (no training). The last line,
// `summary: …`, is one table row: the case, read pass and kernel in ms, and their ratio.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cpu_info.hpp"
#include "slr/erm/data.hpp"
#include "slr/erm/loss.hpp"
#include "slr/erm/trainer.hpp"
#include "slr/model/parallel.hpp"

namespace {
using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// One read pass over the tokens (the memory-bandwidth floor of an evaluation), compiled for the
// same ISA levels as the library's kernels (baseline SSE2 loads alone read ~20 % slower here), so
// the ratio compares like with like.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && !defined(__AVX2__)
#define BENCH_VECTOR_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define BENCH_VECTOR_CLONES
#endif
template <class T>
BENCH_VECTOR_CLONES double read_pass(const T* x, std::size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
  for (std::size_t i = 0; i < n / 4 * 4; i += 4) {
    s0 += static_cast<double>(x[i]);
    s1 += static_cast<double>(x[i + 1]);
    s2 += static_cast<double>(x[i + 2]);
    s3 += static_cast<double>(x[i + 3]);
  }
  return s0 + s1 + s2 + s3;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The CPU model and its flags line, so that a table states the instruction sets the kernels'
// clones could use.
void print_cpu() {
  const auto [model, flags] = slr::bench::cpu_model_and_flags();
  std::printf("cpu: %s\nflags: %s\n", model.c_str(), flags.c_str());
}
} // namespace

int main(int argc, char** argv) {
  using namespace slr;
  const std::size_t D = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10000;
  const double alpha = argc > 2 ? std::strtod(argv[2], nullptr) : 1.0;
  const unsigned threads = argc > 3 ? static_cast<unsigned>(std::strtoul(argv[3], nullptr, 10)) : 1;
  const auto storage = erm::parse_precision(argc > 4 ? argv[4] : "f64");
  const std::string mode = argc > 5 ? argv[5] : "full";
  if (mode != "full" && mode != "kernel") {
    std::fprintf(stderr, "mode must be full or kernel, got %s\n", mode.c_str());
    return 2;
  }
  const auto N = static_cast<std::size_t>(alpha * static_cast<double>(D));
  model::problem problem; // spiked ν = 1, L = 3, Δ = 0, softmax
  std::printf("ERM benchmark: D = %zu, N = %zu, L = 3, spiked nu = 1, softmax, r_k = r_v = 1, %u thread(s), %s\n", D, N,
              threads, std::string(erm::precision_name(storage)).c_str());
  print_cpu();
  const double rss_start = erm::peak_rss_mb();

  const auto teacher = erm::teacher::draw(D, 1);
  auto t0 = clock_type::now();
  const auto data =
      erm::sequence_data::generate(problem, teacher, N, 1, model::stream_purpose::training_data, storage, threads);
  const double generation_s = seconds_since(t0);
  const double normals = static_cast<double>(N) * 3.0 * static_cast<double>(D);
  std::printf("%-46s %9.3f s  (%.2f ns per normal; goal <= 1.5 s at D = N = 1e4)\n", "data generation (3 N D normals)",
              generation_s, generation_s / normals * 1e9);

  std::vector<double> reads;
  double sink = 0;
  for (int r = 0; r < 5; ++r) {
    t0 = clock_type::now();
    // With the same thread count and the same chunking over sequences as the loss (one read
    // pass is the floor of one evaluation on that many threads).
    sink += model::chunked_reduce(N, std::max<std::size_t>(16, (N + 63) / 64), threads, 0.0,
                                  [&](std::size_t begin, std::size_t end, double& sum) {
                                    const std::size_t offset = begin * 3 * D, count = (end - begin) * 3 * D;
                                    sum += storage == erm::precision::f64 ? read_pass(data.tokens_f64() + offset, count)
                                                                          : read_pass(data.tokens_f32() + offset, count);
                                  });
    reads.push_back(seconds_since(t0));
  }
  const double read_s = median(reads);
  std::printf("%-46s %9.3f s  (%.1f GB/s)\n", "one read pass over the tokens (median of 5)", read_s,
              data.bytes() / read_s / 1e9);

  const erm::empirical_risk risk(data, problem.activation, 1.0, 1.0, threads);
  const auto w0 = erm::initial_weights(teacher, erm::initialisation::informed, 0.1, 1);
  Eigen::VectorXd gradient;
  std::vector<double> evaluations;
  for (int r = 0; r < 7; ++r) {
    t0 = clock_type::now();
    sink += risk.evaluate(w0, gradient).objective;
    evaluations.push_back(seconds_since(t0));
  }
  const double evaluation_s = median(evaluations);
  std::printf("%-46s %9.3f s  (%.2f x read pass; goal <= 0.10 s)\n", "one loss + gradient (median of 7)", evaluation_s,
              evaluation_s / read_s);
  const auto summary = [&] {
    std::printf("summary: D=%zu N=%zu L=3 %s threads=%u  read %.1f ms  kernel %.1f ms  ratio %.2f\n", D, N,
                std::string(erm::precision_name(storage)).c_str(), threads, read_s * 1e3, evaluation_s * 1e3,
                evaluation_s / read_s);
  };
  if (mode == "kernel") {
    summary();
    return sink == 12345.678 ? 1 : 0;
  }

  erm::trainer_settings settings; // L-BFGS, strong Wolfe, rel_grad <= 1e-6
  t0 = clock_type::now();
  const auto result = erm::train(risk, teacher, w0, settings);
  const double training_s = seconds_since(t0);
  std::printf("%-46s %9.3f s  (%zu iterations, %zu evaluations, rel_grad %.2e, stopped by %s; goal < 60 s)\n",
              "L-BFGS training from the informed start", training_s, result.iterations, result.gradient_evaluations,
              result.rel_grad, std::string(erm::stop_reason_name(result.stopped)).c_str());
  const auto op = erm::measure_order_parameters(teacher, result.w.head(static_cast<Eigen::Index>(D)),
                                                result.w.tail(static_cast<Eigen::Index>(D)));
  std::printf("  trained: m_kk %.4f m_vv %.4f q_kk %.4f q_vv %.4f train loss %.4f\n", op.m_kk, op.m_vv, op.q_kk, op.q_vv,
              result.train_loss);
  const double rss = erm::peak_rss_mb();
  std::printf("%-46s %9.1f MB  (tokens %.1f MB, O(D) vectors %.1f MB, process before data %.1f MB)\n", "peak RSS", rss,
              data.bytes() / 1e6, 2.0 * 40 * static_cast<double>(D) * 8 / 1e6, rss_start);
  summary();
  return sink == 12345.678 ? 1 : 0; // keeps the passes from being optimised away
}
