#pragma once
// Element-wise exp, erf and log1p over spans: the transcendental functions of the activations
// (softmax, erf, softplus kernel), evaluated a few lanes at a time.
//
// On x86-64 Linux with glibc's vector math library (libmvec) they run its 4-lane AVX2 (or, on
// CPUs without AVX2 and FMA, 2-lane SSE) functions, within 4 ulp of the exact value; elsewhere the
// scalar std:: functions. Every element goes through the same function whatever its position or
// the span's length (a short tail is padded to a full vector), so results never depend on how
// work is split between threads or ranks; they can differ in the last bits between CPUs that take
// different paths (backend() names the path).
#include <span>
#include <string_view>

namespace slr::model::vector_math {

/// y_i = e^{x_i}. x and y have the same length; y may be x itself. Overflow gives +inf, as std::exp.
void exp(std::span<const double> x, std::span<double> y) noexcept;

/// y_i = erf(x_i). Same contract as exp.
void erf(std::span<const double> x, std::span<double> y) noexcept;

/// y_i = log(1 + x_i), accurate near x = 0. Same contract as exp.
void log1p(std::span<const double> x, std::span<double> y) noexcept;

/// The path taken on this CPU: "libmvec-avx2", "libmvec-sse2" or "scalar".
[[nodiscard]] std::string_view backend() noexcept;

} // namespace slr::model::vector_math
