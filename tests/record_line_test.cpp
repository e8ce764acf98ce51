// The checksummed record line of results.jsonl (issue 32): a record read back is the record
// written, every single-bit flip of a line is found (by its checksum, or because the line is no
// longer JSON or no longer has the record layout), and lines written before checksums existed
// are still read.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "lib/experiments/record_layout.hpp"
#include "lib/experiments/record_line.hpp"

namespace {

using simprec::experiments::read_record_line;
using simprec::experiments::record_layout_problem;
using simprec::experiments::record_line;

const nlohmann::json kRecord = nlohmann::json::parse(R"({
  "case_id": "1712f1da1f4dadd6", "case_index": 2, "label": "x (fa2 bf16) on g N=8 seed=1",
  "experiment": "e", "simprec_version": "0.1.0", "elapsed_s": 0.25,
  "params": {"input": {"name": "g", "generator": "normal", "shape": [1, 1, 8, 8], "seed": 1,
                       "backward": false},
             "implementation": {"name": "x", "preset": "fa2", "format": "bf16", "tile": "8x8",
                                "causal": false, "set": [], "mitigations": ["sr-p:8"]},
             "analysis": {"backward": true, "attribute": false, "attribute_sites": [],
                          "baseline": "", "outputs": ["o"]}},
  "results": {"outputs": {"o": {"count": 64, "rms": 0.00123, "bias_z": null,
                                "ulp_histogram": {"-1": 3, "0": 58, "1": 3}}},
              "config": {"tile": [8, 8]}, "numerics": "fa2,format=bf16"}})");

// Whether a line would be set aside: no record, or one without the layout.
bool refused(const std::string& line) {
  const auto reading = read_record_line(line);
  return !reading.record || !record_layout_problem(*reading.record).empty();
}

TEST(RecordLine, ReadsBackWhatItWrote) {
  std::string line = record_line(kRecord);
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const auto reading = read_record_line(line);
  ASSERT_TRUE(reading.record) << reading.problem;
  EXPECT_EQ(*reading.record, kRecord);
  EXPECT_EQ(record_layout_problem(kRecord), "");
  // A record read back and written again gets one checksum, not two.
  EXPECT_EQ(record_line(nlohmann::json::parse(line)), line + "\n");
}

TEST(RecordLine, EverySingleBitFlipIsFound) {
  std::string line = record_line(kRecord);
  line.pop_back();
  for (size_t byte = 0; byte < line.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = line;
      flipped[byte] = static_cast<char>(flipped[byte] ^ (1 << bit));
      ASSERT_TRUE(refused(flipped)) << "byte " << byte << " bit " << bit << ": " << flipped;
    }
  }
}

TEST(RecordLine, LinesWithoutAChecksumAreReadAsBefore) {
  const auto reading = read_record_line(kRecord.dump());
  ASSERT_TRUE(reading.record) << reading.problem;
  EXPECT_EQ(*reading.record, kRecord);
  EXPECT_EQ(read_record_line("{\"case_id\": \"x\", garbage").problem, "not JSON");
}

TEST(RecordLayout, NamesTheMemberOfTheWrongType) {
  auto record = kRecord;
  record["params"]["implementation"]["causal"] = "yes";
  EXPECT_EQ(record_layout_problem(record),
            "params.implementation.causal is a string, expected true or false");
  record = kRecord;
  record["results"]["outputs"]["o"]["rms"] = "small";
  EXPECT_EQ(record_layout_problem(record),
            "results.outputs.o.rms is a string, expected a number or null");
  record = kRecord;
  record["params"]["input"]["shape"] = {1, 1, 8};
  EXPECT_EQ(record_layout_problem(record), "params.input.shape has 3 entries, expected 4");
  record = kRecord;
  record["case_index"] = -1;
  EXPECT_EQ(record_layout_problem(record),
            "case_index is a negative integer, expected a "
            "non-negative integer");
  record = kRecord;
  record.erase("params");
  EXPECT_EQ(record_layout_problem(record), "no params");
}

}  // namespace
