#include <gtest/gtest.h>

#include "harness/sweep.hpp"

namespace mmlab {
namespace {

TEST(Lists, IntegersAndRanges) {
  EXPECT_EQ(parse_int_list("256:1024:256,1000", "size"), (std::vector<long>{256, 512, 768, 1024, 1000}));
  EXPECT_EQ(parse_int_list(" 7 ", "size"), (std::vector<long>{7}));
  EXPECT_EQ(parse_int_list("1:10:4", "size"), (std::vector<long>{1, 5, 9}));
}

TEST(Lists, MalformedInputIsAUsageError) {
  for (const char* bad : {"", "1,,2", "0", "-5", "abc", "1:2", "4:2:1", "1:5:0", "1:2:3:4", "3.5"})
    EXPECT_THROW(parse_int_list(bad, "size"), UsageError) << bad;
}

TEST(Shapes, GeneralProblems) {
  const auto p = parse_shapes("1041x1247x139, 535X792X414");
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], (Problem{1041, 1247, 139}));
  EXPECT_EQ(p[1], (Problem{535, 792, 414}));
  for (const char* bad : {"10x10", "1x2x3x4", "0x1x1", "axbxc"})
    EXPECT_THROW(parse_shapes(bad), UsageError) << bad;
}

TEST(Params, CanonicalValues) {
  const Axis shape{"block", AxisKind::shape, "", "16x16", {}, {}};
  const Axis integer{"tile", AxisKind::integer, "", "32", {}, {}};
  EXPECT_EQ(canonical_value(shape, " 16X16 "), "16x16");
  EXPECT_EQ(canonical_value(shape, "256"), "256x1");
  EXPECT_EQ(canonical_value(integer, "032"), "32");
  EXPECT_THROW(canonical_value(shape, "16x"), UsageError);
  EXPECT_THROW(canonical_value(shape, "0x16"), UsageError);
  EXPECT_THROW(canonical_value(integer, "16x16"), UsageError);
  Params p("v");
  p.set("block", "16x16");
  p.set("tile", "8");
  EXPECT_EQ(p.canonical(), "block=16x16;tile=8");
  EXPECT_EQ(p.shape("block").y, 16);
  EXPECT_EQ(p.integer("tile"), 8);
  EXPECT_THROW(p.text("nope"), std::logic_error);
}

// A memory size: a number and a unit (powers of 1024; none: GiB), canonical as whole MiB or GiB.
TEST(Params, BytesValues) {
  const Axis budget{"budget", AxisKind::bytes, "", "auto", {}, {}};
  EXPECT_EQ(canonical_value(budget, "AUTO"), "auto");
  EXPECT_EQ(canonical_value(budget, "8"), "8G");
  EXPECT_EQ(canonical_value(budget, "8GiB"), "8G");
  EXPECT_EQ(canonical_value(budget, "0.5g"), "512M");
  EXPECT_EQ(canonical_value(budget, "2048m"), "2G");
  EXPECT_EQ(canonical_value(budget, "1536K"), "2M");  // whole MiB, rounded
  EXPECT_EQ(canonical_value(budget, "1t"), "1024G");
  for (const char* bad : {"", "G", "8X", "-1G", "1.2.3G", "0", "100K", "2000000G", "eight"})
    EXPECT_THROW(canonical_value(budget, bad), UsageError) << bad;
  EXPECT_EQ(bytes_value("512M"), 512ull << 20);
  EXPECT_EQ(bytes_value("8G"), 8ull << 30);
  EXPECT_EQ(bytes_value("auto"), 0ull);
}

TEST(Sweep, ScopesParse) {
  EXPECT_EQ(parse_scope("end_to_end"), Scope::end_to_end);
  EXPECT_THROW(parse_scope("kernels"), UsageError);
}

Algorithm two_variant_algorithm() {
  Algorithm a;
  a.name = "fake";
  a.variants = {{"one", ""}, {"two", ""}};
  a.axes = {{"block", AxisKind::shape, "", "16x16", {}, {}},
            {"tile", AxisKind::integer, "", "32", {}, {"two"}}};  // tile only for "two"
  return a;
}

TEST(Sweep, CrossProductWithPruning) {
  const Algorithm a = two_variant_algorithm();
  AlgorithmChoice c{&a, {"one", "two"}, {{"block", {"8x8", "16x16", "8x8"}}, {"tile", {"8", "16"}}}, {}};
  const auto configs = expand({c}, {{64, 64, 64}, {7, 7, 7}}, {Scope::kernel, Scope::batched}, {false});
  // per problem: variant one: 2 blocks (duplicate 8x8 dropped); variant two: 2 blocks x 2 tiles;
  // times 2 scopes and 2 problems.
  EXPECT_EQ(configs.size(), (2u + 4u) * 2u * 2u);
  // problems outermost
  for (std::size_t i = 0; i < configs.size(); ++i)
    EXPECT_EQ(configs[i].problem.m, i < configs.size() / 2 ? 64 : 7);
  for (const auto& cfg : configs) {
    if (cfg.params.variant() == "one") {
      EXPECT_FALSE(cfg.params.has("tile"));
    }
  }
  EXPECT_EQ(configs[0].key(), "fake|one|block=8x8|64x64x64|uniform|kernel|off");
}

// A streamed algorithm (operands in host memory) is timed from host to host, whatever the sweep's
// scope, and takes no L2 flush: one configuration where a device algorithm has several.
TEST(Sweep, StreamedAlgorithmsAreTimedEndToEnd) {
  Algorithm a = two_variant_algorithm();
  a.backend = Backend::streamed;
  AlgorithmChoice c{&a, {"one"}, {{"block", {"8x8"}}}, {}};
  const auto configs = expand({c}, {{64, 64, 64}}, {Scope::kernel, Scope::batched}, {false, true});
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(configs[0].scope, Scope::end_to_end);
  EXPECT_FALSE(configs[0].l2_flush);
}

// Each backend's pipeline, fact by fact (made by name in pipelines.cpp: a swapped fact would show
// here), and a configuration holds its algorithm's, chosen when it is made.
TEST(Sweep, EachBackendsPipelineAndAConfigurationsOwn) {
  Algorithm a = two_variant_algorithm();
  struct Facts {
    Backend backend;
    const char* name;
    bool gpu, by_engine, collective, end_to_end;
    Verification verification;
  };
  const Facts expected[] = {{Backend::device, "gpu", true, false, false, false, Verification::device},
                            {Backend::host, "host", false, false, false, false, Verification::host},
                            {Backend::streamed, "streamed", true, false, false, true, Verification::entries},
                            {Backend::distributed, "distributed", true, true, true, false, Verification::ranks}};
  for (const Facts& f : expected) {
    a.backend = f.backend;
    const Pipeline& p = pipeline_of(a);
    EXPECT_STREQ(p.name, f.name);
    EXPECT_EQ(p.gpu, f.gpu) << f.name;
    EXPECT_EQ(p.by_engine, f.by_engine) << f.name;
    EXPECT_EQ(p.collective, f.collective) << f.name;
    EXPECT_EQ(p.end_to_end, f.end_to_end) << f.name;
    EXPECT_EQ(p.verification, f.verification) << f.name;
    const Configuration c{&a, Params("one"), Problem{8, 8, 8}};
    EXPECT_EQ(&c.pipeline(), &p) << f.name;
  }
}

// The inputs axis repeats each problem's run of configurations per kind, problems still outermost,
// so the workbench (inputs and reference) is made once per problem and kind.
TEST(Sweep, InputsRepeatEachProblemsRun) {
  const Algorithm a = two_variant_algorithm();
  AlgorithmChoice c{&a, {"one"}, {{"block", {"8x8", "16x16"}}}, {}};
  const auto base = expand({c}, {{64, 64, 64}, {7, 7, 7}}, {Scope::kernel}, {false});
  ASSERT_EQ(base.size(), 4u);
  const auto configs = with_inputs(base, {Inputs::ill_conditioned, Inputs::uniform});
  ASSERT_EQ(configs.size(), 8u);
  const Inputs want[] = {Inputs::ill_conditioned, Inputs::ill_conditioned, Inputs::uniform, Inputs::uniform};
  for (std::size_t i = 0; i < configs.size(); ++i) {
    EXPECT_EQ(configs[i].problem.m, i < 4 ? 64 : 7);
    EXPECT_EQ(configs[i].problem.inputs, want[i % 4]);
  }
  EXPECT_EQ(configs[0].key(), "fake|one|block=8x8|64x64x64|ill_conditioned|kernel|off");
  EXPECT_NE(configs[0].key(), configs[2].key());
  EXPECT_EQ(parse_inputs("wide_exponent"), Inputs::wide_exponent);
  EXPECT_THROW(parse_inputs("gaussian"), UsageError);
}

// A compiled set governs the variants it names: their sweeps skip uncompiled points (and count
// them); other variants sweep the full cross product.
TEST(Sweep, OnlyCompiledPointsOfGovernedVariants) {
  Algorithm a = two_variant_algorithm();
  a.compiled = CompiledSet(
      {{"two", {{"block", "8x8"}, {"tile", "16"}}}, {"two", {{"block", "16x16"}, {"tile", "8"}}}});
  AlgorithmChoice c{&a, {"one", "two"}, {{"block", {"8x8", "16x16"}}, {"tile", {"8", "16"}}}, {}};
  std::size_t left_out = 0;
  const auto configs = expand({c}, {{64, 64, 64}}, {Scope::kernel}, {false, true}, &left_out);
  EXPECT_EQ(configs.size(), (2u + 2u) * 2u);  // one: 2 blocks; two: 2 of its 4 points; x 2 L2 settings
  EXPECT_EQ(left_out, 2u * 2u);
  for (const auto& cfg : configs) {
    if (cfg.params.variant() == "two") {
      EXPECT_TRUE(a.compiled.admits(cfg.params)) << cfg.params.canonical();
    }
  }
  EXPECT_EQ(a.compiled.listing(), "block/tile 8x8/16, 16x16/8");
  Params off("two");
  off.set("block", "8x8");
  off.set("tile", "8");
  EXPECT_EQ(a.compiled.missing("fake", off).value_or(""),
            "fake two compiles block/tile 8x8/16, 16x16/8; not block/tile 8x8/8");
  EXPECT_FALSE(a.compiled.missing("fake", Params("one")));
}

TEST(Sweep, DefaultsWhenNoValuesAreGiven) {
  const Algorithm a = two_variant_algorithm();
  AlgorithmChoice c{&a, {"two"}, {}, {}};
  const auto configs = expand({c}, {{8, 8, 8}}, {Scope::kernel}, {false, true});
  ASSERT_EQ(configs.size(), 2u);
  EXPECT_EQ(configs[0].params.canonical(), "block=16x16;tile=32");
  EXPECT_TRUE(configs[1].l2_flush);
}

}  // namespace
}  // namespace mmlab
