// Job files: parsing, validation errors (file/field/reason), expansion counts and identities.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <set>

#include "slr/grid/suggest.hpp"
#include "slr/job/expansion.hpp"
#include "slr/job/job_file.hpp"
#include "slr/model/random.hpp"
#include "slr/methods/registry.hpp"

namespace slr::job {
namespace {

const std::string smoke_like = R"(
name = "t"
seed = 7
[grid]
task = ["spiked", "max"]
nu = [1, 4]
activation = ["softmax", "linear"]
[[method]]
name = "population"
samples = 1000
[[method]]
name = "bayes"
samples = 1000
grid = { activation = "softmax" }
)";

TEST(JobParse, CountsOfTheProductAndPerMethodOverride) {
  const auto job = parse_job(smoke_like, "smoke_like");
  EXPECT_EQ(job.name, "t");
  EXPECT_EQ(job.master_seed, 7u);
  ASSERT_EQ(job.methods.size(), 2u);
  const auto units = expand(job);
  // population: 2 tasks × 2 nu × 2 activations; bayes: 2 × 2 × 1.
  EXPECT_EQ(point_count(units), 8u + 4u);
  EXPECT_EQ(units.size(), 12u);
  std::set<std::uint64_t> ids;
  for (const auto& u : units) ids.insert(u.points.front().id);
  EXPECT_EQ(ids.size(), 12u);
}

TEST(JobParse, LinspaceAndLogspace) {
  const auto job = parse_job(R"(
name = "g"
seed = 1
[grid]
nu = {linspace = [0, 1, 5]}
delta = {logspace = [-2, 0, 3]}
[[method]]
name = "bayes"
)",
                             "gen");
  const auto& nu = job.methods[0].grid.values.at("nu");
  ASSERT_EQ(nu.size(), 5u);
  EXPECT_DOUBLE_EQ(std::stod(nu[0]), 0.0);
  EXPECT_DOUBLE_EQ(std::stod(nu[1]), 0.25);
  EXPECT_DOUBLE_EQ(std::stod(nu[4]), 1.0);
  const auto& delta = job.methods[0].grid.values.at("delta");
  ASSERT_EQ(delta.size(), 3u);
  EXPECT_DOUBLE_EQ(std::stod(delta[0]), 0.01);
  EXPECT_DOUBLE_EQ(std::stod(delta[1]), 0.1);
  EXPECT_DOUBLE_EQ(std::stod(delta[2]), 1.0);
  EXPECT_EQ(point_count(expand(job)), 15u);
}

TEST(JobParse, AnOptionZipsWithAModelParameter) {
  // D = 1e3 / sqrt(alpha): the two lists iterate together, in one [[method]] entry.
  const auto job = parse_job(R"(
name = "z"
seed = 1
[grid]
alpha = [1, 4, 16]
D = [1000, 500, 250]
zip = [["alpha", "D"]]
r_k = 0.1
r_v = 0.1
[[method]]
name = "erm"
)",
                             "zip");
  const auto units = expand(job);
  ASSERT_EQ(point_count(units), 3u);
  std::set<std::string> pairs;
  for (const auto& u : units)
    pairs.insert(grid::format_number(u.points[0].point.alpha) + "/" + u.points[0].point.options.at("D"));
  EXPECT_EQ(pairs, (std::set<std::string>{"1/1000", "4/500", "16/250"}));
  // A method option in [grid] that no method of the job takes is an error, not silently ignored.
  EXPECT_THROW((void)parse_job("name = \"z\"\nseed = 1\n[grid]\nD = 100\n[[method]]\nname = \"bayes\"\n", "d"),
               job_error);
}

TEST(JobParse, ZipIteratesAxesTogether) {
  const std::string base = R"(
name = "z"
seed = 1
[grid]
nu = [1, 2, 3]
delta = [0.1, 0.2, 0.3]
)";
  const auto product = expand(parse_job(base + "[[method]]\nname = \"bayes\"\n", "p"));
  EXPECT_EQ(point_count(product), 9u);
  const auto zipped = expand(parse_job(base + "zip = [[\"nu\", \"delta\"]]\n[[method]]\nname = \"bayes\"\n", "z"));
  ASSERT_EQ(point_count(zipped), 3u);
  for (const auto& u : zipped)
    EXPECT_DOUBLE_EQ(u.points[0].point.problem.delta, 0.1 * u.points[0].point.problem.task.nu());
}

TEST(JobParse, RepeatsGetDistinctIdsAndSeedsAndRepeatZeroIsThePointIdentity) {
  const auto units = expand(parse_job("name = \"r\"\nseed = 3\n[grid]\nnu = [1, 2]\nrepeats = 3\n"
                                      "[[method]]\nname = \"bayes\"\n",
                                      "r"));
  ASSERT_EQ(point_count(units), 6u);
  std::set<std::uint64_t> ids, seeds;
  for (const auto& u : units) {
    const auto& p = u.points[0];
    ids.insert(p.id);
    seeds.insert(p.point.seed);
    EXPECT_EQ(p.point.seed, model::derive_seed(3, p.id));
    if (p.repeat == 0) EXPECT_EQ(p.id, p.point.identity());
    else EXPECT_NE(p.id, p.point.identity());
  }
  EXPECT_EQ(ids.size(), 6u);
  EXPECT_EQ(seeds.size(), 6u);
}

TEST(CommonSamples, OneSeedPerCurveAndRepeatIdentitiesUnchanged) {
  const std::string text = "name = \"c\"\nseed = 5\n[grid]\nalpha = [0.5, 1, 2]\nrepeats = 2\n"
                           "[[method]]\nname = \"state-evolution\"\nsamples = 1000\ncommon-samples = \"alpha\"\n"
                           "[[method]]\nname = \"state-evolution\"\nsamples = 2000\n";
  const auto units = expand(parse_job(text, "c"));
  ASSERT_EQ(point_count(units), 12u);
  std::set<std::uint64_t> ids, common_seeds, independent_seeds;
  for (const auto& u : units) {
    const auto& p = u.points[0];
    ids.insert(p.id);
    if (p.point.options.contains("common-samples")) {
      // The seed of the same point without α (and the same repeat).
      auto without_alpha = p.point;
      without_alpha.alpha = grid::not_set;
      EXPECT_EQ(p.point.seed, model::derive_seed(5, point_id(without_alpha, p.repeat, false)));
      common_seeds.insert(p.point.seed);
    } else {
      EXPECT_EQ(p.point.seed, model::derive_seed(5, p.id)); // the option left at its default changes nothing
      EXPECT_EQ(p.point.canonical().find("common-samples"), std::string::npos);
      independent_seeds.insert(p.point.seed);
    }
  }
  EXPECT_EQ(ids.size(), 12u);
  EXPECT_EQ(common_seeds.size(), 2u);      // one per repeat, shared by the three α
  EXPECT_EQ(independent_seeds.size(), 6u); // one per point
}

TEST(PairedSeeds, BothLabelFormsOfARepeatShareTheSeedAndTheDefaultKeepsItsIdentity) {
  const std::string text = "name = \"p\"\nseed = 9\nmodel = \"tied-attention\"\n[grid]\nalpha = [0.5, 2]\n"
                           "repeats = 3\nlabels = [\"seq2label\", \"seq2seq\"]\n"
                           "[[method]]\nname = \"erm\"\nd = 20\n";
  const auto units = expand(parse_job(text, "p"));
  ASSERT_EQ(point_count(units), 12u);
  std::map<std::pair<double, std::uint32_t>, std::vector<std::uint64_t>> seeds;
  std::set<std::uint64_t> ids;
  for (const auto& u : units) {
    const auto& p = u.points[0];
    ids.insert(p.id);
    const bool seq2seq = p.point.options.contains("labels");
    // seq2label is the default: left out of the identity, so points of earlier archives keep theirs.
    if (!seq2seq) {
      EXPECT_EQ(p.point.canonical().find("labels"), std::string::npos);
      EXPECT_EQ(p.point.seed, model::derive_seed(9, p.id));
    } else {
      EXPECT_EQ(p.point.options.at("labels"), "seq2seq");
    }
    seeds[{std::stod(p.point.options.at("alpha")), p.repeat}].push_back(p.point.seed);
  }
  EXPECT_EQ(ids.size(), 12u);
  ASSERT_EQ(seeds.size(), 6u);
  std::set<std::uint64_t> distinct;
  for (const auto& [key, pair] : seeds) {
    ASSERT_EQ(pair.size(), 2u);
    EXPECT_EQ(pair[0], pair[1]); // the two label forms of one (alpha, repeat)
    distinct.insert(pair[0]);
  }
  EXPECT_EQ(distinct.size(), 6u);
}

// A Bayes-optimal risk cannot increase with α. With common samples along α the state-evolution
// curve is non-increasing within its Monte Carlo error on a 41-point grid through the first-order
// jump of spiked-SLR (ν = 1, L = 3, Δ = 0, near α ≈ 1.1).
TEST(CommonSamples, BayesOptimalCurveIsNonIncreasingInAlpha) {
  const std::string text = "name = \"se\"\nseed = 11\n[grid]\nalpha = {linspace = [0.2, 3.0, 41]}\n"
                           "[[method]]\nname = \"state-evolution\"\nsamples = 10000\ncommon-samples = \"alpha\"\n";
  auto units = expand(parse_job(text, "se"));
  ASSERT_EQ(units.size(), 41u);
  std::sort(units.begin(), units.end(),
            [](const sweep_unit& a, const sweep_unit& b) { return a.points[0].point.alpha < b.points[0].point.alpha; });
  std::vector<double> risk, error;
  for (const auto& u : units) {
    const auto r = methods::solve_point(u.points[0].point, {});
    ASSERT_EQ(r.status, grid::status::ok) << r.message;
    risk.push_back(r.get("test_risk"));
    error.push_back(r.get("test_risk_stderr"));
  }
  double largest_increase = -1;
  for (std::size_t i = 0; i + 1 < risk.size(); ++i) {
    EXPECT_LE(risk[i + 1], risk[i] + error[i]) << "alpha index " << i;
    largest_increase = std::max(largest_increase, risk[i + 1] - risk[i]);
  }
  // The jump: the largest drop between neighbours, far above the smooth decrease elsewhere.
  double largest_drop = 0;
  for (std::size_t i = 0; i + 1 < risk.size(); ++i) largest_drop = std::max(largest_drop, risk[i] - risk[i + 1]);
  EXPECT_GT(largest_drop, 0.1);
  std::cout << "state evolution on 41 alpha: largest increase " << largest_increase << ", largest drop "
            << largest_drop << ", Monte Carlo error " << error.front() << " .. " << error.back() << "\n";
}

TEST(JobParse, PopulationMethodsCollapseFiniteAlphaAxesAndErfOffsetOnlyMattersForErf) {
  const auto units = expand(parse_job(R"(
name = "c"
seed = 1
[grid]
activation = ["softmax", "erf"]
erf_offset = [0, 0.5]
alpha = [1, 2, 3]
r_k = [0.1]
r_v = [0.1]
[[method]]
name = "bayes"
)",
                                      "c"));
  // softmax: one point (offset irrelevant); erf: two offsets; α, r ignored by bayes.
  EXPECT_EQ(point_count(units), 3u);
  for (const auto& u : units) EXPECT_TRUE(std::isnan(u.points[0].point.alpha));
}

TEST(JobParse, StateEvolutionNeedsAlphaButNoRegularisation) {
  // The Bayes-optimal state evolution has no penalty: r may be absent, and shared r values
  // collapse (complete_point clears them), so each α gives one point.
  const auto without_r = parse_job(R"(
name = "se"
seed = 3
[[method]]
name = "state-evolution"
samples = 1000
grid = { alpha = [1.0, 2.0] }
)",
                                   "se");
  EXPECT_EQ(point_count(expand(without_r)), 2u);
  const auto shared_r = parse_job(R"(
name = "se"
seed = 3
[grid]
alpha = [1.0, 2.0]
r_k = [0.1, 1.0]
r_v = [0.1, 1.0]
zip = [["r_k", "r_v"]]
[[method]]
name = "state-evolution"
samples = 1000
[[method]]
name = "fixed-point"
samples = 1000
)",
                                  "se");
  const auto units = expand(shared_r);
  std::size_t state_evolution = 0, fixed_point = 0;
  for (const auto& u : units)
    for (const auto& p : u.points) {
      if (p.point.method == "state-evolution") {
        ++state_evolution;
        EXPECT_TRUE(std::isnan(p.point.r_k));
      } else {
        ++fixed_point;
      }
    }
  EXPECT_EQ(state_evolution, 2u);
  EXPECT_EQ(fixed_point, 4u);
  // The fixed point still requires r.
  EXPECT_THROW(parse_job(R"(
name = "fp"
seed = 3
[[method]]
name = "fixed-point"
grid = { alpha = 1.0 }
)",
                         "fp"),
               job_error);
}

TEST(JobIdentity, IndependentOfValueOrderCommentsAndName) {
  const auto a = parse_job("name = \"a\"\nseed = 5\n[grid]\nnu = [1, 4]\n[[method]]\nname = \"bayes\"\n", "a");
  const auto b = parse_job("# comment\nname = \"b\"\nseed = 5\n[grid]\nnu = [4, 1]\n[[method]]\nname = \"bayes\"\n", "b");
  EXPECT_EQ(fingerprint(a), fingerprint(b));
  const auto c = parse_job("name = \"a\"\nseed = 6\n[grid]\nnu = [1, 4]\n[[method]]\nname = \"bayes\"\n", "c");
  EXPECT_NE(fingerprint(a), fingerprint(c));
  EXPECT_EQ(fingerprint(a).size(), 16u);
}

TEST(JobIdentity, PinnedIdentityOfOnePoint) {
  // Identities are stored in archives: changing how they are computed orphans every archive.
  // (Update deliberately, with a schema version bump, if grid::point::canonical changes.)
  const auto units = expand(parse_job(
      "name = \"p\"\nseed = 11\n[grid]\nnu = 4\nL = 3\n[[method]]\nname = \"bayes\"\nsamples = 1000\n", "p"));
  ASSERT_EQ(units.size(), 1u);
  const auto& p = units[0].points[0];
  EXPECT_EQ(p.point.canonical(),
            "method=bayes;task=spiked;nu=4;L=3;delta=0;activation=softmax;alpha=nan;r_k=nan;r_v=nan;samples=1000");
  EXPECT_EQ(p.id, model::stable_hash(p.point.canonical()));
  EXPECT_EQ(p.point.seed, model::derive_seed(11, p.id));
}

// Options added to the tied theory's methods after archives existed (hats; the threshold's
// lambda-max, lambda-min, qmc-points) stay out of a point's text at their defaults, so the
// identities of those archives' points are unchanged; a value other than the default enters it.
TEST(JobIdentity, TiedOptionsAddedLaterKeepIdentitiesAtTheirDefaults) {
  const auto units = expand(parse_job("name = \"t\"\nseed = 3\nmodel = \"tied-attention\"\n[grid]\nalpha = 0.5\n"
                                      "[[method]]\nname = \"fixed-point\"\n"
                                      "[[method]]\nname = \"recovery-threshold\"\ninterpolation = \"rs\"\n"
                                      "[[method]]\nname = \"fixed-point\"\nhats = \"hessian\"\n",
                                      "t"));
  ASSERT_EQ(units.size(), 3u);
  EXPECT_EQ(units[0].points[0].point.canonical(),
            "model=tied-attention;method=fixed-point;T=2;alpha=0.5;beta=1;beta0=1;delta=0.5;k=1;k0=0.5;lambda=0.01;"
            "max-iter=100;parametrisation=factorised;qmc-points=16;tol=1e-07");
  EXPECT_EQ(units[1].points[0].point.canonical(),
            "model=tied-attention;method=recovery-threshold;T=2;alpha-hi=1;alpha-lo=0.05;alpha-tol=0.005;delta=0.5;"
            "interpolation=rs;k0=0.5;parametrisation=factorised");
  EXPECT_NE(units[2].points[0].point.canonical().find(";hats=hessian;"), std::string::npos);
}

TEST(JobExtension, SupersetAcceptedOtherwiseRefusedWithReason) {
  const auto small = expand(parse_job("name = \"e\"\nseed = 5\n[grid]\nnu = [1]\n[[method]]\nname = \"bayes\"\n", "s"));
  const auto big = expand(parse_job("name = \"e\"\nseed = 5\n[grid]\nnu = [1, 2]\n[[method]]\nname = \"bayes\"\n", "b"));
  const auto ok = check_extension(small, big);
  EXPECT_TRUE(ok.accepted) << ok.reason;
  EXPECT_EQ(ok.shared_points, 1u);
  EXPECT_EQ(ok.added_points, 1u);
  const auto shrink = check_extension(big, small);
  EXPECT_FALSE(shrink.accepted);
  EXPECT_NE(shrink.reason.find("not in the new job"), std::string::npos) << shrink.reason;
  const auto reseeded =
      expand(parse_job("name = \"e\"\nseed = 6\n[grid]\nnu = [1, 2]\n[[method]]\nname = \"bayes\"\n", "b"));
  const auto refused = check_extension(small, reseeded);
  EXPECT_FALSE(refused.accepted);
}

TEST(JobExtension, ChainsMayGainAlphaValuesButNotLoseOrSplit) {
  const auto chain = [](const std::string& alphas) {
    return expand(parse_job("name = \"c\"\nseed = 3\n[grid]\nalpha = " + alphas +
                                "\nr_k = 0.1\nr_v = 0.1\n[[method]]\nname = \"fixed-point\"\ncontinuation = \"alpha\"\n",
                            "c"));
  };
  for (const auto& bigger : {"[1, 2, 4]", "[0.5, 1, 2]", "[1, 1.5, 2]", "[0.5, 1, 1.5, 2, 8]"}) {
    const auto check = check_extension(chain("[1, 2]"), chain(bigger));
    EXPECT_TRUE(check.accepted) << bigger << ": " << check.reason;
    EXPECT_EQ(check.shared_points, 2u) << bigger;
  }
  const auto single = check_extension(chain("[2]"), chain("[1, 2]"));
  EXPECT_TRUE(single.accepted) << single.reason; // a one-point chain grows into a chain
  const auto lost = check_extension(chain("[1, 2, 4]"), chain("[1, 4]"));
  EXPECT_FALSE(lost.accepted);
  EXPECT_NE(lost.reason.find("not in the new job"), std::string::npos) << lost.reason;
}

TEST(JobContinuation, ChainsInIncreasingAlpha) {
  const methods::method_descriptor* finite = nullptr;
  for (const auto& m : methods::all_methods())
    if (m.finite_alpha) finite = &m;
  if (finite == nullptr) GTEST_SKIP() << "no finite-alpha method in this build's registry";
  const auto job = parse_job("name = \"ch\"\nseed = 2\n[grid]\nalpha = [2, 0.5, 1]\nr_k = [0.1, 1]\nr_v = 0.1\n"
                             "repeats = 2\n[[method]]\nname = \"" +
                                 finite->name + "\"\ncontinuation = \"alpha\"\n",
                             "ch");
  const auto units = expand(job);
  ASSERT_EQ(units.size(), 4u); // 2 r_k × 2 repeats
  for (const auto& u : units) {
    ASSERT_EQ(u.points.size(), 3u);
    EXPECT_TRUE(u.is_chain());
    EXPECT_EQ(u.points[0].point.alpha, 0.5);
    EXPECT_EQ(u.points[1].point.alpha, 1.0);
    EXPECT_EQ(u.points[2].point.alpha, 2.0);
    for (const auto& p : u.points) EXPECT_EQ(p.id, point_id(p.point, p.repeat, true));
  }
  EXPECT_EQ(work_units(units).front().points.size(), 3u);
}

// ---- "did you mean" ---------------------------------------------------------------------------
TEST(Suggest, EditDistanceCountsTranspositionsAndIgnoresCaseAndDashes) {
  EXPECT_EQ(slr::grid::edit_distance("sampels", "samples"), 1u); // one transposition
  EXPECT_EQ(slr::grid::edit_distance("alpah", "alpha"), 1u);
  EXPECT_EQ(slr::grid::edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(slr::grid::edit_distance("R-K", "r_k"), 0u);
  EXPECT_EQ(slr::grid::edit_distance("", "abc"), 3u);
}

TEST(Suggest, OnlyNamesCloseEnoughToBeATypingError) {
  const std::vector<std::string> known = {"samples", "seed", "tied-attention", "slr", "max-iter"};
  EXPECT_EQ(slr::grid::did_you_mean("sampels", known), " (did you mean 'samples'?)");
  EXPECT_EQ(slr::grid::did_you_mean("max_iter", known), " (did you mean 'max-iter'?)");
  EXPECT_EQ(slr::grid::did_you_mean("tied", known), " (did you mean 'tied-attention'?)"); // a unique beginning
  EXPECT_EQ(slr::grid::did_you_mean("frobnicate", known), "");
  EXPECT_EQ(slr::grid::did_you_mean("x", known), "");     // one letter is no evidence
  EXPECT_EQ(slr::grid::did_you_mean("seed", known), "");  // known: nothing to suggest
  EXPECT_EQ(slr::grid::did_you_mean("s", {"samples", "seed"}), "");
}

// ---- bad job files: each a clear job_error naming the field ---------------------------------
struct bad_case {
  const char* label;
  std::string text;
  const char* field;  // expected job_error::field() (prefix)
  const char* reason; // expected substring of job_error::reason()
};

std::string with_method(const std::string& head, const std::string& method = "name = \"bayes\"") {
  return head + "\n[[method]]\n" + method + "\n";
}

class BadJob : public ::testing::TestWithParam<bad_case> {};

TEST_P(BadJob, GivesFileFieldAndReason) {
  const auto& c = GetParam();
  try {
    const auto job = parse_job(c.text, "bad.toml");
    (void)expand(job);
    FAIL() << c.label << ": accepted";
  } catch (const job_error& e) {
    EXPECT_EQ(e.file(), "bad.toml") << c.label;
    EXPECT_TRUE(e.field().starts_with(c.field)) << c.label << ": field '" << e.field() << "' — " << e.what();
    EXPECT_NE(e.reason().find(c.reason), std::string::npos) << c.label << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.toml"), std::string::npos);
  }
}

const std::string head = "name = \"bad\"\nseed = 1\n";

INSTANTIATE_TEST_SUITE_P(
    Kinds, BadJob,
    ::testing::Values(
        bad_case{"syntax", "name = \"unterminated\nseed = 1\n", "", "TOML syntax error"},
        bad_case{"unknown top-level key", with_method(head + "sede = 3"), "sede", "unknown key (did you mean 'seed'?)"},
        bad_case{"unknown grid key", with_method(head + "[grid]\nalpah = 1"), "grid.alpah",
                 "unknown grid key (did you mean 'alpha'?)"},
        bad_case{"wrong type", with_method("name = \"bad\"\nseed = \"abc\""), "seed", "expected an integer"},
        bad_case{"empty axis", with_method(head + "[grid]\nnu = []"), "grid.nu", "empty axis"},
        bad_case{"logspace n = 0", with_method(head + "[grid]\nnu = {logspace = [-1, 1, 0]}"), "grid.nu.logspace",
                 "count must be >= 1"},
        bad_case{"unknown activation", with_method(head + "[grid]\nactivation = [\"softmx\"]"), "grid.activation",
                 "(did you mean 'softmax'?)"},
        bad_case{"unknown task", with_method(head + "[grid]\ntask = \"spikey\""), "grid.task", "unknown task"},
        bad_case{"unknown method", with_method(head, "name = \"populaton\""), "method[1].name",
                 "unknown method 'populaton' (did you mean 'population'?)"},
        bad_case{"bad option value", with_method(head, "name = \"bayes\"\nsamples = 5"), "method[1].samples",
                 "out of range"},
        bad_case{"non-integer option", with_method(head, "name = \"bayes\"\nsamples = 1000.5"), "method[1].samples",
                 "not an integer"},
        bad_case{"unknown option", with_method(head, "name = \"bayes\"\nsample = 100"), "method[1].sample",
                 "unknown key for method bayes (did you mean 'samples'?)"},
        bad_case{"negative alpha", with_method(head + "[grid]\nalpha = [1, -2]"), "grid.alpha[2]", "must be > 0"},
        bad_case{"negative delta", with_method(head + "[grid]\ndelta = -0.1"), "grid.delta", "must be >= 0"},
        bad_case{"nan", with_method(head + "[grid]\nnu = nan"), "grid.nu", "nan is not allowed"},
        bad_case{"L = 0", with_method(head + "[grid]\nL = [0]"), "grid.L[1]", "L must be >= 1"},
        bad_case{"pmf does not sum to 1", with_method(head + "[grid]\nL = {1 = 0.5, 3 = 0.4}"), "grid.L", "sum"},
        bad_case{"inf with spiked task", with_method(head + "[grid]\nnu = \"inf\""), "grid.nu", "inf"},
        bad_case{"zip lengths differ", with_method(head + "[grid]\nnu = [1, 2]\ndelta = [0]\nzip = [[\"nu\", \"delta\"]]"),
                 "grid.zip", "equal lengths"},
        bad_case{"continuation on a population method",
                 with_method(head, "name = \"bayes\"\ncontinuation = \"alpha\""), "method[1].continuation",
                 "finite-alpha"},
        bad_case{"no method", head, "method", "at least one"},
        bad_case{"missing seed", with_method("name = \"x\""), "seed", "missing"},
        bad_case{"bad name", with_method("name = \"a b\"\nseed = 1"), "name", "letters"}),
    [](const ::testing::TestParamInfo<bad_case>& param_info) {
      std::string name = param_info.param.label;
      for (auto& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST(JobParse, SyntaxErrorsCarryLineAndColumn) {
  try {
    (void)parse_job("name = \"x\"\nseed = 1\n[grid\n", "f.toml");
    FAIL();
  } catch (const job_error& e) {
    EXPECT_EQ(e.line(), 3u) << e.what();
    EXPECT_GT(e.column(), 0u);
    EXPECT_TRUE(std::string(e.what()).starts_with("f.toml:3:")) << e.what();
  }
}

TEST(JobParse, MissingFileIsAJobError) {
  EXPECT_THROW((void)load_job_file("/nonexistent/job.toml"), job_error);
}

TEST(JobFiles, ExampleJobsParseAndExpand) {
  // Every job in jobs/ whose methods exist in this build must parse and expand.
  const std::filesystem::path dir = std::filesystem::path(SLR_SOURCE_DIR) / "jobs";
  std::size_t checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    std::string missing;
    try {
      const auto job = load_job_file(entry.path());
      EXPECT_GT(point_count(expand(job)), 0u) << entry.path();
      ++checked;
    } catch (const job_error& e) {
      // Jobs for methods not in this build (fixed-point, state-evolution, erm) are reported, not failed.
      if (std::string(e.what()).find("unknown method") == std::string::npos) ADD_FAILURE() << e.what();
    }
  }
  EXPECT_GE(checked, 1u);
}

} // namespace
} // namespace slr::job
