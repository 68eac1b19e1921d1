// The host side of qcheck::cuda::launch_fused_q: invalid args are refused
// with the validator's one-line message before anything is launched, and
// T = 0 is a no-op. None of this touches a GPU (the pointers are never
// dereferenced on the host), so it runs on CI machines without one.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "ops/fused_q/args/fused_q_args.h"
#include "ops/fused_q/kernels/fused_q_launch.h"
#include "ops/fused_q/kernels/kernel_params.h"

namespace qcheck::cuda {
namespace {

// A valid launch over fake, non-overlapping addresses (never dereferenced:
// every test here is refused or is T = 0 before any CUDA call).
struct FakeLaunch {
  static constexpr int64_t T = 5, H = 3, NI = 2, D = 128, R = 64, L = 512;
  std::vector<char> arena = std::vector<char>(size_t(1) << 22);
  char* next = arena.data();
  FusedQArgs args;

  char* take(size_t bytes) {
    char* p = next;
    next += (bytes + 255) / 256 * 256;
    return p;
  }

  explicit FakeLaunch(QueryPath path = QueryPath::kBf16Packed) {
    FusedQArgs& a = args;
    a.num_tokens = T, a.mqa_heads = H, a.indexer_heads = NI;
    a.index_dim = D, a.rope_dim = R, a.nope_dim = L;
    a.query_path = path;
    a.positions = reinterpret_cast<const int64_t*>(take(T * 8));
    a.mqa_cache = CacheView{take(16 * R * 4), FloatType::kF32, 16, R};
    a.indexer_cache = CacheView{take(16 * R * 4), FloatType::kF32, 16, R};
    a.q_pe = InputView{take(T * H * R * 2), H * R, R};
    a.ql_nope = InputView{take(T * H * L * 2), H * L, L};
    a.index_q = InputView{take(T * NI * D * 2), NI * D, D};
    a.index_weights = InputView{take(T * NI * 4), NI, 1};
    const int64_t width = query_out_width(a);
    a.query_out = OutputView{take(T * H * width * 2), H * width, width};
    a.index_q_fp8 = OutputView{take(T * NI * D), NI * D, D};
    a.index_weights_out = OutputView{take(T * NI * 4), NI, 1};
    a.softmax_scale_bits = default_softmax_scale_bits(D);
    a.head_scale_bits = default_head_scale_bits(NI);
  }
};

void expect_refused(const FusedQArgs& args, const std::string& names) {
  for (KernelDesign design : {KernelDesign::kLegacy, KernelDesign::kBlocked}) {
    const std::string message = launch_fused_q(design, args, nullptr);
    EXPECT_NE(message.find(names), std::string::npos)
        << name_of(design) << ": expected a message naming '" << names << "', got '" << message << "'";
    EXPECT_EQ(message, validate_fused_q_args(args)) << "the validator's message, unchanged";
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line";
  }
}

TEST(LaunchApi, TheFakeLaunchIsValid) {
  // Guards the tests below: each breaks exactly one thing of a valid launch.
  EXPECT_EQ(validate_fused_q_args(FakeLaunch().args), "");
  EXPECT_EQ(validate_fused_q_args(FakeLaunch(QueryPath::kFp8Packed).args), "");
}

TEST(LaunchApi, NullPointerIsRefusedNamingTheField) {
  FakeLaunch launch;
  launch.args.q_pe.data = nullptr;
  expect_refused(launch.args, "q_pe");
  FakeLaunch no_weights;
  no_weights.args.index_weights_out.data = nullptr;
  expect_refused(no_weights.args, "index_weights_out");
}

TEST(LaunchApi, OddRopeDimIsRefused) {
  FakeLaunch launch;
  launch.args.rope_dim = 63;
  expect_refused(launch.args, "rope_dim (R)");
}

TEST(LaunchApi, DimsOutsideTheLimitsAreRefused) {
  FakeLaunch heads;
  heads.args.mqa_heads = DimLimits::kMaxHeads + 1;
  expect_refused(heads.args, "mqa_heads (H)");
  FakeLaunch index_dim;
  index_dim.args.index_dim = 120;  // not a multiple of 16
  expect_refused(index_dim.args, "index_dim (D)");
}

TEST(LaunchApi, OverlappingOutputsAreRefused) {
  FakeLaunch launch;
  launch.args.index_q_fp8.data = launch.args.query_out.data;
  expect_refused(launch.args, "overlap");
}

TEST(LaunchApi, InputOverlappingAnOutputOtherThanTheExactAliasIsRefused) {
  FakeLaunch launch;
  // q_pe inside query_out: never permitted.
  launch.args.q_pe.data = launch.args.query_out.data;
  expect_refused(launch.args, "overlaps output");
  // ql_nope at query_out's address but with other strides: not the exact alias.
  FakeLaunch near_alias;
  near_alias.args.ql_nope.data = near_alias.args.query_out.data;
  near_alias.args.ql_nope.token_stride = near_alias.args.query_out.token_stride;
  near_alias.args.ql_nope.head_stride = near_alias.args.query_out.head_stride + 8;
  expect_refused(near_alias.args, "overlaps output");
}

TEST(LaunchApi, TheExactAliasIsAccepted) {
  FakeLaunch launch;
  launch.args.ql_nope = InputView{launch.args.query_out.data, launch.args.query_out.token_stride,
                                  launch.args.query_out.head_stride};
  EXPECT_TRUE(ql_nope_aliases_query_out(launch.args));
  EXPECT_EQ(validate_fused_q_args(launch.args), "");
}

TEST(LaunchApi, NonNormalQScaleIsRefusedOnTheFp8Path) {
  FakeLaunch launch(QueryPath::kFp8Packed);
  launch.args.q_scale_bits = 0x00000001u;  // a subnormal
  expect_refused(launch.args, "q_scale");
}

TEST(LaunchApi, ZeroTokensIsANoOpWithoutAnyCudaCall) {
  FakeLaunch launch;
  launch.args.num_tokens = 0;
  for (KernelDesign design : {KernelDesign::kLegacy, KernelDesign::kBlocked}) {
    EXPECT_EQ(launch_fused_q(design, launch.args, nullptr), "") << name_of(design);
  }
  // Nothing is read at T = 0, so even null tensors are accepted.
  FusedQArgs empty = launch.args;
  empty.q_pe.data = nullptr;
  empty.positions = nullptr;
  EXPECT_EQ(launch_fused_q(KernelDesign::kBlocked, empty, nullptr), "");
}

TEST(LaunchApi, TailBugExistsOnlyInTheBlockedKernel) {
  FakeLaunch launch;
  launch.args.num_tokens = 0;
  LaunchOptions options;
  options.planted_bug = PlantedBug::kMissingTailGuard;
  EXPECT_EQ(launch_fused_q(KernelDesign::kBlocked, launch.args, nullptr, options), "");
  const std::string message = launch_fused_q(KernelDesign::kLegacy, launch.args, nullptr, options);
  EXPECT_NE(message.find("planted_bug"), std::string::npos) << message;
}

// The indexer's register path (and with it, for R = 64 and D = 128, the
// 256-thread configuration's model-shape kernels) is taken only where its
// vector loads are legal:
// D <= 128, index_q and index_q_fp8 rows on 16 and 8 bytes, cos/sin rows on
// 4 values. Everything else must fall back to the two-pass path.
TEST(LaunchApi, IndexerRegisterPathOnlyForAlignedRowsUpTo128) {
  EXPECT_TRUE(make_kernel_params(FakeLaunch().args).indexer_registers);
  EXPECT_TRUE(make_kernel_params(FakeLaunch(QueryPath::kFp8Packed).args).indexer_registers);

  FakeLaunch wide;  // D = 256: the rows do not fit one 16-lane team
  wide.args.index_dim = 256;
  wide.args.index_q = InputView{wide.take(FakeLaunch::T * FakeLaunch::NI * 256 * 2), FakeLaunch::NI * 256, 256};
  wide.args.index_q_fp8 = OutputView{wide.take(FakeLaunch::T * FakeLaunch::NI * 256), FakeLaunch::NI * 256, 256};
  ASSERT_EQ(validate_fused_q_args(wide.args), "");
  EXPECT_FALSE(make_kernel_params(wide.args).indexer_registers);

  FakeLaunch odd_cache_rows;  // 66 floats per cos/sin row: row starts off 16 bytes
  odd_cache_rows.args.indexer_cache =
      CacheView{odd_cache_rows.take(16 * 66 * 4), FloatType::kF32, 16, 66};
  ASSERT_EQ(validate_fused_q_args(odd_cache_rows.args), "");
  EXPECT_FALSE(make_kernel_params(odd_cache_rows.args).indexer_registers);

  FakeLaunch shifted_q;  // index_q starting one element into its buffer
  shifted_q.args.index_q.data = static_cast<const uint16_t*>(shifted_q.args.index_q.data) + 1;
  ASSERT_EQ(validate_fused_q_args(shifted_q.args), "");
  EXPECT_FALSE(make_kernel_params(shifted_q.args).indexer_registers);

  FakeLaunch no_indexer;
  no_indexer.args.has_indexer = false;
  EXPECT_FALSE(make_kernel_params(no_indexer.args).indexer_registers);
}

// The 256-thread configuration's kernels compiled for the model shape are
// chosen only for R = 64, D = 128 with the register path; any other shape
// must reach the kernel that reads R and D from the args.
TEST(LaunchApi, ModelShapeKernelOnlyForRope64Index128) {
  EXPECT_TRUE(make_kernel_params(FakeLaunch().args).model_shape_kernel);
  EXPECT_TRUE(make_kernel_params(FakeLaunch(QueryPath::kBf16Separate).args).model_shape_kernel);

  FakeLaunch narrow;  // D = 64: register path, not the model shape
  narrow.args.index_dim = 64;
  narrow.args.softmax_scale_bits = default_softmax_scale_bits(64);
  ASSERT_EQ(validate_fused_q_args(narrow.args), "");
  EXPECT_TRUE(make_kernel_params(narrow.args).indexer_registers);
  EXPECT_FALSE(make_kernel_params(narrow.args).model_shape_kernel);

  FakeLaunch short_rope;  // R = 32
  short_rope.args.rope_dim = 32;
  const int64_t width = query_out_width(short_rope.args);
  short_rope.args.q_pe = InputView{short_rope.take(FakeLaunch::T * FakeLaunch::H * 32 * 2), FakeLaunch::H * 32, 32};
  short_rope.args.query_out =
      OutputView{short_rope.take(FakeLaunch::T * FakeLaunch::H * width * 2), FakeLaunch::H * width, width};
  ASSERT_EQ(validate_fused_q_args(short_rope.args), "");
  EXPECT_TRUE(make_kernel_params(short_rope.args).indexer_registers);
  EXPECT_FALSE(make_kernel_params(short_rope.args).model_shape_kernel);

  FakeLaunch no_indexer;
  no_indexer.args.has_indexer = false;
  EXPECT_FALSE(make_kernel_params(no_indexer.args).model_shape_kernel);
}

// Address of element [token, head, 0] of a view whose elements have `bytes` bytes.
template <typename View>
const char* element(const View& view, int64_t token, int64_t head, int bytes) {
  return static_cast<const char*>(view.data) + (token * view.token_stride + head * view.head_stride) * bytes;
}

// A launch in parts: the part from token F must see, at its token t, the
// element the whole launch has at token F + t, in every token-indexed
// tensor; caches, strides and the derived facts stay; unused tensors stay
// null; the exact ql_nope alias stays an alias.
TEST(LaunchApi, ParamsFromTokenAreTheLaterTokensOfTheLaunch) {
  constexpr int64_t F = 16;
  FakeLaunch fp8(QueryPath::kFp8Packed);
  fp8.args.num_tokens = 40;  // the fake buffers are never dereferenced
  fp8.args.index_weights_dtype = FloatType::kBf16;
  fp8.args.index_weights_out_dtype = FloatType::kBf16;
  FakeLaunch separate(QueryPath::kBf16Separate);
  separate.args.ql_nope = InputView{};
  separate.args.num_tokens = 40;
  FakeLaunch alias;
  alias.args.num_tokens = 40;
  alias.args.ql_nope = InputView{alias.args.query_out.data, alias.args.query_out.token_stride,
                                 alias.args.query_out.head_stride};
  ASSERT_TRUE(ql_nope_aliases_query_out(alias.args));
  for (const FakeLaunch* launch : {&fp8, &separate, &alias}) {
    const FusedQArgs& a = launch->args;
    const KernelParams whole = make_kernel_params(a);
    const KernelParams part = params_from_token(whole, F);
    const FusedQArgs& b = part.args;
    EXPECT_EQ(b.num_tokens, a.num_tokens - F);
    EXPECT_EQ(b.positions, a.positions + F);
    const int weight_in = a.index_weights_dtype == FloatType::kF32 ? 4 : 2;
    const int weight_out = a.index_weights_out_dtype == FloatType::kF32 ? 4 : 2;
    const int query_bytes = a.query_path == QueryPath::kFp8Packed ? 1 : 2;
    for (int64_t t : {int64_t(0), int64_t(3)}) {
      for (int64_t h : {int64_t(0), int64_t(1)}) {
        EXPECT_EQ(element(b.q_pe, t, h, 2), element(a.q_pe, F + t, h, 2));
        EXPECT_EQ(element(b.index_q, t, h, 2), element(a.index_q, F + t, h, 2));
        EXPECT_EQ(element(b.index_weights, t, h, weight_in), element(a.index_weights, F + t, h, weight_in));
        EXPECT_EQ(element(b.query_out, t, h, query_bytes), element(a.query_out, F + t, h, query_bytes));
        EXPECT_EQ(element(b.index_q_fp8, t, h, 1), element(a.index_q_fp8, F + t, h, 1));
        EXPECT_EQ(element(b.index_weights_out, t, h, weight_out),
                  element(a.index_weights_out, F + t, h, weight_out));
        if (a.ql_nope.data != nullptr) {
          EXPECT_EQ(element(b.ql_nope, t, h, 2), element(a.ql_nope, F + t, h, 2));
        }
      }
    }
    EXPECT_EQ(b.ql_nope.data == nullptr, a.ql_nope.data == nullptr);
    EXPECT_EQ(ql_nope_aliases_query_out(b), ql_nope_aliases_query_out(a));
    EXPECT_EQ(b.mqa_cache.data, a.mqa_cache.data);
    EXPECT_EQ(b.indexer_cache.data, a.indexer_cache.data);
    EXPECT_EQ(part.nope_task, whole.nope_task);
    EXPECT_EQ(part.task_count, whole.task_count);
    EXPECT_EQ(part.model_shape_kernel, whole.model_shape_kernel);
  }
}

TEST(LaunchApi, NegativeTokenBlocksPerLaunchIsRefused) {
  LaunchOptions options;
  options.token_blocks_per_launch = -1;
  const std::string message = launch_fused_q(KernelDesign::kBlocked, FakeLaunch().args, nullptr, options);
  EXPECT_NE(message.find("token_blocks_per_launch"), std::string::npos) << message;
}

// This very test in a child process that sees no device (CUDA_VISIBLE_DEVICES
// empty): on a GPU host the fake host pointers must not reach a kernel.
// Returns the child's output; *passed says whether its one test passed.
std::string run_without_a_device(bool* passed) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "cannot read /proc/self/exe";
  self[n] = '\0';
  const std::string command = std::string("CUDA_VISIBLE_DEVICES= '") + self +
                              "' --gtest_filter=LaunchApi.ValidLaunchWithoutADeviceReturnsTheCudaErrorAsOneLine 2>&1";
  FILE* child = popen(command.c_str(), "r");
  if (child == nullptr) return "cannot start " + command;
  std::string out;
  char chunk[4096];
  while (size_t got = std::fread(chunk, 1, sizeof chunk, child)) out.append(chunk, got);
  const int status = pclose(child);
  *passed = status == 0 && out.find("[  PASSED  ] 1 test.") != std::string::npos &&
            out.find("[  SKIPPED ]") == std::string::npos;
  return out;
}

TEST(LaunchApi, ValidLaunchWithoutADeviceReturnsTheCudaErrorAsOneLine) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    bool passed = false;
    const std::string out = run_without_a_device(&passed);
    EXPECT_TRUE(passed) << "the test in a child without a device:\n" << out;
    return;
  }
  FakeLaunch launch;
  for (KernelDesign design : {KernelDesign::kLegacy, KernelDesign::kBlocked}) {
    const std::string message = launch_fused_q(design, launch.args, nullptr);
    EXPECT_EQ(message.rfind(std::string("cuda-") + name_of(design) + " launch failed: ", 0), 0u)
        << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace qcheck::cuda
