# Writes OUT, a C++ source that registers each rule file of FILES (a |-separated list) as a built-in rule
# set named after the file's stem (parsed on first use: see ir::rewrite::RegisterRuleText).
# Run at build time by the ir_passes layer, so editing a .rules file rebuilds libir.
string(REPLACE "|" ";" FILES "${FILES}")
set(_src "// Generated from rules/*.rules by cmake/embed_rules.cmake: do not edit.\n#include \"ir/rewrite.h\"\n\nnamespace {\nint RegisterShippedRules() {\n")
foreach(_file ${FILES})
  get_filename_component(_stem ${_file} NAME_WE)
  file(READ ${_file} _text)
  string(FIND "${_text}" ")IRRULES\"" _clash)
  if(NOT _clash EQUAL -1)
    message(FATAL_ERROR "${_file} contains the embedding delimiter )IRRULES\"")
  endif()
  string(APPEND _src "  ir::rewrite::RegisterRuleText(\"${_stem}\", R\"IRRULES(${_text})IRRULES\", \"rules/${_stem}.rules\");\n")
endforeach()
string(APPEND _src "  return 0;\n}\nconst int kRegistered __attribute__((unused)) = RegisterShippedRules();\n}  // namespace\n")
file(WRITE ${OUT}.tmp "${_src}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
