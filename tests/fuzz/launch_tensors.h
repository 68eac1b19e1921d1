// Small host tensors for one fused_q launch, built from a plain description
// (LaunchSpec) with deterministic values, for the CPU model tests. Two
// LaunchTensors built from the same spec hold the same bytes, so one can go
// to the oracle and one to the model and every byte of every buffer
// (elements, view padding, untouched outputs) can be compared afterwards.
//
// This is a test-local builder on purpose: the harness library (fuzz/) has
// the full case model; these tests only need a grid they control.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reference/fused_q_args.h"

namespace qcheck::test {

// How a [T, N, W] view sits in its buffer.
//   kContiguous: strides (N*W, W, 1).
//   kPadded:     each row starts 8 elements into a wider row (like q_pe as a
//                view of a [.., 128 + R] row) and each token has 4 more.
//   kHeadMajor:  strides (W, T*W, 1), like production ql_nope.
enum class Layout { kContiguous, kPadded, kHeadMajor };

// What the values aim at.
//   kMixed:     noise at several magnitudes with specials (NaN of both signs
//               and payloads, +-Inf, +-0, subnormals, 448/464/480, bf16 max)
//               and real rotary cos/sin tables.
//   kScaleBand: indexer cache rows cos = 1 + 2^-23, sin = 0 (fp32 only) and
//               index_q rows led by +-448 * 2^k, k in the band where the
//               log2f ceiling keeps half the scale (SEMANTICS.md (A)).
//   kScalePow2: the same with cos = 1 exactly: s0 is a power of two and both
//               ceilings agree.
enum class ValueRecipe { kMixed, kScaleBand, kScalePow2 };

struct LaunchSpec {
  int64_t tokens = 17;  // T
  int64_t mqa_heads = 3;
  int64_t indexer_heads = 2;
  int64_t index_dim = 32;  // D
  int64_t rope_dim = 16;   // R
  int64_t nope_dim = 24;   // L
  QueryPath path = QueryPath::kBf16Packed;
  bool alias = false;  // ql_nope is query_out[..., :L] (bf16 packed only)
  bool has_indexer = true;
  RopeStyle indexer_rope = RopeStyle::kNeox;
  FloatType mqa_cache = FloatType::kF32;
  FloatType indexer_cache = FloatType::kF32;
  FloatType weights_in = FloatType::kF32;
  FloatType weights_out = FloatType::kF32;
  Layout input_layout = Layout::kContiguous;
  Layout output_layout = Layout::kContiguous;  // kHeadMajor is allowed too
  int64_t weights_column_stride = 1;
  uint32_t q_scale_bits = 0x3F800000u;  // 1.0
  ValueRecipe recipe = ValueRecipe::kMixed;
  uint64_t seed = 1;

  // One line naming every field, for failure messages.
  std::string describe() const;
};

// One allocation: a name and its bytes.
struct TensorBuffer {
  std::string name;
  std::vector<uint8_t> bytes;
};

class LaunchTensors {
 public:
  explicit LaunchTensors(const LaunchSpec& spec);
  LaunchTensors(const LaunchTensors&) = delete;
  LaunchTensors& operator=(const LaunchTensors&) = delete;

  // Arguments pointing into the buffers below.
  FusedQArgs& args() { return args_; }
  const std::vector<TensorBuffer>& buffers() const { return buffers_; }
  // The buffer of that name (throws std::out_of_range when absent).
  const TensorBuffer& buffer(const std::string& name) const;

 private:
  TensorBuffer& add(const std::string& name, size_t bytes, uint8_t fill);

  std::vector<TensorBuffer> buffers_;  // reserved up front: pointers stay valid
  FusedQArgs args_;
};

// Fill bytes: view padding of inputs, and every output byte before a run.
constexpr uint8_t kInputPaddingByte = 0xA5;
constexpr uint8_t kOutputPoisonByte = 0xEE;

// "" when both tensor sets hold the same bytes in every buffer, else one line
// per differing buffer: its name, how many bytes differ and the first one.
std::string compare_buffers(const LaunchTensors& expected, const LaunchTensors& got);

// Names of the buffers whose bytes differ.
std::vector<std::string> differing_buffers(const LaunchTensors& expected, const LaunchTensors& got);

}  // namespace qcheck::test
