// Megatron-LM's --pipeline-model-parallel-layout: the syntax against Megatron-LM's own DeepSeek-V3 example,
// layouts that restate a split the other options give priced identically to it, the dense first layers
// placed in model order through the chunks, and what Megatron-LM refuses refused with the option named.

#include "megatron/pipeline_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hw/system.h"
#include "megatron/training_step.h"
#include "model/presets.h"
#include "util/input_error.h"

namespace {

using phaze::InputError;
using phaze::megatron::LayoutChunk;
using phaze::megatron::parse_pipeline_layout;
using phaze::megatron::TrainingPlan;
using phaze::model::ModelSpec;

const char* kOption = "--pipeline-model-parallel-layout";

TEST(PipelineLayout, MegatronsDeepSeekExampleHoldsItsSixtyOneLayers) {
  // Megatron-LM's documented example for DeepSeek-V3 on 16 stages × 2 chunks: the embedding and 3 layers,
  // then 29 chunks of 2, the multi-token prediction module, the loss: 32 chunks and 3 + 58 = 61 layers.
  const std::vector<LayoutChunk> chunks = parse_pipeline_layout("Et*3|(tt|)*29,m|L", kOption);
  ASSERT_EQ(chunks.size(), 32u);
  EXPECT_EQ(chunks[0], (LayoutChunk{3, 0, true, false}));
  for (size_t j = 1; j <= 29; ++j) EXPECT_EQ(chunks[j], (LayoutChunk{2, 0, false, false})) << j;
  EXPECT_EQ(chunks[30], (LayoutChunk{0, 1, false, false}));
  EXPECT_EQ(chunks[31], (LayoutChunk{0, 0, false, true}));
  // Written back and read again, the same chunks; empty chunks and nesting read as written.
  EXPECT_EQ(parse_pipeline_layout(phaze::megatron::to_string(chunks), kOption), chunks);
  // "E|" "|" "t|t|" "t|t|" "L": the embedding, an empty chunk, four of one layer, the loss.
  const std::vector<LayoutChunk> nested = parse_pipeline_layout("E||((t|)*2)*2L", kOption);
  ASSERT_EQ(nested.size(), 7u);
  EXPECT_EQ(nested[1], (LayoutChunk{}));
  EXPECT_EQ(nested[5], (LayoutChunk{1, 0, false, false}));
  EXPECT_EQ(nested[6], (LayoutChunk{0, 0, false, true}));
}

TEST(PipelineLayout, MalformedLayoutsNameTheOptionAndTheText) {
  for (const std::string text : {"", "Et*0|L", "E(t|L", "Ex|L", "Et)|L", "Et*|L", "EEt|L", "tEt*7|L", "Et*8|Lt*8",
                                 "Et*8|t*8mt|L", "Et*8|LL", "t*1048577",
                                 "(((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((t)))))))))))))))))))"
                                 "))))))))))))))))))))))))))))))))))))))))))))))",
                                 "((t*1024)*1024)*2"}) {
    try {
      parse_pipeline_layout(text, kOption);
      ADD_FAILURE() << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(kOption), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("'" + text.substr(0, 80)), std::string::npos) << e.what();
    }
  }
  // Empty groups repeated any number of times are nothing, at once.
  std::string empty_groups = "Et*8|";
  for (int i = 0; i < 20000; ++i) empty_groups += "()*1048576";
  EXPECT_EQ(parse_pipeline_layout(empty_groups + "t*8L", kOption).size(), 2u);
  // Written back, a lone separator is itself, and two equal chunks are written out.
  EXPECT_EQ(phaze::megatron::to_string(parse_pipeline_layout("|", kOption)), "|");
  EXPECT_EQ(phaze::megatron::to_string(parse_pipeline_layout("Et*2|t*2|t*2|t*2L", kOption)), "Et*2|t*2|t*2|t*2L");
}

TrainingPlan llama_plan(int64_t pp, int64_t vp) {
  TrainingPlan pl = phaze::megatron::current_practice();
  pl.pp = pp;
  pl.vp = vp;
  pl.dp = 2;
  pl.seq = 4096;
  pl.global_batch = 32;
  return pl;
}

TEST(PipelineLayout, ALayoutThatRestatesASplitPricesAsThatSplit) {
  // Llama-2-7B's 32 layers: on 4 stages × 2 chunks of 4, and with 6 on the first stage and 10 on the last.
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  const auto system = phaze::hw::dgx_h100_system();
  TrainingPlan even = llama_plan(4, 2);
  TrainingPlan laid = even;
  phaze::megatron::set_pipeline_layout(laid, "Et*4|(t*4|)*6t*4L", kOption, true);
  EXPECT_EQ(phaze::megatron::predict_step(m, system, laid).time.iteration_s,
            phaze::megatron::predict_step(m, system, even).time.iteration_s);
  EXPECT_EQ(phaze::megatron::predict_step(m, system, laid).memory.peak_bytes,
            phaze::megatron::predict_step(m, system, even).memory.peak_bytes);
  TrainingPlan uneven = llama_plan(4, 1);
  uneven.first_stage_layers = 6;
  uneven.last_stage_layers = 10;
  TrainingPlan uneven_laid = llama_plan(4, 1);
  // The chunks set v when it is not given: 4 chunks on 4 stages.
  uneven_laid.vp = 7;
  phaze::megatron::set_pipeline_layout(uneven_laid, "Et*6|t*8|t*8|t*10L", kOption, false);
  EXPECT_EQ(uneven_laid.vp, 1);
  EXPECT_EQ(phaze::megatron::predict_step(m, system, uneven_laid).time.iteration_s,
            phaze::megatron::predict_step(m, system, uneven).time.iteration_s);
}

TEST(PipelineLayout, DenseFirstLayersFollowTheChunksInModelOrder) {
  // DeepSeek-V3's 3 dense layers on 8 stages × 4 chunks laid out "Et*2|(tt|)*29,t|mL": chunk 0 (stage 0)
  // holds 2 of them, chunk 1 (stage 1) the third. The last stage's chunks (7, 15, 23, 31) hold 2 + 2 + 2
  // layers and the module and the loss; chunk 30's one layer is on stage 6.
  const ModelSpec m = *phaze::model::find_preset("deepseek-v3");
  TrainingPlan pl = phaze::megatron::current_practice();
  pl.pp = 8;
  pl.mtp_layers = 1;
  phaze::megatron::set_pipeline_layout(pl, "Et*2|(tt|)*29,t|mL", kOption, false);
  EXPECT_EQ(pl.vp, 4);
  EXPECT_EQ(phaze::megatron::stage_dense_layers(pl, m, 0), 2);
  EXPECT_EQ(phaze::megatron::stage_dense_layers(pl, m, 1), 1);
  EXPECT_EQ(phaze::megatron::stage_dense_layers(pl, m, 2), 0);
  EXPECT_EQ(phaze::megatron::stage_layers(pl, m, 0), 8);
  EXPECT_EQ(phaze::megatron::stage_layers(pl, m, 6), 7);
  EXPECT_EQ(phaze::megatron::stage_layers(pl, m, 7), 6);
  int64_t total = 0;
  for (int64_t s = 0; s < 8; ++s) total += phaze::megatron::stage_layers(pl, m, s);
  EXPECT_EQ(total, 61);
}

TEST(PipelineLayout, WhatMegatronRefusesIsRefusedNamingTheOption) {
  const ModelSpec m = *phaze::model::find_preset("llama2-7b");
  const auto system = phaze::hw::dgx_h100_system();
  const auto refused = [&](TrainingPlan pl, const std::string& text, const std::string& why) {
    phaze::megatron::set_pipeline_layout(pl, text, kOption, true);
    try {
      phaze::megatron::predict_step(m, system, pl);
      ADD_FAILURE() << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(kOption), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused(llama_plan(4, 1), "Et*8|t*8|t*8L", "3 chunks");
  refused(llama_plan(4, 1), "t*8|Et*8|t*8|t*8L", "'E'");
  refused(llama_plan(4, 1), "Et*8|t*8L|t*8|t*8", "'L'");
  refused(llama_plan(4, 1), "Et*8|t*8|t*8|t*7L", "31 transformer layers");
  refused(llama_plan(4, 1), "Et*8|t*8|t*8|t*8mL", "--mtp-num-layers");
  TrainingPlan mtp = llama_plan(4, 1);
  mtp.mtp_layers = 1;
  refused(mtp, "Et*8|t*8m|t*8|t*8L", "other than the last");
  TrainingPlan both = llama_plan(4, 1);
  both.first_stage_layers = 8;
  refused(both, "Et*8|t*8|t*8|t*8L", "excludes");
}

}  // namespace
