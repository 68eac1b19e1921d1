// The binary case form: canonical round trips and strict refusals.
#include "fuzz/case/case_binary.h"

#include <gtest/gtest.h>

#include "core/random/prng.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

constexpr int kSamples = 2000;

// Byte offsets of a few fields in version 1 (magic 4 + version 2, then the
// fields of fuzz/case/case_fields.h in order: 6 int64, then one-byte enums).
constexpr size_t kHeader = 6;
constexpr size_t kQueryPathOffset = kHeader + 6 * 8;
constexpr size_t kHasIndexerOffset = kQueryPathOffset + 1;

TEST(CaseBinary, EveryValidSampleCaseRoundTrips) {
  for (uint64_t i = 0; i < kSamples; ++i) {
    const Case c = test::sample_case(i);
    ASSERT_EQ(validate_case(c), "") << "sample " << i << ": " << describe(c);
    const std::vector<uint8_t> bytes = encode_case(c);
    Case back;
    ASSERT_EQ(decode_case(bytes, &back), "") << "sample " << i;
    ASSERT_TRUE(back == c) << "sample " << i << ": decode(encode(c)) != c";
    ASSERT_EQ(encode_case(back), bytes) << "sample " << i;
  }
}

TEST(CaseBinary, AnyDecodableMutationReencodesToTheSameBytes) {
  // Flip random bytes of encoded cases: whatever still decodes must encode
  // back to exactly the mutated bytes (one encoding per case).
  Xoshiro256 rng(42);
  int decoded = 0;
  for (uint64_t i = 0; i < kSamples; ++i) {
    std::vector<uint8_t> bytes = encode_case(test::sample_case(i));
    const int flips = static_cast<int>(rng.between(1, 3));
    for (int f = 0; f < flips; ++f)
      bytes[rng.below(bytes.size())] ^= static_cast<uint8_t>(1u << rng.below(8));
    Case c;
    if (!decode_case(bytes, &c).empty()) continue;
    ++decoded;
    ASSERT_EQ(encode_case(c), bytes) << "mutation of sample " << i;
  }
  EXPECT_GT(decoded, kSamples / 4);  // most flips land in integer fields
}

TEST(CaseBinary, DefaultCaseHasAStableEncoding) {
  const std::vector<uint8_t> bytes = encode_case(Case{});
  const size_t expected_size =
      6 /*magic, version*/ + 6 * 8 /*dims*/ + 7 /*path, has_indexer, rope style, four dtypes*/ +
      6 /*input layouts*/ + 8 /*weights column stride*/ + 3 /*output layouts*/ + 8 /*row padding*/ +
      1 /*alias*/ + 8 /*cache rows*/ + 2 /*recipes*/ + 3 * 4 /*scales*/ + 8 /*seed*/ + 1 +
      6 /*profile "qcheck"*/ + 8 /*memory limit*/;
  ASSERT_EQ(bytes.size(), expected_size);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "QCKC");
  EXPECT_EQ(bytes[4], 1);  // version 1, little-endian
  EXPECT_EQ(bytes[5], 0);
  EXPECT_EQ(bytes[kHeader], 1);           // num_tokens = 1 as int64 LE
  EXPECT_EQ(bytes[kHeader + 8], 16);      // mqa_heads
  EXPECT_EQ(bytes[kQueryPathOffset], 1);  // bf16-packed
  EXPECT_EQ(case_digest(Case{}).size(), 16u);
  EXPECT_NE(case_digest(Case{}), case_digest(test::small_case()));
}

std::string decode_error(const std::vector<uint8_t>& bytes) {
  Case c;
  return decode_case(bytes, &c);
}

TEST(CaseBinary, EveryTruncationIsRefusedNamingTheField) {
  const std::vector<uint8_t> bytes = encode_case(test::small_case());
  for (size_t n = 0; n < bytes.size(); ++n) {
    const std::string error = decode_error(std::vector<uint8_t>(bytes.begin(), bytes.begin() + n));
    ASSERT_NE(error.find("truncated"), std::string::npos) << "length " << n << ": " << error;
  }
  EXPECT_NE(decode_error({bytes.begin(), bytes.begin() + 10}).find("field num_tokens"),
            std::string::npos);
  EXPECT_NE(decode_error({bytes.begin(), bytes.end() - 1}).find("field memory_limit_bytes"),
            std::string::npos);
}

TEST(CaseBinary, BadMagicVersionEnumsBoolsProfileAndTrailingBytesAreRefused) {
  const std::vector<uint8_t> good = encode_case(test::small_case());
  auto with = [&](size_t offset, uint8_t value) {
    std::vector<uint8_t> b = good;
    b[offset] = value;
    return decode_error(b);
  };
  EXPECT_NE(with(0, 'X').find("bad magic"), std::string::npos);
  EXPECT_NE(with(4, 4).find("version = 4 is not supported"), std::string::npos);
  // Version 3 names its op next (any_case_test.cc): a version 1 body read as one is no op name.
  EXPECT_NE(with(4, 3).find("op name"), std::string::npos);
  // Version 2 carries edits after the memory limit: a version 1 body is short.
  EXPECT_NE(with(4, 2).find("truncated: field edits"), std::string::npos);
  EXPECT_NE(with(kQueryPathOffset, 3).find("query_path = 3"), std::string::npos);
  EXPECT_NE(with(kHasIndexerOffset, 2).find("has_indexer = 2 "), std::string::npos);
  EXPECT_NE(with(kHasIndexerOffset + 1, 9).find("indexer_rope = 9"), std::string::npos);
  // profile "qcheck": length byte, then the name, then the memory limit.
  const size_t profile_length = good.size() - 8 - 7;
  EXPECT_EQ(good[profile_length], 6);
  EXPECT_NE(with(profile_length + 1, 'Q').find("profile byte 0 = 0x51"), std::string::npos);
  EXPECT_NE(with(profile_length, 33).find("profile length = 33"), std::string::npos);
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(decode_error(longer),
            "1 trailing bytes after the last field (offset " + std::to_string(good.size()) + ")");
  Case untouched = test::small_case();
  const Case before = untouched;
  EXPECT_NE(decode_case(longer, &untouched), "");
  EXPECT_TRUE(untouched == before) << "a refused decode must not change the output";
}

TEST(CaseBinary, EveryOutOfRangeEnumByteIsRefused) {
  const std::vector<uint8_t> good = encode_case(test::small_case());
  // The 13 one-byte fields right after the six dims (path, has_indexer,
  // rope style, four dtypes, six input layouts): each refuses 255.
  const size_t one_byte_fields[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  for (size_t k : one_byte_fields) {
    std::vector<uint8_t> b = good;
    b[kQueryPathOffset + k] = 255;
    const std::string error = decode_error(b);
    EXPECT_NE(error.find("= 255"), std::string::npos) << "byte " << k << ": " << error;
  }
}

}  // namespace
}  // namespace qcheck
