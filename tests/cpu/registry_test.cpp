#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "harness/algorithm.hpp"

namespace mmlab {
namespace {

TEST(Registry, EveryDescriptorIsComplete) {
  std::set<std::string> names;
  for (const Algorithm* a : registry()) {
    SCOPED_TRACE(a->name);
    EXPECT_TRUE(names.insert(a->name).second) << "duplicate name";
    EXPECT_FALSE(a->summary.empty());
    EXPECT_FALSE(a->variants.empty());
    EXPECT_TRUE(a->run);
    // name = file stem, and the file exists
    const std::filesystem::path src(a->source);
    EXPECT_EQ(src.stem().string(), a->name);
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(MMLAB_SOURCE_DIR) / src)) << a->source;
    for (const Axis& x : a->axes) {
      EXPECT_EQ(canonical_value(x, x.default_value), x.default_value) << x.name << " default not canonical";
      EXPECT_FALSE(x.values.empty()) << x.name;
      for (const std::string& v : x.variants) EXPECT_TRUE(a->find_variant(v)) << v;
    }
    EXPECT_DOUBLE_EQ(a->flop_count({3, 5, 7}), 2.0 * 3 * 5 * 7);
  }
  for (const Algorithm* a : registry()) EXPECT_EQ(find_algorithm(a->name), a);
  EXPECT_EQ(find_algorithm("nope"), nullptr);
}

}  // namespace
}  // namespace mmlab
