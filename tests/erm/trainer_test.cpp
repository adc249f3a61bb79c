// Trainers: L-BFGS reaches the tolerance on a small instance, gradient flow decreases the
// objective and ends where L-BFGS ends, both are identical for any thread count, the
// wall-time limit stops them with the right reason, and bad settings are rejected.
#include "slr/erm/trainer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace {
using namespace slr;

struct instance {
  model::problem problem;
  erm::teacher teacher;
  erm::sequence_data data;
};

instance make_instance(std::size_t D, double alpha, model::activation_kind kind, std::uint64_t seed) {
  model::problem p;
  p.task = model::task(model::task_kind::spiked, 1.0);
  p.activation.kind = kind;
  auto t = erm::teacher::draw(D, seed);
  auto data = erm::sequence_data::generate(p, t, static_cast<std::size_t>(alpha * static_cast<double>(D)), seed,
                                           model::stream_purpose::training_data, erm::precision::f64, 2);
  return {p, std::move(t), std::move(data)};
}

TEST(Trainer, LbfgsReachesTolerance) {
  for (auto kind : {model::activation_kind::softmax, model::activation_kind::linear}) {
    const auto in = make_instance(120, 4, kind, 3);
    const erm::empirical_risk risk(in.data, in.problem.activation, 1.0, 1.0, 2);
    erm::trainer_settings settings;
    settings.tolerance = 1e-7; // near the rounding floor of the strong-Wolfe test on F (~1e-8 here)
    const auto w0 = erm::initial_weights(in.teacher, erm::initialisation::informed, 0.1, 3);
    const auto result = erm::train(risk, in.teacher, w0, settings);
    EXPECT_EQ(result.stopped, erm::stop_reason::tolerance) << result.message;
    EXPECT_LE(result.rel_grad, 1e-7);
    EXPECT_LT(result.iterations, 500U);
    EXPECT_GE(result.gradient_evaluations, result.iterations);
    Eigen::VectorXd gradient;
    const auto at_end = risk.evaluate(result.w, gradient);
    EXPECT_DOUBLE_EQ(result.train_loss_regularised, at_end.objective / static_cast<double>(risk.samples()));
    EXPECT_LE(erm::relative_gradient(risk, result.w, gradient), 1e-7);
    Eigen::VectorXd g0;
    EXPECT_LT(at_end.objective, risk.evaluate(w0, g0).objective);
  }
}

TEST(Trainer, GradientFlowDescendsToTheLbfgsMinimum) {
  const auto in = make_instance(80, 3, model::activation_kind::softmax, 7);
  const erm::empirical_risk risk(in.data, in.problem.activation, 1.0, 1.0, 1);
  const auto w0 = erm::initial_weights(in.teacher, erm::initialisation::informed, 0.1, 7);
  erm::trainer_settings lbfgs;
  lbfgs.tolerance = 1e-7;
  const auto reference = erm::train(risk, in.teacher, w0, lbfgs);
  ASSERT_EQ(reference.stopped, erm::stop_reason::tolerance);
  erm::trainer_settings flow;
  flow.method = erm::optimizer::gradient_flow;
  flow.tolerance = 1e-5;
  flow.record_times = {0, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 400};
  const auto result = erm::train(risk, in.teacher, w0, flow);
  ASSERT_FALSE(result.trajectory.empty());
  EXPECT_EQ(result.trajectory.front().time, 0.0);
  for (std::size_t i = 1; i < result.trajectory.size(); ++i)
    EXPECT_LE(result.trajectory[i].train_loss_regularised, result.trajectory[i - 1].train_loss_regularised * (1 + 1e-9));
  EXPECT_TRUE(result.stopped == erm::stop_reason::tolerance || result.stopped == erm::stop_reason::horizon);
  const auto a = erm::measure_order_parameters(in.teacher, result.w.head(80), result.w.tail(80));
  const auto b = erm::measure_order_parameters(in.teacher, reference.w.head(80), reference.w.tail(80));
  EXPECT_NEAR(a.m_kk, b.m_kk, 1e-4);
  EXPECT_NEAR(a.m_vv, b.m_vv, 1e-4);
  EXPECT_NEAR(a.q_kk, b.q_kk, 1e-4);
  EXPECT_NEAR(a.q_vv, b.q_vv, 1e-4);
  EXPECT_NEAR(result.train_loss_regularised, reference.train_loss_regularised, 1e-8);
}

TEST(Trainer, IdenticalForAnyThreadCount) {
  const auto in = make_instance(60, 4, model::activation_kind::erf, 5);
  const auto w0 = erm::initial_weights(in.teacher, erm::initialisation::random, 0.5, 5);
  const erm::empirical_risk one(in.data, in.problem.activation, 0.5, 0.5, 1), two(in.data, in.problem.activation, 0.5, 0.5, 2);
  const auto a = erm::train(one, in.teacher, w0, {});
  const auto b = erm::train(two, in.teacher, w0, {});
  EXPECT_EQ(a.w, b.w);
  EXPECT_EQ(a.iterations, b.iterations);
}

TEST(Trainer, StopsAtTheWallTimeLimitAndIterationCap) {
  const auto in = make_instance(60, 4, model::activation_kind::softmax, 9);
  const erm::empirical_risk risk(in.data, in.problem.activation, 1, 1, 1);
  const auto w0 = erm::initial_weights(in.teacher, erm::initialisation::informed, 0.1, 9);
  erm::trainer_settings settings;
  settings.wall_time_limit_s = 0.0;
  EXPECT_EQ(erm::train(risk, in.teacher, w0, settings).stopped, erm::stop_reason::timeout);
  settings.wall_time_limit_s = std::numeric_limits<double>::infinity();
  settings.max_iterations = 2;
  settings.tolerance = 1e-12;
  const auto capped = erm::train(risk, in.teacher, w0, settings);
  EXPECT_EQ(capped.stopped, erm::stop_reason::iteration_cap);
  EXPECT_EQ(capped.iterations, 2U);
}

TEST(Trainer, BadInput) {
  const auto in = make_instance(20, 2, model::activation_kind::linear, 1);
  const erm::empirical_risk risk(in.data, in.problem.activation, 1, 1, 1);
  const auto w0 = erm::initial_weights(in.teacher, erm::initialisation::informed, 0.1, 1);
  EXPECT_THROW((void)erm::train(risk, in.teacher, Eigen::VectorXd::Zero(5), {}), std::invalid_argument);
  erm::trainer_settings settings;
  settings.tolerance = 0;
  EXPECT_THROW((void)erm::train(risk, in.teacher, w0, settings), std::invalid_argument);
  settings = {};
  settings.method = erm::optimizer::gradient_flow;
  settings.record_times = {1, 0.5};
  EXPECT_THROW((void)erm::train(risk, in.teacher, w0, settings), std::invalid_argument);
  EXPECT_THROW((void)erm::parse_optimizer("sgd"), std::invalid_argument);
  EXPECT_THROW((void)erm::parse_initialisation("zero"), std::invalid_argument);
  EXPECT_THROW((void)erm::initial_weights(in.teacher, erm::initialisation::random, -1, 1), std::invalid_argument);
}
} // namespace
