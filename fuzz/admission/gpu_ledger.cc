#include "fuzz/admission/gpu_ledger.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>

namespace qcheck {
namespace {

constexpr double kFirstPause = 0.001, kLongestPause = 0.05;  // seconds between two polls
constexpr double kReportEvery = 1.0;                         // seconds between two on_wait calls

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double epoch_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A positive number from an environment variable, `fallback` where unset.
bool positive_env(const char* name, double fallback, double* out, std::string* error) {
  const char* text = std::getenv(name);
  *out = fallback;
  if (text == nullptr || *text == '\0') return true;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value > 0)) {
    *error = std::string(name) + "='" + text + "': a positive number is wanted";
    return false;
  }
  *out = value;
  return true;
}

bool alive(const LedgerRecord& r) {
  uint64_t start = 0;
  if (!process_start(r.pid, &start)) return false;
  return r.start == 0 || start == 0 || start == r.start;
}

// Holders, earliest first: (since, pid).
bool earlier(const LedgerRecord& a, const LedgerRecord& b) {
  return std::tie(a.since, a.pid) < std::tie(b.since, b.pid);
}

}  // namespace

bool fake_device_memory(DeviceMemory* out, std::string* error) {
  const char* text = std::getenv("QCHECK_FAKE_DEVICE_FREE_BYTES");
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0') {
    if (error != nullptr) *error = std::string("QCHECK_FAKE_DEVICE_FREE_BYTES='") + text + "': a number of bytes is wanted";
    return false;
  }
  *out = DeviceMemory{true, value, value};
  return true;
}

bool process_start(int64_t pid, uint64_t* start) {
  *start = 0;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (stat) {
    std::stringstream text;
    text << stat.rdbuf();
    const std::string s = text.str();
    const size_t paren = s.rfind(')');
    if (paren != std::string::npos) {
      std::istringstream fields(s.substr(paren + 1));
      std::string field;
      for (int i = 0; i < 20 && fields >> field; ++i) {
        if (i == 19) *start = std::strtoull(field.c_str(), nullptr, 10);  // field 22: field 3 is the first here
      }
      return true;
    }
  }
  if (::kill(static_cast<pid_t>(pid), 0) == 0) return true;
  return errno == EPERM;
}

std::vector<LedgerRecord> parse_ledger(const std::string& text) {
  std::vector<LedgerRecord> records;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    LedgerRecord r;
    std::string kind, state, rest;
    if (!(fields >> r.pid >> r.start >> r.bytes >> kind >> state >> r.since) || (fields >> rest)) continue;
    if ((kind != "shared" && kind != "large") || (state != "waiting" && state != "running")) continue;
    r.large = kind == "large";
    r.running = state == "running";
    records.push_back(r);
  }
  return records;
}

std::string format_record(const LedgerRecord& r) {
  char line[160];
  std::snprintf(line, sizeof line, "%lld %llu %llu %s %s %.6f\n", static_cast<long long>(r.pid),
                static_cast<unsigned long long>(r.start), static_cast<unsigned long long>(r.bytes),
                r.large ? "large" : "shared", r.running ? "running" : "waiting", r.since);
  return line;
}

bool admitted(const LedgerRecord& own, const std::vector<LedgerRecord>& others, const DeviceMemory& memory,
              int workers) {
  if (std::none_of(others.begin(), others.end(), [](const LedgerRecord& r) { return r.running; })) return true;
  const uint64_t headroom = uint64_t(std::max(0, workers - 1)) * kRecordMinBytes;
  uint64_t held = 0;
  if (own.large) {
    for (const LedgerRecord& r : others) {
      if (r.large && r.running) return false;
      if (r.large && !r.running && earlier(r, own)) return false;
      held += r.bytes;
    }
  } else {
    const LedgerRecord* first_waiting = nullptr;
    for (const LedgerRecord& r : others) {
      if (r.running) held += r.bytes;
      if (r.large && !r.running && (first_waiting == nullptr || earlier(r, *first_waiting))) first_waiting = &r;
    }
    if (first_waiting != nullptr) held += first_waiting->bytes;
  }
  if (!memory.known) return true;
  return memory.free >= held + headroom && own.bytes <= memory.free - held - headroom;
}

std::unique_ptr<GpuLedger> GpuLedger::from_env(const std::string& key, DeviceMemorySource memory,
                                               std::string* error) {
  const char* folder = std::getenv("QCHECK_GPU_LEDGER");
  if (folder == nullptr || *folder == '\0') return nullptr;
  double workers = 1, wait = kLedgerMaxWaitSeconds;
  if (!positive_env("QCHECK_GPU_LEDGER_WORKERS", 1, &workers, error) ||
      !positive_env("QCHECK_GPU_LEDGER_WAIT_SECONDS", kLedgerMaxWaitSeconds, &wait, error)) {
    return nullptr;
  }
  auto ledger = std::make_unique<GpuLedger>(folder, key, std::move(memory), static_cast<int>(workers), wait);
  if (!ledger->problem().empty()) {
    *error = ledger->problem();
    return nullptr;
  }
  return ledger;
}

GpuLedger::GpuLedger(std::string folder, std::string key, DeviceMemorySource memory, int workers,
                     double max_wait_seconds)
    : folder_(std::move(folder)),
      key_(std::move(key)),
      memory_(std::move(memory)),
      workers_(std::max(1, workers)),
      max_wait_(max_wait_seconds),
      pid_(::getpid()) {
  ::mkdir(folder_.c_str(), 0777);  // (one level: the run's folder exists; EEXIST is fine)
  int* fds[] = {&turnstile_, &gate_, &records_};
  const char* names[] = {"turnstile", "gate", "ledger"};
  for (int i = 0; i < 3; ++i) {
    const std::string path = folder_ + "/" + key_ + "." + names[i];
    *fds[i] = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (*fds[i] < 0 && problem_.empty()) {
      problem_ = "the GPU ledger (QCHECK_GPU_LEDGER): cannot open " + path + ": " + std::strerror(errno);
    }
  }
  process_start(pid_, &start_);
}

GpuLedger::~GpuLedger() {
  for (int fd : {turnstile_, gate_, records_}) {
    if (fd >= 0) ::close(fd);
  }
}

bool GpuLedger::try_lock(int fd, int mode) {
  if (fd < 0) return true;  // (no file: no ledger to keep; problem() says so)
  while (::flock(fd, mode | LOCK_NB) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

bool GpuLedger::wait(const std::function<bool()>& ready, const std::string& what) {
  if (ready()) return true;
  const double start = now_seconds();
  double last = start, pause = kFirstPause;
  bool said = false, ok = false;
  while (true) {
    std::this_thread::sleep_for(std::chrono::duration<double>(pause));
    pause = std::min(kLongestPause, pause * 2);
    if (ready()) {
      ok = true;
      break;
    }
    const double now = now_seconds();
    if (on_wait && now - last >= kReportEvery) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.0f", now - start);
      on_wait("waiting " + std::string(seconds) + " s for GPU memory: " + what);
      last = now;
      said = true;
    }
    if (now - start >= max_wait_) {
      ++overdue;
      break;
    }
  }
  waited_seconds += now_seconds() - start;
  if (said && on_wait) on_wait("");
  return ok;
}

bool GpuLedger::edit(const std::function<bool(std::vector<LedgerRecord>*)>& change) {
  if (records_ < 0) return change(nullptr);
  while (::flock(records_, LOCK_EX) != 0 && errno == EINTR) {
  }
  std::string text;
  struct stat st {};
  if (::fstat(records_, &st) == 0 && st.st_size > 0) {
    text.resize(static_cast<size_t>(st.st_size));
    const ssize_t n = ::pread(records_, text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  std::vector<LedgerRecord> records;
  for (const LedgerRecord& r : parse_ledger(text)) {
    if (r.pid != pid_ && alive(r)) records.push_back(r);
  }
  const bool value = change(&records);
  std::string out = "# pid start bytes kind state since\n";
  for (const LedgerRecord& r : records) out += format_record(r);
  if (::ftruncate(records_, 0) == 0) {
    const ssize_t written = ::pwrite(records_, out.data(), out.size(), 0);
    (void)written;  // (a full disk: the records are lost, the locks still hold)
  }
  ::flock(records_, LOCK_UN);
  return value;
}

bool GpuLedger::large(uint64_t bytes) const {
  const DeviceMemory m = memory_();
  return m.known && bytes > m.total / (2 * uint64_t(workers_));
}

GpuLedger::Admission GpuLedger::admit(uint64_t bytes) {
  Admission a;
  a.ledger_ = this;
  bool turnstile = false;
  const bool through = wait(
      [&] {
        if (!turnstile && !(turnstile = try_lock(turnstile_, LOCK_SH))) return false;
        if (!try_lock(gate_, LOCK_SH)) return false;
        try_lock(turnstile_, LOCK_UN);
        return true;
      },
      "another worker's out-of-memory retry runs alone");
  if (!through) try_lock(turnstile_, LOCK_UN);  // (past the bound: in anyway)
  if (bytes < kRecordMinBytes) return a;
  a.recorded_ = true;
  LedgerRecord own;
  own.pid = pid_;
  own.start = start_;
  own.bytes = bytes;
  own.large = large(bytes);
  own.since = epoch_seconds();
  const auto poll = [&](std::vector<LedgerRecord>* records) {
    if (records == nullptr) return true;
    if (!own.running && admitted(own, *records, memory_(), workers_)) own.running = true;
    records->push_back(own);
    return own.running;
  };
  char what[96];
  std::snprintf(what, sizeof what, "%.1f GB%s", double(bytes) / 1e9,
                own.large ? " (a limit case: limit cases take turns)" : "");
  if (!wait([&] { return edit(poll); }, what)) {
    own.running = true;  // (waited past the bound: it runs anyway)
    edit(poll);
  }
  return a;
}

GpuLedger::Admission GpuLedger::alone() {
  Admission a;
  a.ledger_ = this;
  a.alone_ = true;
  bool turnstile = false;
  wait(
      [&] {
        if (!turnstile && !(turnstile = try_lock(turnstile_, LOCK_EX))) return false;
        return try_lock(gate_, LOCK_EX);
      },
      "to run alone (an out-of-memory retry): the runs in flight end first");
  return a;
}

void GpuLedger::release(Admission* a) {
  if (a->recorded_) edit([](std::vector<LedgerRecord>*) { return true; });  // (edit drops this process's record)
  try_lock(gate_, LOCK_UN);
  if (a->alone_) try_lock(turnstile_, LOCK_UN);
}

GpuLedger::Admission::Admission(Admission&& other) noexcept { *this = std::move(other); }

GpuLedger::Admission& GpuLedger::Admission::operator=(Admission&& other) noexcept {
  if (this != &other) {
    if (ledger_ != nullptr) ledger_->release(this);
    ledger_ = other.ledger_;
    alone_ = other.alone_;
    recorded_ = other.recorded_;
    other.ledger_ = nullptr;
  }
  return *this;
}

GpuLedger::Admission::~Admission() {
  if (ledger_ != nullptr) ledger_->release(this);
}

}  // namespace qcheck
