/*!
 * \file lazy_tape_cache.cc
 * \brief The gradient tape's cache (see include/ir/lazy_tape.h): the forward region walked
 * without building graph nodes, its structural encoding, the per-thread LRU cache of backward
 * programs under it, and their replay with ApplyN.
 */
#include <list>

#include "ir/lazy_tape.h"
#include "runtime/lazy/lazy_internal.h"

namespace ir {
namespace lazy {
namespace {

/*! \brief The node that computes `value`: pending, or kept when it materialized under a tape. */
const std::shared_ptr<Pending>& ProducerOf(const Array::Value& value) { return value.node ? value.node : value.origin; }

uint64_t Pack(const TapeRef& ref) {
  return (static_cast<uint64_t>(ref.kind) << 62) | (static_cast<uint64_t>(ref.node) << 32) | ref.index;
}

/*! \brief Backward programs by region encoding, least recently used first out. */
class TapeCache {
 public:
  static TapeCache& ForThread() {
    thread_local TapeCache cache;
    return cache;
  }

  /*! \brief The program of a region with `region`'s encoding (the key confirmed), else null. */
  std::shared_ptr<const TapeProgram> Find(const TapeRegion& region) {
    auto found = index_.find(region.key);
    if (found == index_.end() || found->second->encoding != region.encoding) return nullptr;
    entries_.splice(entries_.begin(), entries_, found->second);
    return found->second->program;
  }

  void Insert(const TapeRegion& region, std::shared_ptr<const TapeProgram> program) {
    if (limit_ == 0) return;
    auto found = index_.find(region.key);
    if (found != index_.end()) entries_.erase(found->second);  // a 64-bit collision: the newer wins
    entries_.push_front(Entry{region.key, region.encoding, std::move(program)});
    index_[region.key] = entries_.begin();
    Trim();
  }

  size_t size() const { return entries_.size(); }
  size_t limit() const { return limit_; }
  void set_limit(size_t limit) {
    limit_ = limit;
    Trim();
  }

 private:
  struct Entry {
    uint64_t key;
    std::vector<uint64_t> encoding;
    std::shared_ptr<const TapeProgram> program;
  };

  void Trim() {
    while (entries_.size() > limit_) {
      index_.erase(entries_.back().key);
      entries_.pop_back();
    }
  }

  size_t limit_ = 64;
  std::list<Entry> entries_;
  std::unordered_map<uint64_t, std::list<Entry>::iterator> index_;
};

}  // namespace

TapeRegion::TapeRegion(const std::vector<ValuePtr>& all, const std::vector<ValuePtr>& targets,
                       const std::vector<ValuePtr>& head_values) {
  for (const ValuePtr& source : all) {
    if (source_index_.emplace(source.get(), static_cast<uint32_t>(sources.size())).second) sources.push_back(source);
  }
  reached_.assign(sources.size(), false);
  Walk(targets);
  for (const ValuePtr& target : targets) roots.push_back(RefOf(target));
  for (const ValuePtr& head : head_values) heads.push_back(RefOf(head));
  for (uint32_t j = 0; j < sources.size(); ++j) {
    if (reached_[j]) xs.push_back(j);
  }
  Encode();
}

/*! \brief Iterative DFS (chains may be long) through pending nodes and kept origins to the sources. */
void TapeRegion::Walk(const std::vector<ValuePtr>& targets) {
  std::unordered_set<const Pending*> visited;
  std::vector<std::pair<std::shared_ptr<Pending>, size_t>> stack;
  auto visit = [&](const ValuePtr& value) {
    auto source = source_index_.find(value.get());
    if (source != source_index_.end()) {
      reached_[source->second] = true;
      return;
    }
    const std::shared_ptr<Pending>& producer = ProducerOf(*value);
    if (producer && visited.insert(producer.get()).second) stack.emplace_back(producer, 0);
  };
  for (const ValuePtr& target : targets) {
    visit(target);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        visit(node->inputs[next++]);
        continue;
      }
      std::shared_ptr<Pending> done = std::move(node);
      stack.pop_back();
      Build(done);
    }
  }
}

/*! \brief Makes `pending` (its inputs walked) a region node when some input depends on a source. */
void TapeRegion::Build(const std::shared_ptr<Pending>& pending) {
  bool depends = false;
  for (const ValuePtr& input : pending->inputs) {
    const std::shared_ptr<Pending>& producer = ProducerOf(*input);
    depends = depends || source_index_.count(input.get()) || (producer && built_.count(producer.get()));
  }
  if (!depends) return;
  std::vector<TapeRef> refs;
  for (const ValuePtr& input : pending->inputs) refs.push_back(RefOf(input));
  built_[pending.get()] = static_cast<uint32_t>(nodes.size());
  nodes.push_back(pending);
  inputs.push_back(std::move(refs));
  outputs_.emplace_back(pending->num_outputs);
}

/*! \brief A source, an output of a region node (remembering the value met), else a constant. */
TapeRef TapeRegion::RefOf(const ValuePtr& value) {
  auto source = source_index_.find(value.get());
  if (source != source_index_.end()) return TapeRef{TapeRef::kSource, source->second, 0};
  const std::shared_ptr<Pending>& producer = ProducerOf(*value);
  auto built = producer ? built_.find(producer.get()) : built_.end();
  if (built != built_.end()) {
    IR_CHECK(value->index < outputs_[built->second].size())
        << "GradientTape: output " << value->index << " of " << producer->op->name << " out of range";
    outputs_[built->second][value->index] = value;
    return TapeRef{TapeRef::kRegion, built->second, value->index};
  }
  auto constant = constant_index_.emplace(value.get(), static_cast<uint32_t>(constants.size()));
  if (constant.second) constants.push_back(value);
  return TapeRef{TapeRef::kConstant, constant.first->second, 0};
}

void TapeRegion::Encode() {
  auto refs = [&](const std::vector<TapeRef>& list) {
    encoding.push_back(list.size());
    for (const TapeRef& ref : list) encoding.push_back(Pack(ref));
  };
  encoding.push_back(sources.size());
  for (const ValuePtr& source : sources) encoding.push_back(source->hash);
  for (size_t k = 0; k < nodes.size(); ++k) {
    encoding.push_back(reinterpret_cast<uintptr_t>(nodes[k]->op));
    encoding.push_back(nodes[k]->hash);
    encoding.push_back(nodes[k]->num_outputs);
    refs(inputs[k]);
  }
  refs(roots);
  refs(heads);
  encoding.push_back(xs.size());
  encoding.insert(encoding.end(), xs.begin(), xs.end());
  encoding.push_back(constants.size());
  for (const ValuePtr& constant : constants) encoding.push_back(constant->hash);
  key = 0x74617065;
  for (uint64_t word : encoding) key = Mix(key, word);
}

ValuePtr TapeRegion::ValueOf(const TapeRef& ref) {
  if (ref.kind == TapeRef::kSource) return sources.at(ref.node);
  if (ref.kind == TapeRef::kConstant) return constants.at(ref.node);
  IR_CHECK(ref.kind == TapeRef::kRegion) << "GradientTape: a backward value is not a region value";
  ValuePtr& value = outputs_.at(ref.node).at(ref.index);
  if (!value) {  // an output no target read: a new value of the same node, hashed as ApplyN does
    value = std::make_shared<Array::Value>();
    value->node = nodes[ref.node];
    value->index = ref.index;
    value->hash = Mix(nodes[ref.node]->hash, ref.index);
  }
  return value;
}

size_t TapeRegion::ReachedIndex(const Array::Value* value) const {
  for (size_t k = 0; k < xs.size(); ++k) {
    if (sources[xs[k]].get() == value) return k;
  }
  return xs.size();
}

std::shared_ptr<const TapeProgram> TapeProgramFor(const TapeRegion& region) {
  TapeCache& cache = TapeCache::ForThread();
  Stats delta;
  if (std::shared_ptr<const TapeProgram> program = cache.Find(region)) {
    delta.tape_cache_hits = 1;
    AddStats(Context::Current(), delta);
    return program;
  }
  delta.tape_cache_misses = 1;
  AddStats(Context::Current(), delta);
  auto program = std::make_shared<const TapeProgram>(DeriveTapeProgram(region));
  cache.Insert(region, program);
  return program;
}

std::vector<Array> ReplayTapeProgram(const TapeProgram& program, TapeRegion* region) {
  std::vector<std::vector<Array>> recorded;
  recorded.reserve(program.steps.size());
  auto array_of = [&](const TapeRef& ref) {
    if (ref.kind == TapeRef::kBackward) return recorded.at(ref.node).at(ref.index);
    return Array(std::make_shared<Array::Cell>(region->ValueOf(ref)));
  };
  for (const TapeProgram::Step& step : program.steps) {
    std::vector<ValuePtr> step_inputs;
    step_inputs.reserve(step.inputs.size());
    for (const TapeRef& ref : step.inputs) {
      step_inputs.push_back(ref.kind == TapeRef::kBackward ? lazy::ValueOf(recorded.at(ref.node).at(ref.index))
                                                           : region->ValueOf(ref));
    }
    recorded.push_back(RecordOp(step.op, std::move(step_inputs), step.attrs, step.num_outputs));
  }
  std::vector<Array> out;
  for (const TapeRef& ref : program.results) out.push_back(array_of(ref));
  return out;
}

size_t GradientTape::CacheSize() { return TapeCache::ForThread().size(); }
size_t GradientTape::CacheLimit() { return TapeCache::ForThread().limit(); }
void GradientTape::SetCacheLimit(size_t limit) { TapeCache::ForThread().set_limit(limit); }

}  // namespace lazy
}  // namespace ir
