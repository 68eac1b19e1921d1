// The .npy exchange (fuzz/exchange/npy.h, fuzz/exchange/exchange.h): the format, the export,
// a kernel run through the files, one changed byte found at its element,
// and every broken file refused with its name and field.
#include "fuzz/exchange/exchange.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "fuzz/backends/backend.h"
#include "fuzz/exchange/npy.h"
#include "fuzz/verdict/judge.h"
#include "tests/harness/case_samples.h"

namespace qcheck {
namespace {

std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/qcheck_exchange_" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
  mkdir(dir.c_str(), 0777);
  return dir;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

// The verdict qcheck-check gives: import, then judge one run (under the
// profile of the CPU model that plays the kernel here).
Report check_dir(const std::string& dir, std::string* error) {
  Case c;
  TensorSet got;
  *error = import_run(dir, &c, &got);
  Judgement j;
  if (error->empty()) *error = judge_runs(c, "qcheck", simd_row_ops(), got, got, 20, nullptr, nullptr, &j);
  return j.report;
}

TEST(Npy, EncodesAsNumpyDoesAndDecodesBack) {
  NpyArray a{"<u2", {2, 3}, {}};
  for (int i = 0; i < 12; ++i) a.data.push_back(uint8_t(i));
  const std::vector<uint8_t> bytes = encode_npy(a);
  ASSERT_GE(bytes.size(), 64u + 12u);
  EXPECT_EQ(std::memcmp(bytes.data(), "\x93NUMPY\x01\x00", 8), 0);
  const size_t header = size_t(bytes[8]) | size_t(bytes[9]) << 8;
  EXPECT_EQ((10 + header) % 64, 0u);  // the data starts 64-aligned, as numpy.save writes
  const std::string text(bytes.begin() + 10, bytes.begin() + 10 + long(header));
  EXPECT_EQ(text.rfind("{'descr': '<u2', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u) << text;
  EXPECT_EQ(text.back(), '\n');
  NpyArray back;
  ASSERT_EQ(decode_npy(bytes.data(), bytes.size(), &back), "");
  EXPECT_EQ(back.descr, "<u2");
  EXPECT_EQ(back.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(back.data, a.data);
  // A 1-D shape is written with numpy's trailing comma.
  const std::vector<uint8_t> one = encode_npy(NpyArray{"|u1", {5}, {1, 2, 3, 4, 5}});
  EXPECT_NE(std::string(one.begin(), one.end()).find("'shape': (5,)"), std::string::npos);
}

TEST(Npy, BrokenFilesAreRefusedWithTheField) {
  const std::vector<uint8_t> good = encode_npy(NpyArray{"<f4", {2}, std::vector<uint8_t>(8, 0)});
  NpyArray out;
  const auto decode = [&](std::vector<uint8_t> bytes) { return decode_npy(bytes.data(), bytes.size(), &out); };
  EXPECT_EQ(decode(good), "");
  EXPECT_EQ(decode({'P', 'K', 3, 4}).rfind("magic:", 0), 0u);
  std::vector<uint8_t> b = good;
  b.pop_back();
  EXPECT_EQ(decode(b).rfind("data: 7 bytes, the shape needs 8", 0), 0u) << decode(b);
  b = good;
  b[6] = 9;
  EXPECT_EQ(decode(b).rfind("version:", 0), 0u);
  b = std::vector<uint8_t>(good.begin(), good.begin() + 20);
  EXPECT_EQ(decode(b).rfind("header: truncated", 0), 0u) << decode(b);
  const auto with_header = [](const std::string& header) {
    std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(header.size()), 0};
    bytes.insert(bytes.end(), header.begin(), header.end());
    return bytes;
  };
  EXPECT_EQ(decode(with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }")).rfind("descr:", 0), 0u);
  EXPECT_EQ(decode(with_header("{'descr': '<f4', 'fortran_order': True, 'shape': (0,), }")).rfind("fortran_order:", 0),
            0u);
  EXPECT_EQ(decode(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }")).rfind("shape:", 0), 0u);
  EXPECT_EQ(decode(with_header("{'descr': '<f4', 'fortran_order': False}")).rfind("shape: missing", 0), 0u);
  EXPECT_EQ(decode(with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999,), }")).rfind("shape:", 0),
            0u);
}

TEST(Exchange, AKernelRunThroughTheFilesPassesAndOneChangedByteIsFoundAtItsElement) {
  for (const auto& named : test::covering_grid()) {
    if (named.c.num_tokens > 40) continue;  // the small cases suffice here
    const std::string dir = temp_dir("run");
    ASSERT_EQ(export_case(named.c, dir), "") << named.name;
    // The kernel (this project's CPU model) runs on the files' contents and
    // saves its buffers back.
    Case c;
    TensorSet set;
    ASSERT_EQ(import_run(dir, &c, &set), "") << named.name;
    Profile p;
    ASSERT_TRUE(find_profile("qcheck", &p));
    ASSERT_TRUE(find_backend("cpu-model")->run(c, p, set).is_ok()) << named.name;
    ASSERT_EQ(write_buffers(set, dir), "");
    std::string error;
    Report r = check_dir(dir, &error);
    ASSERT_EQ(error, "") << named.name;
    EXPECT_TRUE(r.passed()) << named.name << "\n" << report_text(r);
    // One byte of query_out[1, 0, 2] changed in its file.
    const TensorGeometry& g = *set.find(TensorId::kQueryOut);
    if (g.rows < 2) continue;
    std::vector<uint8_t> bytes = read_file(dir + "/query_out.npy");
    const size_t data_start = bytes.size() - set.buffers[size_t(g.buffer)].size();
    bytes[data_start + GuardedBuffer::kSentinelBytes + size_t(g.element_offset(1, 0, 2) * element_bytes(g.type))] ^= 0x01;
    write_file(dir + "/query_out.npy", bytes);
    r = check_dir(dir, &error);
    ASSERT_EQ(error, "");
    ASSERT_EQ(r.total, 1) << named.name << "\n" << report_text(r);
    EXPECT_EQ(r.first[0].token, 1);
    EXPECT_EQ(r.first[0].head, 0);
    EXPECT_EQ(r.first[0].dim, 2);
    EXPECT_EQ(r.first[0].signature.tensor, "query_out");
  }
}

TEST(Exchange, MissingCorruptWrongDtypeAndWrongShapeFilesAreNamed) {
  const Case c = test::small_case();
  const std::string dir = temp_dir("broken");
  ASSERT_EQ(export_case(c, dir), "");
  const std::string file = dir + "/q_pe.npy";
  const std::vector<uint8_t> good = read_file(file);
  std::string error;
  const auto expect_error = [&](const std::string& start) {
    check_dir(dir, &error);
    EXPECT_EQ(error.rfind(file + ": " + start, 0), 0u) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;  // one line
  };
  std::vector<uint8_t> b(good.begin(), good.end() - 3);
  write_file(file, b);
  expect_error("data:");
  NpyArray a;
  ASSERT_EQ(decode_npy(good.data(), good.size(), &a), "");
  NpyArray wrong = a;
  wrong.descr = "<f4";
  wrong.shape[0] /= 2;
  write_file(file, encode_npy(wrong));
  expect_error("descr '<f4', the case's bfloat16 buffer needs '<u2'");
  wrong = a;
  wrong.shape = {2, a.shape[0] / 2};
  write_file(file, encode_npy(wrong));
  expect_error("shape (2, ");
  write_file(file, {1, 2, 3});
  expect_error("magic:");
  std::remove(file.c_str());
  expect_error("cannot open");
  write_file(file, good);
  check_dir(dir, &error);
  EXPECT_EQ(error, "");
  write_file(dir + "/case.json", {'{'});
  check_dir(dir, &error);
  EXPECT_EQ(error.rfind(dir + "/case.json: ", 0), 0u) << error;
}

}  // namespace
}  // namespace qcheck
