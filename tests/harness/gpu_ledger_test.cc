// The GPU ledger (fuzz/admission/gpu_ledger.h) between processes: a run
// alone waits for the runs in flight and lets none in, limit cases take
// turns beside smaller ones, a dead process's record is dropped, a wait is
// bounded and reported; the admission rules and the record format that
// python/qcheck/parallel/gpu_ledger.py shares (python/tests/test_memory.py holds the
// same line).
#include "fuzz/admission/gpu_ledger.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace qcheck {
namespace {

constexpr uint64_t kGB = 1000000000ull;

double now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string temporary_folder() {
  char pattern[] = "/tmp/qcheck-ledger-XXXXXX";
  const char* made = mkdtemp(pattern);
  EXPECT_NE(made, nullptr);
  return made != nullptr ? made : "/tmp";
}

DeviceMemorySource fixed(uint64_t bytes) {
  return [bytes] { return DeviceMemory{true, bytes, bytes}; };
}

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// A child process that holds an admission for `hold` seconds; it writes the
// time it got in to the pipe. Returns its pid; *in_at gets that time.
pid_t hold_in_child(const std::string& folder, uint64_t bytes, bool alone, double hold, double* in_at) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    GpuLedger ledger(folder, "host", fixed(100 * kGB), 2);
    {
      GpuLedger::Admission held = alone ? ledger.alone() : ledger.admit(bytes);
      const double t = now();
      if (write(fds[1], &t, sizeof t) != sizeof t) _exit(3);
      std::this_thread::sleep_for(std::chrono::duration<double>(hold));
    }
    _exit(0);
  }
  close(fds[1]);
  if (in_at != nullptr) {
    EXPECT_EQ(read(fds[0], in_at, sizeof *in_at), ssize_t(sizeof *in_at));
  }
  close(fds[0]);
  return pid;
}

int exit_of(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(GpuLedger, TheRecordFormatPythonShares) {
  const std::string line = "4242 987654 5368709120 large running 1700000000.500000\n";
  const auto records = parse_ledger("# pid start bytes kind state since\n" + line + "not a record\n");
  ASSERT_EQ(records.size(), 1u);
  const LedgerRecord& r = records[0];
  EXPECT_EQ(r.pid, 4242);
  EXPECT_EQ(r.start, 987654u);
  EXPECT_EQ(r.bytes, 5368709120ull);
  EXPECT_TRUE(r.large);
  EXPECT_TRUE(r.running);
  EXPECT_DOUBLE_EQ(r.since, 1700000000.5);
  EXPECT_EQ(format_record(r), line);
}

LedgerRecord record(int64_t pid, uint64_t bytes, bool large, bool running, double since = 0) {
  LedgerRecord r;
  r.pid = pid;
  r.bytes = bytes;
  r.large = large;
  r.running = running;
  r.since = since;
  return r;
}

TEST(GpuLedger, AdmissionRules) {
  const DeviceMemory device{true, 100 * kGB, 100 * kGB};
  const uint64_t headroom = 3 * kRecordMinBytes;  // four workers: three others' unrecorded runs
  const LedgerRecord mine = record(1, 10 * kGB, false, false, 5);
  EXPECT_TRUE(admitted(mine, {}, DeviceMemory{true, 1, 1}, 4));  // nothing running: in, whatever the size
  EXPECT_TRUE(admitted(mine, {record(2, 20 * kGB, false, true)}, DeviceMemory{true, 30 * kGB + headroom, 0}, 4));
  EXPECT_FALSE(admitted(mine, {record(2, 20 * kGB, false, true)}, DeviceMemory{true, 30 * kGB + headroom - 1, 0}, 4));
  // A waiting limit case keeps its place.
  EXPECT_FALSE(admitted(mine, {record(2, 20 * kGB, false, true), record(3, 40 * kGB, true, false, 1)},
                        DeviceMemory{true, 69 * kGB, 0}, 4));
  // Limit cases take turns.
  const LedgerRecord big = record(1, 30 * kGB, true, false, 5);
  EXPECT_FALSE(admitted(big, {record(2, 30 * kGB, true, true)}, device, 4));
  EXPECT_FALSE(admitted(big, {record(2, kGB, false, true), record(3, kGB, true, false, 4)}, device, 4));
  EXPECT_TRUE(admitted(big, {record(2, kGB, false, true), record(3, kGB, true, false, 6)}, device, 4));
  EXPECT_TRUE(admitted(mine, {record(2, 1000000 * kGB, false, true)}, DeviceMemory{}, 4));  // unknown: turns only
}

TEST(GpuLedger, ARunAloneWaitsForTheRunsInFlightAndLetsNoneIn) {
  const std::string folder = temporary_folder();
  double first_in = 0;
  const pid_t first = hold_in_child(folder, 1000, false, 0.6, &first_in);
  GpuLedger ledger(folder, "host", fixed(100 * kGB), 2);
  pid_t second = 0;
  double left = 0;
  {
    GpuLedger::Admission alone = ledger.alone();
    EXPECT_GE(now() - first_in, 0.5) << "alone ran beside a run in flight";
    second = fork();
    if (second == 0) {
      GpuLedger other(folder, "host", fixed(100 * kGB), 2);
      GpuLedger::Admission held = other.admit(1000);
      std::ofstream(folder + "/second.in") << std::to_string(now());
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    EXPECT_FALSE(std::ifstream(folder + "/second.in").good()) << "a run started while one ran alone";
    left = now();
  }
  EXPECT_EQ(exit_of(second), 0);
  EXPECT_GE(std::stod(read_file(folder + "/second.in")), left - 0.05);
  EXPECT_EQ(exit_of(first), 0);
}

TEST(GpuLedger, LimitCasesTakeTurnsBesideSmallerOnes) {
  const std::string folder = temporary_folder();
  GpuLedger ledger(folder, "host", fixed(100 * kGB), 2);
  EXPECT_TRUE(ledger.large(40 * kGB));  // over 100 GB / (2 * 2)
  EXPECT_FALSE(ledger.large(10 * kGB));
  double first_in = 0;
  const pid_t first = hold_in_child(folder, 40 * kGB, false, 0.8, &first_in);
  {
    GpuLedger::Admission shared = ledger.admit(10 * kGB);
    EXPECT_LT(now() - first_in, 0.5) << "a shared run waited for a limit case that left it room";
    EXPECT_NE(read_file(folder + "/host.ledger").find(" large running "), std::string::npos);
  }
  {
    GpuLedger::Admission turn = ledger.admit(40 * kGB);
    EXPECT_GE(now() - first_in, 0.7) << "two limit cases ran at once";
  }
  EXPECT_EQ(exit_of(first), 0);
}

TEST(GpuLedger, ARecordOfAProcessThatIsGoneIsDropped) {
  const std::string folder = temporary_folder();
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  exit_of(gone);
  std::ofstream(folder + "/host.ledger") << gone << " 1 1000000000000000 large running 1.0\n";
  GpuLedger ledger(folder, "host", fixed(100 * kGB), 2, 5);
  const auto start = std::chrono::steady_clock::now();
  {
    GpuLedger::Admission held = ledger.admit(60 * kGB);  // a limit case: the dead one's record would block it
    const std::string text = read_file(folder + "/host.ledger");
    EXPECT_EQ(text.find(std::to_string(gone) + " "), std::string::npos) << text;
    EXPECT_NE(text.find(std::to_string(getpid()) + " "), std::string::npos) << text;
  }
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.0);
  EXPECT_EQ(ledger.overdue, 0);
  EXPECT_EQ(read_file(folder + "/host.ledger").find(std::to_string(getpid()) + " "), std::string::npos);
}

TEST(GpuLedger, AWaitIsBoundedAndReported) {
  const std::string folder = temporary_folder();
  double first_in = 0;
  const pid_t first = hold_in_child(folder, 0, true, 3.5, &first_in);
  GpuLedger ledger(folder, "host", fixed(100 * kGB), 2, 1.5);
  std::vector<std::string> seen;
  ledger.on_wait = [&](const std::string& what) { seen.push_back(what); };
  const auto start = std::chrono::steady_clock::now();
  { GpuLedger::Admission held = ledger.admit(1000); }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_GT(took, 1.4);
  EXPECT_LT(took, 3.0);
  EXPECT_EQ(ledger.overdue, 1);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen[0].rfind("waiting 1 s for GPU memory: another worker's out-of-memory retry", 0), 0u) << seen[0];
  EXPECT_EQ(seen.back(), "");
  EXPECT_EQ(exit_of(first), 0);
}

TEST(GpuLedger, TheFakeDeviceHookIsChecked) {
  DeviceMemory m;
  std::string error;
  setenv("QCHECK_FAKE_DEVICE_FREE_BYTES", "lots", 1);
  EXPECT_FALSE(fake_device_memory(&m, &error));
  EXPECT_NE(error.find("QCHECK_FAKE_DEVICE_FREE_BYTES='lots'"), std::string::npos) << error;
  setenv("QCHECK_FAKE_DEVICE_FREE_BYTES", "77", 1);
  ASSERT_TRUE(fake_device_memory(&m, &error));
  EXPECT_EQ(m.free, 77u);
  EXPECT_EQ(m.total, 77u);
  unsetenv("QCHECK_FAKE_DEVICE_FREE_BYTES");
  setenv("QCHECK_GPU_LEDGER", "/tmp", 1);
  setenv("QCHECK_GPU_LEDGER_WORKERS", "0", 1);
  error.clear();
  EXPECT_EQ(GpuLedger::from_env("host", fixed(kGB), &error), nullptr);
  EXPECT_NE(error.find("QCHECK_GPU_LEDGER_WORKERS='0': a positive number is wanted"), std::string::npos) << error;
  unsetenv("QCHECK_GPU_LEDGER");
  unsetenv("QCHECK_GPU_LEDGER_WORKERS");
}

}  // namespace
}  // namespace qcheck
