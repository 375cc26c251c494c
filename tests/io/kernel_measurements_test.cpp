// The kernel measurement CSV: each kind's fields, and errors naming the file, line, column and value.

#include "io/kernel_measurements.h"

#include <gtest/gtest.h>

#include "util/input_error.h"

namespace {

using phaze::io::parse_kernel_measurements;
using phaze::megatron::KernelKind;

const char* kHeader = "kind,model,tp,op,direction,dtype,batch,m,n,k,seq,head_dim,causal,backend,seconds,bytes\n";

TEST(KernelMeasurements, ReadsEachKind) {
  const auto rows = parse_kernel_measurements(std::string(kHeader) +
                                                  "gemm,llama2-7b,8,fc1,wgrad,bf16,1,2752,4096,4096,,,,cublas,1e-4,\n"
                                                  "attention,gpt3-175b,8,attention,backward,bf16,12,,,,2048,128,1,"
                                                  "cudnn,1.4e-4,\n"
                                                  "stream,,,copy,forward,bf16,,,,,,,,torch,1.4e-3,4.29e9\n",
                                              "k.csv");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].kind, KernelKind::Gemm);
  EXPECT_EQ(rows[0].gemm, (phaze::model::Gemm{2752, 4096, 4096, 1}));
  EXPECT_EQ(rows[0].direction, phaze::model::Direction::Backward);
  EXPECT_EQ(rows[0].label, "llama2-7b t8 fc1 wgrad");
  EXPECT_EQ(rows[1].kind, KernelKind::Attention);
  EXPECT_EQ(rows[1].batch_heads, 12);
  EXPECT_EQ(rows[1].seq, 2048);
  EXPECT_TRUE(rows[1].causal);
  EXPECT_EQ(rows[2].bytes, 4.29e9);
  EXPECT_EQ(rows[2].line, 4);
}

void expect_error(const std::string& row, const std::string& message) {
  try {
    parse_kernel_measurements(std::string(kHeader) + row, "k.csv");
    FAIL() << "accepted " << row;
  } catch (const phaze::InputError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(KernelMeasurements, BadFieldsNameLineColumnAndValue) {
  expect_error("conv,,,,,,,,,,,,,,1e-3,\n", "k.csv: line 2: column 'kind' = 'conv'");
  expect_error("gemm,,,,forward,bf16,1,0,8,8,,,,,1e-3,\n", "column 'm' = '0' must be a whole number");
  expect_error("gemm,,,,sideways,bf16,1,8,8,8,,,,,1e-3,\n", "column 'direction' = 'sideways'");
  expect_error("gemm,,,,forward,bf16,1,8,8,8,,,,,-1,\n", "column 'seconds' = '-1'");
  expect_error("attention,,,,forward,bf16,4,,,,512,64,maybe,cudnn,1e-3,\n", "column 'causal' = 'maybe'");
  expect_error("stream,,,copy,forward,bf16,,,,,,,,torch,1e-3,\n", "column 'bytes' = ''");
}

TEST(KernelMeasurements, AKindsShapeMustBeGiven) {
  for (const auto& [text, column] : {std::pair<std::string, std::string>{"kind,seconds\ngemm,1e-3\n", "column 'm'"},
                                     {"kind,seconds,batch,seq\nattention,1e-3,4,512\n", "column 'head_dim'"},
                                     {"kind,seconds,m,n,k\ngemm,1e-3,8,,8\n", "column 'n'"}}) {
    try {
      parse_kernel_measurements(text, "k.csv");
      FAIL() << "accepted " << text;
    } catch (const phaze::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(column), std::string::npos) << e.what();
    }
  }
}

TEST(KernelMeasurements, HeaderMustNameSecondsAndKnownColumns) {
  EXPECT_THROW(parse_kernel_measurements("kind,m\ngemm,8\n", "k.csv"), phaze::InputError);
  EXPECT_THROW(parse_kernel_measurements("kind,seconds,colour\ngemm,1,red\n", "k.csv"), phaze::InputError);
}

}  // namespace
