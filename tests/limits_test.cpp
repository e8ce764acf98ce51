// The checked-size helpers every size from input goes through: overflow is detected exactly at
// the 64-bit boundary, text numbers are taken whole or refused, memory sizes parse as
// documented. Expected values are worked out by hand (powers of two), not taken from the code.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "lib/limits/checked_arithmetic.hpp"
#include "lib/limits/memory_bound.hpp"
#include "lib/limits/strict_parse.hpp"

namespace {

using namespace simprec::limits;

TEST(CheckedArithmetic, ProductsOverflowExactlyAtTheBoundary) {
  // 2^32 * 2^31 = 2^63 does not fit in int64, 2^32 * (2^31 - 1) does.
  EXPECT_FALSE(checked_mul<int64_t>(int64_t{1} << 32, int64_t{1} << 31));
  EXPECT_EQ(checked_mul<int64_t>(int64_t{1} << 32, (int64_t{1} << 31) - 1),
            std::numeric_limits<int64_t>::max() - ((int64_t{1} << 32) - 1));  // 2^63 - 2^32
  // 2^32 * 2^32 wraps to 0 in uint64: refused.
  EXPECT_FALSE(checked_mul<uint64_t>(uint64_t{1} << 32, uint64_t{1} << 32));
  EXPECT_FALSE(checked_add<uint64_t>(std::numeric_limits<uint64_t>::max(), 1));
}

TEST(CheckedArithmetic, CheckedProductNamesTheFactors) {
  // The shape of issue 18, item 1: 2^32 x 2^32 x 1 x 1 wraps to 0 unchecked.
  const std::vector<int64_t> shape = {int64_t{1} << 32, int64_t{1} << 32, 1, 1};
  try {
    checked_product(std::span<const int64_t>(shape), "shape");
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("4294967296 x 4294967296 x 1 x 1"), std::string::npos)
        << e.what();
  }
  const std::vector<int64_t> negative = {3, -8};
  EXPECT_THROW(checked_product(std::span<const int64_t>(negative), "shape"), std::invalid_argument);
  const std::vector<int64_t> fine = {3, 6, 7};
  EXPECT_EQ(checked_product(std::span<const int64_t>(fine), "shape"), 126);
}

TEST(StrictParse, IntegersAreTakenWholeOrRefused) {
  EXPECT_EQ(parse_int64("-8"), -8);
  EXPECT_EQ(parse_int64("9223372036854775807"), std::numeric_limits<int64_t>::max());
  for (const char* bad : {"", " 1", "1 ", "+1", "8x", "0x10", "1e3", "9223372036854775808", "--1"})
    EXPECT_FALSE(parse_int64(bad)) << bad;
  EXPECT_EQ(parse_uint64("18446744073709551615"), std::numeric_limits<uint64_t>::max());
  for (const char* bad : {"", "-1", "-0", "18446744073709551616", "1.0"})
    EXPECT_FALSE(parse_uint64(bad)) << bad;
  EXPECT_THROW(parse_integer("4294967297", 1, 65536, "tile"), std::invalid_argument);
  EXPECT_EQ(parse_integer("65536", 1, 65536, "tile"), 65536);
}

TEST(StrictParse, SeedsAreTheDecimalIntegersBelow2To64) {
  EXPECT_EQ(parse_seed("0", "--seed"), 0u);
  EXPECT_EQ(parse_seed("18446744073709551615", "--seed"), std::numeric_limits<uint64_t>::max());
  for (const char* bad : {"", "18446744073709551616", "-1", "1e3", "seed"})
    EXPECT_THROW(parse_seed(bad, "--seed"), std::invalid_argument) << bad;
}

TEST(StrictParse, FiniteDoublesOnly) {
  EXPECT_EQ(parse_finite_double("0.125"), 0.125);
  EXPECT_EQ(parse_finite_double("0x1p-3"), 0.125);
  EXPECT_EQ(parse_finite_double("1e308"), 1e308);
  for (const char* bad : {"", "nan", "inf", "-inf", "1e999", "1.5x", " 1"})
    EXPECT_FALSE(parse_finite_double(bad)) << bad;
}

TEST(StrictParse, ExcerptsAreShortAndPrintable) {
  EXPECT_EQ(excerpt("abc"), "abc");
  EXPECT_EQ(excerpt(std::string("a\nb\x01\xff", 5)), "a\\nb\\x01\\xff");
  const std::string long_text(10'000'000, '7');
  const std::string cut = excerpt(long_text);
  EXPECT_EQ(cut, std::string(60, '7') + "... (10000000 bytes)");
}

TEST(StrictParse, MessagesAreBoundedWholeUpToTheLimit) {
  EXPECT_EQ(simprec::bounded_message("short"), "short");
  const std::string at_limit(4096, 'a');
  EXPECT_EQ(simprec::bounded_message(at_limit), at_limit);
  // 3584 bytes of the start, 512 of the end, and the count of the 5904 between.
  const std::string message = std::string(5000, 'h') + std::string(5000, 't');
  EXPECT_EQ(simprec::bounded_message(message),
            std::string(3584, 'h') + " [... 5904 bytes cut ...] " + std::string(512, 't'));
}

TEST(MemoryBound, SizesParseAsDocumented) {
  EXPECT_EQ(parse_memory_size("1000", "--max-memory"), 1000u);
  EXPECT_EQ(parse_memory_size("512M", "--max-memory"), uint64_t{512} << 20);
  EXPECT_EQ(parse_memory_size("4G", "--max-memory"), uint64_t{4} << 30);
  EXPECT_EQ(parse_memory_size("4GiB", "--max-memory"), uint64_t{4} << 30);
  EXPECT_EQ(parse_memory_size("1.5G", "--max-memory"), uint64_t{3} << 29);
  for (const char* bad : {"", "0", "-1G", "G", "4X", "nan", "16777216T"})
    EXPECT_THROW(parse_memory_size(bad, "--max-memory"), std::invalid_argument) << bad;
}

TEST(MemoryBound, EstimatesSaturateAndAreRefusedWithTheirSize) {
  MemoryEstimate e;
  e.add(int64_t{1} << 62, 8);  // 2^65 bytes: saturates rather than wrapping to 0
  EXPECT_EQ(e.bytes(), std::numeric_limits<uint64_t>::max());
  MemoryEstimate small;
  small.add(3, uint64_t{1} << 30);  // 3 GiB
  try {
    check_memory(small, {uint64_t{2} << 30, "--max-memory 2G"}, "the work");
    FAIL() << "no error";
  } catch (const std::invalid_argument& err) {
    const std::string text = err.what();
    EXPECT_NE(text.find("3 GiB"), std::string::npos) << text;
    EXPECT_NE(text.find("2 GiB (--max-memory 2G)"), std::string::npos) << text;
  }
  EXPECT_NO_THROW(check_memory(small, {uint64_t{3} << 30, "x"}, "the work"));
}

}  // namespace
