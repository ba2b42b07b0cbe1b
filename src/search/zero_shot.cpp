// SPDX-License-Identifier: Apache-2.0
// See zero_shot.h.
#include "tensortune/search/zero_shot.h"

#include "search/sketch/rules.h"
#include "tensortune/codegen/llvm_codegen.h"
#include "tensortune/ir/ir_visitor.h"
#include "tensortune/schedule/schedule.h"
#include "tensortune/schedule/serialize.h"
#include "tensortune/search/evolutionary_search.h"
#include "tensortune/search/search_space.h"
#include "tensortune/support/error.h"
#include "tensortune/support/hash.h"
#include "tensortune/support/rng.h"
#include "tensortune/te/operators.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace tensortune::search {
namespace {

double output_elements(const te::Workload& workload) {
  double total = 0;
  for (const te::Tensor& t : workload.outputs())
    total += static_cast<double>(t.op()->output.num_elements());
  return total;
}

double input_bytes(const te::Workload& workload) {
  double total = 0;
  for (const te::Tensor& t : workload.inputs())
    total += static_cast<double>(t.op()->output.num_elements() * t.dtype().bytes());
  return total;
}

/// Below about a quarter million operations (or output elements, for data movement) a kernel
/// runs in tens of microseconds, about what waking the thread pool costs: measured zero-shot
/// picks of relu 100x1000 and pad 256x14x14 ran 2x and 7x slower parallel than the serial
/// default. PyTorch's parallel_for grain (32768 elements per thread) is of the same order.
/// A kernel with a reduction in it that reads more than an L1 cache is the exception: in a model
/// its input was just written by every thread, and one thread alone waits on the other cores'
/// caches. ResNet-18's global average pool (512x7x7, 100 KB) took 17-19 us serial and 8-10 us
/// parallel inside the model (timed alone, on the same input each call, the two tie at 4-7 us).
/// The reduction need not be the output: a layer norm's mean, or the 1x1 conv of a
/// squeeze-and-excitation block whose output scales a 104x28x28 map (RegNet, EfficientNet), are
/// inside kernels of element-wise outputs; parallel, those models ran 5% faster. Pure data
/// movement (a transpose, a slice) stays serial: split among threads, 128x256 slices ran slower.
bool too_small_for_threads(const te::Workload& workload) {
  constexpr double kMinParallelWork = 1 << 18;
  constexpr double kL1Bytes = 32 << 10;
  if (std::max(workload.flop_count(), output_elements(workload)) >= kMinParallelWork)
    return false;
  if (input_bytes(workload) < kL1Bytes)
    return true;
  return std::none_of(workload.ops().begin(), workload.ops().end(),
                      [](const te::OperationRef& op) { return op->reduce() != nullptr; });
}

/// Indices of `scores`, highest first (ties in index order).
std::vector<size_t> best_first(const std::vector<float>& scores) {
  std::vector<size_t> order(scores.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  return order;
}

/// Whether the loop nest as written may compete with the tiled draws: only for workloads of
/// little arithmetic per output element (element-wise ops, pools, depthwise convolutions).
/// Where each output sums many products, the scalar nest is never the fastest, and a model that
/// ranks it first has not seen the workload's kind.
bool default_may_compete(const te::Workload& workload) {
  constexpr double kMaxFlopsPerOutput = 64;
  return workload.flop_count() <= kMaxFlopsPerOutput * std::max(1.0, output_elements(workload));
}

/// True when every load of `input` in `op`'s body indexes with data axis `axis` of `op`: computed
/// at that axis, `input` is then computed for the part that one iteration reads, once.
bool reads_along(const te::Operation& op, const std::string& input, size_t axis) {
  const te::Operation* producer = nullptr;
  for (const te::OperationRef& in : op.inputs) {
    if (in->name == input)
      producer = in.get();
  }
  if (producer == nullptr)
    return false;
  bool all = true, any = false;
  ir::post_order_visit(op.body, [&](const ir::Expr& e) {
    const auto* load = e.as<ir::Load>();
    if (load == nullptr || !load->buffer.same_as(producer->output))
      return;
    any = true;
    bool uses = false;
    for (const ir::Expr& index : load->indices) {
      ir::post_order_visit(index,
                           [&](const ir::Expr& x) { uses = uses || x.same_as(op.axes[axis].var); });
    }
    all = all && uses;
  });
  return any && all;
}

/// The first axis of `axes` with more than one iteration (npos when none).
size_t first_wide(const std::vector<schedule::Axis>& axes) {
  for (size_t k = 0; k < axes.size(); ++k) {
    if (axes[k].extent > 1)
      return k;
  }
  return std::string::npos;
}

}  // namespace

std::vector<schedule::Step> fused_default_steps(const te::Workload& workload) {
  const detail::DagInfo dag = detail::analyse(workload);
  std::vector<schedule::Step> steps;
  const detail::StageInfo* output = nullptr;
  for (const detail::StageInfo& s : dag.stages) {
    if (s.is_output)
      output = output == nullptr ? &s : nullptr;  // one output only
  }
  if (output == nullptr) {
    return steps;
  }
  auto single_consumer = [&](const detail::StageInfo& s) -> const detail::StageInfo* {
    return s.consumers.size() == 1 ? dag.find(s.consumers[0]) : nullptr;
  };
  // Element-wise stages feeding element-wise stages (a bias before a clip) are inlined: no
  // buffer, no pass over memory of their own.
  std::set<std::string> inlined;
  for (const detail::StageInfo& s : dag.stages) {
    const detail::StageInfo* c = single_consumer(s);
    if (!s.is_output && !s.is_reduction && c != nullptr && !c->is_reduction) {
      steps.push_back(schedule::ComputeInline{s.name});
      inlined.insert(s.name);
    }
  }
  auto final_consumer = [&](const detail::StageInfo& s) {
    const detail::StageInfo* c = single_consumer(s);
    while (c != nullptr && inlined.count(c->name) != 0)
      c = single_consumer(*c);
    return c;
  };
  const size_t out_axis = first_wide(output->data_axes);
  // A reduction whose element-wise epilogue is the output (a conv, then bias and clip) is
  // computed per iteration of the output's outer loop (a channel), so its result is read back
  // from cache; the stages in front of it (the padding) likewise, where each iteration of its
  // loop reads a part of them of its own (a depthwise conv's channel: nothing is recomputed).
  std::map<std::string, size_t> attached;  // stage -> its data axis that the loop matches
  for (const detail::StageInfo& s : dag.stages) {
    if (!s.is_reduction || s.is_output || out_axis == std::string::npos ||
        final_consumer(s) != output || s.data_axes.size() != output->data_axes.size())
      continue;
    bool same_shape = true;
    for (size_t d = 0; d < s.data_axes.size(); ++d)
      same_shape = same_shape && s.data_axes[d].extent == output->data_axes[d].extent;
    if (!same_shape)
      continue;
    steps.push_back(schedule::ComputeAt{s.name, output->name, output->data_axes[out_axis].name});
    attached[s.name] = out_axis;
  }
  // The data axis whose loop stages in front of `name` may be computed in: an attached stage's,
  // or the output's own when it is the reduction itself (a pool: its padded channel is then made
  // per channel, in cache).
  auto host_axis = [&](const std::string& name) -> std::optional<size_t> {
    const auto at = attached.find(name);
    if (at != attached.end())
      return at->second;
    if (name == output->name && output->is_reduction && out_axis != std::string::npos)
      return out_axis;
    return std::nullopt;
  };
  for (const detail::StageInfo& s : dag.stages) {
    const detail::StageInfo* c = single_consumer(s);
    if (s.is_output || s.is_reduction || inlined.count(s.name) != 0 || c == nullptr)
      continue;
    const std::optional<size_t> at = host_axis(c->name);
    if (at && reads_along(*c->op, s.name, *at)) {
      steps.push_back(schedule::ComputeAt{s.name, c->name, c->data_axes[*at].name});
      attached[s.name] = *at;
    }
  }
  if (!too_small_for_threads(workload)) {
    for (const detail::StageInfo& s : dag.stages) {
      const size_t k = first_wide(s.data_axes);
      if (inlined.count(s.name) == 0 && attached.count(s.name) == 0 && k != std::string::npos)
        steps.push_back(schedule::Annotate{s.name, s.data_axes[k].name, ir::ForKind::Parallel});
    }
  }
  try {
    schedule::apply_steps(workload, steps);
  } catch (const UserError&) {
    return {};  // a structure these rules did not foresee: the loop nests as written
  }
  return steps;
}

ZeroShot::ZeroShot(std::shared_ptr<const cost_model::CostModel> model, ZeroShotOptions options)
    : model_(std::move(model)), options_(options) {}

std::string ZeroShot::ranking() const {
  return model_ && model_->trained() ? "cost model" : "sketch prior";
}

std::string ZeroShot::ranking(const target::Target& target) const {
  return target.is_gpu() ? "GPU sketch prior" : ranking();
}

std::optional<ZeroShotPick> ZeroShot::pick(const te::Workload& workload,
                                           const target::Target& target) const {
  const SearchSpace space = SearchSpace::generate(workload, target);
  CandidateEvaluator evaluator(workload, space, target);
  if (options_.threads > 0)
    evaluator.set_threads(options_.threads);
  // Seeded by the workload too, so two workloads do not share one sequence of draws; distinct
  // configurations only, in the order drawn (ties below keep the first).
  support::Rng rng(options_.seed ^ support::fnv1a64(workload.key()));
  std::vector<Config> configs;
  std::set<std::string> seen;
  for (int attempt = 0;
       attempt < options_.samples * 4 && configs.size() < static_cast<size_t>(options_.samples);
       ++attempt) {
    const Config c = space.sample_plausible(rng);
    if (seen.insert(space.key(c)).second)
      configs.push_back(c);
  }
  std::vector<float> scores(configs.size(), -std::numeric_limits<float>::infinity());
  // The default schedule competes too when a model ranks: for small or memory-bound workloads
  // (a depthwise convolution of 14x14 maps, a pad) the loop nest as written beats every tiled,
  // parallel draw, whose threads cost more than the work they share.
  float default_score = -std::numeric_limits<float>::infinity();
  // The draws seldom hold the best point itself; its neighbours by the scores' lights often do.
  // The annealing starts from the best-scored draws (never measured: no key is), and its best
  // points join the draws, scored again together (the prior's weight scales with the range).
  const auto refine = [&](const ScoreFn& score) {
    if (options_.refine_chains <= 0)
      return;
    const std::vector<size_t> order = best_first(scores);
    std::vector<Config> starts;
    for (size_t i = 0; i < order.size() && starts.size() < options_.refine_starts; ++i) {
      if (std::isfinite(scores[order[i]]))
        starts.push_back(configs[order[i]]);
    }
    AnnealingOptions annealing;
    annealing.chains = options_.refine_chains;
    annealing.max_steps = options_.refine_steps;
    for (const Config& c : simulated_annealing(
             space, score, [](const std::string&) { return false; }, starts, options_.refine_keep,
             rng, annealing)) {
      if (seen.insert(space.key(c)).second)
        configs.push_back(c);
    }
    scores = score(configs);
  };
  // The annealing judges each move by scores weighed within its own batch's spread, so its scale
  // shifts from step to step and its chains wander: inside ResNet-18, a 28x28 Winograd conv's pick
  // scored -0.10 under the model, its 720-trial tuned best 1.90. A greedy ascent from the best
  // points under one fixed scale (the draws' spread of predictions) reached 1.83, and the pick ran
  // 1.26-1.49x the tuned time instead of about 2x. `predict` gives unweighed scores.
  const auto climb = [&](const ScoreFn& predict, const ScoreFn& score) {
    if (options_.climb_starts == 0)
      return;
    std::vector<float> valued = predict(configs);
    const double spread = score_spread(valued);
    weigh_by_prior(space, configs, options_.prior_weight, spread, valued);
    const std::vector<size_t> order = best_first(scores);
    std::vector<Config> found;
    for (size_t i = 0; i < order.size() && found.size() < options_.climb_starts; ++i) {
      if (!std::isfinite(valued[order[i]]))
        continue;
      Config at = configs[order[i]];
      float here = valued[order[i]];
      for (int step = 0; step < options_.climb_steps; ++step) {
        const std::vector<Config> next = space.neighbours(at);
        std::vector<float> p = predict(next);
        weigh_by_prior(space, next, options_.prior_weight, spread, p);
        size_t up = next.size();
        for (size_t k = 0; k < next.size(); ++k) {
          if (std::isfinite(p[k]) && p[k] > here) {
            here = p[k];
            up = k;
          }
        }
        if (up == next.size())
          break;
        at = next[up];
      }
      found.push_back(std::move(at));
    }
    for (Config& c : found) {
      if (seen.insert(space.key(c)).second)
        configs.push_back(std::move(c));
    }
    scores = score(configs);
  };
  if (target.is_gpu()) {
    // The shipped model knows CPU code only: a GPU kernel is ranked by the GPU sketch rules'
    // prior (threads, accumulators, shared loads per FMA, warps per multiprocessor), among the
    // configurations that lower (the device's limits included).
    const auto prior_scores = [&](const std::vector<Config>& batch) {
      const std::vector<const std::vector<float>*> features = evaluator.features(batch);
      std::vector<float> out(batch.size(), -std::numeric_limits<float>::infinity());
      for (size_t i = 0; i < batch.size(); ++i) {
        if (features[i] != nullptr)
          out[i] = static_cast<float>(space.prior(batch[i]));
      }
      return out;
    };
    scores = prior_scores(configs);
    refine(prior_scores);
    // The annealing's chains end near good points, not on them: the 4096^3 GEMM's pick kept a
    // contiguous thread tile whose interleaved neighbour scores higher. A greedy ascent moves
    // to the best neighbour by the prior (cheap) that lowers (not), while one scores higher.
    const std::vector<size_t> order = best_first(scores);
    for (size_t i = 0, started = 0; i < order.size() && started < options_.climb_starts; ++i) {
      if (!std::isfinite(scores[order[i]]))
        continue;
      ++started;
      Config at = configs[order[i]];
      double here = scores[order[i]];
      for (int step = 0; step < options_.climb_steps; ++step) {
        std::vector<std::pair<double, Config>> next;
        for (Config& c : space.neighbours(at)) {
          const double p = space.prior(c);
          if (p > here)
            next.emplace_back(p, std::move(c));
        }
        std::stable_sort(next.begin(), next.end(),
                         [](const auto& a, const auto& b) { return a.first > b.first; });
        const auto up = std::find_if(next.begin(), next.end(), [&](const auto& n) {
          return std::isfinite(prior_scores({n.second}).at(0));
        });
        if (up == next.end())
          break;
        here = up->first;
        at = up->second;
      }
      if (seen.insert(space.key(at)).second) {
        configs.push_back(at);
        scores.push_back(static_cast<float>(here));
      }
    }
  } else if (model_ && model_->trained()) {
    const auto predict = [&](const std::vector<Config>& batch) {
      const std::vector<const std::vector<float>*> features = evaluator.features(batch);
      std::vector<std::vector<float>> rows;
      std::vector<size_t> where;
      for (size_t i = 0; i < batch.size(); ++i) {
        if (features[i] != nullptr) {
          rows.push_back(*features[i]);
          where.push_back(i);
        }
      }
      std::vector<float> out(batch.size(), -std::numeric_limits<float>::infinity());
      if (!rows.empty()) {
        const std::vector<float> predicted = model_->predict(rows);
        for (size_t k = 0; k < where.size(); ++k)
          out[where[k]] = predicted[k];
      }
      return out;
    };
    const auto model_scores = [&](const std::vector<Config>& batch) {
      std::vector<float> out = predict(batch);
      weigh_by_prior(space, batch, options_.prior_weight, out);
      return out;
    };
    scores = model_scores(configs);
    refine(model_scores);
    climb(predict, model_scores);
    if (default_may_compete(workload)) {
      if (const std::optional<std::vector<float>> plain = feature_vector(workload, {}, target))
        default_score = model_->predict({*plain}).at(0);  // its prior counts as 1: no penalty
    }
  } else {
    const std::vector<const std::vector<float>*> features = evaluator.features(configs);
    for (size_t i = 0; i < configs.size(); ++i) {
      if (features[i] != nullptr)
        scores[i] = static_cast<float>(space.prior(configs[i]));
    }
  }
  size_t best = configs.size();
  for (size_t i = 0; i < configs.size(); ++i) {
    if (std::isfinite(scores[i]) && (best == configs.size() || scores[i] > scores[best]))
      best = i;
  }
  if (std::isfinite(default_score) && (best == configs.size() || default_score > scores[best]))
    return ZeroShotPick{fused_default_steps(workload),
                        "the default loop nests, fused and parallel (the model ranks the default "
                        "first)",
                        1.0, support::Json()};
  if (best == configs.size())
    return std::nullopt;
  std::vector<schedule::Step> steps = space.steps(configs[best]);
  std::string config = space.describe(configs[best]);
  if (!target.is_gpu() && too_small_for_threads(workload)) {
    // A fused loop stays, serial: dropping the annotation never changes what is computed.
    steps.erase(std::remove_if(steps.begin(), steps.end(),
                               [](const schedule::Step& step) {
                                 const auto* a = std::get_if<schedule::Annotate>(&step);
                                 return a != nullptr && a->kind == ir::ForKind::Parallel;
                               }),
                steps.end());
    config += " (serial: too little work for threads)";
  }
  return ZeroShotPick{std::move(steps), std::move(config), space.prior(configs[best]),
                      space.to_json(configs[best])};
}

std::vector<cost_model::Sample> corpus_samples(const database::Database& db,
                                               target::TargetKind kind,
                                               int64_t* skipped,
                                               const std::map<std::string, te::Workload>* known,
                                               int64_t* unknown) {
  std::vector<cost_model::Sample> samples;
  int64_t lost = 0;
  int64_t missing = 0;
  for (const database::WorkloadInfo& w : db.workloads()) {
    std::optional<te::Workload> workload;
    try {
      workload = te::make_workload(w.spec);
    } catch (const UserError&) {
      // A model's kernel has no spec: only the model it came from rebuilds it.
      const te::Workload* kernel = nullptr;
      if (known != nullptr) {
        const auto it = known->find(w.key);
        kernel = it != known->end() ? &it->second : nullptr;
      }
      if (kernel == nullptr) {
        ++missing;
        continue;
      }
      workload = *kernel;
    }
    for (const database::TargetKey& key : db.targets()) {
      const target::Target parsed = target::Target::parse(key.target);
      if (parsed.kind != kind)
        continue;
      const std::vector<database::Record> records = db.history(w.key, key);
      if (records.empty())
        continue;
      const target::Target resolved = codegen::resolve_host(parsed);
      double best = 0;
      for (const database::Record& r : records)
        best = std::max(best, r.ok() && r.median_seconds > 0 ? 1 / r.median_seconds : 0.0);
      if (best <= 0)
        continue;
      for (const database::Record& r : records) {
        std::optional<std::vector<float>> f;
        try {
          f = feature_vector(*workload, schedule::parse_schedule(r.schedule).steps, resolved);
        } catch (const Error&) {
        }
        if (!f) {
          ++lost;
          continue;
        }
        const double score = r.ok() && r.median_seconds > 0 ? 1 / r.median_seconds / best : 0.0;
        samples.push_back({w.key + "|" + key.target, std::move(*f), static_cast<float>(score)});
      }
    }
  }
  if (skipped != nullptr)
    *skipped = lost;
  if (unknown != nullptr)
    *unknown = missing;
  return samples;
}

}  // namespace tensortune::search
