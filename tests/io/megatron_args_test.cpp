// Megatron-LM's pretrain_gpt.py arguments read into a model and a plan: against a published Hugging Face
// config of the same model, Megatron-LM's own defaults, and refusals of what is not modelled yet.

#include "io/megatron_args.h"

#include <gtest/gtest.h>

#include <sstream>

#include "model/hf_config.h"
#include "model/layer_graph.h"
#include "model/presets.h"
#include "util/input_error.h"

namespace {

using phaze::io::parse_megatron_args;

std::vector<std::string> split(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

const std::string kLlama3_70b =
    "--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 8 "
    "--ffn-hidden-size 28672 --seq-length 8192 --max-position-embeddings 8192 --swiglu --normalization RMSNorm "
    "--position-embedding-type rope --untie-embeddings-and-output-weights --disable-bias-linear "
    "--attention-dropout 0 --hidden-dropout 0 --vocab-size 128256 --bf16 --micro-batch-size 1 "
    "--global-batch-size 128 --tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 "
    "--num-layers-per-virtual-pipeline-stage 2 --sequence-parallel --use-distributed-optimizer "
    "--overlap-grad-reduce --overlap-param-gather --tp-comm-overlap --recompute-activations --lr 3e-4 "
    "--train-iters 100 --log-interval=1";

TEST(MegatronArgs, Llama3SeventyBAsItsPublishedConfigDescribesIt) {
  const auto run = parse_megatron_args(split(kLlama3_70b), 64);
  const auto hf = phaze::model::load_model(std::string(PHAZE_TEST_DATA) + "/hf/llama-3-70b/config.json");
  EXPECT_EQ(run.spec.num_layers, hf.num_layers);
  EXPECT_EQ(run.spec.hidden, hf.hidden);
  EXPECT_EQ(run.spec.heads, hf.heads);
  EXPECT_EQ(run.spec.kv_heads, hf.kv_heads);
  EXPECT_EQ(run.spec.ffn, hf.ffn);
  EXPECT_EQ(run.spec.vocab, hf.vocab);
  EXPECT_EQ(run.spec.norm, hf.norm);
  EXPECT_EQ(run.spec.activation, hf.activation);
  EXPECT_EQ(run.spec.rotary, hf.rotary);
  EXPECT_EQ(run.spec.tied_head, hf.tied_head);
  EXPECT_EQ(run.spec.biases, hf.biases);
  const auto& p = run.plan;
  EXPECT_EQ(p.tp, 4);
  EXPECT_EQ(p.pp, 8);
  EXPECT_EQ(p.dp, 2);  // 64 GPUs / (4 × 8)
  EXPECT_EQ(p.vp, 5);  // 80 layers / (8 stages × 2 layers per chunk)
  EXPECT_EQ(p.global_batch, 128);
  EXPECT_EQ(p.seq, 8192);
  EXPECT_EQ(p.recompute, phaze::megatron::Recompute::Selective);
  EXPECT_TRUE(p.bf16 && p.sequence_parallel && p.distributed_optimizer() && p.overlap_dp && p.overlap_param_gather &&
              p.tp_comm_overlap && p.flash_attention);
  EXPECT_EQ(run.not_modelled, (std::vector<std::string>{"--lr 3e-4", "--train-iters 100", "--log-interval 1"}));
  EXPECT_TRUE(run.assumed.empty());
}

TEST(MegatronArgs, MegatronDefaultsForWhatIsNotGiven) {
  const auto run = parse_megatron_args(
      split("--num-layers 2 --hidden-size 4096 --num-attention-heads 32 --seq-length 2048 --swiglu --fp16"), 0);
  // SwiGLU's default FFN: int(4h · 2/3 / 64) · 64 (Megatron-LM's arguments.py).
  EXPECT_EQ(run.spec.ffn, 10880);
  EXPECT_EQ(run.spec.kv_heads, 32);
  EXPECT_EQ(run.spec.attention_dropout, 0.1);
  EXPECT_EQ(run.spec.hidden_dropout, 0.1);
  EXPECT_TRUE(run.spec.tied_head);
  EXPECT_FALSE(run.spec.rotary);
  EXPECT_EQ(run.plan.dp, 1);
  EXPECT_EQ(run.plan.global_batch, 1);  // micro-batch × data-parallel replicas
  EXPECT_EQ(run.plan.recompute, phaze::megatron::Recompute::None);
  EXPECT_FALSE(run.plan.bf16);
  ASSERT_EQ(run.assumed.size(), 1u);  // the vocabulary
  EXPECT_NE(run.assumed[0].find("50257"), std::string::npos);
}

TEST(MegatronArgs, ReadAsMegatronLmReadsThem) {
  const std::string base = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --bf16 ";
  // --group-query-attention without --num-query-groups: one key/value head (arguments.py's default).
  EXPECT_EQ(parse_megatron_args(split(base + "--group-query-attention"), 0).spec.kv_heads, 1);
  // Sequence parallelism without tensor parallelism is switched off, not refused.
  EXPECT_FALSE(parse_megatron_args(split(base + "--sequence-parallel"), 0).plan.sequence_parallel);
  // --recompute-activations means selective, whatever granularity is given with it.
  EXPECT_EQ(parse_megatron_args(split(base + "--recompute-granularity full --recompute-activations"), 0).plan.recompute,
            phaze::megatron::Recompute::Selective);
  // The loss is Megatron-LM's unfused FP32 one unless --cross-entropy-loss-fusion asks for a fused one (either
  // implementation).
  EXPECT_TRUE(parse_megatron_args(split(base), 0).plan.unfused_loss);
  EXPECT_FALSE(parse_megatron_args(split(base + "--cross-entropy-loss-fusion --cross-entropy-fusion-impl te"), 0)
                   .plan.unfused_loss);
  // --attention-backend: auto and fused are the GPU's own fused attention, flash is FlashAttention-2, as is
  // the older --use-flash-attn; unfused materialises the scores.
  using phaze::hw::AttentionLibrary;
  EXPECT_EQ(parse_megatron_args(split(base), 0).plan.attention_library, AttentionLibrary::Fused);
  EXPECT_EQ(parse_megatron_args(split(base + "--attention-backend flash"), 0).plan.attention_library,
            AttentionLibrary::Flash2);
  EXPECT_EQ(parse_megatron_args(split(base + "--use-flash-attn"), 0).plan.attention_library, AttentionLibrary::Flash2);
  EXPECT_FALSE(parse_megatron_args(split(base + "--attention-backend unfused"), 0).plan.flash_attention);
  // A flag phaze does not read keeps all its values (blended data paths).
  const auto run = parse_megatron_args(split(base + "--data-path 0.5 /a 0.5 /b --lr 1"), 0);
  EXPECT_EQ(run.not_modelled, (std::vector<std::string>{"--data-path 0.5 /a 0.5 /b", "--lr 1"}));
}

// FP8, context parallelism and Megatron-FSDP's sharding strategies read as Megatron-LM's arguments.py and
// megatron_fsdp.md define them: the context-parallel GPUs are part of the model-parallel size, and the
// sharding strategies are ZeRO's stages.
TEST(MegatronArgs, Fp8ContextParallelismAndShardingStrategies) {
  const std::string base = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 8192 --bf16 ";
  const auto run = parse_megatron_args(
      split(base + "--tensor-model-parallel-size 2 --context-parallel-size 4 --cp-comm-type all_gather "
                   "--fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --use-megatron-fsdp "
                   "--data-parallel-sharding-strategy optim_grads"),
      32);
  EXPECT_EQ(run.plan.cp, 4);
  EXPECT_EQ(run.plan.dp, 4);  // 32 GPUs / (2 × 4)
  EXPECT_EQ(run.plan.cp_comm, phaze::megatron::CpComm::AllGather);
  EXPECT_TRUE(run.plan.fp8 && run.plan.fp8_param_gather);
  EXPECT_EQ(run.plan.fp8_recipe, phaze::megatron::Fp8Recipe::Tensorwise);
  EXPECT_EQ(run.plan.zero, 2);
  EXPECT_EQ(parse_megatron_args(split(base + "--use-megatron-fsdp"), 0).plan.zero, 0);  // no_shard
  const auto both = parse_megatron_args(split(base + "--pipeline-model-parallel-size 2 "
                                                     "--account-for-embedding-in-pipeline-split "
                                                     "--account-for-loss-in-pipeline-split"),
                                        2);
  EXPECT_TRUE(both.plan.embedding_in_pipeline_split && both.plan.loss_in_pipeline_split);
  // Llama 3.1 405B's split: 126 layers and the 2 counted with them, 2 a chunk on 16 stages: 4 chunks a stage
  // (Megatron-LM divides the slots, not the layers).
  const auto counted = parse_megatron_args(
      split("--num-layers 126 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --bf16 "
            "--pipeline-model-parallel-size 16 --num-layers-per-virtual-pipeline-stage 2 "
            "--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split --global-batch-size 16"),
      16);
  EXPECT_EQ(counted.plan.vp, 4);
  EXPECT_EQ(parse_megatron_args(split(base + "--use-distributed-optimizer"), 0).plan.zero, 1);
  EXPECT_EQ(parse_megatron_args(split(base + "--use-megatron-fsdp --data-parallel-sharding-strategy "
                                             "optim_grads_params"),
                                0)
                .plan.zero,
            3);
}

// Megatron-LM's Mixtral 8x7B arguments (its examples/mixtral recipe) describe the published model: the same
// layer graph as the preset, and a head size from --kv-channels.
TEST(MegatronArgs, MixtureOfExpertsAndHeadSize) {
  const auto run = parse_megatron_args(
      split("--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8 "
            "--ffn-hidden-size 14336 --seq-length 4096 --max-position-embeddings 32768 --swiglu --normalization "
            "RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights --disable-bias-linear "
            "--attention-dropout 0 --hidden-dropout 0 --vocab-size 32000 --bf16 --num-experts 8 --moe-router-topk 2 "
            "--moe-grouped-gemm --expert-model-parallel-size 1 --tensor-model-parallel-size 2 --sequence-parallel "
            "--moe-aux-loss-coeff 0.01 --moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity "
            "--moe-token-drop-policy position"),
      2);
  EXPECT_EQ(run.plan.moe_capacity_factor, 1.25);
  EXPECT_TRUE(run.plan.moe_pad_to_capacity);
  const std::string small_moe =
      "--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --bf16 --num-experts 8 "
      "--moe-router-topk 2 ";
  try {
    parse_megatron_args(split(small_moe + "--moe-token-drop-policy random"), 1);
    ADD_FAILURE() << "a drop policy Megatron-Core does not have was accepted";
  } catch (const phaze::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--moe-token-drop-policy"), std::string::npos) << e.what();
  }
  // Megatron-Core reads a negative capacity factor as dropless.
  EXPECT_EQ(parse_megatron_args(split(small_moe + "--moe-expert-capacity-factor -1"), 1).plan.moe_capacity_factor, 0);
  const auto preset = *phaze::model::find_preset("mixtral-8x7b");
  EXPECT_EQ(run.spec.experts, 8);
  EXPECT_EQ(run.spec.experts_per_token, 2);
  EXPECT_EQ(run.spec.expert_ffn, 14336);
  const auto a = phaze::model::model_totals(run.spec, 4096, {});
  const auto b = phaze::model::model_totals(preset, 4096, {});
  EXPECT_EQ(a.parameters, b.parameters);
  EXPECT_EQ(a.active_parameters, b.active_parameters);
  EXPECT_EQ(a.training_flops_per_sample, b.training_flops_per_sample);
  EXPECT_EQ(run.not_modelled, (std::vector<std::string>{"--moe-aux-loss-coeff 0.01"}));
  EXPECT_EQ(run.plan.ep, 1);
  EXPECT_EQ(run.plan.expert_tp(), 2);  // the attention's, by default
  EXPECT_EQ(parse_megatron_args(split("--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                                      "--bf16 --num-experts 8 --tensor-model-parallel-size 2 --sequence-parallel "
                                      "--expert-tensor-parallel-size 1 --expert-model-parallel-size 8"),
                                8)
                .plan.expert_tp(),
            1);
  EXPECT_EQ(parse_megatron_args(split("--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                                      "--bf16 --num-experts 8 --expert-model-parallel-size 4"),
                                8)
                .plan.ep,
            4);
  EXPECT_TRUE(parse_megatron_args(split("--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 "
                                        "--bf16 --num-experts 8 --expert-model-parallel-size 4 "
                                        "--overlap-moe-expert-parallel-comm"),
                                  8)
                  .plan.overlap_moe_comm);
  // Qwen3's heads of 128 on a 2,048-wide model, with query and key norms.
  const auto qwen = parse_megatron_args(split("--num-layers 2 --hidden-size 2048 --num-attention-heads 32 "
                                              "--kv-channels 128 --qk-layernorm --seq-length 1024 --bf16"),
                                        0);
  EXPECT_EQ(qwen.spec.head_dim(), 128);
  EXPECT_TRUE(qwen.spec.qk_norm);
  EXPECT_EQ(parse_megatron_args(split("--num-layers 2 --hidden-size 2048 --num-attention-heads 32 --kv-channels 64 "
                                      "--seq-length 1024 --bf16"),
                                0)
                .spec.head_size,
            0);  // hidden / heads, as without the flag
}

TEST(MegatronArgs, DeepSeekV3AsItsConfigDescribesIt) {
  // Megatron-LM's arguments for DeepSeek-V3 (its config.json in Megatron-LM's names) describe the same model.
  const auto run = parse_megatron_args(
      split("--num-layers 61 --hidden-size 7168 --num-attention-heads 128 --ffn-hidden-size 18432 --seq-length 4096 "
            "--max-position-embeddings 163840 --swiglu --normalization RMSNorm --position-embedding-type rope "
            "--untie-embeddings-and-output-weights --disable-bias-linear --attention-dropout 0 --hidden-dropout 0 "
            "--vocab-size 129280 --bf16 --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 "
            "--qk-head-dim 128 --qk-pos-emb-head-dim 64 --v-head-dim 128 --num-experts 256 --moe-router-topk 8 "
            "--moe-ffn-hidden-size 2048 --moe-shared-expert-intermediate-size 2048 --moe-layer-freq ([0]*3+[1]*58) "
            "--moe-router-score-function sigmoid --moe-router-num-groups 8 --moe-router-group-topk 4 "
            "--moe-router-enable-expert-bias --moe-grouped-gemm --moe-token-dispatcher-type flex "
            "--moe-flex-dispatcher-backend deepep --mtp-num-layers 1 --moe-shared-expert-overlap "
            "--pipeline-model-parallel-size 8 --global-batch-size 64 "
            "--pipeline-model-parallel-layout Et*2|(tt|)*29,t|mL"),
      0);
  // The layout's 32 chunks on 8 stages: 4 a stage, as Megatron-LM derives the virtual pipeline size.
  EXPECT_EQ(run.plan.layout.size(), 32u);
  EXPECT_EQ(run.plan.vp, 4);
  EXPECT_TRUE(run.plan.shared_expert_overlap);
  EXPECT_EQ(run.plan.mtp_layers, 1);
  EXPECT_EQ(run.plan.moe_dispatcher, phaze::megatron::MoeDispatcher::Flex);
  const auto config = phaze::model::read_hf_config(std::string(PHAZE_TEST_DATA) + "/hf/deepseek-v3/config.json");
  const auto a = phaze::model::model_totals(run.spec, 4096, {});
  const auto b = phaze::model::model_totals(config, 4096, {});
  EXPECT_EQ(a.parameters, b.parameters);
  EXPECT_EQ(a.active_parameters, b.active_parameters);
  EXPECT_EQ(a.training_flops_per_sample, b.training_flops_per_sample);
  EXPECT_EQ(run.spec.first_dense_layers, 3);
  EXPECT_TRUE(run.spec.router_sigmoid);
  EXPECT_EQ(run.spec.expert_groups, 8);
  EXPECT_EQ(run.spec.expert_groups_per_token, 4);
  EXPECT_EQ(run.not_modelled, (std::vector<std::string>{"--moe-router-enable-expert-bias"}));
}

TEST(MegatronArgs, WhatIsNotModelledYetIsRefusedNamingTheFlag) {
  const std::string base = "--num-layers 2 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 ";
  const std::pair<std::string, std::string> cases[] = {
      {base + "--bf16 --context-parallel-size 0", "--context-parallel-size"},
      {base + "--bf16 --fp8-format e5m2", "--fp8-format"},
      {base + "--bf16 --fp8-format hybrid --fp8-recipe mxfp8", "--fp8-recipe"},
      {base + "--bf16 --use-megatron-fsdp --data-parallel-sharding-strategy all", "--data-parallel-sharding-strategy"},
      {base, "--bf16"},
      {base + "--bf16 --num-experts 8 --expert-model-parallel-size 8", "--ep"},  // 8 does not divide 1 GPU
      {base + "--bf16 --num-experts 8 --tensor-model-parallel-size 2 --sequence-parallel "
              "--expert-tensor-parallel-size 3",
       "--etp"},
      {base + "--bf16 --num-experts 8 --moe-layer-freq 2", "--moe-layer-freq"},
      {base + "--bf16 --num-experts 8 --moe-layer-freq ([0]*1+[1]*2)", "--moe-layer-freq"},  // 3 layers, not 2
      {base + "--bf16 --num-experts 8 --moe-layer-freq ([1]*1+[0]*1)", "--moe-layer-freq"},
      {base + "--bf16 --num-experts 8 --moe-layer-freq ([0]*99999999999999999999+[1]*2)", "--moe-layer-freq"},
      {base + "--bf16 --num-experts 8 --mtp-num-layers 99", "--mtp-num-layers"},
      {base + "--bf16 --num-experts 8 --moe-token-dispatcher-type allgather", "--moe-token-dispatcher-type"},
      {base + "--bf16 --num-experts 8 --overlap-moe-expert-parallel-comm", "--overlap-moe-expert-parallel-comm"},
      {base + "--bf16 --num-experts 8 --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep",
       "--moe-flex-dispatcher-backend"},
      {base + "--bf16 --num-experts 8 --moe-router-score-function relu", "--moe-router-score-function"},
      {base + "--bf16 --num-experts 8 --moe-router-num-groups 4", "--moe-router-group-topk"},
      {base + "--bf16 --num-experts 8 --moe-router-num-groups 3 --moe-router-group-topk 1", "n_group"},
      {base + "--bf16 --num-experts 8 --moe-router-topk 9", "num_experts_per_tok"},
      {base + "--bf16 --normalization Foo", "--normalization"},
      {base + "--bf16 --micro-batch-size many", "--micro-batch-size"},
      {base + "--bf16 --swiglu yes", "--swiglu"},
      {base + "--bf16 --tensor-model-parallel-size", "--tensor-model-parallel-size"},
      {"--hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --bf16", "--num-layers"},
      {base + "--bf16 --fp16", "--fp16"},
      {base + "--bf16 --attention-backend cutlass", "--attention-backend"},
      {base + "--bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl triton", "--cross-entropy-fusion-impl"},
      {"stray " + base + "--bf16", "stray"}};
  for (const auto& [line, flag] : cases) {
    try {
      parse_megatron_args(split(line), 0);
      FAIL() << "accepted " << line;
    } catch (const phaze::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
    }
  }
}

}  // namespace
