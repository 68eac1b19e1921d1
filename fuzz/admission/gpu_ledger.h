// GPU memory admission across processes: the ledger that every worker of a
// run (the C++ campaign's fuzz targets, the Python door's workers:
// python/qcheck/parallel/gpu_ledger.py keeps the same protocol, files and rules)
// consults before a case touches the device, so that many workers with
// large cases do not run the device out of memory and report it as the
// kernel's bug. The device mirror (fuzz/buffers/device_mirror_cuda.cc) runs
// every CUDA backend's run inside it when QCHECK_GPU_LEDGER names its folder.
//
// Per device KEY ("pci-DOMAIN-BUS-DEVICE"; "host" without a device) three
// files in the folder:
//   KEY.turnstile, KEY.gate  flock(2) only: every run holds the gate shared
//                            (through the turnstile, shared); a run alone (an
//                            out-of-memory retry) takes the turnstile, then
//                            the gate, exclusively: the runs in flight end, no
//                            new one starts. A dead process's locks go with it.
//   KEY.ledger               the reservations of kRecordMinBytes or more, one
//                            line each ("PID START BYTES KIND STATE SINCE":
//                            START the process's start time from
//                            /proc/PID/stat, KIND shared or large, STATE
//                            waiting or running, SINCE epoch seconds), read and
//                            rewritten under flock; records of dead processes
//                            are dropped by whoever rewrites it.
// Admission of a recorded reservation: admitted() below (the rules of
// python/qcheck/parallel/gpu_ledger.py's text: limit cases take turns, the others fit
// into the free bytes less the other reservations and a headroom). Every wait
// is bounded (QCHECK_GPU_LEDGER_WAIT_SECONDS, default 300) and reported.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace qcheck {

// Below this a reservation is not recorded (it passes the gate only): every
// worker's arena and allocator hold about that much anyway, and a record per
// execution would cost more than it guards.
constexpr uint64_t kRecordMinBytes = uint64_t(512) << 20;
constexpr double kLedgerMaxWaitSeconds = 300;

// The device's memory now; known false where nobody can say (no device).
struct DeviceMemory {
  bool known = false;
  uint64_t free = 0;
  uint64_t total = 0;
};
using DeviceMemorySource = std::function<DeviceMemory()>;

// The test hook: QCHECK_FAKE_DEVICE_FREE_BYTES=N makes the device's free and
// total bytes N. True when set (then *out holds it); *error names a bad value.
bool fake_device_memory(DeviceMemory* out, std::string* error);

struct LedgerRecord {
  int64_t pid = 0;
  uint64_t start = 0;
  uint64_t bytes = 0;
  bool large = false;
  bool running = false;
  double since = 0;
};
// The records of a ledger file's text (comments and lines that are no record skipped).
std::vector<LedgerRecord> parse_ledger(const std::string& text);
std::string format_record(const LedgerRecord& r);  // one line, with its '\n'
// Whether `own` may run beside `others` (the live records of other
// processes) on a device with `memory`, shared by `workers` processes.
bool admitted(const LedgerRecord& own, const std::vector<LedgerRecord>& others, const DeviceMemory& memory,
              int workers);
// A process's start time (/proc/PID/stat field 22), 0 where unknown; false when it is gone.
bool process_start(int64_t pid, uint64_t* start);

class GpuLedger {
 public:
  // What a held admission gives back when it ends (moved, not copied).
  class Admission {
   public:
    Admission() = default;
    Admission(Admission&& other) noexcept;
    Admission& operator=(Admission&& other) noexcept;
    Admission(const Admission&) = delete;
    Admission& operator=(const Admission&) = delete;
    ~Admission();

   private:
    friend class GpuLedger;
    GpuLedger* ledger_ = nullptr;
    bool alone_ = false;
    bool recorded_ = false;
  };

  // The ledger QCHECK_GPU_LEDGER names for device `key` (nullptr where it is
  // not set); QCHECK_GPU_LEDGER_WORKERS and QCHECK_GPU_LEDGER_WAIT_SECONDS
  // as the header says. *error: a bad variable or a folder it cannot use.
  static std::unique_ptr<GpuLedger> from_env(const std::string& key, DeviceMemorySource memory, std::string* error);
  GpuLedger(std::string folder, std::string key, DeviceMemorySource memory, int workers = 1,
            double max_wait_seconds = kLedgerMaxWaitSeconds);
  ~GpuLedger();
  GpuLedger(const GpuLedger&) = delete;
  GpuLedger& operator=(const GpuLedger&) = delete;

  // "" once the folder's files could be opened, else why not.
  const std::string& problem() const { return problem_; }
  // Around a run that may use `bytes` of the device: waits for its turn.
  Admission admit(uint64_t bytes);
  // Around a run alone on the device.
  Admission alone();
  // A limit case here (more than total / (2 * workers)): they take turns.
  bool large(uint64_t bytes) const;
  DeviceMemory memory() const { return memory_(); }

  // Called about once a second while a request waits, with what it waits
  // for ("waiting N s for GPU memory: ..."), and with "" when it ends.
  std::function<void(const std::string&)> on_wait;
  double waited_seconds = 0;  // in all
  int overdue = 0;            // waits that ran past the bound (they ran anyway)

 private:
  bool wait(const std::function<bool()>& ready, const std::string& what);
  bool try_lock(int fd, int mode);
  // Reads the records under the ledger's lock, drops dead processes' and
  // this process's own, calls change (which may add records and returns a
  // value), writes them back.
  bool edit(const std::function<bool(std::vector<LedgerRecord>*)>& change);
  void release(Admission* a);

  std::string folder_, key_, problem_;
  DeviceMemorySource memory_;
  int workers_;
  double max_wait_;
  int turnstile_ = -1, gate_ = -1, records_ = -1;
  int64_t pid_;
  uint64_t start_ = 0;
};

}  // namespace qcheck
