// Operator DAGs of the transformer layer against models.md 3.1 (forward), 3.2 (backward) and 3.3 (variants).

#include "model/operator_graph.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "model/layer_graph.h"
#include "model_test_util.h"

namespace {

using phaze::model::Collective;
using phaze::model::Engine;
using phaze::model::Gemm;
using phaze::model::Operator;
using phaze::model::OperatorGraph;
using phaze::model::VectorKind;
using phaze_test::build;
using phaze_test::preset;

const Operator& op(const OperatorGraph& graph, const std::string& id) {
  const int index = graph.find(id);
  if (index < 0) throw std::runtime_error("operator not found: " + id);
  return graph.ops.at(static_cast<size_t>(index));
}

::testing::AssertionResult has_gemm(const OperatorGraph& graph, const std::string& id, const Gemm& expected) {
  const int index = graph.find(id);
  if (index < 0) return ::testing::AssertionFailure() << id << " not found";
  const Operator& o = graph.ops[static_cast<size_t>(index)];
  if (!o.gemm) return ::testing::AssertionFailure() << id << " has no GEMM";
  if (!(*o.gemm == expected)) {
    return ::testing::AssertionFailure() << id << " GEMM (" << o.gemm->m << ", " << o.gemm->n << ", " << o.gemm->k
                                         << ", " << o.gemm->batch << ") expected (" << expected.m << ", " << expected.n
                                         << ", " << expected.k << ", " << expected.batch << ")";
  }
  return ::testing::AssertionSuccess();
}

int count_engine(const OperatorGraph& graph, Engine engine) {
  int n = 0;
  for (const auto& o : graph.ops) n += o.engine == engine;
  return n;
}

int count_gemms(const OperatorGraph& graph) {
  int n = 0;
  for (const auto& o : graph.ops) n += o.gemm.has_value();
  return n;
}

void expect_topological_order(const OperatorGraph& graph) {
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    for (int p : graph.ops[i].predecessors) {
      EXPECT_GE(p, 0) << graph.ops[i].id;
      EXPECT_LT(p, static_cast<int>(i)) << graph.ops[i].id << " waits for a later operator";
    }
  }
}

void expect_weight_gradients_are_sinks(const OperatorGraph& backward) {
  std::set<int> weight_gradients;
  for (size_t i = 0; i < backward.ops.size(); ++i) {
    if (backward.ops[i].weight_gradient) weight_gradients.insert(static_cast<int>(i));
  }
  for (const auto& o : backward.ops) {
    for (int p : o.predecessors) {
      EXPECT_EQ(weight_gradients.count(p), 0u)
          << o.id << " waits for weight gradient " << backward.ops[static_cast<size_t>(p)].id;
    }
  }
}

void expect_unique_ids(const OperatorGraph& graph) {
  std::set<std::string> ids;
  for (const auto& o : graph.ops) EXPECT_TRUE(ids.insert(o.id).second) << "duplicate id " << o.id;
}

void expect_engine_payloads(const OperatorGraph& graph) {
  for (const auto& o : graph.ops) {
    if (o.engine == Engine::Tensor || o.engine == Engine::Fused) {
      EXPECT_TRUE(o.gemm.has_value()) << o.id;
    }
    if (o.engine == Engine::Comm) {
      EXPECT_TRUE(o.collective.has_value()) << o.id;
    }
    if (o.gemm) {
      EXPECT_TRUE(o.engine == Engine::Tensor || o.engine == Engine::Fused) << o.id;
    }
    if (o.collective) {
      EXPECT_EQ(o.engine, Engine::Comm) << o.id;
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// GPT-3 175B, t = 8, b = 1, s = 2048 (the reference layer)

class Gpt3Layer : public ::testing::Test {
 protected:
  static constexpr int64_t s = 2048, b = 1, t = 8, h = 12288, a = 96, f = 49152;
  static constexpr int64_t T = b * s, dh = h / a, G = b * a / t;
  static const phaze::model::LayerGraph& graph() {
    static const auto g = build(preset("gpt3-175b"), s, b, t);
    return g;
  }
  const OperatorGraph& fwd() const { return graph().transformer.forward; }
  const OperatorGraph& bwd() const { return graph().transformer.backward; }
};

TEST_F(Gpt3Layer, DirectionsAreSet) {
  EXPECT_EQ(fwd().direction, phaze::model::Direction::Forward);
  EXPECT_EQ(bwd().direction, phaze::model::Direction::Backward);
}

TEST_F(Gpt3Layer, ForwardGemmsOfSection31) {
  EXPECT_TRUE(has_gemm(fwd(), "F3", Gemm{T, 3 * h / t, h, 1}));
  EXPECT_TRUE(has_gemm(fwd(), "F5", Gemm{s, s, dh, b * a / t}));
  EXPECT_TRUE(has_gemm(fwd(), "F8", Gemm{s, dh, s, b * a / t}));
  EXPECT_TRUE(has_gemm(fwd(), "F10", Gemm{T, h, h / t, 1}));
  EXPECT_TRUE(has_gemm(fwd(), "F15", Gemm{T, 4 * h / t, h, 1}));
  EXPECT_TRUE(has_gemm(fwd(), "F16", Gemm{T, h, 4 * h / t, 1}));
  EXPECT_EQ(count_gemms(fwd()), 6);
}

TEST_F(Gpt3Layer, ForwardEnginesOfSection31) {
  EXPECT_EQ(op(fwd(), "F1").engine, Engine::Vector);
  EXPECT_EQ(op(fwd(), "F2").engine, Engine::None);
  EXPECT_EQ(op(fwd(), "F3").engine, Engine::Fused);
  EXPECT_EQ(op(fwd(), "F4").engine, Engine::None);
  EXPECT_EQ(op(fwd(), "F5").engine, Engine::Fused);
  EXPECT_EQ(op(fwd(), "F6").engine, Engine::Vector);
  EXPECT_EQ(op(fwd(), "F7").engine, Engine::Vector);
  EXPECT_EQ(op(fwd(), "F8").engine, Engine::Tensor);
  EXPECT_EQ(op(fwd(), "F9").engine, Engine::None);
  EXPECT_EQ(op(fwd(), "F10").engine, Engine::Tensor);
  EXPECT_EQ(op(fwd(), "F11").engine, Engine::Comm);
  EXPECT_EQ(op(fwd(), "F12").engine, Engine::Vector);
  EXPECT_EQ(op(fwd(), "F13").engine, Engine::Vector);
  EXPECT_EQ(op(fwd(), "F14").engine, Engine::None);
  EXPECT_EQ(op(fwd(), "F15").engine, Engine::Fused);
  EXPECT_EQ(op(fwd(), "F16").engine, Engine::Tensor);
  EXPECT_EQ(op(fwd(), "F17").engine, Engine::Comm);
  EXPECT_EQ(op(fwd(), "F18").engine, Engine::Vector);
}

TEST_F(Gpt3Layer, ForwardVectorWork) {
  // F1 LayerNorm n = T h, r = h; F6 softmax n = b a_t s^2, r = s; F7 dropout n = b a_t s^2
  bool ln = false, softmax = false, dropout = false;
  for (const auto& p : op(fwd(), "F1").passes) {
    ln |= p.kind == VectorKind::LayerNorm && p.elements == T * h && p.row_length == h;
  }
  for (const auto& p : op(fwd(), "F6").passes) {
    softmax |= p.kind == VectorKind::Softmax && p.elements == b * (a / t) * s * s && p.row_length == s;
  }
  for (const auto& p : op(fwd(), "F7").passes) {
    dropout |= p.kind == VectorKind::Dropout && p.elements == b * (a / t) * s * s;
  }
  EXPECT_TRUE(ln);
  EXPECT_TRUE(softmax);
  EXPECT_TRUE(dropout);
}

TEST_F(Gpt3Layer, TwoAllReducesEachWay) {
  const Collective expected{2 * T * h, t};
  EXPECT_EQ(expected.bytes, 50331648);  // models.md 5.4
  EXPECT_EQ(count_engine(fwd(), Engine::Comm), 2);
  EXPECT_EQ(count_engine(bwd(), Engine::Comm), 2);
  for (const auto* g : {&fwd(), &bwd()}) {
    for (const auto& o : g->ops) {
      if (o.engine != Engine::Comm) continue;
      ASSERT_TRUE(o.collective.has_value()) << o.id;
      EXPECT_EQ(*o.collective, expected) << o.id;
    }
  }
  EXPECT_EQ(op(fwd(), "F11").engine, Engine::Comm);
  EXPECT_EQ(op(fwd(), "F17").engine, Engine::Comm);
  EXPECT_EQ(op(bwd(), "B14").engine, Engine::Comm);
  EXPECT_EQ(op(bwd(), "B2").engine, Engine::Comm);
}

TEST_F(Gpt3Layer, BackwardGemmsOfSection32) {
  const int64_t ft = f / t;
  EXPECT_TRUE(has_gemm(bwd(), "B16a", Gemm{T, ft, h, 1}));
  EXPECT_TRUE(has_gemm(bwd(), "B16b", Gemm{ft, h, T, 1}));
  EXPECT_TRUE(has_gemm(bwd(), "B15a", Gemm{T, h, ft, 1}));
  EXPECT_TRUE(has_gemm(bwd(), "B15b", Gemm{h, ft, T, 1}));
  EXPECT_TRUE(has_gemm(bwd(), "B10a", Gemm{T, h / t, h, 1}));
  EXPECT_TRUE(has_gemm(bwd(), "B10b", Gemm{h / t, h, T, 1}));
  EXPECT_TRUE(has_gemm(bwd(), "B8a", Gemm{s, s, dh, G}));
  EXPECT_TRUE(has_gemm(bwd(), "B8b", Gemm{s, dh, s, G}));
  EXPECT_TRUE(has_gemm(bwd(), "B5a", Gemm{s, dh, s, G}));
  EXPECT_TRUE(has_gemm(bwd(), "B5b", Gemm{s, dh, s, G}));
  EXPECT_TRUE(has_gemm(bwd(), "B3a", Gemm{T, h, 3 * h / t, 1}));
  EXPECT_TRUE(has_gemm(bwd(), "B3b", Gemm{h, 3 * h / t, T, 1}));
  EXPECT_EQ(count_gemms(bwd()), 12);
  EXPECT_EQ(op(bwd(), "B15").engine, Engine::Vector);
}

TEST_F(Gpt3Layer, WeightGradientFlags) {
  for (const char* id : {"B16b", "B15b", "B10b", "B3b"}) EXPECT_TRUE(op(bwd(), id).weight_gradient) << id;
  for (const char* id : {"B16a", "B15a", "B10a", "B8a", "B8b", "B5a", "B5b", "B3a", "B15", "B14", "B2"}) {
    EXPECT_FALSE(op(bwd(), id).weight_gradient) << id;
  }
  for (const auto& o : fwd().ops) EXPECT_FALSE(o.weight_gradient) << o.id;
  for (const auto& o : bwd().ops) {
    if (o.weight_gradient) {
      EXPECT_TRUE(o.gemm.has_value()) << o.id;
    }
  }
}

TEST_F(Gpt3Layer, EveryForwardGemmHasDataAndWeightGradient) {
  const std::set<std::string> weighted = {"F3", "F10", "F15", "F16"};
  for (const auto& o : fwd().ops) {
    if (!o.gemm) continue;
    const std::string n = o.id.substr(1);
    SCOPED_TRACE(o.id);
    const int da = bwd().find("B" + n + "a");
    const int db = bwd().find("B" + n + "b");
    ASSERT_GE(da, 0);
    ASSERT_GE(db, 0);
    const auto& a_op = bwd().ops[static_cast<size_t>(da)];
    const auto& b_op = bwd().ops[static_cast<size_t>(db)];
    ASSERT_TRUE(a_op.gemm && b_op.gemm);
    // each backward GEMM has the forward GEMM's MACs
    EXPECT_EQ(a_op.gemm->macs(), o.gemm->macs());
    EXPECT_EQ(b_op.gemm->macs(), o.gemm->macs());
    EXPECT_FALSE(a_op.weight_gradient);
    EXPECT_EQ(b_op.weight_gradient, weighted.count(o.id) == 1);
  }
}

TEST_F(Gpt3Layer, DagInvariants) {
  expect_topological_order(fwd());
  expect_topological_order(bwd());
  expect_weight_gradients_are_sinks(bwd());
  expect_unique_ids(fwd());
  expect_unique_ids(bwd());
  expect_engine_payloads(fwd());
  expect_engine_payloads(bwd());
}

TEST_F(Gpt3Layer, FlopsPerRank) {
  // models.md 3.1: forward MACs per rank [T (4h^2 + 2hf) + 2 b s^2 h] / t
  const int64_t macs = (T * (4 * h * h + 2 * h * f) + 2 * b * s * s * h) / t;
  EXPECT_EQ(graph().transformer.forward_flops(), 2 * macs);
  EXPECT_EQ(graph().transformer.backward_flops(), 4 * macs);
}

TEST(Gpt3LayerT1, NoCommunicationAndNoTpOperators) {
  const auto graph = build(preset("gpt3-175b"), 2048, 1, 1);
  const auto& fwd = graph.transformer.forward;
  const auto& bwd = graph.transformer.backward;
  EXPECT_EQ(count_engine(fwd, Engine::Comm), 0);
  EXPECT_EQ(count_engine(bwd, Engine::Comm), 0);
  for (const char* id : {"F2", "F11", "F14", "F17"}) EXPECT_EQ(fwd.find(id), -1) << id;
  for (const auto& o : fwd.ops) EXPECT_FALSE(o.collective.has_value()) << o.id;
  for (const auto& o : bwd.ops) EXPECT_FALSE(o.collective.has_value()) << o.id;
  const int64_t h = 12288;
  EXPECT_TRUE(has_gemm(fwd, "F3", Gemm{2048, 3 * h, h, 1}));
  EXPECT_TRUE(has_gemm(fwd, "F5", Gemm{2048, 2048, 128, 96}));
  expect_topological_order(fwd);
  expect_topological_order(bwd);
  expect_weight_gradients_are_sinks(bwd);
}

TEST(Gpt3LayerMicroBatch2, CollectivesScaleWithTokens) {
  const auto graph = build(preset("gpt3-175b"), 2048, 2, 4);
  const phaze::model::Collective expected{2 * (2 * 2048) * 12288, 4};
  int n = 0;
  for (const auto* g : {&graph.transformer.forward, &graph.transformer.backward}) {
    for (const auto& o : g->ops) {
      if (o.engine != Engine::Comm) continue;
      ++n;
      ASSERT_TRUE(o.collective.has_value());
      EXPECT_EQ(*o.collective, expected) << o.id;
    }
  }
  EXPECT_EQ(n, 4);
  // batch of the attention GEMMs is b a / t
  EXPECT_TRUE(has_gemm(graph.transformer.forward, "F5", Gemm{2048, 2048, 128, 2 * 96 / 4}));
  EXPECT_TRUE(has_gemm(graph.transformer.forward, "F3", Gemm{2 * 2048, 3 * 12288 / 4, 12288, 1}));
}

// ---------------------------------------------------------------------------------------------------
// Variants (models.md 3.3)

bool has_pass(const OperatorGraph& graph, VectorKind kind) {
  for (const auto& o : graph.ops) {
    for (const auto& p : o.passes) {
      if (p.kind == kind) return true;
    }
  }
  return false;
}

int count_gemm_equal(const OperatorGraph& graph, const Gemm& g) {
  int n = 0;
  for (const auto& o : graph.ops) n += o.gemm && *o.gemm == g;
  return n;
}

TEST(LlamaLayer, SeparateProjectionsWithoutBiasAndGatedFfn) {
  const int64_t s = 4096, h = 4096, f = 11008, a = 32;
  const auto graph = build(preset("llama2-7b"), s, 1, 1);
  const auto& fwd = graph.transformer.forward;
  // q, k, v, scores, context, o, gate, up, down
  EXPECT_EQ(count_gemms(fwd), 9);
  // q, k, v and o are all (T, h, h, 1) at t = 1
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, h, h, 1}), 4);
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, f, h, 1}), 2);      // gate, up
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, h, f, 1}), 1);      // down
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, s, h / a, a}), 1);  // scores
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, h / a, s, a}), 1);  // context
  for (const auto& o : fwd.ops) {
    if (o.gemm && *o.gemm == Gemm{s, h, h, 1}) {
      EXPECT_EQ(o.engine, Engine::Tensor) << o.id;
    }
  }
  // no biases anywhere, no dropout anywhere, RMSNorm and RoPE and SwiGLU present
  EXPECT_FALSE(has_pass(fwd, VectorKind::BiasAdd));
  EXPECT_FALSE(has_pass(graph.transformer.backward, VectorKind::BiasGrad));
  EXPECT_FALSE(has_pass(fwd, VectorKind::Dropout));
  EXPECT_FALSE(has_pass(fwd, VectorKind::LayerNorm));
  EXPECT_TRUE(has_pass(fwd, VectorKind::RmsNorm));
  EXPECT_TRUE(has_pass(fwd, VectorKind::Rope));
  EXPECT_TRUE(has_pass(fwd, VectorKind::SwiGlu));
  // 7 weight GEMMs with data + weight gradient, 2 attention GEMMs with two data gradients each
  EXPECT_EQ(count_gemms(graph.transformer.backward), 18);
  int weight_gradients = 0;
  for (const auto& o : graph.transformer.backward.ops) weight_gradients += o.weight_gradient;
  EXPECT_EQ(weight_gradients, 7);
  expect_topological_order(fwd);
  expect_topological_order(graph.transformer.backward);
  expect_weight_gradients_are_sinks(graph.transformer.backward);
  expect_engine_payloads(fwd);
  expect_engine_payloads(graph.transformer.backward);
}

TEST(LlamaLayer, SplitProjectionsAtT2) {
  const int64_t s = 4096, h = 4096, f = 11008, t = 2;
  const auto graph = build(preset("llama2-7b"), s, 1, t);
  const auto& fwd = graph.transformer.forward;
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, h / t, h, 1}), 3);  // q, k, v column-parallel
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, h, h / t, 1}), 1);  // o row-parallel
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, f / t, h, 1}), 2);  // gate, up
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, h, f / t, 1}), 1);  // down
  for (const auto& o : fwd.ops) {
    if (o.gemm && *o.gemm == Gemm{s, h / t, h, 1}) {
      EXPECT_EQ(o.engine, Engine::Tensor) << o.id;
      for (const auto& p : o.passes) EXPECT_NE(p.kind, VectorKind::BiasAdd) << o.id;
    }
  }
  EXPECT_EQ(count_engine(fwd, Engine::Comm), 2);
  EXPECT_EQ(count_engine(graph.transformer.backward, Engine::Comm), 2);
}

TEST(BertLargeLayer, ThreeQkvGemmsWithBias) {
  const int64_t s = 512, h = 1024;
  const auto graph = build(preset("bert-large"), s, 1, 1);
  const auto& fwd = graph.transformer.forward;
  // q, k, v (T, h, h) and the output projection (T, h, h) coincide at t = 1
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, h, h, 1}), 4);
  EXPECT_EQ(count_gemms(fwd), 8);
  EXPECT_TRUE(has_pass(fwd, VectorKind::BiasAdd));
  EXPECT_TRUE(has_pass(fwd, VectorKind::Dropout));
  expect_topological_order(fwd);
  expect_topological_order(graph.transformer.backward);
  expect_weight_gradients_are_sinks(graph.transformer.backward);

  const auto split = build(preset("bert-large"), s, 1, 4);
  EXPECT_EQ(count_gemm_equal(split.transformer.forward, Gemm{s, h / 4, h, 1}), 3);
}

TEST(Opt350mLayer, NoAttentionDropoutReluFfn) {
  const int64_t s = 2048, h = 1024, a = 16;
  const auto graph = build(preset("opt-350m"), s, 1, 1);
  const auto& fwd = graph.transformer.forward;
  EXPECT_EQ(count_gemms(fwd), 8);
  EXPECT_EQ(count_gemm_equal(fwd, Gemm{s, h, h, 1}), 4);
  // attention dropout removed: no dropout pass over the b a s^2 scores; hidden dropout stays
  for (const auto& o : fwd.ops) {
    for (const auto& p : o.passes) {
      if (p.kind == VectorKind::Dropout) {
        EXPECT_NE(p.elements, a * s * s) << o.id;
      }
    }
  }
  EXPECT_TRUE(has_pass(fwd, VectorKind::Dropout));
  EXPECT_TRUE(has_pass(fwd, VectorKind::Relu));
  EXPECT_FALSE(has_pass(fwd, VectorKind::Gelu));
  expect_topological_order(fwd);
  expect_topological_order(graph.transformer.backward);
  expect_weight_gradients_are_sinks(graph.transformer.backward);
}

TEST(AllPresets, DagInvariantsOfEveryLayer) {
  for (const auto& ref : phaze_test::preset_refs()) {
    const auto spec = preset(ref.name);
    for (int64_t t : phaze_test::admissible_tp(spec)) {
      SCOPED_TRACE(std::string(ref.name) + " t=" + std::to_string(t));
      const auto graph = build(spec, spec.default_seq, 1, t);
      for (const auto* layer : {&graph.embedding, &graph.transformer, &graph.head}) {
        expect_topological_order(layer->forward);
        expect_topological_order(layer->backward);
        expect_weight_gradients_are_sinks(layer->backward);
        expect_engine_payloads(layer->forward);
        expect_engine_payloads(layer->backward);
        for (const auto& o : layer->forward.ops) {
          if (o.collective) {
            EXPECT_EQ(o.collective->ranks, t) << o.id;
          }
        }
        for (const auto& o : layer->backward.ops) {
          if (o.collective) {
            EXPECT_EQ(o.collective->ranks, t) << o.id;
          }
        }
      }
      expect_unique_ids(graph.transformer.forward);
      expect_unique_ids(graph.transformer.backward);
      if (t == 1) {
        EXPECT_EQ(count_engine(graph.transformer.forward, Engine::Comm), 0);
        EXPECT_EQ(count_engine(graph.transformer.backward, Engine::Comm), 0);
      } else {
        EXPECT_EQ(count_engine(graph.transformer.forward, Engine::Comm), 2);
        EXPECT_EQ(count_engine(graph.transformer.backward, Engine::Comm), 2);
      }
    }
  }
}

}  // namespace
