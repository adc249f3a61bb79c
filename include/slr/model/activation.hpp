#pragma once
// Attention activations σ: R^L → R^L of docs/theory.md §1, behind one small interface.
//   softmax          σ_l = e^{χ_l} / Σ_m e^{χ_m}            (log-sum-exp stable)
//   linear           σ_l = 1 + χ_l
//   erf              σ_l = 1 + erf(c + χ_l)                  (offset c, default 0)
//   softplus-kernel  σ_l = sp(χ_l) / Σ_m sp(χ_m), sp(t) = log(1 + e^t)
// Adding an activation: one source file src/model/activation_<name>.cpp implementing this interface
// and defining its factory detail::make_<name>, plus, in this header, its kind, the factory's
// declaration and its row of activation_names() (the name every parser, help text and error
// message uses). The build picks up the new source file by its name.
#include <array>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace slr::model {

enum class activation_kind { softmax, linear, erf, softplus_kernel };

/// What identifies an activation: its kind and, for erf, the offset c.
struct activation_spec {
  activation_kind kind = activation_kind::softmax;
  double erf_offset = 0.0;
  /// Parses "softmax", "linear", "erf", "softplus-kernel"; throws std::invalid_argument.
  static activation_kind parse_kind(std::string_view name);
  /// "softmax", "linear", "erf", "softplus-kernel".
  [[nodiscard]] std::string kind_name() const;
  friend bool operator==(const activation_spec&, const activation_spec&) = default;
};

/// σ and its first two derivatives for one sequence. All spans have length L (matrices L×L,
/// row-major). Implementations are stateless and thread-safe.
class activation {
public:
  virtual ~activation() = default;
  [[nodiscard]] virtual activation_spec spec() const noexcept = 0;

  /// sigma = σ(χ).
  virtual void evaluate(std::span<const double> chi, std::span<double> sigma) const = 0;

  /// sigma = σ(χ) and out = Jᵀu with J_lm = ∂σ_l/∂χ_m, i.e. out_m = ∂(σ·u)/∂χ_m.
  virtual void vector_jacobian(std::span<const double> chi, std::span<const double> u,
                               std::span<double> sigma, std::span<double> out) const = 0;

  /// sigma = σ(χ) and, in `work` (length L), what jacobian_transpose needs to form Jᵀu at this χ
  /// for any u without evaluating σ or a transcendental function again. The defaults keep χ in
  /// `work` and call vector_jacobian; the four activations override both.
  virtual void linearise(std::span<const double> chi, std::span<double> sigma, std::span<double> work) const;

  /// out = Jᵀu at the χ of an earlier linearise(chi, sigma, work) (sigma and work from that call).
  /// linearise + jacobian_transpose gives bit for bit what vector_jacobian gives.
  virtual void jacobian_transpose(std::span<const double> sigma, std::span<const double> work,
                                  std::span<const double> u, std::span<double> out) const;

  /// sigma = σ(χ), jacobian = J (J_lm = ∂σ_l/∂χ_m) and hessian_m n = Σ_l u_l ∂²σ_l/∂χ_m∂χ_n.
  virtual void second_order(std::span<const double> chi, std::span<const double> u,
                            std::span<double> sigma, std::span<double> jacobian,
                            std::span<double> hessian) const = 0;

protected:
  /// vector_jacobian as linearise then jacobian_transpose (for implementations that override both).
  void vector_jacobian_by_linearisation(std::span<const double> chi, std::span<const double> u,
                                        std::span<double> sigma, std::span<double> out) const;
};

namespace detail {
// The factories, one per source file src/model/activation_<name>.cpp.
std::unique_ptr<const activation> make_softmax(const activation_spec& spec);
std::unique_ptr<const activation> make_linear(const activation_spec& spec);
std::unique_ptr<const activation> make_erf(const activation_spec& spec);
std::unique_ptr<const activation> make_softplus_kernel(const activation_spec& spec);
} // namespace detail

struct activation_name {
  activation_kind kind;
  const char* name;
  std::unique_ptr<const activation> (*make)(const activation_spec&);
};
/// The one table of activations: kind, name, factory, in the order help texts list them.
inline constexpr std::array<activation_name, 4> activation_table = {{
    {activation_kind::softmax, "softmax", &detail::make_softmax},
    {activation_kind::linear, "linear", &detail::make_linear},
    {activation_kind::erf, "erf", &detail::make_erf},
    {activation_kind::softplus_kernel, "softplus-kernel", &detail::make_softplus_kernel},
}};
[[nodiscard]] inline const std::array<activation_name, activation_table.size()>& activation_names() noexcept {
  return activation_table;
}

/// Throws std::invalid_argument for a non-finite erf offset.
[[nodiscard]] std::unique_ptr<const activation> make_activation(const activation_spec& spec);

} // namespace slr::model
