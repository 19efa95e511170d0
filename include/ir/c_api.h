/*!
 * \file c_api.h
 * \brief The C interface: ops, symbols, graphs, passes, JSON and op libraries.
 *
 * Every function returns 0 on success and -1 on failure; IRGetLastError() then gives the
 * message. No C++ exception crosses this boundary. Strings and arrays returned through
 * out-parameters are owned by the library and stay valid until the next call of the same
 * function from the same thread. Handles are freed with their *Free function.
 *
 * Every pointer argument is checked: NULL where a value is needed fails with
 * "IRFoo: argument 'out' is NULL". NULL is accepted only where documented (optional inputs,
 * arrays whose count is 0, and the *Free functions, which ignore NULL like free()).
 */
#ifndef IR_C_API_H_
#define IR_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IR_DLL __attribute__((visibility("default")))

typedef void* IRSymbolHandle;
typedef void* IRGraphHandle;
typedef const void* IROpHandle;

/*! \brief Message of the last failure in this thread ("" if none). */
IR_DLL const char* IRGetLastError(void);

/* ---- ops ---- */
/*! \brief Names of every registered op, sorted. */
IR_DLL int IRListAllOpNames(uint32_t* out_size, const char*** out_names);
/*! \brief The op named `name` (or an alias). */
IR_DLL int IRGetOpHandle(const char* name, IROpHandle* out);
/*!
 * \brief Documentation of an op: its name, description, and arguments (inputs then
 * parameters) with their types and descriptions.
 */
IR_DLL int IRGetOpInfo(IROpHandle op, const char** name, const char** description, uint32_t* num_args,
                       const char*** arg_names, const char*** arg_types, const char*** arg_descriptions);
/*! \brief Keys of the attributes `op` registers (e.g. "FInferShape"). */
IR_DLL int IRGetOpAttrKeys(IROpHandle op, uint32_t* out_size, const char*** out_keys);

/* ---- symbols ---- */
IR_DLL int IRSymbolCreateVariable(const char* name, IRSymbolHandle* out);
/*! \brief An op node with string parameters and inputs still unbound (bind with Compose). */
IR_DLL int IRSymbolCreateAtomicSymbol(IROpHandle op, uint32_t num_param, const char** keys, const char** vals,
                                      IRSymbolHandle* out);
/*!
 * \brief Binds inputs of `sym` in place. `keys` is NULL for positional arguments, else one
 * input name per argument (a NULL name: positional). `name` may be NULL (no name).
 */
IR_DLL int IRSymbolCompose(IRSymbolHandle sym, const char* name, uint32_t num_args, const char** keys,
                           IRSymbolHandle* args);
/*! \brief `symbols` holds num_symbols handles (may be NULL when it is 0). */
IR_DLL int IRSymbolCreateGroup(uint32_t num_symbols, IRSymbolHandle* symbols, IRSymbolHandle* out);
/*!
 * \brief A control-flow node (op `op_name`: cond, while_loop) named `node_name`, with `num_inputs`
 * single-output `inputs` and `num_bodies` bodies: body k takes `num_params[k]` params (variable
 * symbols, all bodies' params concatenated in `params`) and returns the outputs of the symbol
 * `body_outputs[k]`. `out` gets every output of the node.
 */
IR_DLL int IRSymbolCreateControlFlow(const char* op_name, const char* node_name, uint32_t num_attrs, const char** keys,
                                     const char** vals, uint32_t num_inputs, IRSymbolHandle* inputs,
                                     uint32_t num_bodies, const uint32_t* num_params, IRSymbolHandle* params,
                                     IRSymbolHandle* body_outputs, IRSymbolHandle* out);
IR_DLL int IRSymbolCopy(IRSymbolHandle sym, IRSymbolHandle* out);
IR_DLL int IRSymbolFree(IRSymbolHandle sym);
IR_DLL int IRSymbolGetNumOutputs(IRSymbolHandle sym, uint32_t* out);
IR_DLL int IRSymbolGetOutput(IRSymbolHandle sym, uint32_t index, IRSymbolHandle* out);
IR_DLL int IRSymbolGetInternals(IRSymbolHandle sym, IRSymbolHandle* out);
/*! \brief option: 0 all, 1 read-only, 2 mutable variables. */
IR_DLL int IRSymbolListInputNames(IRSymbolHandle sym, int option, uint32_t* out_size, const char*** out_names);
IR_DLL int IRSymbolListOutputNames(IRSymbolHandle sym, uint32_t* out_size, const char*** out_names);
/*! \brief Makes the head nodes of `sym` run after every node of `deps`. */
IR_DLL int IRSymbolAddControlDeps(IRSymbolHandle sym, IRSymbolHandle deps);
IR_DLL int IRSymbolSetAttrs(IRSymbolHandle sym, uint32_t num, const char** keys, const char** vals);
/*! \brief *success is 0 when the head node has no attribute `key`. */
IR_DLL int IRSymbolGetAttr(IRSymbolHandle sym, const char* key, const char** out, int* success);
IR_DLL int IRSymbolPrint(IRSymbolHandle sym, const char** out);

/* ---- graphs and passes ---- */
IR_DLL int IRGraphCreate(IRSymbolHandle sym, IRGraphHandle* out);
IR_DLL int IRGraphFree(IRGraphHandle graph);
/*! \brief The graph's outputs as a symbol. */
IR_DLL int IRGraphGetSymbol(IRGraphHandle graph, IRSymbolHandle* out);
/*! \brief Applies passes in order; the result is a new graph (src is unchanged). */
IR_DLL int IRGraphApplyPasses(IRGraphHandle src, uint32_t num_pass, const char** pass_names, IRGraphHandle* dst);
IR_DLL int IRListPasses(uint32_t* out_size, const char*** out_names);
/*!
 * \brief The registered pass pipelines (include/ir/pipeline.h): their names, and one pipeline's
 * printed form ("session: InferShape, InferType, ..., Simplify [if simplify], ..."); an unknown
 * name is an error listing the registered ones.
 */
IR_DLL int IRPipelineList(uint32_t* out_size, const char*** out_names);
IR_DLL int IRPipelineGet(const char* name, const char** out_text);
/*!
 * \brief The passes pipeline `name` applies, in order, with the options named in `on_options`
 * on (e.g. "simplify", "fusion") and every other option off (Pipeline::Passes).
 */
IR_DLL int IRPipelinePasses(const char* name, uint32_t num_options, const char** on_options, uint32_t* out_size,
                            const char*** out_names);
IR_DLL int IRGraphSaveJSON(IRGraphHandle graph, const char** out_json);
IR_DLL int IRGraphLoadJSON(const char* json, IRGraphHandle* out);
/*! \brief Attribute `key` as JSON; *success is 0 when absent. */
IR_DLL int IRGraphGetAttrJSON(IRGraphHandle graph, const char* key, const char** out_json, int* success);
/*!
 * \brief Sets attribute `key` from JSON: `["type", value]` (types: "int", "double", "str",
 * "list_int", "list_str", "list_shape", "list_dtype", ...) or a bare value for registered keys.
 */
IR_DLL int IRGraphSetAttrJSON(IRGraphHandle graph, const char* key, const char* json);
IR_DLL int IRGraphListAttrs(IRGraphHandle graph, uint32_t* out_size, const char*** out_keys);
/*! \brief format: 0 readable text, 1 Graphviz dot. */
IR_DLL int IRGraphPrint(IRGraphHandle graph, int format, const char** out);

/*!
 * \brief Sets attribute `key` to a string of `size` raw bytes (NUL bytes allowed, unlike JSON):
 * binary inputs of passes, e.g. a frontend's serialized model.
 */
IR_DLL int IRGraphSetAttrBytes(IRGraphHandle graph, const char* key, const char* data, size_t size);

/* ---- extensions ---- */
/*! \brief dlopens an op library; its ops behave like built-in ones afterwards. */
IR_DLL int IRLoadOpLibrary(const char* path);
/*!
 * \brief Reads, parses, checks and registers the rewrite-rule file `path` (docs/REWRITE_RULES.md)
 * as the rule set named after its stem (replacing a set of that name); *out_set gets the name.
 * A malformed file fails with the set and line in the message.
 */
IR_DLL int IRRulesLoadFile(const char* path, const char** out_set);

/* ---- automatic differentiation ---- */
/*!
 * \brief Reverse-mode gradients of the outputs of `ys` with respect to the outputs of `xs`.
 * `grad_ys` (may be NULL: ones like each y) holds one head gradient per output of `ys`.
 * *out is a grouped symbol with one gradient per output of `xs`, in order.
 */
IR_DLL int IRSymbolGradient(IRSymbolHandle ys, IRSymbolHandle xs, IRSymbolHandle grad_ys, IRSymbolHandle* out);
/*!
 * \brief IRSymbolGradient with options: `options_json` (may be NULL: the defaults) may set
 * "stop_nodes":["name",..], nodes whose outputs the gradient treats as constants (stop_gradients).
 * Gradients are built as the ops' gradients write them, without rewrite rules (the keys
 * "simplify", "fast_math" and "rule_sets" are refused): the session options of those names apply
 * the rules when the graph is bound, to the gradient as to the forward graph.
 */
IR_DLL int IRSymbolGradientEx(IRSymbolHandle ys, IRSymbolHandle xs, IRSymbolHandle grad_ys, const char* options_json,
                              IRSymbolHandle* out);
/*!
 * \brief A pfor node (tinyflow's parallel_for) over the loop body `outputs` built from the variable
 * `index`: what reads the index, and the nodes of `inside` (may be NULL: what the loop function
 * built, so its random ops draw per iteration), goes into the body; other values are captured.
 * `n_from` (may be NULL) is a value whose leading dim is the iteration count (attribute n = -1);
 * attributes: n, vectorize, parallel_iterations. `out` gets one stacked output per body output.
 */
IR_DLL int IRSymbolCreatePfor(const char* node_name, IRSymbolHandle index, IRSymbolHandle outputs,
                              IRSymbolHandle inside, IRSymbolHandle n_from, uint32_t num_attrs, const char** keys,
                              const char** vals, IRSymbolHandle* out);

/* ---- runtime: arrays and sessions ---- */
typedef void* IRNDArrayHandle;
typedef void* IRSessionHandle;

/*!
 * \brief A host function host_callback nodes call (tf.py_func): reads the `num_inputs` arrays
 * (borrowed for the call), stores `num_outputs` new arrays (IRNDArrayCreate; the library frees
 * them) in `outputs` and returns 0; or writes a message (NUL-terminated, at most `error_size`
 * bytes) into `error` and returns nonzero, which fails the run naming the node.
 */
typedef int (*IRHostCallbackFn)(uint32_t num_inputs, IRNDArrayHandle* inputs, uint32_t num_outputs,
                                IRNDArrayHandle* outputs, char* error, size_t error_size);
/*! \brief Registers `fn` for the process's lifetime; *out_id is the host_callback op's `callback` attribute. */
IR_DLL int IRHostCallbackRegister(IRHostCallbackFn fn, int64_t* out_id);
/*! \brief An IRHostCallbackFn that also gets the `user_data` given when it was registered (a binding's closure). */
typedef int (*IRHostCallbackExFn)(void* user_data, uint32_t num_inputs, IRNDArrayHandle* inputs, uint32_t num_outputs,
                                  IRNDArrayHandle* outputs, char* error, size_t error_size);
/*! \brief IRHostCallbackRegister for `fn` called with `user_data` (which must live as long as the process). */
IR_DLL int IRHostCallbackRegisterEx(IRHostCallbackExFn fn, void* user_data, int64_t* out_id);

/*!
 * \brief A CPU array of `dtype` (a DType value: 0 float32, 1 float64, 2 int32, 3 int64, 4 bool)
 * and `shape`; `data_or_null` (row-major, shape-sized) is copied in, else the array is zeroed.
 */
IR_DLL int IRNDArrayCreate(const int64_t* shape, int ndim, int dtype, const void* data_or_null, IRNDArrayHandle* out);
/*! \brief The array's shape; *shape stays valid while the handle lives. */
IR_DLL int IRNDArrayGetShape(IRNDArrayHandle array, int* ndim, const int64_t** shape);
IR_DLL int IRNDArrayGetDType(IRNDArrayHandle array, int* dtype);
/*!
 * \brief Shape, dtype and host data of the array in one call: *shape and *data stay valid while
 * the handle lives; *data is NULL when the array is not in host memory (use IRNDArraySyncCopyToCPU).
 */
IR_DLL int IRNDArrayGetData(IRNDArrayHandle array, int* ndim, const int64_t** shape, int* dtype, const void** data);
/*! \brief Copies the elements into `dst`; `bytes` must be exactly the array's size in bytes. */
IR_DLL int IRNDArraySyncCopyToCPU(IRNDArrayHandle array, void* dst, size_t bytes);
IR_DLL int IRNDArrayFree(IRNDArrayHandle array);

/*!
 * \brief A session. `options_json` (may be NULL) sets any of
 * {"target":"cpu","fusion":true,"fmax":-1,"dump_dir":"","seed":0,"is_train":true,"passes":[],
 * "profile":false,"simplify":true,"fast_math":false,"nsz":false,"rule_sets":[],
 * "collective_bucket_bytes":-1,"collective_first_bucket_bytes":1048576} (profile: time every node,
 * see IRSessionGetStatsJSON; simplify: apply the rewrite rules, to the gradients too (false: no
 * rule runs anywhere); fast_math: also the rules that change special values; nsz: also those that
 * change only the sign of zero; rule_sets: the rule sets to apply, [] = all; collective_*:
 * allreduce buckets, see SessionOptions).
 */
IR_DLL int IRSessionCreate(const char* options_json, IRSessionHandle* out);
/*!
 * \brief Computes the outputs of `fetches` (a grouped symbol, may be NULL) and runs the head
 * nodes of `targets` (may be NULL) with the given feeds: distinct names of the graph's
 * placeholders and variables, each value with the input's dtype and shape. *outputs (one new array per fetched
 * output, each freed by the caller with IRNDArrayFree) stays valid until the next call.
 */
IR_DLL int IRSessionRun(IRSessionHandle session, IRSymbolHandle fetches, IRSymbolHandle targets, uint32_t num_feeds,
                        const char** feed_names, IRNDArrayHandle* feed_values, uint32_t* num_outputs,
                        IRNDArrayHandle** outputs);
/*!
 * \brief IRSessionRun with feeds in host memory the caller owns, borrowed, not copied: feed i is
 * `feed_ndims[i]` dims (the next ones in `feed_shapes`, all feeds' dims in order) of dtype
 * `feed_dtypes[i]` at `feed_data[i]` (row-major, aligned to its element size). The run reads
 * them and never writes them (an input an op updates is copied first); nothing keeps them
 * after the call returns. A run without fetches copies nothing back.
 */
IR_DLL int IRSessionRunBorrowed(IRSessionHandle session, IRSymbolHandle fetches, IRSymbolHandle targets,
                                uint32_t num_feeds, const char** feed_names, const int* feed_dtypes,
                                const int* feed_ndims, const int64_t* feed_shapes, void* const* feed_data,
                                uint32_t* num_outputs, IRNDArrayHandle** outputs);
/*! \brief A copy of variable `name` in a new handle; *found is 0 (and *out NULL) when it has no value. */
IR_DLL int IRSessionGetVariable(IRSessionHandle session, const char* name, IRNDArrayHandle* out, int* found);
/*! \brief Sets variable `name` to a copy of `value`. */
IR_DLL int IRSessionSetVariable(IRSessionHandle session, const char* name, IRNDArrayHandle value);
/*! \brief Names of the variables that have a value, sorted. */
IR_DLL int IRSessionListVariables(IRSessionHandle session, uint32_t* out_size, const char*** out_names);
/*!
 * \brief Statistics of the last run as JSON: bytes_allocated, bytes_without_reuse,
 * memory_lower_bound_bytes, kernels_launched, host_fallbacks, pfor_fallbacks (names), rewrites (the rules
 * Simplify applied, "rule @ node"), bound, bind_ms, run_ms, and nodes: when the session profiles, [{"name", "op",
 * "ms"}] per node run, slowest first.
 */
IR_DLL int IRSessionGetStatsJSON(IRSessionHandle session, const char** json);
/*! \brief A copy of the bound graph of the last run (free it with IRGraphFree). */
IR_DLL int IRSessionGetLastGraph(IRSessionHandle session, IRGraphHandle* out);
IR_DLL int IRSessionFree(IRSessionHandle session);

/* ---- lazy arrays: eager mode (include/ir/lazy.h, src/c_api/c_api_lazy.cc) ---- */
typedef void* IRLazyHandle;
typedef void* IRLazyContextHandle;
typedef void* IRLazyTapeHandle;

/*! \brief A lazy Context with SessionOptions given as JSON like IRSessionCreate's (NULL or "": defaults). */
IR_DLL int IRLazyContextCreate(const char* options_json, IRLazyContextHandle* out);
IR_DLL int IRLazyContextFree(IRLazyContextHandle context);
/*! \brief Makes `context` current on the calling thread (NULL: the thread's default Context). */
IR_DLL int IRLazyContextSetCurrent(IRLazyContextHandle context);
/*!
 * \brief Stats of `context` (NULL: the current one) as JSON: kernels_launched, traces_compiled,
 * cache_hits, cache_misses, cache_size, evictions, ops_recorded, record_ns, execute_ns, tape_cache_hits and
 * tape_cache_misses (gradients that replayed a cached backward program, or derived one).
 */
IR_DLL int IRLazyContextGetStatsJSON(IRLazyContextHandle context, const char** json);
IR_DLL int IRLazyContextResetStats(IRLazyContextHandle context);

/*! \brief A leaf holding `value` (shared, not copied: an assignment writes into it). */
IR_DLL int IRLazyFromNDArray(IRNDArrayHandle value, IRLazyHandle* out);
/*! \brief A leaf holding a copy of `data` (ndim dims in `shape`, IR dtype code `dtype`). */
IR_DLL int IRLazyFromHost(const void* data, int ndim, const int64_t* shape, int dtype, IRLazyHandle* out);
/*! \brief A 0-d leaf of dtype `dtype`: a parameter of the trace, not part of its key. */
IR_DLL int IRLazyScalar(double value, int dtype, IRLazyHandle* out);
/*!
 * \brief Records `op` on `inputs` with string attributes; returns its outputs (as many as the op
 * has for these attributes) in a library-owned array of new handles valid until the next call.
 */
IR_DLL int IRLazyApply(IROpHandle op, uint32_t num_attrs, const char** keys, const char** vals, uint32_t num_inputs,
                       IRLazyHandle* inputs, uint32_t* num_outputs, IRLazyHandle** outputs);
/*! \brief Another handle on the same array (an assignment through one is seen through both). */
IR_DLL int IRLazyCopy(IRLazyHandle array, IRLazyHandle* out);
IR_DLL int IRLazyFree(IRLazyHandle array);
IR_DLL int IRLazyIsPending(IRLazyHandle array, int* out);
/*! \brief Shape of the value; a pending array's is inferred without computing it. */
IR_DLL int IRLazyGetShape(IRLazyHandle array, int* ndim, const int64_t** shape);
IR_DLL int IRLazyGetDType(IRLazyHandle array, int* dtype);
/*! \brief Computes every pending array of `arrays` in one trace. */
IR_DLL int IRLazyMaterialize(uint32_t num_arrays, IRLazyHandle* arrays);
/*!
 * \brief Materializes `array` and returns its value (a new NDArray handle sharing the buffer:
 * reading it while another thread assigns the array is a race; IRLazyReadValue copies).
 */
IR_DLL int IRLazyToNDArray(IRLazyHandle array, IRNDArrayHandle* out);
/*! \brief Materializes `array` and returns a copy of its value taken while no assignment writes it. */
IR_DLL int IRLazyReadValue(IRLazyHandle array, IRNDArrayHandle* out);
/*!
 * \brief targets[i] = values[i] in place, all values computed in one trace. A defined target keeps
 * its shape and dtype (else an error naming both, and nothing is written).
 */
IR_DLL int IRLazyAssign(uint32_t num, IRLazyHandle* targets, IRLazyHandle* values);
/*!
 * \brief targets[i] = targets[i] op values[i], atomically per target (no other assignment to it in
 * between, on any thread): op 1 add, 2 subtract, 3 multiply (0: IRLazyAssign).
 */
IR_DLL int IRLazyAssignUpdate(uint32_t num, IRLazyHandle* targets, IRLazyHandle* values, int op);

/*! \brief A gradient tape that starts recording now (persistent: gradient may be asked more than once). */
IR_DLL int IRLazyTapeCreate(int persistent, IRLazyTapeHandle* out);
/*! \brief Differentiates with respect to `array`'s current value too. */
IR_DLL int IRLazyTapeWatch(IRLazyTapeHandle tape, IRLazyHandle array);
/*! \brief Stops recording (leaving the `with` block); gradients can still be asked. */
IR_DLL int IRLazyTapeStop(IRLazyTapeHandle tape);
/*!
 * \brief Pending gradients of sum(targets[i] * heads[i]) (heads NULL, or a NULL entry: ones) with respect to each
 * source, written to out_grads[i] (caller array of num_sources; NULL where a source is not watched
 * or the targets do not depend on it).
 */
IR_DLL int IRLazyTapeGradient(IRLazyTapeHandle tape, uint32_t num_targets, IRLazyHandle* targets, IRLazyHandle* heads,
                              uint32_t num_sources, IRLazyHandle* sources, IRLazyHandle* out_grads);
IR_DLL int IRLazyTapeFree(IRLazyTapeHandle tape);

/* ---- collectives: data-parallel training (include/ir/collective.h, src/c_api/c_api_collective.cc) ---- */
/*!
 * \brief Starts the process group (a second call is a no-op). `options_json` (may be NULL) sets any of
 * {"transport":"","timeout_s":0,"timeline":""}: transport "" picks from the launcher (mpirun of Open MPI
 * or MPICH) else "local" (one process); timeout_s: how long a collective waits for the other ranks
 * (0: IR_COLLECTIVE_TIMEOUT, else 60); timeline: a chrome-trace JSON file to write ("": IR_TIMELINE).
 */
IR_DLL int IRCollectiveInit(const char* options_json);
/*! \brief Waits for submitted collectives, stops the engine and finalizes the transport. */
IR_DLL int IRCollectiveShutdown(void);
/*! \brief *out is 1 when the group is started. */
IR_DLL int IRCollectiveIsInitialized(int* out);
/*! \brief The group: any pointer may be NULL; *transport ("openmpi", "mpich", "local") lives until shutdown. */
IR_DLL int IRCollectiveGetInfo(int* rank, int* size, int* local_rank, int* local_size, const char** transport);
/*! \brief Allreduce of `value` named `name` (the same on every rank); op 0 sum, 1 average; *out is new. */
IR_DLL int IRCollectiveAllreduce(const char* name, IRNDArrayHandle value, int op, IRNDArrayHandle* out);
/*! \brief Every rank's `value` concatenated along axis 0 in rank order; *out is new. */
IR_DLL int IRCollectiveAllgather(const char* name, IRNDArrayHandle value, IRNDArrayHandle* out);
/*! \brief Rank `root`'s `value` on every rank; *out is new. */
IR_DLL int IRCollectiveBroadcast(const char* name, IRNDArrayHandle value, int root, IRNDArrayHandle* out);
/*! \brief The engine's counters as JSON: {"collectives","tensors","bytes","transport_ms"}; reset: 1 zeroes them after.
 */
IR_DLL int IRCollectiveGetStatsJSON(int reset, const char** json);

#ifdef __cplusplus
}
#endif

#endif  // IR_C_API_H_
