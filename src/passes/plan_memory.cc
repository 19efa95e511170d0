/*!
 * \file plan_memory.cc
 * \brief PlanMemory: places every pooled entry in one arena so values that are never live at
 * the same time share memory, and outputs reuse their inputs in place where ops allow it.
 *
 * Storage ids (graph attribute "storage_id", one per entry):
 *   >= 0  a buffer of the pool, at byte "storage_offset" of the one arena the executor
 *         allocates per bound plan; entries with one id share bytes (in place or in turn);
 *   -1    external: variables (fed or stored) and outputs that alias a mutated input;
 *   -2    a graph output, which gets fresh storage every run so fetched arrays stay valid.
 * Two layouts are computed and the smaller kept: slots (a buffer per slot, reused by values in
 * turn, slots laid end to end) and greedy-by-size offsets (a buffer per value, in-place chains
 * sharing one). Slots win where offsets would only add alignment padding.
 */
#include <algorithm>
#include <map>

#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"
#include "passes/arena_offsets.h"

namespace ir {
namespace {

constexpr int kExternal = -1;
constexpr int kFreshOutput = -2;
constexpr int kUnplanned = -3;
/*! \brief Arena offsets are multiples of this: any dtype's alignment, a cache line, and device element offsets. */
constexpr int64_t kArenaAlign = 64;

std::string NodeLabel(const Node* node) {
  return StrCat("node '", node->attrs.name, "' (",
                node->is_variable() ? std::string("variable") : "op " + node->op()->name, ")");
}

/*! \brief Marks entries whose bytes are known only at run time (EntryBytes with dynamic shapes). */
constexpr int64_t kDynamicBytes = -1;

/*!
 * \brief Bytes of every entry; throws naming the first node whose shape or dtype is unknown, unless
 * `dynamic`: then an unknown shape gets kDynamicBytes (the entry gets fresh storage when it runs).
 */
std::vector<int64_t> EntryBytes(const IndexedGraph& idx, const ShapeVector& shapes, const DTypeVector& dtypes,
                                bool dynamic) {
  std::vector<int64_t> bytes(idx.num_node_entries());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    for (uint32_t i = 0; i < idx.num_outputs(nid); ++i) {
      uint32_t eid = idx.entry_id(nid, i);
      if (dynamic && !shapes[eid].is_known()) {
        bytes[eid] = kDynamicBytes;
        continue;
      }
      IR_CHECK(shapes[eid].is_known()) << "unknown shape at " << NodeLabel(idx[nid].source) << ": output " << i
                                       << " is " << shapes[eid] << "; feed or annotate its inputs";
      IR_CHECK(dtypes[eid] != DType::kUnknown)
          << "unknown dtype at " << NodeLabel(idx[nid].source) << ": output " << i << "; feed or annotate its inputs";
      IR_CHECK(shapes[eid].FitsInt64()) << NodeLabel(idx[nid].source) << ": output " << i << " of shape " << shapes[eid]
                                        << " has more elements than a 64-bit integer can count";
      bytes[eid] = shapes[eid].Bytes(dtypes[eid]);
    }
  }
  return bytes;
}

/*! \brief The (input, output) pairs an op may share, checked against the node's arity. */
std::vector<std::pair<int, int>> InplacePairs(const IndexedGraph& idx, uint32_t nid) {
  const Node* node = idx[nid].source;
  const auto* inplace_map = Op::FindAttr<FInplaceOption>("FInplaceOption");
  if (inplace_map == nullptr || !inplace_map->count(node->op())) return {};
  std::vector<std::pair<int, int>> pairs = (*inplace_map)[node->op()](node->attrs);
  for (const auto& p : pairs) {
    IR_CHECK(p.first >= 0 && p.first < static_cast<int>(idx[nid].inputs.size()) && p.second >= 0 &&
             p.second < static_cast<int>(idx.num_outputs(nid)))
        << NodeLabel(node) << ": FInplaceOption pair (" << p.first << ", " << p.second << ") is out of range";
  }
  return pairs;
}

std::vector<uint32_t> MutatedInputs(const Node* node) {
  const auto* mutate_map = Op::FindAttr<FMutateInputs>("FMutateInputs");
  if (mutate_map == nullptr || !mutate_map->count(node->op())) return {};
  return (*mutate_map)[node->op()](node->attrs);
}

/*!
 * \brief Marks external entries: variables, and outputs that alias an input the op mutates
 * (that input must itself be external: a variable, or such an alias). An alias records the
 * input it shares in `inplace_index`, so the executor knows which array the output is.
 */
void MarkExternal(const IndexedGraph& idx, std::vector<int>* sid, std::vector<int>* inplace_index) {
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) {
      (*sid)[idx.entry_id(nid, 0)] = kExternal;
      continue;
    }
    std::vector<uint32_t> mutated = MutatedInputs(node);
    for (const auto& p : InplacePairs(idx, nid)) {
      if (std::find(mutated.begin(), mutated.end(), static_cast<uint32_t>(p.first)) == mutated.end()) {
        continue;
      }
      const IndexedGraph::Entry& in = idx[nid].inputs[p.first];
      IR_CHECK((*sid)[idx.entry_id(in)] == kExternal)
          << NodeLabel(node) << " writes its input " << p.first << ", which must be a variable, but it is output "
          << in.index << " of " << NodeLabel(idx[in.node_id].source);
      (*sid)[idx.entry_id(nid, p.second)] = kExternal;
      (*inplace_index)[idx.entry_id(nid, p.second)] = p.first;
    }
  }
}

/*!
 * \brief Pool slots: reuse the smallest free slot that fits, else grow the largest free one.
 * Also counts the bytes of values live at once: their peak is a lower bound of any pool for
 * this order and these in-place decisions (every live value needs its own bytes).
 */
class SlotAllocator {
 public:
  int Alloc(int64_t bytes) {
    live_ += bytes;
    peak_ = std::max(peak_, live_);
    auto it = free_.lower_bound(bytes);
    if (it == free_.end() && !free_.empty()) it = std::prev(free_.end());
    if (it == free_.end()) {
      sizes_.push_back(bytes);
      return static_cast<int>(sizes_.size() - 1);
    }
    int slot = it->second;
    free_.erase(it);
    sizes_[slot] = std::max(sizes_[slot], bytes);
    return slot;
  }
  /*! \brief Frees `slot`, which held a value of `bytes`. */
  void Release(int slot, int64_t bytes) {
    live_ -= bytes;
    free_.emplace(sizes_[slot], slot);
  }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  int64_t peak_live() const { return peak_; }

 private:
  int64_t live_ = 0, peak_ = 0;
  std::vector<int64_t> sizes_;
  std::multimap<int64_t, int> free_;
};

/*! \brief What the planner decides, before it is stored as graph attributes. */
struct MemoryPlan {
  std::vector<int> storage_id;
  std::vector<int> inplace_index;
  std::vector<int64_t> slot_bytes;
  /*! \brief Per entry: its value's buffer (in-place outputs share their input's), -1 if not pooled. */
  std::vector<int> buffer_of;
  /*! \brief Per buffer: its bytes and the nodes it is live over. */
  std::vector<LiveBuffer> buffers;
  /*! \brief The most bytes of pooled values live at once (in-place outputs share their input's). */
  int64_t lower_bound = 0;
  /*!
   * \brief Per entry: an argument the caller gave up (memory.donated_inputs), or an output written
   * into one: its last reader may write its output there in place.
   */
  std::vector<bool> donated;
};

/*! \brief Per entry: its bytes, shape and dtype. */
struct EntryInfo {
  std::vector<int64_t> bytes;
  const ShapeVector& shapes;
  const DTypeVector& dtypes;
};

/*! \brief Whether output `out` may take over input `in`'s buffer as far as their layouts go. */
bool LayoutsAllowInplace(const Node* node, const EntryInfo& info, uint32_t in, uint32_t out) {
  const auto* same_shape = Op::FindAttr<TInplaceSameShape>("TInplaceSameShape");
  if (info.bytes[in] != info.bytes[out]) return false;
  if (same_shape == nullptr || !same_shape->get(node->op(), false)) return true;
  return info.shapes[in] == info.shapes[out] && info.dtypes[in] == info.dtypes[out];
}

/*! \brief Slots for the outputs of op node `nid` not planned yet: in place when allowed, else pooled. */
void PlanOutputs(const IndexedGraph& idx, uint32_t nid, const EntryInfo& info, const std::vector<uint32_t>& refs,
                 std::vector<bool>* handed_over, SlotAllocator* pool, MemoryPlan* plan) {
  const std::vector<int64_t>& bytes = info.bytes;
  std::vector<std::pair<int, int>> pairs = InplacePairs(idx, nid);
  auto last_read_here = [&](uint32_t in, int k) {
    uint32_t reads_here =
        static_cast<uint32_t>(std::count(idx[nid].inputs.begin(), idx[nid].inputs.end(), idx[nid].inputs[k]));
    return !(*handed_over)[in] && refs[in] == reads_here;
  };
  for (uint32_t j = 0; j < idx.num_outputs(nid); ++j) {
    uint32_t eid = idx.entry_id(nid, j);
    int sid = plan->storage_id[eid];
    for (const auto& p : pairs) {  // into a donated argument: graph outputs too (a loop's updated state)
      uint32_t in = idx.entry_id(idx[nid].inputs[p.first]);
      if (p.second != static_cast<int>(j) || (sid != kUnplanned && sid != kFreshOutput) || !plan->donated[in] ||
          !last_read_here(in, p.first) || !LayoutsAllowInplace(idx[nid].source, info, in, eid)) {
        continue;
      }
      plan->storage_id[eid] = kExternal;
      plan->inplace_index[eid] = p.first;
      plan->donated[eid] = true;
      (*handed_over)[in] = true;
      break;
    }
    if (plan->storage_id[eid] != kUnplanned) continue;
    for (const auto& p : pairs) {
      if (p.second != static_cast<int>(j)) continue;
      uint32_t in = idx.entry_id(idx[nid].inputs[p.first]);
      if (plan->storage_id[in] < 0 || !last_read_here(in, p.first) ||
          !LayoutsAllowInplace(idx[nid].source, info, in, eid)) {
        continue;
      }
      plan->storage_id[eid] = plan->storage_id[in];
      plan->inplace_index[eid] = p.first;
      plan->buffer_of[eid] = plan->buffer_of[in];
      (*handed_over)[in] = true;
      break;
    }
    if (plan->storage_id[eid] != kUnplanned) continue;
    plan->storage_id[eid] = pool->Alloc(bytes[eid]);
    plan->buffer_of[eid] = static_cast<int>(plan->buffers.size());
    plan->buffers.push_back(LiveBuffer{bytes[eid], nid, static_cast<uint32_t>(idx.num_nodes())});
  }
}

MemoryPlan Plan(const IndexedGraph& idx, const EntryInfo& info, const std::vector<std::string>& donated) {
  const std::vector<int64_t>& bytes = info.bytes;
  size_t num_entries = idx.num_node_entries();
  MemoryPlan plan;
  plan.storage_id.assign(num_entries, kUnplanned);
  plan.inplace_index.assign(num_entries, -1);
  plan.buffer_of.assign(num_entries, -1);
  plan.donated.assign(num_entries, false);
  MarkExternal(idx, &plan.storage_id, &plan.inplace_index);
  const std::vector<uint32_t>& mutated = idx.mutable_input_nodes();
  for (uint32_t nid : idx.input_nodes()) {
    bool written = std::find(mutated.begin(), mutated.end(), nid) != mutated.end();
    const std::string& name = idx[nid].source->attrs.name;
    plan.donated[idx.entry_id(nid, 0)] = !written && std::find(donated.begin(), donated.end(), name) != donated.end();
  }
  for (size_t eid = 0; eid < num_entries; ++eid) {
    if (bytes[eid] == kDynamicBytes && plan.storage_id[eid] == kUnplanned) plan.storage_id[eid] = kFreshOutput;
  }
  for (const IndexedGraph::Entry& out : idx.outputs()) {
    int& sid = plan.storage_id[idx.entry_id(out)];
    if (sid != kExternal) sid = kFreshOutput;
  }
  std::vector<uint32_t> refs = idx.entry_ref_counts();
  std::vector<bool> handed_over(num_entries, false);
  SlotAllocator pool;
  uint32_t nid = 0;
  auto release_if_dead = [&](uint32_t eid) {
    if (refs[eid] != 0 || plan.storage_id[eid] < 0 || handed_over[eid]) return;
    pool.Release(plan.storage_id[eid], bytes[eid]);
    plan.buffers[plan.buffer_of[eid]].last = nid;
  };
  // Node ids are a topological order: a slot is free once the last reader of its entry ran.
  for (; nid < idx.num_nodes(); ++nid) {
    if (idx[nid].source->is_variable()) continue;
    PlanOutputs(idx, nid, info, refs, &handed_over, &pool, &plan);
    for (const IndexedGraph::Entry& in : idx[nid].inputs) {
      uint32_t eid = idx.entry_id(in);
      --refs[eid];
      release_if_dead(eid);
    }
    for (uint32_t j = 0; j < idx.num_outputs(nid); ++j) release_if_dead(idx.entry_id(nid, j));
  }
  plan.slot_bytes = pool.sizes();
  plan.lower_bound = pool.peak_live();
  return plan;
}

/*! \brief Slots laid end to end in one arena, each at a multiple of kArenaAlign. */
ArenaLayout SlotsEndToEnd(const std::vector<int64_t>& slot_bytes) {
  ArenaLayout layout;
  for (int64_t bytes : slot_bytes) {
    layout.offsets.push_back((layout.bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign);
    layout.bytes = layout.offsets.back() + bytes;
  }
  return layout;
}

/*!
 * \brief Keeps the smaller arena: the slots', or greedy offsets of every buffer (then each
 * buffer becomes a storage id of its own). Returns the layout indexed by storage id.
 */
ArenaLayout ChooseLayout(MemoryPlan* plan) {
  ArenaLayout slots = SlotsEndToEnd(plan->slot_bytes);
  ArenaLayout greedy = GreedyBySizeOffsets(plan->buffers, kArenaAlign);
  if (greedy.bytes >= slots.bytes) return slots;
  for (size_t eid = 0; eid < plan->storage_id.size(); ++eid) {
    if (plan->storage_id[eid] >= 0) plan->storage_id[eid] = plan->buffer_of[eid];
  }
  plan->slot_bytes.clear();
  for (const LiveBuffer& buffer : plan->buffers) plan->slot_bytes.push_back(buffer.bytes);
  return greedy;
}

Graph PlanMemory(Graph graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  const ShapeVector& shapes = graph.GetAttr<ShapeVector>("shape");
  const DTypeVector& dtypes = graph.GetAttr<DTypeVector>("dtype");
  bool dynamic = GetPassOption<int>(graph, "memory.dynamic_shapes", 0) != 0;
  EntryInfo info{EntryBytes(idx, shapes, dtypes, dynamic), shapes, dtypes};
  const std::vector<int64_t>& bytes = info.bytes;
  MemoryPlan plan = Plan(idx, info, graph.GetAttrOr<std::vector<std::string>>("memory.donated_inputs", {}));
  ArenaLayout layout = ChooseLayout(&plan);
  int64_t no_reuse = 0;
  std::vector<int64_t> offsets(bytes.size(), -1);
  for (size_t eid = 0; eid < bytes.size(); ++eid) {
    if (plan.storage_id[eid] < 0) continue;
    no_reuse += bytes[eid];
    offsets[eid] = layout.offsets[plan.storage_id[eid]];
  }
  graph.SetAttr("storage_id", std::move(plan.storage_id));
  graph.SetAttr("storage_inplace_index", std::move(plan.inplace_index));
  graph.SetAttr("storage_bytes", std::move(plan.slot_bytes));
  graph.SetAttr("storage_offset", std::move(offsets));
  graph.SetAttr("memory_plan_bytes", layout.bytes);
  graph.SetAttr("memory_no_reuse_bytes", no_reuse);
  graph.SetAttr("memory_lower_bound_bytes", plan.lower_bound);
  return graph;
}

}  // namespace

IR_REGISTER_GRAPH_ATTR("memory.dynamic_shapes")
    .describe(
        "Option of PlanMemory: 1 lets entries of unknown shape (a loop variable whose shape changes) through, "
        "with fresh storage allocated when they are computed; 0 (default) makes them an error.")
    .set_type<int>();

IR_REGISTER_GRAPH_ATTR("memory.donated_inputs")
    .describe(
        "Option of PlanMemory: names of graph inputs the caller gives up (a loop body's arguments): the "
        "last reader of one may write its output there in place, graph outputs included.")
    .set_type<std::vector<std::string>>();

IR_REGISTER_PASS(PlanMemory)
    .describe(
        "Assigns storage: offsets in one arena, reused once their last reader ran, in-place "
        "outputs where ops allow, external storage for variables and mutated-input aliases.")
    .set_body(PlanMemory)
    .depend_graph_attr("shape")
    .depend_graph_attr("dtype")
    .provide_graph_attr("storage_id")
    .provide_graph_attr("storage_inplace_index")
    .provide_graph_attr("storage_bytes")
    .provide_graph_attr("storage_offset")
    .provide_graph_attr("memory_plan_bytes")
    .provide_graph_attr("memory_no_reuse_bytes")
    .provide_graph_attr("memory_lower_bound_bytes");

IR_REGISTER_GRAPH_ATTR("storage_id")
    .describe(
        "Per entry: pool buffer (>= 0; equal ids share bytes), -1 external (variable, feed, mutated-input alias), "
        "-2 graph output with fresh storage every run.")
    .set_index(AttrIndex::kEntry)
    .set_type<std::vector<int>>();
IR_REGISTER_GRAPH_ATTR("storage_inplace_index")
    .describe(
        "Per entry: the input index whose storage the output reuses in place (a pool slot, "
        "or a mutated input the output aliases), or -1.")
    .set_index(AttrIndex::kEntry)
    .set_type<std::vector<int>>();
IR_REGISTER_GRAPH_ATTR("storage_bytes")
    .describe("Size in bytes of each pool buffer (indexed by storage id).")
    .set_index(AttrIndex::kGraph)
    .set_type<std::vector<int64_t>>();
IR_REGISTER_GRAPH_ATTR("storage_offset")
    .describe(
        "Per entry: byte offset of its pool buffer in the arena (a multiple of 64), or -1 when "
        "not pooled. Entries live at the same time never share arena bytes unless they share a storage id.")
    .set_index(AttrIndex::kEntry)
    .set_type<std::vector<int64_t>>();
IR_REGISTER_GRAPH_ATTR("memory_plan_bytes")
    .describe("Bytes of the arena that holds every pool buffer at its storage_offset.")
    .set_index(AttrIndex::kGraph)
    .set_type<int64_t>();
IR_REGISTER_GRAPH_ATTR("memory_lower_bound_bytes")
    .describe(
        "The most bytes of pooled values live at once in the execution order, an in-place output "
        "sharing its input's bytes: no pool for this order and these in-place choices is smaller.")
    .set_index(AttrIndex::kGraph)
    .set_type<int64_t>();
IR_REGISTER_GRAPH_ATTR("memory_no_reuse_bytes")
    .describe("Bytes the pooled entries would need with every entry in its own buffer.")
    .set_index(AttrIndex::kGraph)
    .set_type<int64_t>();

}  // namespace ir
