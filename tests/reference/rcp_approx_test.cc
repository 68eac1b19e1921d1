// Triton's division by a width (numerics/rcp_approx.h): the embedded
// corrections are the ones measured on an H100, and the quotient is the
// device's. Expected bits are device readings (rcp.approx.ftz.f32 of an
// integer, Triton's x / 1536), not values this code computed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "numerics/float_bits.h"
#include "numerics/norm.h"
#include "numerics/rcp_approx.h"

namespace qcheck::spec {
namespace {

TEST(RcpApproxOfWidth, IsTheTableMeasuredOnTheDevice) {
  ASSERT_EQ(rcp_approx_width_table_bytes(), 16384u);
  int64_t counts[3] = {};
  for (int64_t n = 1; n <= kRcpApproxWidths; ++n) {
    const size_t i = static_cast<size_t>(n - 1);
    const int entry = (rcp_approx_width_table()[i / 4] >> (2 * (i % 4))) & 3;
    ASSERT_LE(entry, 2) << n;
    ++counts[entry];
  }
  EXPECT_EQ(counts[0], 2271);   // -1 ulp
  EXPECT_EQ(counts[1], 56735);  // the correctly rounded 1 / n
  EXPECT_EQ(counts[2], 6530);   // +1 ulp
  const std::pair<int64_t, uint32_t> device[] = {
      {1, 0x3F800000},     {3, 0x3EAAAAAB},     {33, 0x3CF83E0F},   {37, 0x3CDD67C8},   {61, 0x3C864B8B},
      {67, 0x3C74898E},    {576, 0x3AE38E39},   {1536, 0x3A2AAAAB}, {7168, 0x39124925}, {65535, 0x37800080},
      {65536, 0x37800000},
  };
  for (const auto& [n, bits] : device) EXPECT_EQ(bits_of(rcp_approx_of_width(n)), bits) << n;
  EXPECT_TRUE(std::isnan(rcp_approx_of_width(0)));
  EXPECT_TRUE(std::isnan(rcp_approx_of_width(65537)));
}

TEST(RcpApproxOfWidth, CorrectsTheNearestReciprocal) {
  // The corrections are relative to (float)(1.0 / n); that is RN(1 / n) at
  // every width: the x87's 64-bit quotient, rounded once more, agrees.
  for (int64_t n = 1; n <= kRcpApproxWidths; ++n) {
    ASSERT_EQ(bits_of(static_cast<float>(1.0 / static_cast<double>(n))),
              bits_of(static_cast<float>(1.0L / static_cast<long double>(n))))
        << n;
  }
}

TEST(RcpApproxOfWidth, DividesAsTritonDoes) {
  // Triton's x / 1536 on the device, where the IEEE quotient is one ulp lower.
  const std::pair<uint32_t, uint32_t> device[] = {
      {0x3E38B430, 0x38F64596}, {0x3C1EAF55, 0x36D39472}, {0xBC8AA906, 0xB738E15E}};
  for (const auto& [x, y] : device) {
    EXPECT_EQ(bits_of(divide_full_by_width(float_from_bits(x), 1536)), y);
    EXPECT_EQ(bits_of(float_from_bits(x) / 1536.0f), y - 1);
    NormRules rules;
    rules.divide = WidthDivision::kDivFull;
    EXPECT_EQ(bits_of(norm_divide(float_from_bits(x), 1536, rules)), y);
    rules.divide = WidthDivision::kIeee;
    EXPECT_EQ(bits_of(norm_divide(float_from_bits(x), 1536, rules)), y - 1);
  }
}

TEST(RcpApproxOfWidth, RulesOutsideTheMeasuredWidthsAreNamed) {
  NormRules rules;
  EXPECT_STREQ(norm_rules_error(rules, 100000), "");
  rules.divide = WidthDivision::kDivFull;
  EXPECT_STREQ(norm_rules_error(rules, 65536), "");
  EXPECT_STREQ(norm_rules_error(rules, 65537),
               "norm width n must be at most 65536 with divide div-full (the widths measured)");
  EXPECT_STREQ(norm_rules_error(rules, 0), "norm width n must be at least 1");
  rules.reduction.order = ReductionOrder::kStridedLanes;
  rules.reduction.lanes = 3;
  EXPECT_STREQ(norm_rules_error(rules, 512), "reduction lanes must be a power of two from 1 to 1024");
}

}  // namespace
}  // namespace qcheck::spec
