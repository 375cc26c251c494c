// The CSV of measured runs: vTrain's two files read whole, the optional columns, and one-line errors.

#include "io/measured_runs.h"

#include <gtest/gtest.h>

#include <string>

#include "support/temp_dir.h"
#include "util/input_error.h"

namespace {

using phaze::InputError;
using phaze::io::parse_measured_runs;
using phaze::io::read_measured_runs;
using phaze::megatron::Recompute;

const std::string kData = std::string(PHAZE_TEST_DATA) + "/vtrain/";
const std::string kHeader =
    "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor parallelism,"
    "data parallelism,pipeline parallelism,iteration time (ms)";

std::string error_of(const std::string& text) {
  try {
    parse_measured_runs(text, "runs.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(MeasuredRuns, ReadsBothVtrainFiles) {
  // Row counts and first rows as the files' README gives them.
  const auto multi = read_measured_runs(kData + "ground_truth_multi.csv");
  ASSERT_EQ(multi.size(), 109u);
  EXPECT_EQ(multi[0].label, "3.6");
  EXPECT_EQ(multi[0].plan.gpus(), 64);
  EXPECT_EQ(multi[0].plan.micro_batch, 8);
  EXPECT_EQ(multi[0].spec.hidden, 3072);
  EXPECT_EQ(multi[0].spec.num_layers, 30);
  EXPECT_DOUBLE_EQ(multi[0].iteration_s, 3.5665);
  EXPECT_EQ(multi[0].plan.recompute, Recompute::Full);
  const auto single = read_measured_runs(kData + "ground_truth_single.csv");
  ASSERT_EQ(single.size(), 1440u);
  EXPECT_EQ(single[0].plan.pp, 2);
  EXPECT_NEAR(single[0].iteration_s, 0.372160408, 1e-12);
}

TEST(MeasuredRuns, OptionalColumns) {
  const auto runs = parse_measured_runs(
      kHeader +
          ",virtual pipeline,sequence parallel,recompute,distributed optimizer,flash attention,vocabulary\n"
          "16,64,1,1024,16,24,1024,2,2,4,100,2,1,selective,true,0,32000\n",
      "runs.csv");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].plan.vp, 2);
  EXPECT_TRUE(runs[0].plan.sequence_parallel);
  EXPECT_EQ(runs[0].plan.recompute, Recompute::Selective);
  EXPECT_TRUE(runs[0].plan.distributed_optimizer());
  EXPECT_FALSE(runs[0].plan.flash_attention);
  EXPECT_EQ(runs[0].spec.vocab, 32000);
}

TEST(MeasuredRuns, ErrorsNameTheLineColumnAndValue) {
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of("# GPUs,global batch\n").find("missing column 'micro batch'"), std::string::npos);
  EXPECT_NE(error_of(kHeader + ",colour\n").find("unknown column 'colour'"), std::string::npos);
  EXPECT_NE(error_of(kHeader + "\n").find("no runs"), std::string::npos);
  const std::string bad_gpus = error_of(kHeader + "\n9,8,1,1024,16,24,1024,2,2,2,100\n");
  EXPECT_NE(bad_gpus.find("line 2: column '# GPUs' = '9'"), std::string::npos) << bad_gpus;
  const std::string bad_time = error_of(kHeader + "\n8,8,1,1024,16,24,1024,2,2,2,-3\n");
  EXPECT_NE(bad_time.find("'iteration time (ms)' = '-3'"), std::string::npos) << bad_time;
  const std::string huge = error_of(kHeader + "\n8,8,1,1024,16,99999999999999999999,1024,2,2,2,100\n");
  EXPECT_NE(huge.find("'# layers'"), std::string::npos) << huge;
  EXPECT_NE(error_of(kHeader + "\n8,8,1\n").find("3 fields, the header has 11"), std::string::npos);
  const std::string bad_pp = error_of(kHeader + "\n14,8,1,1024,16,24,1024,1,2,7,100\n");
  EXPECT_NE(bad_pp.find("--pp"), std::string::npos) << bad_pp;
}

}  // namespace

namespace {

// A row may name its model: Llama-shaped runs validate as Llama (grouped-query attention, SwiGLU, its own
// vocabulary), a path relative to the file; a model whose shape is not the row's is an error naming it.
TEST(MeasuredRuns, ARowMayNameItsModel) {
  phaze_test::TempDir dir;
  dir.write("llama.json", R"({"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256,
    "max_position_embeddings": 8192})");
  const std::string header = kHeader + ",model\n";
  dir.write("runs.csv",
            header + "8,64,1,4096,32,32,8192,1,8,1,5000,llama.json\n" + "8,64,1,4096,32,32,2048,1,8,1,5000,\n");
  const auto runs = read_measured_runs(dir.file("runs.csv"));
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].spec.kv_heads, 8);
  EXPECT_EQ(runs[0].spec.activation, phaze::model::Activation::SwiGlu);
  EXPECT_EQ(runs[0].spec.vocab, 128256);
  EXPECT_EQ(runs[1].spec.activation, phaze::model::Activation::Gelu);  // no model named: a Megatron GPT
  dir.write("bad.csv", header + "8,64,1,4096,32,24,8192,1,8,1,5000,llama.json\n");
  try {
    read_measured_runs(dir.file("bad.csv"));
    FAIL() << "a 32-layer model accepted for a 24-layer row";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("column 'model' = 'llama.json'"), std::string::npos) << e.what();
  }
}

}  // namespace
