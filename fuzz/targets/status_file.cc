#include "fuzz/targets/status_file.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz/buffers/device_mirror.h"

namespace qcheck::fuzzing {
namespace {

using Clock = std::chrono::steady_clock;

struct Status {
  std::string path;  // empty: not asked for
  uint64_t executions = 0;
  uint64_t memory_notes = 0;
  std::string waiting;
  Clock::time_point start = Clock::now();
  Clock::time_point last_write = start;

  Status() {
    const char* p = std::getenv("QCHECK_STATUS_FILE");
    if (p != nullptr) path = p;
  }
  ~Status() { write(); }

  void write() {
    if (path.empty()) return;
    const std::string temporary = path + ".partial";
    FILE* f = std::fopen(temporary.c_str(), "w");
    if (f == nullptr) return;  // a full disk: the campaign notices on its own
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    const bool written =
        std::fprintf(f, "executions %llu\nseconds %.1f\nmemory_retried %llu\nmemory_notes %llu\n%s%s%s",
                     static_cast<unsigned long long>(executions), seconds,
                     static_cast<unsigned long long>(cuda_memory_retries()),
                     static_cast<unsigned long long>(memory_notes), waiting.empty() ? "" : "waiting ",
                     waiting.c_str(), waiting.empty() ? "" : "\n") > 0;
    if (std::fclose(f) == 0 && written) std::rename(temporary.c_str(), path.c_str());
  }
};

Status& status() {
  static Status s;
  return s;
}

}  // namespace

void count_execution() {
  Status& s = status();
  ++s.executions;
  // The clock is read every 64 inputs: a few ns per input.
  if (s.path.empty() || s.executions % 64 != 0) return;
  const Clock::time_point now = Clock::now();
  if (now - s.last_write < std::chrono::seconds(1)) return;
  s.last_write = now;
  s.write();
}

void write_status_now() { status().write(); }

void count_memory_note() {
  ++status().memory_notes;
  status().write();
}

void set_waiting(const std::string& what) {
  Status& s = status();
  if (s.waiting.empty() && !what.empty()) std::fprintf(stderr, "fused_q: %s\n", what.c_str());
  s.waiting = what;
  s.write();
}

}  // namespace qcheck::fuzzing
