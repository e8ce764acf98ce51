// The .npy header parser under long and deeply nested headers (issue 32): a header of 30 KB or
// more overflowed the stack of the regex-based parser (signal 11 in every command that reads
// .npy files and in Python). The parser is now one pass without recursion; these headers are
// read or refused with a message, never a crash.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "lib/npy/npy.hpp"
#include "lib/npy/npy_header.hpp"
#include "tests/npy_file_support.hpp"

namespace {

namespace fs = std::filesystem;
using simprec::parse_npy_header;

// The message of the exception `parse` throws, or "" when it throws none.
template <class Fn>
std::string refusal(Fn&& parse) {
  try {
    parse();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

fs::path temp_file(const std::string& name) {
  return fs::path(::testing::TempDir()) /
         ("simprec_npy_header_" + name + "_" + std::to_string(::getpid()));
}

TEST(NpyHeader, ReadsWhatNumpyWrites) {
  auto h = parse_npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }    \n");
  EXPECT_EQ(h.descr, "<f4");
  EXPECT_FALSE(h.fortran_order);
  EXPECT_EQ(h.shape, (std::vector<int64_t>{2, 3}));
  h = parse_npy_header("{'shape': (5,), 'fortran_order': True, 'descr': '|u1'}");
  EXPECT_EQ(h.shape, (std::vector<int64_t>{5}));
  EXPECT_TRUE(h.fortran_order);
  EXPECT_EQ(parse_npy_header("{\"descr\": \"<f8\", \"fortran_order\": False, \"shape\": ()}").shape,
            std::vector<int64_t>{});
}

TEST(NpyHeader, RefusesWhatIsNotTheThreeKeysWithTheirTypes) {
  const auto refused = [](const std::string& text) {
    return refusal([&] { parse_npy_header(text); });
  };
  EXPECT_NE(refused("{'descr': '<f4', 'fortran_order': False}").find("no 'shape'"),
            std::string::npos);
  EXPECT_NE(refused("{'descr': '<f4', 'descr': '<f8', 'fortran_order': False, 'shape': ()}")
                .find("'descr' given twice"),
            std::string::npos);
  EXPECT_NE(refused("{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}")
                .find("unknown key 'x'"),
            std::string::npos);
  EXPECT_NE(refused("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}")
                .find("expected the dtype as a string"),
            std::string::npos);
  EXPECT_NE(refused("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}")
                .find("expected a dimension"),
            std::string::npos);
  EXPECT_NE(refused("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}")
                .find("expected a dimension"),
            std::string::npos);
  EXPECT_NE(refused("{'descr': '<f4', 'fortran_order': False, 'shape': ()} trailing")
                .find("only spaces and a newline after the dict"),
            std::string::npos);
}

TEST(NpyHeader, DeepNestingIsRefusedWhereItStartsWithABoundedQuote) {
  const std::string deep(200000, '(');
  for (const std::string& text :
       {"{'descr': '<f4', 'fortran_order': False, 'shape': " + deep + "1" + "}",
        "{'descr': " + std::string(200000, '{') + "}", "{'descr': " + std::string(200000, '[')}) {
    const std::string message = refusal([&] { parse_npy_header(text); });
    EXPECT_NE(message.find("header at byte"), std::string::npos) << message.substr(0, 300);
    EXPECT_LT(message.size(), 300u) << message.substr(0, 300);
  }
}

TEST(NpyHeader, LongHeadersAreReadNotCrashedOn) {
  // 30 KB and more: each of these crashed read_npy with signal 11.
  const auto file = temp_file("long_spaces.npy");
  simprec::testing::write_npy_v2(
      file, "{'descr':" + std::string(40000, ' ') + "'<f4', 'fortran_order': False, 'shape': (2,)}",
      simprec::testing::float32_data(1.5f, 2));
  EXPECT_EQ(simprec::read_npy(file).shape, std::vector<int64_t>{2});
  // 10000 dimensions: refused where the 65th starts (numpy's limit is 64), with a short quote.
  std::string ones;
  for (int i = 0; i < 10000; ++i) ones += "1, ";
  simprec::testing::write_npy_v2(
      file, "{'descr': '<f4', 'fortran_order': False, 'shape': (" + ones + "3)}",
      simprec::testing::float32_data(1.5f, 3));
  const std::string dimensions = refusal([&] { simprec::read_npy(file); });
  EXPECT_NE(dimensions.find("a shape has at most 64 dimensions"), std::string::npos)
      << dimensions.substr(0, 300);
  EXPECT_LT(dimensions.size(), 400u) << dimensions.substr(0, 500);
  // Past the bound the length alone is refused, before anything is read or parsed.
  simprec::testing::write_npy_v2(file, "{'descr':" + std::string(1u << 20, ' ') + "}", "");
  const std::string message = refusal([&] { simprec::read_npy(file); });
  EXPECT_NE(message.find("a header of 1048628 bytes (at most 1048576 are read)"), std::string::npos)
      << message;
  fs::remove(file);
}

}  // namespace
