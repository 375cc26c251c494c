// The Pareto frontiers of the search: the set kept as figures arrive and the frontiers of a list of points
// against brute force (every pair compared) on random figures with many ties, and `phaze search --pareto`
// against the frontier found by brute force in the CSV of every point, on questions where its bounds leave
// points out.

#include "search/pareto.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "search/small_question.h"
#include "support/run_phaze.h"
#include "support/temp_dir.h"

namespace {

using namespace phaze;
using namespace phaze_test::small_question;
using phaze_test::run_phaze;
using phaze_test::TempDir;
using search::FrontierFigures;

/// Whether `a` dominates `b`, written out from the definition.
bool beats(const FrontierFigures& a, const FrontierFigures& b) {
  const bool no_worse =
      a.samples_per_s >= b.samples_per_s && a.area_um2 <= b.area_um2 && a.energy_per_sample_j <= b.energy_per_sample_j;
  const bool better =
      a.samples_per_s > b.samples_per_s || a.area_um2 < b.area_um2 || a.energy_per_sample_j < b.energy_per_sample_j;
  return no_worse && better;
}

/// Figures on a coarse grid, so that ties in every figure are common.
FrontierFigures random_figures(std::mt19937& rng) {
  std::uniform_int_distribution<int> grid(1, 6);
  return {static_cast<double>(grid(rng)), static_cast<double>(grid(rng)), static_cast<double>(grid(rng))};
}

using Triple = std::tuple<double, double, double>;
Triple triple(const FrontierFigures& x) {
  return {x.samples_per_s, x.area_um2, x.energy_per_sample_j};
}

TEST(FrontierSet, KeepsTheNonDominatedFiguresAndRulesOutWhatOneOfThemBeats) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    search::FrontierSet set;
    std::vector<FrontierFigures> added;
    const int n = 1 + trial % 40;
    for (int i = 0; i < n; ++i) {
      added.push_back(random_figures(rng));
      set.add(added.back());
    }
    std::set<Triple> expected, kept;
    for (const FrontierFigures& x : added)
      if (std::none_of(added.begin(), added.end(), [&](const FrontierFigures& y) { return beats(y, x); }))
        expected.insert(triple(x));
    for (const FrontierFigures& x : set.figures()) kept.insert(triple(x));
    EXPECT_EQ(kept, expected);
    EXPECT_EQ(set.figures().size(), expected.size());  // equal figures kept once
    for (int q = 0; q < 20; ++q) {
      const FrontierFigures best = random_figures(rng);
      const bool any = std::any_of(added.begin(), added.end(), [&](const FrontierFigures& y) {
        return y.samples_per_s > best.samples_per_s && y.area_um2 <= best.area_um2 &&
               y.energy_per_sample_j <= best.energy_per_sample_j;
      });
      EXPECT_EQ(set.rules_out(best), any);
    }
  }
}

TEST(ParetoFrontiers, AreThePointsNoOtherPointDominatesPerModelAndOnAverage) {
  std::mt19937 rng(11);
  const int64_t batch = 4;
  for (int trial = 0; trial < 100; ++trial) {
    const size_t models = 1 + static_cast<size_t>(trial % 3);
    std::vector<search::PointRow> rows;
    const int n = 1 + trial % 30;
    for (int i = 0; i < n; ++i) {
      search::PointRow r;
      r.design[0] = i;  // distinct identities
      r.micro_batch = 1;
      r.area_um2 = random_figures(rng).area_um2;
      r.feasible = true;
      double sum = 0;
      for (size_t m = 0; m < models; ++m) {
        const FrontierFigures x = random_figures(rng);
        const bool feasible = std::uniform_int_distribution<int>(0, 5)(rng) > 0;
        r.models.push_back(
            {feasible, 1, 1, 1, 1, feasible ? x.samples_per_s : 0, feasible ? x.energy_per_sample_j : 0});
        r.feasible = r.feasible && feasible;
        sum += x.samples_per_s;
      }
      r.score = r.feasible ? sum / static_cast<double>(models) : 0;
      rows.push_back(r);
    }
    const std::vector<search::ParetoFrontier> frontiers = search::pareto_frontiers(rows, models, batch);
    ASSERT_EQ(frontiers.size(), models > 1 ? models + 1 : 1);
    for (size_t f = 0; f < frontiers.size(); ++f) {
      // Brute force: each point's figures from its row, then every pair compared.
      std::vector<std::optional<FrontierFigures>> figures;
      for (const search::PointRow& r : rows) {
        std::optional<FrontierFigures> x;
        if (f < models && r.models[f].feasible) {
          x = FrontierFigures{r.models[f].samples_per_s, r.area_um2,
                              r.models[f].energy_per_batch_j / static_cast<double>(batch)};
        } else if (f == models && r.feasible) {
          double energy = 0;
          for (const search::ModelRow& m : r.models) energy += m.energy_per_batch_j / static_cast<double>(batch);
          x = FrontierFigures{r.score, r.area_um2, energy / static_cast<double>(models)};
        }
        figures.push_back(x);
      }
      std::set<int64_t> expected, found;
      for (size_t i = 0; i < rows.size(); ++i) {
        if (!figures[i]) continue;
        bool dominated = false;
        for (size_t j = 0; j < rows.size(); ++j)
          dominated = dominated || (figures[j] && beats(*figures[j], *figures[i]));
        if (!dominated) expected.insert(rows[i].design[0]);
      }
      double last_area = 0;
      for (const search::FrontierPoint& p : frontiers[f].points) {
        found.insert(p.row.design[0]);
        EXPECT_GE(p.figures.area_um2, last_area);  // by area
        last_area = p.figures.area_um2;
        // On the frontier of samples/s against area alone: no point of the list beats it on those two.
        bool beaten = false;
        for (const auto& x : figures)
          beaten = beaten || (x && x->samples_per_s >= p.figures.samples_per_s && x->area_um2 <= p.figures.area_um2 &&
                              (x->samples_per_s > p.figures.samples_per_s || x->area_um2 < p.figures.area_um2));
        EXPECT_EQ(p.area_frontier, !beaten);
      }
      EXPECT_EQ(found, expected) << "frontier " << f;
    }
  }
}

/// The fields of a CSV line (no quoting in phaze's CSV files).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) out.push_back(field);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

/// A CSV file as rows of column name → field.
std::vector<std::map<std::string, std::string>> table(const std::string& text) {
  std::stringstream in(text);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = fields(line);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = fields(line);
    std::map<std::string, std::string>& row = rows.emplace_back();
    for (size_t i = 0; i < header.size(); ++i) row[header[i]] = i < f.size() ? f[i] : "";
  }
  return rows;
}

/// A point's identity in a CSV row of either file: its chip, HBM size, micro-batch and recomputation.
std::string point_id(const std::map<std::string, std::string>& row) {
  std::string out;
  for (const char* column :
       {"num_tc", "tc_width", "tc_depth", "num_vc", "vc_width", "glb_bytes", "hbm_bytes", "micro_batch", "recompute"})
    out += row.at(column) + ";";
  return out;
}

TEST(ParetoSearch, TheFrontiersAreThoseOfEveryPointFoundByBruteForce) {
  TempDir dir;
  const std::string llama = std::string(PHAZE_TEST_DATA) + "/hf/tiny-llama/config.json";
  const std::string model_set = fmt::format(
      "search --model '{}' --model '{}' --seq 64,32 --devices {} --global-batch {} --mbs 1,2 --hbm 0.0008,0.002 "
      "--tc 1 --vc 1,2,4,8 --width 16 --depth 8 --glb-mib 2 --lower-fraction 0 --link-bandwidth {}",
      kModel, llama, kDevices, kBatch, kLinkGibS);
  const std::vector<std::string> questions{small_args(), joined(twelve_argv()), model_set,
                                           small_args() + " --planner stagewise", model_set + " --planner stagewise"};
  int64_t left_out = 0;
  for (const std::string& question : questions) {
    SCOPED_TRACE(question);
    const auto all = run_phaze(question + " --threads 2 --csv " + dir.file("all.csv"));
    ASSERT_EQ(all.status, 0) << all.err;
    const auto some = run_phaze(question + " --threads 2 --pareto " + dir.file("pareto.csv"));
    ASSERT_EQ(some.status, 0) << some.err;
    left_out += points_left_out(some.out);
    const auto rows = table(read(dir.file("all.csv")));
    // The models' names, from the points file's columns "<name>_samples_per_s".
    std::vector<std::string> names;
    for (const auto& [column, value] : rows.front())
      if (column.ends_with("_samples_per_s") && column != "average_samples_per_s")
        names.push_back(column.substr(0, column.size() - std::string("_samples_per_s").size()));
    std::sort(names.begin(), names.end());
    ASSERT_FALSE(names.empty());
    // Brute force over every point of the CSV, per frontier: name → identity → figures.
    std::map<std::string, std::map<std::string, FrontierFigures>> expected;
    std::vector<std::string> frontiers = names;
    if (names.size() > 1) frontiers.push_back("average");
    for (const std::string& f : frontiers) {
      std::vector<std::pair<std::string, FrontierFigures>> figures;
      for (const auto& row : rows) {
        auto figure = [&](const std::string& n) -> std::optional<std::pair<double, double>> {
          if (row.at(n + "_samples_per_s").empty()) return std::nullopt;
          return std::pair(std::stod(row.at(n + "_samples_per_s")),
                           std::stod(row.at(n + "_energy_per_batch_j")) / static_cast<double>(kBatch));
        };
        const std::string id = point_id(row);
        if (f != "average") {
          if (const auto x = figure(f))
            figures.emplace_back(id, FrontierFigures{x->first, std::stod(row.at("area_um2")), x->second});
          continue;
        }
        if (row.at("feasible") != "1") continue;
        double energy = 0;
        for (const std::string& n : names) energy += figure(n)->second;
        figures.emplace_back(id,
                             FrontierFigures{std::stod(row.at("average_samples_per_s")), std::stod(row.at("area_um2")),
                                             energy / static_cast<double>(names.size())});
      }
      for (const auto& point : figures)
        if (std::none_of(figures.begin(), figures.end(), [&](const auto& y) { return beats(y.second, point.second); }))
          expected[f][point.first] = point.second;
    }
    std::map<std::string, std::map<std::string, FrontierFigures>> found;
    for (const auto& row : table(read(dir.file("pareto.csv")))) {
      found[row.at("frontier")][point_id(row)] = {std::stod(row.at("samples_per_s")), std::stod(row.at("area_um2")),
                                                  std::stod(row.at("energy_per_sample_j"))};
    }
    for (const std::string& f : frontiers) {
      SCOPED_TRACE(f);
      ASSERT_FALSE(expected[f].empty());
      ASSERT_EQ(found[f].size(), expected[f].size());
      for (const auto& [id, x] : expected[f]) {
        ASSERT_TRUE(found[f].contains(id)) << id;
        EXPECT_EQ(found[f][id], x) << id;
      }
    }
  }
  // The bounds leave points out beside the frontiers: the test would not notice a rule that leaves out none.
  EXPECT_GT(left_out, 20);
}

TEST(ParetoSearch, NeedsTheExactRule) {
  TempDir dir;
  const auto r = run_phaze(small_args() + " --stop-rule buckets --pareto " + dir.file("p.csv"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--pareto"), std::string::npos) << r.err;
}

}  // namespace
