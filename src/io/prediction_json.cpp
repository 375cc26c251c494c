#include "io/prediction_json.h"

namespace phaze::io {

using nlohmann::json;

json to_json(const megatron::TrainingPlan& p) {
  return json{{"tp", p.tp},
              {"cp", p.cp},
              {"pp", p.pp},
              {"dp", p.dp},
              {"vp", p.vp},
              {"decoder_first_pipeline_num_layers", p.first_stage_layers},
              {"decoder_last_pipeline_num_layers", p.last_stage_layers},
              {"pipeline_model_parallel_layout", megatron::to_string(p.layout)},
              {"account_for_embedding_in_pipeline_split", p.embedding_in_pipeline_split},
              {"account_for_loss_in_pipeline_split", p.loss_in_pipeline_split},
              {"gpus", p.gpus()},
              {"micro_batch", p.micro_batch},
              {"global_batch", p.global_batch},
              {"seq", p.seq},
              {"sequence_parallel", p.sequence_parallel},
              {"recompute", megatron::to_string(p.recompute)},
              {"distributed_optimizer", p.distributed_optimizer()},
              {"zero", p.zero},
              {"zero_group", p.zero_group},
              {"cp_comm_type", megatron::to_string(p.cp_comm)},
              {"overlap_dp", p.overlap_dp},
              {"overlap_param_gather", p.overlap_param_gather},
              {"tp_comm_overlap", p.tp_comm_overlap},
              {"overlap_moe_expert_parallel_comm", p.overlap_moe_comm},
              {"moe_shared_expert_overlap", p.shared_expert_overlap},
              {"moe_expert_capacity_factor", p.moe_capacity_factor},
              {"moe_pad_expert_input_to_capacity", p.moe_pad_to_capacity},
              {"moe_load_imbalance", p.moe_load_imbalance},
              {"expert_load", p.expert_load()},
              {"mtp_num_layers", p.mtp_layers},
              {"flash_attention", p.flash_attention},
              {"bf16", p.bf16},
              {"precision", p.fp8    ? "fp8"
                            : p.bf16 ? "bf16"
                                     : "fp16"},
              {"bf16_gradients", p.bf16_gradients},
              {"cross_entropy_loss_fusion", !p.unfused_loss},
              {"ep", p.ep},
              {"etp", p.expert_tp()},
              {"moe_token_dispatcher_type", megatron::to_string(p.moe_dispatcher)},
              {"attention_backend", megatron::attention_backend(p)},
              {"fp8_recipe", megatron::to_string(p.fp8_recipe)},
              {"fp8_param_gather", p.fp8_param_gather},
              {"memory_reserve_bytes", p.memory_reserve_bytes}};
}

json to_json(const megatron::StepPrediction& r) {
  const megatron::StepTime& t = r.time;
  const megatron::StepMemory& m = r.memory;
  return json{{"plan", to_json(r.plan)},
              {"micro_batches", r.micro_batches},
              {"iteration_time_s", t.iteration_s},
              {"breakdown",
               {{"forward_s", t.forward_s},
                {"backward_s", t.backward_s},
                {"recompute_s", t.recompute_s},
                {"tp_comm_s", t.tp_comm_s},
                {"cp_comm_s", t.cp_comm_s},
                {"ep_comm_s", t.ep_comm_s},
                {"pp_comm_s", t.pp_comm_s},
                {"bubble_s", t.bubble_s},
                {"dp_comm_s", t.dp_comm_s},
                {"optimizer_s", t.optimizer_s}}},
              {"tokens_per_s", r.tokens_per_s},
              {"tokens_per_s_per_gpu", r.tokens_per_s / static_cast<double>(r.plan.gpus())},
              {"flop_per_s_per_gpu", r.flop_per_s_per_gpu},
              {"mfu", r.mfu},
              {"mfu_ceiling", r.mfu_ceiling},
              {"model_flop", r.model_flop},
              {"hardware_flop", r.hardware_flop},
              {"memory",
               {{"stage", m.stage},
                {"weights_bytes", m.weights_bytes},
                {"gradients_bytes", m.gradients_bytes},
                {"optimizer_bytes", m.optimizer_bytes},
                {"activations_bytes", m.activations_bytes},
                {"allocator_bytes", m.allocator_bytes},
                {"runtime_bytes", m.runtime_bytes},
                {"peak_bytes", m.peak_bytes},
                {"reserve_bytes", m.reserve_bytes},
                {"capacity_bytes", m.capacity_bytes}}},
              {"fits", m.fits}};
}

json to_json(const megatron::TrainingRun& r) {
  return json{{"tokens", r.tokens},         {"tokens_per_iteration", r.tokens_per_iteration},
              {"iterations", r.iterations}, {"seconds", r.seconds},
              {"gpu_hours", r.gpu_hours},   {"usd", r.usd ? json(*r.usd) : json(nullptr)}};
}

}  // namespace phaze::io
