// Shapes that make no sense for a model are rejected with a one-line InputError (models.md 1.3).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "model/layer_graph.h"
#include "model/model_spec.h"
#include "model_test_util.h"
#include "util/input_error.h"

namespace {

// A layer graph whose forward and backward FLOPs each fit in 64 bits but not their sum (3.5e18 + 6.9e18) is
// refused with the one-line error, not summed with a wrap.
TEST(ShapeValidation, TrainingFlopsOfOneMicroBatchMustFit) {
  const auto spec = phaze::model::megatron_gpt("huge", "one huge layer", 1, 1 << 20, 1 << 12, 131072);
  EXPECT_THROW(
      phaze::model::build_layer_graph(spec, phaze::model::Shape{131072, 1, 1}, phaze::model::Precision{}, "huge"),
      phaze::InputError);
}

using phaze::InputError;
using phaze::model::build_layer_graph;
using phaze::model::ModelSpec;
using phaze::model::Precision;
using phaze::model::Shape;
using phaze_test::preset;

const char* const kSource = "shape-test-source";

void expect_rejected(const ModelSpec& spec, const Shape& shape) {
  SCOPED_TRACE(spec.name + " seq=" + std::to_string(shape.seq) + " mbs=" + std::to_string(shape.micro_batch) +
               " tp=" + std::to_string(shape.tp));
  try {
    build_layer_graph(spec, shape, Precision{}, kSource);
    ADD_FAILURE() << "no InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_FALSE(message.empty());
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find(kSource), std::string::npos) << "message does not name the source: " << message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
  EXPECT_THROW(phaze::model::validate(spec, shape, kSource), InputError);
}

TEST(ShapeValidation, TensorParallelWidthMustDivideHeads) {
  expect_rejected(preset("gpt2-xl"), Shape{1024, 1, 2});  // 25 heads
  expect_rejected(preset("gpt2-xl"), Shape{1024, 1, 4});
  expect_rejected(preset("megatron-gpt2-54"), Shape{1024, 1, 8});  // 20 heads
}

TEST(ShapeValidation, WidthMustDivideHeads) {
  // t must divide the heads (96 for GPT-3, 32 for Llama-2-7B): 5 and 64 do not divide 96, 3 does not divide 32.
  expect_rejected(preset("gpt3-175b"), Shape{2048, 1, 5});
  expect_rejected(preset("gpt3-175b"), Shape{2048, 1, 64});
  expect_rejected(preset("llama2-7b"), Shape{4096, 1, 3});
}

TEST(ShapeValidation, AnyDivisorOfTheHeadsIsAWidth) {
  // 3 divides GPT-3's 96 heads and its FFN (49152 = 3 * 16384): a legal, if unusual, Megatron split.
  const auto graph = build_layer_graph(preset("gpt3-175b"), Shape{2048, 1, 3}, Precision{}, "test");
  EXPECT_EQ(graph.transformer.forward_flops() * 3,
            build_layer_graph(preset("gpt3-175b"), Shape{2048, 1, 1}, Precision{}, "test").transformer.forward_flops());
}

TEST(ShapeValidation, NonPositiveValues) {
  const auto gpt3 = preset("gpt3-175b");
  expect_rejected(gpt3, Shape{2048, 1, 0});
  expect_rejected(gpt3, Shape{2048, 1, -8});
  expect_rejected(gpt3, Shape{0, 1, 1});
  expect_rejected(gpt3, Shape{-2048, 1, 1});
  expect_rejected(gpt3, Shape{2048, -1, 1});
  expect_rejected(gpt3, Shape{2048, 0, 1});
}

TEST(ShapeValidation, SequenceBeyondLearnedPositionTable) {
  expect_rejected(preset("gpt2-xl"), Shape{1025, 1, 1});
  expect_rejected(preset("gpt3-175b"), Shape{4096, 1, 8});
  expect_rejected(preset("bert-large"), Shape{513, 1, 1});
  expect_rejected(preset("opt-350m"), Shape{2049, 1, 1});  // 2048 positions (+2 offset rows)
}

TEST(ShapeValidation, AdmissibleShapesAreAccepted) {
  for (const auto& ref : phaze_test::preset_refs()) {
    const auto spec = preset(ref.name);
    for (int64_t t : phaze_test::admissible_tp(spec)) {
      SCOPED_TRACE(std::string(ref.name) + " t=" + std::to_string(t));
      EXPECT_NO_THROW(phaze::model::validate(spec, kSource));
      EXPECT_NO_THROW(phaze::model::validate(spec, Shape{ref.seq, 1, t}, kSource));
      EXPECT_NO_THROW(build_layer_graph(spec, Shape{ref.seq, 4, t}, Precision{}, kSource));
    }
  }
  // a shorter sequence than the table is fine
  EXPECT_NO_THROW(build_layer_graph(preset("gpt2-xl"), Shape{512, 1, 1}, Precision{}, kSource));
}

TEST(SpecValidation, NonsensicalHyperParameters) {
  auto bad_heads = preset("gpt3-175b");
  bad_heads.heads = 0;
  EXPECT_THROW(phaze::model::validate(bad_heads, kSource), InputError);

  auto bad_hidden = preset("gpt3-175b");
  bad_hidden.hidden = -12288;
  EXPECT_THROW(phaze::model::validate(bad_hidden, kSource), InputError);
  EXPECT_THROW(build_layer_graph(bad_hidden, Shape{2048, 1, 1}, Precision{}, kSource), InputError);

  auto bad_dropout = preset("gpt3-175b");
  bad_dropout.hidden_dropout = 1.5;
  EXPECT_THROW(phaze::model::validate(bad_dropout, kSource), InputError);

  auto bad_layers = preset("llama2-7b");
  bad_layers.num_layers = 0;
  EXPECT_THROW(phaze::model::validate(bad_layers, kSource), InputError);
}

}  // namespace
