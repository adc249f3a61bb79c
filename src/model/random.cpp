#include "slr/model/random.hpp"

#include <Random123/boxmuller.hpp>
#include <Random123/philox.h>
#include <Random123/uniform.hpp>

namespace slr::model {
namespace {
constexpr std::uint64_t splitmix(std::uint64_t x) noexcept {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
using philox = r123::Philox4x64;
} // namespace

std::uint64_t derive_seed(std::uint64_t master, std::uint64_t identity) noexcept {
  return splitmix(splitmix(master) ^ splitmix(identity + 0x632be59bd9b4e019ULL));
}

std::uint64_t stable_hash(std::string_view text) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return splitmix(h);
}

counter_rng::counter_rng(std::uint64_t seed, stream_purpose purpose, std::uint64_t index) noexcept
    : key_{seed, static_cast<std::uint64_t>(purpose)}, counter_{index, 0, 0, 0}, buffer_{} {}

void counter_rng::refill() noexcept {
  philox generator;
  const philox::ctr_type ctr = {{counter_[0], counter_[1], counter_[2], counter_[3]}};
  const philox::key_type key = {{key_[0], key_[1]}};
  const auto bits = generator(ctr, key);
  ++counter_[1]; // the block counter within this stream
  if (holds_normals_) {
    const auto a = r123::boxmuller(bits[0], bits[1]);
    const auto b = r123::boxmuller(bits[2], bits[3]);
    buffer_[0] = a.x;
    buffer_[1] = a.y;
    buffer_[2] = b.x;
    buffer_[3] = b.y;
  } else {
    for (int i = 0; i < 4; ++i) buffer_[i] = r123::u01<double>(bits[i]);
  }
  left_ = 4;
}

double counter_rng::normal() noexcept {
  if (left_ == 0 || !holds_normals_) {
    holds_normals_ = true;
    refill();
  }
  return buffer_[--left_];
}

double counter_rng::uniform() noexcept {
  if (left_ == 0 || holds_normals_) {
    holds_normals_ = false;
    refill();
  }
  // u01 maps to (0, 1]; reflect so that log(u) and log(1 - u) are both finite.
  const double u = buffer_[--left_];
  return u >= 1.0 ? 0.5 * 0x1.0p-53 : u;
}

} // namespace slr::model
