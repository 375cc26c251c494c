#include "model/model_spec_json.h"

namespace phaze::model {

using nlohmann::json;

json hyperparameters_json(const ModelSpec& m) {
  return json{{"num_layers", m.num_layers},
              {"hidden", m.hidden},
              {"heads", m.heads},
              {"kv_heads", m.kv_heads},
              {"head_dim", m.head_dim()},
              {"ffn", m.ffn},
              {"vocab", m.vocab},
              {"word_embedding_dim", m.word_embedding_dim},
              {"max_positions", m.max_positions},
              {"token_types", m.token_types},
              {"norm", to_string(m.norm)},
              {"pre_norm", m.pre_norm},
              {"final_norm", m.final_norm},
              {"activation", to_string(m.activation)},
              {"mask", to_string(m.mask)},
              {"biases", m.biases},
              {"fused_qkv", m.fused_qkv},
              {"rotary", m.rotary},
              {"hidden_dropout", m.hidden_dropout},
              {"attention_dropout", m.attention_dropout},
              {"tied_head", m.tied_head},
              {"head", m.head == HeadKind::CausalLm ? "causal_lm" : "bert_pretraining"},
              {"qk_norm", m.qk_norm},
              {"qkv_bias", m.qkv_bias},
              {"experts", m.experts},
              {"experts_per_token", m.experts_per_token},
              {"expert_ffn", m.expert_ffn},
              {"shared_expert_ffn", m.shared_expert_ffn},
              {"shared_expert_gate", m.shared_expert_gate},
              {"first_dense_layers", m.first_dense_layers},
              {"router_score", m.router_sigmoid ? "sigmoid" : "softmax"},
              {"expert_groups", m.expert_groups},
              {"expert_groups_per_token", m.expert_groups_per_token},
              {"multi_latent_attention", m.mla()},
              {"q_lora_rank", m.q_lora_rank},
              {"kv_lora_rank", m.kv_lora_rank},
              {"qk_head_dim", m.qk_head_dim()},
              {"v_head_dim", m.v_head_dim()}};
}

}  // namespace phaze::model
