#pragma once
// One setting of the attention-indexed model with a tied single-head attention student
// (docs: tied-attention conventions, normalisations of docs/theory.md §T0–1 copied into
// docs/theory when the model is documented). Plain values: no I/O, no MPI, no HDF5.
//
// Teacher: S* = W* W*ᵀ/√(r* d), W* ∈ R^{d×r*} iid N(0,1), r* = round(k0 d) (Marchenko–Pastur target).
// Field:   h_ab(S; X) = (x_aᵀ S x_b − δ_ab Tr S)/√d, a, b = 1..T.
// Labels:  Y = σ_β0(h(S*; X) + √Δ Ξ) (row-wise softmax of the T×T matrix); sequence-to-sequence
//          targets are the outputs Y X ∈ R^{T×d} (docs/theory.md §T1, "Sequence-to-sequence labels").
// Student: factorised S = W Wᵀ/√(r d), r = round(k d), penalty λ d Tr S;
//          direct symmetric S, penalty λ d ‖S‖²_F; psd-nuclear S ⪰ 0, penalty λ d Tr S.
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace slr::tied {

enum class parametrisation { factorised, direct, psd_nuclear };
/// Every parametrisation, in the order of the declared choices.
inline constexpr std::array all_parametrisations{parametrisation::factorised, parametrisation::direct,
                                                 parametrisation::psd_nuclear};

/// "factorised", "direct", "psd-nuclear".
[[nodiscard]] std::string_view parametrisation_name(parametrisation p) noexcept;
/// Throws std::invalid_argument naming the accepted names.
[[nodiscard]] parametrisation parse_parametrisation(std::string_view name);

/// What the student is trained to reproduce. seq2label: the T×T attention matrix Y, loss
/// Σ_μ ‖σ_β(h(S; X_μ)) − Y_μ‖²_F. seq2seq: the output sequence Y X (T×d), loss
/// (1/d) Σ_μ ‖(σ_β(h(S; X_μ)) − Y_μ) X_μ‖²_F. The replica-symmetric theory is the same for both
/// (X Xᵀ/d → I_T); at finite d they differ by O(d^{-1/2}) per sequence.
enum class label_form { seq2label, seq2seq };
inline constexpr std::array all_label_forms{label_form::seq2label, label_form::seq2seq};

/// "seq2label", "seq2seq".
[[nodiscard]] std::string_view label_form_name(label_form form) noexcept;
/// Throws std::invalid_argument naming the accepted names.
[[nodiscard]] label_form parse_label_form(std::string_view name);

namespace detail {
/// The value of `all` whose name_of(value) is `name`; throws std::invalid_argument
/// "<what>: unknown value '<name>' (<the names>)" otherwise. Shared by the parse_* functions.
template <class Enum, std::size_t N, class Name>
Enum parse_named(const char* what, const std::array<Enum, N>& all, Name name_of, std::string_view name) {
  std::string known;
  for (auto value : all) {
    if (name_of(value) == name) return value;
    known += (known.empty() ? "" : ", ") + std::string(name_of(value));
  }
  throw std::invalid_argument(std::string(what) + ": unknown value '" + std::string(name) + "' (" + known + ")");
}
} // namespace detail

/// Tokens per sequence the model takes, T ∈ [2, max_tokens]: the ERM data and kernels hold the
/// T×T fields of a sequence on the stack (T² ≤ 256). The replica-symmetric theory takes fewer
/// (tied::max_channel_T, slr/tied/channel.hpp).
inline constexpr int max_tokens = 16;

struct problem {
  int T = 2;              ///< sequence length (tokens per sequence), 2 ≤ T ≤ max_tokens
  double alpha = 1.0;     ///< sample complexity: n = α d² training sequences, α > 0
  double k0 = 0.5;        ///< target rank ratio r*/d, 0 < k0 ≤ 1 (MP target)
  double k = 1.0;         ///< student width ratio r/d (factorised), k > 0; ignored by direct
  double lambda = 0.01;   ///< weight decay λ ≥ 0 (penalty λ d Tr S or λ d ‖S‖²_F)
  double delta = 0.5;     ///< pre-softmax label-noise variance Δ ≥ 0
  double beta = 1.0;      ///< student inverse temperature β > 0
  double beta0 = 1.0;     ///< teacher inverse temperature β0 > 0
  tied::parametrisation param = tied::parametrisation::factorised;
  tied::label_form labels = tied::label_form::seq2label;

  /// Throws std::invalid_argument "<name>: <reason>" for the first out-of-range value.
  void validate() const;
  /// L = T(T+1)/2: number of distinct fields of a sequence.
  [[nodiscard]] int fields() const noexcept { return T * (T + 1) / 2; }
  /// Q0 = (1/d) Tr S*² in the limit d → ∞: 1 + k0.
  [[nodiscard]] double target_second_moment() const noexcept { return 1.0 + k0; }
};

} // namespace slr::tied
