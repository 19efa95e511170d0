/*!
 * \file schedule_collectives.cc
 * \brief ScheduleCollectives: allreduce nodes become bucketed _allreduce_start / _allreduce_wait
 * pairs, ordered so each bucket is reduced while the backward pass goes on (DDP's buckets,
 * Horovod's tensor fusion).
 *
 * Node ids are the execution order (a post-order walk from the outputs), and that walk would
 * compute a gradient, reduce it and apply it before the next gradient even starts. The pass
 * lists the nodes in the order it wants: a ready start first, then the ready node closest to a
 * start (so a layer's gradient is computed, and submitted, as soon as the gradient flowing
 * back makes it possible), then other nodes in their old order; a wait only when nothing else
 * is ready. Starts are packed into buckets in that order: the first of at most
 * collective.first_bucket_bytes, the next of collective.bucket_bytes (auto: 25 MB, or a quarter of
 * all the allreduce bytes when that is less, so a small model still overlaps), each of one dtype and
 * reduction; a bucket closes before a wait on one of its members. Then control dependencies
 * pin each collective in place: the node after a start depends on it, and it on the previous
 * start; a wait depends on the node before it and on the last start before it (so its bucket,
 * and every bucket closed before, is complete). The pass leaves every other choice to the
 * walk, so Fusion may still group what it did before.
 *
 * Every rank runs the same graph, so every rank gets the same buckets in the same order; the
 * engine checks that they do.
 */
#include <algorithm>
#include <limits>
#include <map>
#include <queue>

#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"

namespace ir {
namespace {

constexpr int64_t kDefaultBucketBytes = 25 << 20;
constexpr int64_t kDefaultFirstBucketBytes = 1 << 20;

struct CollectiveOps {
  const Op* allreduce = Op::Get("allreduce");
  const Op* start = Op::Get("_allreduce_start");
  const Op* wait = Op::Get("_allreduce_wait");
};

/*! \brief The graph with every allreduce replaced by start -> wait (the wait keeps its name), on copied nodes. */
Graph Split(const Graph& graph, const CollectiveOps& ops) {
  std::vector<NodePtr> copies;
  Graph result = CopyGraph(graph, &copies);
  for (const NodePtr& copy : copies) {
    if (copy->op() != ops.allreduce) continue;
    std::map<std::string, std::string> dict = copy->attrs.dict;
    if (dict["tensor_name"].empty()) dict["tensor_name"] = copy->attrs.name;
    NodePtr start = Node::Create(ops.start, copy->attrs.name + "/start", dict, {copy->inputs[0]});
    start->control_deps = std::move(copy->control_deps);
    copy->control_deps.clear();
    copy->attrs.op = ops.wait;
    copy->attrs.dict.clear();
    copy->ReparseAttrs();
    copy->inputs = {NodeEntry{start, 0}, copy->inputs[0]};
  }
  return result;
}

/*!
 * \brief `graph`'s per-input attribute `key` (shape_inputs, dtype_inputs) realigned from
 * `original`'s input order to its own: new dependencies may change the order inputs are reached in.
 */
template <typename Value>
void RealignInputsAttr(const Graph& original, Graph* graph, const char* key) {
  if (!original.HasAttr(key)) return;
  const auto& values = original.GetAttr<std::vector<Value>>(key);
  const IndexedGraph& before = original.indexed_graph();
  std::map<std::string, Value> by_name;
  for (size_t i = 0; i < before.input_nodes().size() && i < values.size(); ++i) {
    by_name[before[before.input_nodes()[i]].source->attrs.name] = values[i];
  }
  const IndexedGraph& after = graph->indexed_graph();
  std::vector<Value> realigned;
  for (uint32_t nid : after.input_nodes()) realigned.push_back(by_name.at(after[nid].source->attrs.name));
  graph->SetAttr(key, std::move(realigned));
}

/*! \brief `graph` (new nodes for `original`) with shape and dtype inferred again (the passes' bodies). */
Graph Infer(Graph graph, const Graph& original) {
  static const PassReg& shape = PassReg::Get("InferShape");
  static const PassReg& type = PassReg::Get("InferType");
  RealignInputsAttr<Shape>(original, &graph, "shape_inputs");
  RealignInputsAttr<DType>(original, &graph, "dtype_inputs");
  return type.body(shape.body(std::move(graph)));
}

/*! \brief The order the pass wants; see the file comment. */
std::vector<uint32_t> PreferredOrder(const IndexedGraph& idx, const CollectiveOps& ops) {
  const uint32_t n = idx.num_nodes();
  std::vector<std::vector<uint32_t>> succs(n);
  std::vector<uint32_t> pending(n, 0);
  for (uint32_t nid = 0; nid < n; ++nid) {
    for (const IndexedGraph::Entry& in : idx[nid].inputs) succs[in.node_id].push_back(nid);
    for (uint32_t dep : idx[nid].control_deps) succs[dep].push_back(nid);
    pending[nid] = static_cast<uint32_t>(idx[nid].inputs.size() + idx[nid].control_deps.size());
  }
  // Distance (in edges) from each node down to the nearest start; far for nodes no start needs.
  const uint32_t far = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> distance(n, far);
  std::vector<uint32_t> frontier;
  for (uint32_t nid = 0; nid < n; ++nid) {
    if (idx[nid].source->op() == ops.start) {
      distance[nid] = 0;
      frontier.push_back(nid);
    }
  }
  for (size_t i = 0; i < frontier.size(); ++i) {
    uint32_t nid = frontier[i];
    for (const IndexedGraph::Entry& in : idx[nid].inputs) {
      if (distance[in.node_id] == far) {
        distance[in.node_id] = distance[nid] + 1;
        frontier.push_back(in.node_id);
      }
    }
  }
  // Ready nodes: non-waits by (distance, old id); waits by when their start ran.
  using Key = std::pair<uint64_t, uint32_t>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> ready, ready_waits;
  std::vector<uint64_t> started(n, 0);
  uint64_t clock = 0;
  auto push = [&](uint32_t nid) {
    if (idx[nid].source->op() == ops.wait) {
      ready_waits.push({started[idx[nid].inputs[0].node_id], nid});
    } else {
      ready.push({(static_cast<uint64_t>(distance[nid]) << 32) | nid, nid});
    }
  };
  for (uint32_t nid = 0; nid < n; ++nid) {
    if (pending[nid] == 0) push(nid);
  }
  std::vector<uint32_t> order;
  order.reserve(n);
  while (!ready.empty() || !ready_waits.empty()) {
    auto& from = ready.empty() ? ready_waits : ready;
    uint32_t nid = from.top().second;
    from.pop();
    order.push_back(nid);
    started[nid] = ++clock;
    for (uint32_t next : succs[nid]) {
      if (--pending[next] == 0) push(next);
    }
  }
  IR_CHECK(order.size() == n) << "ScheduleCollectives: the graph has a cycle";
  return order;
}

/*! \brief A bucket being filled: its members (start node ids), bytes, dtype and reduction. */
struct Bucket {
  std::vector<uint32_t> members;
  int64_t bytes = 0;
  DType dtype = DType::kUnknown;
  std::string reduce_op;
};

/*! \brief Packs the starts into buckets in `order`; sets each start's bucket attributes. */
void AssignBuckets(const Graph& graph, const std::vector<uint32_t>& order, const CollectiveOps& ops) {
  const IndexedGraph& idx = graph.indexed_graph();
  const auto& shapes = graph.GetAttr<ShapeVector>("shape");
  const auto& dtypes = graph.GetAttr<DTypeVector>("dtype");
  const int64_t first_limit = GetPassOption<int64_t>(graph, "collective.first_bucket_bytes", kDefaultFirstBucketBytes);
  int64_t limit = GetPassOption<int64_t>(graph, "collective.bucket_bytes", -1);
  if (limit < 0) {  // auto: DDP's 25 MB, but at least four buckets' worth of overlap for a small model
    int64_t total = 0;
    for (uint32_t nid : order) {
      if (idx[nid].source->op() != ops.start) continue;
      uint32_t in = idx.entry_id(idx[nid].inputs[0]);
      if (shapes[in].is_known()) total += shapes[in].Size() * static_cast<int64_t>(DTypeSize(dtypes[in]));
    }
    limit = std::min<int64_t>(kDefaultBucketBytes, std::max<int64_t>(first_limit, total / 4));
  }
  std::vector<Bucket> buckets;
  std::vector<int> bucket_of(idx.num_nodes(), -1);
  bool open = false;
  for (uint32_t nid : order) {
    const Node* node = idx[nid].source;
    if (node->op() == ops.wait) {
      int b = bucket_of[idx[nid].inputs[0].node_id];
      if (open && b == static_cast<int>(buckets.size()) - 1) open = false;  // never wait on an open bucket
      continue;
    }
    if (node->op() != ops.start) continue;
    uint32_t in = idx.entry_id(idx[nid].inputs[0]);
    const Shape& shape = shapes[in];
    int64_t bytes = shape.is_known() ? shape.Size() * static_cast<int64_t>(DTypeSize(dtypes[in])) : -1;
    const std::string& reduce_op = node->attrs.dict.at("reduce_op");
    Bucket* last = open ? &buckets.back() : nullptr;
    int64_t cap = buckets.size() <= 1 ? first_limit : limit;
    if (last == nullptr || bytes < 0 || last->bytes < 0 || last->dtype != dtypes[in] || last->reduce_op != reduce_op ||
        last->bytes + bytes > cap) {
      buckets.emplace_back();
      buckets.back().dtype = dtypes[in];
      buckets.back().reduce_op = reduce_op;
      open = true;
    }
    Bucket& bucket = buckets.back();
    bucket.members.push_back(nid);
    bucket.bytes = bytes < 0 ? -1 : bucket.bytes + bytes;
    bucket_of[nid] = static_cast<int>(buckets.size()) - 1;
  }
  for (const Bucket& bucket : buckets) {
    std::string key;
    for (uint32_t nid : bucket.members) key += (key.empty() ? "" : ",") + idx[nid].source->attrs.dict.at("tensor_name");
    for (size_t i = 0; i < bucket.members.size(); ++i) {
      NodePtr node = idx[bucket.members[i]].weak_ref.lock();
      node->attrs.dict["bucket"] = key;
      node->attrs.dict["num_members"] = std::to_string(bucket.members.size());
      node->attrs.dict["index"] = std::to_string(i);
      node->ReparseAttrs();
    }
  }
}

Graph ScheduleCollectives(Graph graph) {
  CollectiveOps ops;
  const IndexedGraph& before = graph.indexed_graph();
  bool any = false;
  for (uint32_t nid = 0; nid < before.num_nodes() && !any; ++nid) any = before[nid].source->op() == ops.allreduce;
  if (!any || GetPassOption<int64_t>(graph, "collective.bucket_bytes", -1) == 0) return graph;

  Graph split = Infer(Split(graph, ops), graph);
  const IndexedGraph& idx = split.indexed_graph();
  std::vector<uint32_t> order = PreferredOrder(idx, ops);
  AssignBuckets(split, order, ops);
  // The split graph's nodes are this pass's own copies: pin each collective in place. The walk
  // reaches a wait through its consumer, so neighbours alone do not order what it needs: each start
  // also follows the previous start, and each wait follows the last start before it, so every bucket
  // the order closed before a wait is complete when the wait runs.
  auto pointer = [&idx](uint32_t nid) { return idx[nid].weak_ref.lock(); };
  NodePtr last_start;
  for (size_t i = 0; i < order.size(); ++i) {
    NodePtr node = pointer(order[i]);
    if (node->op() == ops.start) {
      if (last_start != nullptr) node->control_deps.push_back(last_start);
      last_start = node;
      if (i + 1 < order.size() && !idx[order[i + 1]].source->is_variable()) {
        pointer(order[i + 1])->control_deps.push_back(node);
      }
    } else if (node->op() == ops.wait) {
      if (i > 0 && !idx[order[i - 1]].source->is_variable()) node->control_deps.push_back(pointer(order[i - 1]));
      if (last_start != nullptr && last_start != node->inputs[0].node) node->control_deps.push_back(last_start);
    }
  }
  Graph result;
  result.outputs = split.outputs;
  result.attrs = graph.attrs;
  return Infer(std::move(result), graph);
}

}  // namespace

IR_REGISTER_GRAPH_ATTR("collective.bucket_bytes")
    .describe(
        "Option of ScheduleCollectives: most bytes of an allreduce bucket; 0 leaves allreduce synchronous; -1 "
        "(the default): 25 MB, but at most a quarter of the graph's allreduce bytes (at least the first bucket's).")
    .set_type<int64_t>();
IR_REGISTER_GRAPH_ATTR("collective.first_bucket_bytes")
    .describe("Option of ScheduleCollectives: most bytes of the first bucket (the first gradients back).")
    .set_type<int64_t>();

IR_REGISTER_PASS(ScheduleCollectives)
    .describe(
        "Splits allreduce nodes into bucketed _allreduce_start / _allreduce_wait pairs: each bucket starts "
        "as soon as its last gradient is computed and is waited for only where its results are used.")
    .set_change_graph(true)
    .depend_graph_attr("shape")
    .depend_graph_attr("dtype")
    .provide_graph_attr("shape")
    .provide_graph_attr("dtype")
    .set_body(ScheduleCollectives);

}  // namespace ir
