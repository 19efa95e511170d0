/*!
 * \file c_api.h
 * \brief The C interface: ops, symbols, graphs, passes, JSON and op libraries.
 *
 * Every function returns 0 on success and -1 on failure; IRGetLastError() then gives the
 * message. No C++ exception crosses this boundary. Strings and arrays returned through
 * out-parameters are owned by the library and stay valid until the next call of the same
 * function from the same thread. Handles are freed with their *Free function.
 */
#ifndef IR_C_API_H_
#define IR_C_API_H_

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
IR_DLL int IRGetOpInfo(IROpHandle op, const char** name, const char** description,
                       uint32_t* num_args, const char*** arg_names, const char*** arg_types,
                       const char*** arg_descriptions);
/*! \brief Keys of the attributes `op` registers (e.g. "FInferShape"). */
IR_DLL int IRGetOpAttrKeys(IROpHandle op, uint32_t* out_size, const char*** out_keys);

/* ---- symbols ---- */
IR_DLL int IRSymbolCreateVariable(const char* name, IRSymbolHandle* out);
/*! \brief An op node with string parameters and inputs still unbound (bind with Compose). */
IR_DLL int IRSymbolCreateAtomicSymbol(IROpHandle op, uint32_t num_param, const char** keys,
                                      const char** vals, IRSymbolHandle* out);
/*!
 * \brief Binds inputs of `sym` in place. `keys` is NULL for positional arguments, else one
 * input name per argument.
 */
IR_DLL int IRSymbolCompose(IRSymbolHandle sym, const char* name, uint32_t num_args,
                           const char** keys, IRSymbolHandle* args);
IR_DLL int IRSymbolCreateGroup(uint32_t num_symbols, IRSymbolHandle* symbols, IRSymbolHandle* out);
IR_DLL int IRSymbolCopy(IRSymbolHandle sym, IRSymbolHandle* out);
IR_DLL int IRSymbolFree(IRSymbolHandle sym);
IR_DLL int IRSymbolGetNumOutputs(IRSymbolHandle sym, uint32_t* out);
IR_DLL int IRSymbolGetOutput(IRSymbolHandle sym, uint32_t index, IRSymbolHandle* out);
IR_DLL int IRSymbolGetInternals(IRSymbolHandle sym, IRSymbolHandle* out);
/*! \brief option: 0 all, 1 read-only, 2 mutable variables. */
IR_DLL int IRSymbolListInputNames(IRSymbolHandle sym, int option, uint32_t* out_size,
                                  const char*** out_names);
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
IR_DLL int IRGraphApplyPasses(IRGraphHandle src, uint32_t num_pass, const char** pass_names,
                              IRGraphHandle* dst);
IR_DLL int IRListPasses(uint32_t* out_size, const char*** out_names);
IR_DLL int IRGraphSaveJSON(IRGraphHandle graph, const char** out_json);
IR_DLL int IRGraphLoadJSON(const char* json, IRGraphHandle* out);
/*! \brief Attribute `key` as JSON; *success is 0 when absent. */
IR_DLL int IRGraphGetAttrJSON(IRGraphHandle graph, const char* key, const char** out_json,
                              int* success);
/*!
 * \brief Sets attribute `key` from JSON: `["type", value]` (types: "int", "double", "str",
 * "list_int", "list_str", "list_shape", "list_dtype", ...) or a bare value for registered keys.
 */
IR_DLL int IRGraphSetAttrJSON(IRGraphHandle graph, const char* key, const char* json);
IR_DLL int IRGraphListAttrs(IRGraphHandle graph, uint32_t* out_size, const char*** out_keys);
/*! \brief format: 0 readable text, 1 Graphviz dot. */
IR_DLL int IRGraphPrint(IRGraphHandle graph, int format, const char** out);

/* ---- extensions ---- */
/*! \brief dlopens an op library; its ops behave like built-in ones afterwards. */
IR_DLL int IRLoadOpLibrary(const char* path);

#ifdef __cplusplus
}
#endif

#endif  // IR_C_API_H_
