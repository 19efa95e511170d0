// Loads an op library given on the command line and checks that its op behaves like a
// built-in one: listed, documented, composable. Exit code 0 on success.
#include <iostream>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/symbol.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: op_library_loader LIBRARY.so\n";
    return 2;
  }
  try {
    ir::LoadOpLibrary(argv[1]);
    const ir::Op* op = ir::Op::Get("axpby");
    ir::Symbol sym = ir::Symbol::CreateFunctor(op, {{"alpha", "2"}, {"beta", "3"}}, "z");
    sym.Compose({ir::Symbol::CreateVariable("x"), ir::Symbol::CreateVariable("y")}, {});
    std::vector<ir::Shape> in{ir::Shape{2, 3}, ir::Shape()}, out{ir::Shape()};
    bool known = ir::Op::GetAttr<ir::FInferShape>("FInferShape")[op](sym.outputs[0].node->attrs, &in, &out);
    if (!known || out[0] != ir::Shape({2, 3})) {
      std::cerr << "axpby shape inference gave " << out[0] << "\n";
      return 1;
    }
    std::cout << "loaded " << argv[1] << ": " << op->name << " - " << op->description << "\n";
  } catch (const std::exception& err) {
    std::cerr << "error: " << err.what() << "\n";
    return 1;
  }
  return 0;
}
