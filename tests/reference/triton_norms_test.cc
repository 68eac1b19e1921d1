// The norms (numerics/norm.h) against rows a GPU gave: RMSNorm and LayerNorm
// rows Triton 3.6 computed on an H100 (sm_90) with kernels shaped like the
// key side's fused norms (a masked block of next_pow2(n) lanes, 4 warps,
// tl.sum, `/` by n, tl.rsqrt, the weight in f32), kept with their bf16 inputs,
// weights and biases in data/triton_sm90_norms.txt (written by
// tools/triton_probe/measure_norms.py). Under Triton's rules (the block
// order with the compiler's layout, fused squares, div.full, rsqrt.approx.ftz)
// the oracle must give every statistic and every output bit the device gave;
// rounded squares and IEEE division must each miss some row, so the data can
// tell those conventions apart. Every expected value is read from the file.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "numerics/float_bits.h"
#include "numerics/norm.h"
#include "numerics/reduction.h"

namespace qcheck::spec {
namespace {

constexpr size_t kOutputsKept = 16;  // y[0 .. 16) on each line, then a digest of all n

struct MeasuredOutputs {
  std::vector<uint32_t> stats;  // RMSNorm: mean square, r; LayerNorm: mean, variance, rstd
  std::vector<uint32_t> first;  // y[0 .. 16)
  uint64_t digest = 0;          // FNV-1a 64 of y[0 .. n), taken of the device's bits
};

struct MeasuredRow {
  int index = 0;
  std::vector<float> x;
  MeasuredOutputs rms, ln;
};

struct MeasuredShape {
  int64_t n = 0, block = 0;
  int size_per_thread = 0, warps = 0;
  float eps = 0.0f;
  std::vector<float> w, b;
  std::vector<MeasuredRow> rows;
};

std::vector<uint32_t> hex_words(std::istringstream& fields) {
  std::vector<uint32_t> words;
  std::string word;
  while (fields >> word && word != "|") words.push_back(static_cast<uint32_t>(std::stoul(word, nullptr, 16)));
  return words;
}

std::vector<float> floats_of(const std::vector<uint32_t>& bits) {
  std::vector<float> values;
  for (uint32_t b : bits) values.push_back(float_from_bits(b));
  return values;
}

// "N ROW | a b | y0 .. y15 | DIGEST" after the line's tag.
MeasuredOutputs read_outputs(std::istringstream& fields) {
  MeasuredOutputs o;
  o.stats = hex_words(fields);
  o.first = hex_words(fields);
  std::string digest;
  fields >> digest;
  o.digest = std::stoull(digest, nullptr, 16);
  return o;
}

std::vector<MeasuredShape> read_norms() {
  std::ifstream in(QCHECK_TRITON_NORMS);
  std::vector<MeasuredShape> shapes;
  std::string line, tag, bar;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    if (!(fields >> tag) || tag[0] == '#') continue;
    if (tag == "shape") {
      MeasuredShape s;
      uint32_t eps_bits = 0;
      fields >> s.n >> s.block >> s.size_per_thread >> s.warps >> std::hex >> eps_bits;
      s.eps = float_from_bits(eps_bits);
      shapes.push_back(std::move(s));
      continue;
    }
    if (shapes.empty()) {
      ADD_FAILURE() << "a line before any shape: " << line.substr(0, 40);
      continue;
    }
    MeasuredShape& s = shapes.back();
    int64_t n = 0;
    fields >> n;
    EXPECT_EQ(n, s.n) << line.substr(0, 40);
    if (tag == "weight" || tag == "bias") {
      fields >> bar;
      (tag == "weight" ? s.w : s.b) = floats_of(hex_words(fields));
      continue;
    }
    int index = -1;
    fields >> index >> bar;
    if (tag == "x") {
      MeasuredRow row;
      row.index = index;
      std::string packed;
      fields >> packed;
      for (size_t i = 0; i + 4 <= packed.size(); i += 4) {
        row.x.push_back(float_from_bits(static_cast<uint32_t>(std::stoul(packed.substr(i, 4), nullptr, 16)) << 16));
      }
      EXPECT_EQ(packed.size(), 4 * static_cast<size_t>(s.n)) << line.substr(0, 40);
      s.rows.push_back(std::move(row));
    } else if (tag == "rms" || tag == "ln") {
      if (s.rows.empty() || s.rows.back().index != index) {
        ADD_FAILURE() << "outputs of a row with no inputs: " << line.substr(0, 40);
        continue;
      }
      (tag == "rms" ? s.rows.back().rms : s.rows.back().ln) = read_outputs(fields);
    } else {
      ADD_FAILURE() << "unknown line: " << line.substr(0, 40);
    }
  }
  return shapes;
}

uint64_t fnv1a64(const std::vector<float>& y) {
  uint64_t digest = 0xCBF29CE484222325ull;
  for (float v : y) {
    const uint32_t bits = bits_of(v);
    for (int byte = 0; byte < 4; ++byte) {
      digest ^= (bits >> (8 * byte)) & 0xFFu;
      digest *= 0x100000001B3ull;
    }
  }
  return digest;
}

std::string hex64(uint64_t digest) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llX", static_cast<unsigned long long>(digest));
  return text;
}

std::vector<uint32_t> first_bits(const std::vector<float>& y) {
  std::vector<uint32_t> bits;
  for (size_t i = 0; i < kOutputsKept && i < y.size(); ++i) bits.push_back(bits_of(y[i]));
  return bits;
}

int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// Triton's rules for a shape's block, with the squares and division given.
NormRules triton_rules(const MeasuredShape& s, SquareStep squares, WidthDivision divide) {
  NormRules rules;
  rules.reduction = Reduction{ReductionOrder::kTritonBlock};
  rules.reduction.size_per_thread = s.size_per_thread;
  rules.reduction.warps = s.warps;
  rules.reduction.squares = squares;
  rules.sum_width = next_pow2(s.n);
  rules.divide = divide;
  rules.rsqrt = RsqrtKind::kApproxFtz;
  return rules;
}

// The oracle's RMSNorm of a row and its mean square (the norm's own
// division of the block's sum of squares), as the file's line holds them.
MeasuredOutputs oracle_rms(const MeasuredShape& s, const MeasuredRow& row, const NormRules& rules) {
  std::vector<float> padded = row.x, y(static_cast<size_t>(s.n));
  padded.resize(static_cast<size_t>(rules.sum_width), 0.0f);
  const float mean_square =
      norm_divide(reduce_sum_of_squares(padded.data(), rules.sum_width, rules.reduction), s.n, rules);
  const float r = rms_norm_row(row.x.data(), s.w.data(), s.n, s.eps, RmsWeight::kF32, rules, y.data());
  return MeasuredOutputs{{bits_of(mean_square), bits_of(r)}, first_bits(y), fnv1a64(y)};
}

MeasuredOutputs oracle_ln(const MeasuredShape& s, const MeasuredRow& row, const NormRules& rules) {
  std::vector<float> y(static_cast<size_t>(s.n));
  const LayerNormStats st =
      layer_norm_row(row.x.data(), s.w.data(), s.b.data(), s.n, s.eps, LayerNormAffine::kFma, rules, y.data());
  return MeasuredOutputs{{bits_of(st.mean), bits_of(st.variance), bits_of(st.rstd)}, first_bits(y), fnv1a64(y)};
}

bool same(const MeasuredOutputs& a, const MeasuredOutputs& b) {
  return a.stats == b.stats && a.first == b.first && a.digest == b.digest;
}

std::string where(const MeasuredShape& s, const MeasuredRow& row) {
  return "n " + std::to_string(s.n) + " (layout " + std::to_string(s.size_per_thread) + "x32x" +
         std::to_string(s.warps) + ") row " + std::to_string(row.index);
}

const std::vector<MeasuredShape>& measured() {
  static const std::vector<MeasuredShape> shapes = read_norms();
  return shapes;
}

TEST(TritonNorms, TheFileHoldsEveryShapeWhole) {
  const std::vector<MeasuredShape>& shapes = measured();
  ASSERT_EQ(shapes.size(), 3u) << "cannot read " << QCHECK_TRITON_NORMS;
  const int64_t widths[] = {128, 512, 1536};
  for (size_t k = 0; k < shapes.size(); ++k) {
    const MeasuredShape& s = shapes[k];
    EXPECT_EQ(s.n, widths[k]);
    EXPECT_EQ(s.block, next_pow2(s.n)) << "n " << s.n;
    EXPECT_EQ(s.warps, 4) << "n " << s.n;
    EXPECT_EQ(bits_of(s.eps), bits_of(1e-6f)) << "n " << s.n;
    EXPECT_EQ(static_cast<int64_t>(s.w.size()), s.n);
    EXPECT_EQ(static_cast<int64_t>(s.b.size()), s.n);
    EXPECT_GE(s.rows.size(), 20u) << "n " << s.n;
    EXPECT_STREQ(norm_rules_error(triton_rules(s, SquareStep::kFused, WidthDivision::kDivFull), s.n), "");
    // The named rules (numerics/norm.h) are the ones the file's rows take: the layout the compiler chose.
    const NormRules named = triton_norm_rules(s.n, s.warps);
    EXPECT_EQ(named.reduction.size_per_thread, s.size_per_thread) << "n " << s.n;
    EXPECT_EQ(named.sum_width, s.block) << "n " << s.n;
    EXPECT_EQ(named.reduction.squares, SquareStep::kFused);
    EXPECT_EQ(named.divide, WidthDivision::kDivFull);
    EXPECT_EQ(named.rsqrt, RsqrtKind::kApproxFtz);
    for (const MeasuredRow& row : s.rows) {
      EXPECT_EQ(static_cast<int64_t>(row.x.size()), s.n) << where(s, row);
      EXPECT_EQ(row.rms.stats.size(), 2u) << where(s, row);
      EXPECT_EQ(row.ln.stats.size(), 3u) << where(s, row);
      EXPECT_EQ(row.rms.first.size(), kOutputsKept) << where(s, row);
      EXPECT_EQ(row.ln.first.size(), kOutputsKept) << where(s, row);
    }
  }
}

TEST(TritonNorms, TritonsRulesGiveEveryRowTheDeviceGave) {
  const std::vector<MeasuredShape>& shapes = measured();
  ASSERT_FALSE(shapes.empty()) << "cannot read " << QCHECK_TRITON_NORMS;
  size_t rows = 0;
  for (const MeasuredShape& s : shapes) {
    const NormRules rules = triton_rules(s, SquareStep::kFused, WidthDivision::kDivFull);
    for (const MeasuredRow& row : s.rows) {
      const MeasuredOutputs rms = oracle_rms(s, row, rules), ln = oracle_ln(s, row, rules);
      EXPECT_EQ(rms.stats, row.rms.stats) << "RMSNorm mean square, r: " << where(s, row);
      EXPECT_EQ(rms.first, row.rms.first) << "RMSNorm y[0 .. 16): " << where(s, row);
      EXPECT_EQ(hex64(rms.digest), hex64(row.rms.digest)) << "RMSNorm y[0 .. n) digest: " << where(s, row);
      EXPECT_EQ(ln.stats, row.ln.stats) << "LayerNorm mean, variance, rstd: " << where(s, row);
      EXPECT_EQ(ln.first, row.ln.first) << "LayerNorm y[0 .. 16): " << where(s, row);
      EXPECT_EQ(hex64(ln.digest), hex64(row.ln.digest)) << "LayerNorm y[0 .. n) digest: " << where(s, row);
      ++rows;
    }
  }
  std::printf("%zu rows of %zu shapes: every statistic and output bit for bit\n", rows, shapes.size());
}

// Other conventions over the same rows: the data can fail them. A row
// differs when any of its statistics or outputs does. On the rows measured
// on sm_90, rounded squares miss 5, 2 and 4 LayerNorm rows at n = 128, 512
// and 1536 (no RMSNorm row), IEEE division 7 RMSNorm and 11 LayerNorm rows
// at 1536 (none at 128 or 512).
TEST(TritonNorms, RoundedSquaresAndIeeeDivisionEachMissRows) {
  const std::vector<MeasuredShape>& shapes = measured();
  ASSERT_FALSE(shapes.empty()) << "cannot read " << QCHECK_TRITON_NORMS;
  int rounded_missed = 0, ieee_missed = 0;
  for (const MeasuredShape& s : shapes) {
    const NormRules rounded = triton_rules(s, SquareStep::kRounded, WidthDivision::kDivFull);
    const NormRules ieee = triton_rules(s, SquareStep::kFused, WidthDivision::kIeee);
    int rounded_rms = 0, rounded_ln = 0, ieee_rms = 0, ieee_ln = 0;
    for (const MeasuredRow& row : s.rows) {
      rounded_rms += !same(oracle_rms(s, row, rounded), row.rms);
      rounded_ln += !same(oracle_ln(s, row, rounded), row.ln);
      ieee_rms += !same(oracle_rms(s, row, ieee), row.rms);
      ieee_ln += !same(oracle_ln(s, row, ieee), row.ln);
    }
    std::printf("n %lld, %zu rows: rounded squares differ on %d RMSNorm and %d LayerNorm rows, "
                "IEEE division on %d and %d\n",
                static_cast<long long>(s.n), s.rows.size(), rounded_rms, rounded_ln, ieee_rms, ieee_ln);
    rounded_missed += rounded_rms + rounded_ln;
    ieee_missed += ieee_rms + ieee_ln;
  }
  EXPECT_GT(rounded_missed, 0) << "rounded squares gave every row: the data cannot tell them from fused ones";
  EXPECT_GT(ieee_missed, 0) << "IEEE division gave every row: the data cannot tell it from div.full";
}

}  // namespace
}  // namespace qcheck::spec
