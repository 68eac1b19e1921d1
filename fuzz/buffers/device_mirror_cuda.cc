// The device mirror with the CUDA runtime (compiled only when QCHECK_HAVE_CUDA).
//
// Why an arena: a fuzz execution runs the kernel twice (two poison fills) on
// cases of a few KB. With one cudaMalloc, cudaMemcpy and cudaFree per tensor,
// the CUDA API calls cost ~0.9 ms per execution and capped the fuzzer near
// 1,100 exec/s on the H200. Instead, one device allocation and one pinned
// host staging buffer live for the whole process and grow to the largest
// case seen: the guarded buffers are packed into the staging buffer, moved
// with one copy each way, and unpacked. Each buffer starts on 256 bytes, as a
// cudaMalloc would, so the kernels take the same vector paths; a stray write
// past a buffer's back sentinel lands in the next buffer's front sentinel and
// is reported like any other overwritten sentinel.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "fuzz/admission/gpu_ledger.h"
#include "fuzz/buffers/device_mirror.h"
#include "fuzz/buffers/shared_scrub.h"

namespace qcheck {
namespace {

std::string cuda_error(const char* call, cudaError_t error) {
  return std::string(call) + " failed: " + cudaGetErrorName(error) + " (" +
         cudaGetErrorString(error) + ")";
}

constexpr size_t kBufferAlignment = 256;
// Cases above this size (the gate's token-limit cases) are not kept: their
// device memory is given back after the run and they are copied straight
// from the pageable host buffers instead of through pinned staging.
constexpr size_t kKeepBytes = size_t(256) << 20;

size_t aligned(size_t bytes) { return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment; }

// One process-wide allocation that grows to the largest request; `allocate`
// and `release` are cudaMalloc/cudaFree or cudaMallocHost/cudaFreeHost.
class GrowingAllocation {
 public:
  using Allocate = cudaError_t (*)(void**, size_t);
  using Release = cudaError_t (*)(void*);
  GrowingAllocation(Allocate allocate, Release release) : allocate_(allocate), release_(release) {}

  // At least `bytes`, or the CUDA error (nothing held then).
  cudaError_t reserve(size_t bytes, uint8_t** out) {
    if (bytes > bytes_) {
      release();
      void* p = nullptr;
      const cudaError_t e = allocate_(&p, bytes);
      if (e != cudaSuccess) return e;
      data_ = static_cast<uint8_t*>(p);
      bytes_ = bytes;
    }
    *out = data_;
    return cudaSuccess;
  }

  void release() {
    if (data_ != nullptr) release_(data_);
    data_ = nullptr;
    bytes_ = 0;
  }

 private:
  Allocate allocate_;
  Release release_;
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

// Process-wide device memory and pinned host staging.
struct Arena {
  std::mutex mutex;
  GrowingAllocation device{[](void** p, size_t n) { return cudaMalloc(p, n); },
                           [](void* p) { return cudaFree(p); }};
  GrowingAllocation staging{[](void** p, size_t n) { return cudaMallocHost(p, n); },
                            [](void* p) { return cudaFreeHost(p); }};

  // Runs at exit, before the CUDA runtime's own teardown: the runtime
  // registered that when it initialized, which cuda_device_problem() made
  // happen before the arena's first use. compute-sanitizer's leak check
  // then finds nothing left.
  ~Arena() {
    device.release();
    staging.release();
  }
};

Arena& arena() {
  static Arena a;
  return a;
}

// The arena given back (before a run alone: all the device memory it can have).
void release_arena() {
  Arena& a = arena();
  std::lock_guard<std::mutex> lock(a.mutex);
  a.device.release();
  a.staging.release();
}

std::atomic<uint64_t> g_memory_retries{0};
std::mutex g_reporter_mutex;
std::function<void(const std::string&)> g_wait_reporter;

// The ledger's name of the current device, as python/qcheck/parallel/gpu_ledger.py's
// device_key() builds it: the same GPU under any CUDA_VISIBLE_DEVICES or MPS daemon.
std::string device_key() {
  int device = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    cudaGetLastError();
    return "cuda" + std::to_string(device);
  }
  char key[48];
  std::snprintf(key, sizeof key, "pci-%04x-%02x-%02x", unsigned(p.pciDomainID), unsigned(p.pciBusID),
                unsigned(p.pciDeviceID));
  return key;
}

DeviceMemory device_memory() {
  DeviceMemory m;
  std::string error;
  if (fake_device_memory(&m, &error)) return m;  // (the test hook: QCHECK_FAKE_DEVICE_FREE_BYTES)
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return m;
  }
  return DeviceMemory{true, free, total};
}

// The process's ledger (QCHECK_GPU_LEDGER), nullptr without one. A bad
// setting is said once and the runs go on without it.
GpuLedger* device_ledger() {
  static const std::unique_ptr<GpuLedger> ledger = [] {
    std::string error;
    DeviceMemory fake;
    if (!fake_device_memory(&fake, &error) && !error.empty()) {
      std::fprintf(stderr, "qcheck: %s: the device's own figures are used\n", error.c_str());
    }
    error.clear();
    std::unique_ptr<GpuLedger> l = GpuLedger::from_env(device_key(), device_memory, &error);
    if (!error.empty()) std::fprintf(stderr, "qcheck: %s: running without the GPU ledger\n", error.c_str());
    if (l) {
      l->on_wait = [](const std::string& what) {
        std::lock_guard<std::mutex> lock(g_reporter_mutex);
        if (g_wait_reporter) g_wait_reporter(what);
      };
    }
    return l;
  }();
  return ledger.get();
}

#define QCHECK_CUDA_CHECK(call)                                                          \
  do {                                                                                   \
    const cudaError_t error_ = (call);                                                   \
    if (error_ != cudaSuccess) return Outcome::runtime_error(cuda_error(#call, error_)); \
  } while (0)

// The stream graph captures run on (the legacy default stream cannot be
// captured). Created once and blocking, so it runs after the copies made on
// the default stream and before the ones made after it.
cudaError_t capture_stream(cudaStream_t* out) {
  static cudaStream_t stream = nullptr;
  static const cudaError_t created = cudaStreamCreate(&stream);
  *out = stream;
  return created;
}

struct GraphOwner {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ~GraphOwner() {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
};

// Captures the launch, instantiates the graph and replays it once, waiting
// for it. A launch that is not capturable (it synchronizes, allocates or
// copies) ends the capture with an error named here.
Outcome launch_in_graph(const std::string& what, const DeviceLaunch& launch, const FusedQArgs& args) {
  cudaStream_t stream = nullptr;
  QCHECK_CUDA_CHECK(capture_stream(&stream));
  QCHECK_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const std::string error = launch(args, stream);
  GraphOwner g;
  const cudaError_t ended = cudaStreamEndCapture(stream, &g.graph);
  if (!error.empty()) return Outcome::runtime_error(what + " (captured in a CUDA graph): " + error);
  QCHECK_CUDA_CHECK(ended);
  size_t nodes = 0;
  QCHECK_CUDA_CHECK(cudaGraphGetNodes(g.graph, nullptr, &nodes));
  if (nodes == 0) return Outcome::ok();  // the launch had nothing to do (T = 0)
  QCHECK_CUDA_CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
  QCHECK_CUDA_CHECK(cudaGraphLaunch(g.exec, stream));
  QCHECK_CUDA_CHECK(cudaStreamSynchronize(stream));
  return Outcome::ok();
}

// Gives the device memory back after a large case, also on an early return.
struct ReleaseIfLarge {
  Arena& a;
  bool large;
  ~ReleaseIfLarge() {
    if (large) a.device.release();
  }
};

}  // namespace

std::string cuda_device_problem() {
  static const std::string problem = [] {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) return "no CUDA device: " + cuda_error("cudaGetDeviceCount", error);
    if (count == 0) return std::string("no CUDA device: cudaGetDeviceCount found 0 devices");
    return std::string();
  }();
  return problem;
}

DeviceLaunch project_kernel_launch(cuda::KernelDesign design, const cuda::LaunchOptions& options) {
  return [design, options](const FusedQArgs& args, void* stream) {
    return cuda::launch_fused_q(design, args, stream, options);
  };
}

std::string project_kernel_launch_name(cuda::KernelDesign design) {
  return std::string("launch_fused_q(") + cuda::name_of(design) + ")";
}

uint64_t cuda_memory_retries() { return g_memory_retries.load(); }

void set_device_wait_reporter(std::function<void(const std::string&)> report) {
  std::lock_guard<std::mutex> lock(g_reporter_mutex);
  g_wait_reporter = std::move(report);
}

namespace {

uint64_t device_bytes(const TensorSet& tensors) {
  uint64_t total = 0;
  for (const GuardedBuffer& host : tensors.buffers) total += aligned(host.size());
  return total;
}

bool memory_failure(const Outcome& o) {
  return o.kind == OutcomeKind::kRuntimeError && is_out_of_memory(o.reason);
}

// One run: the buffers into the arena, the launch, the buffers back.
Outcome run_once(const std::string& what, const DeviceLaunch& launch, const Case& c, TensorSet& tensors,
                 LaunchMode mode) {
  std::vector<size_t> offsets;
  size_t total = 0;
  for (const GuardedBuffer& host : tensors.buffers) {
    offsets.push_back(total);
    total += aligned(host.size());
  }
  Arena& a = arena();
  std::lock_guard<std::mutex> lock(a.mutex);
  const bool large = total > kKeepBytes;
  ReleaseIfLarge release{a, large};
  uint8_t* device = nullptr;
  QCHECK_CUDA_CHECK(a.device.reserve(total, &device));
  uint8_t* staging = nullptr;
  if (!large) QCHECK_CUDA_CHECK(a.staging.reserve(total, &staging));

  std::vector<uint8_t*> payloads;
  for (size_t i = 0; i < tensors.buffers.size(); ++i) {
    GuardedBuffer& host = tensors.buffers[i];
    if (large) {
      QCHECK_CUDA_CHECK(cudaMemcpy(device + offsets[i], host.data(), host.size(), cudaMemcpyHostToDevice));
    } else {
      std::memcpy(staging + offsets[i], host.data(), host.size());
      // Gap bytes up to the next buffer get a fixed value, so a read past
      // a back sentinel sees the same bytes in every run and every replay.
      std::memset(staging + offsets[i] + host.size(), GuardedBuffer::kPaddingByte,
                  aligned(host.size()) - host.size());
    }
    payloads.push_back(device + offsets[i] + GuardedBuffer::kSentinelBytes);
  }
  if (!large) QCHECK_CUDA_CHECK(cudaMemcpyAsync(device, staging, total, cudaMemcpyHostToDevice, nullptr));

  const FusedQArgs args = make_fused_q_args(c, tensors.plan, payloads);
  const std::string invalid = validate_fused_q_args(args);
  if (!invalid.empty()) return Outcome::invalid_input(invalid);
  // Another pattern in shared memory before each run of a race-sized case (shared_scrub.h).
  static std::atomic<uint32_t> runs{0};
  if (scrub_before_run(c.num_tokens)) {
    const std::string scrub = scrub_shared_memory(0xA5C3F00Fu * (1 + runs.fetch_add(1)));
    if (!scrub.empty()) return Outcome::runtime_error(scrub);
  }

  if (mode == LaunchMode::kGraph) {
    const Outcome replayed = launch_in_graph(what, launch, args);
    if (!replayed.is_ok()) return replayed;
  } else {
    const std::string error = launch(args, nullptr);
    if (!error.empty()) return Outcome::runtime_error(what + ": " + error);
  }
  if (large) {
    QCHECK_CUDA_CHECK(cudaDeviceSynchronize());
    for (size_t i = 0; i < tensors.buffers.size(); ++i) {
      GuardedBuffer& host = tensors.buffers[i];
      QCHECK_CUDA_CHECK(cudaMemcpy(host.data(), device + offsets[i], host.size(), cudaMemcpyDeviceToHost));
    }
    return Outcome::ok();
  }
  QCHECK_CUDA_CHECK(cudaMemcpyAsync(staging, device, total, cudaMemcpyDeviceToHost, nullptr));
  QCHECK_CUDA_CHECK(cudaDeviceSynchronize());
  for (size_t i = 0; i < tensors.buffers.size(); ++i) {
    GuardedBuffer& host = tensors.buffers[i];
    std::memcpy(host.data(), staging + offsets[i], host.size());
  }
  return Outcome::ok();
}

}  // namespace

Outcome run_on_cuda_device(const std::string& what, const DeviceLaunch& launch, const Case& c, TensorSet& tensors,
                           LaunchMode mode) {
  const std::string problem = cuda_device_problem();
  if (!problem.empty()) return Outcome::runtime_error(problem);
  GpuLedger* ledger = device_ledger();
  const uint64_t planned = device_bytes(tensors);
  Outcome first;
  {
    GpuLedger::Admission held;
    if (ledger != nullptr) held = ledger->admit(planned + kMirrorSlackBytes);
    first = run_once(what, launch, c, tensors, mode);
  }
  if (!memory_failure(first)) return first;
  // Retried alone: the out-of-memory error cleared, the arena given back, no
  // other run of the ledger's on the device.
  cudaGetLastError();
  release_arena();
  Outcome again;
  {
    GpuLedger::Admission held;
    if (ledger != nullptr) held = ledger->alone();
    again = run_once(what, launch, c, tensors, mode);
  }
  if (!memory_failure(again)) {
    if (again.kind == OutcomeKind::kRuntimeError) {  // (another CUDA error, after the out-of-memory one)
      return Outcome::runtime_error("after an out-of-memory error, retried alone: " + again.reason);
    }
    ++g_memory_retries;
    return again;
  }
  cudaGetLastError();
  release_arena();
  const DeviceMemory m = ledger != nullptr ? ledger->memory() : device_memory();
  return Outcome::runtime_error(std::string(kNeedsMoreMemory) + " (planned " + std::to_string(planned) +
                                " bytes, device free " + (m.known ? std::to_string(m.free) : std::string("unknown")) +
                                "): " + again.reason);
}

#undef QCHECK_CUDA_CHECK

}  // namespace qcheck
