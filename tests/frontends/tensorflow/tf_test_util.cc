/*!
 * \file tf_test_util.cc
 * \brief Helpers of the TensorFlow frontend tests.
 */
#include "tf_test_util.h"

#include <sys/stat.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace ir {
namespace tf {
namespace test {

std::string GraphsDir() {
  const char* env = std::getenv("IR_TF_GRAPHS_DIR");
  return env != nullptr && *env != '\0' ? env : IR_TF_GRAPHS_DIR_DEFAULT;
}

std::string GraphPath(const std::string& relative) {
  std::string path = GraphsDir() + "/" + relative;
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? path : std::string();
}

std::vector<double> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::vector<double> values;
  for (double v; in >> v;) values.push_back(v);
  return values;
}

Shape ReadShapeFile(const std::string& path) {
  std::vector<double> dims = ReadCsv(path);
  if (dims.size() == 1 && dims[0] == 0) return Shape::Scalar();
  std::vector<int64_t> out(dims.begin(), dims.end());
  return Shape(out);
}

NDArray MakeArray(const Shape& shape, DType dtype, const std::vector<double>& values) {
  NDArray a(shape, dtype);
  EXPECT_EQ(static_cast<int64_t>(values.size()), a.Size()) << "values for shape " << shape;
  for (int64_t i = 0; i < a.Size() && i < static_cast<int64_t>(values.size()); ++i) {
    switch (dtype) {
      case DType::kFloat32:
        a.data<float>()[i] = static_cast<float>(values[i]);
        break;
      case DType::kFloat64:
        a.data<double>()[i] = values[i];
        break;
      case DType::kInt32:
        a.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
        break;
      case DType::kInt64:
        a.data<int64_t>()[i] = static_cast<int64_t>(values[i]);
        break;
      case DType::kBool:
        a.data<bool>()[i] = values[i] != 0;
        break;
      default:
        ADD_FAILURE() << "bad dtype";
    }
  }
  return a;
}

std::vector<double> ToDoubles(const NDArray& array) {
  NDArray a = array.device() == Device::CPU() ? array : array.CopyTo(Device::CPU());
  std::vector<double> out;
  for (int64_t i = 0; i < a.Size(); ++i) {
    switch (a.dtype()) {
      case DType::kFloat32:
        out.push_back(a.data<float>()[i]);
        break;
      case DType::kFloat64:
        out.push_back(a.data<double>()[i]);
        break;
      case DType::kInt32:
        out.push_back(a.data<int32_t>()[i]);
        break;
      case DType::kInt64:
        out.push_back(static_cast<double>(a.data<int64_t>()[i]));
        break;
      case DType::kBool:
        out.push_back(a.data<bool>()[i]);
        break;
      default:
        ADD_FAILURE() << "bad dtype";
    }
  }
  return out;
}

void ExpectClose(const NDArray& actual, const std::vector<double>& expected, const std::string& what, double atol,
                 double rtol) {
  std::vector<double> got = ToDoubles(actual);
  ASSERT_EQ(got.size(), expected.size()) << what << ": " << actual.shape() << " has " << got.size()
                                         << " elements, expected " << expected.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(got[i] - expected[i]) > atol + rtol * std::fabs(expected[i]) || std::isnan(got[i])) {
      ADD_FAILURE() << what << ": element " << i << " is " << got[i] << ", expected " << expected[i];
      return;
    }
  }
}

namespace pbtxt {

std::string Node(const std::string& name, const std::string& op, const std::vector<std::string>& inputs,
                 const std::string& attrs) {
  std::string text = "node { name: '" + name + "' op: '" + op + "' ";
  for (const std::string& in : inputs) text += "input: '" + in + "' ";
  return text + attrs + "}\n";
}

std::string Attr(const std::string& key, const std::string& value) {
  return "attr { key: '" + key + "' value { " + value + " } } ";
}

std::string Type(const std::string& dtype, const std::string& key) { return Attr(key, "type: " + dtype); }

std::string ShapeProto(const std::vector<int64_t>& dims) {
  std::string text = "shape { ";
  for (int64_t d : dims) text += "dim { size: " + std::to_string(d) + " } ";
  return text + "}";
}

std::string Const(const std::string& name, const std::vector<int64_t>& dims, const std::vector<double>& values,
                  const std::string& dtype, const std::string& field) {
  std::string tensor = "tensor { dtype: " + dtype + " tensor_" + ShapeProto(dims) + " ";
  for (double v : values) {
    std::ostringstream os;
    os.precision(17);
    if (field == "bool_val") {
      os << (v != 0 ? "true" : "false");
    } else {
      os << v;
    }
    tensor += field + ": " + os.str() + " ";
  }
  return Node(name, "Const", {}, Type(dtype, "dtype") + Attr("value", tensor + "}"));
}

std::string Ints(const std::string& name, const std::vector<int64_t>& values, bool scalar) {
  std::vector<double> v(values.begin(), values.end());
  std::vector<int64_t> dims;
  if (!scalar) dims.push_back(static_cast<int64_t>(values.size()));
  return Const(name, dims, v, "DT_INT32", "int_val");
}

std::string Placeholder(const std::string& name, const std::vector<int64_t>& dims, const std::string& dtype) {
  return Node(name, "Placeholder", {}, Type(dtype, "dtype") + Attr("shape", ShapeProto(dims)));
}

std::string Variable(const std::string& name, const std::vector<int64_t>& dims, const std::string& dtype) {
  return Node(name, "VariableV2", {}, Type(dtype, "dtype") + Attr("shape", ShapeProto(dims)));
}

std::string Function(const std::string& name, const std::vector<std::string>& args,
                     const std::vector<std::string>& results, const std::string& body,
                     const std::vector<std::pair<std::string, std::string>>& rets) {
  auto arg_list = [](const char* field, const std::vector<std::string>& list) {
    std::string out;
    for (const std::string& a : list) {
      size_t colon = a.find(':');
      out += StrCat(field, " { name: '", a.substr(0, colon), "' type: ", a.substr(colon + 1), " } ");
    }
    return out;
  };
  std::string nodes = body;  // Node writes graph nodes; a function's are `node_def`
  for (size_t at = nodes.find("node {"); at != std::string::npos; at = nodes.find("node {", at)) {
    nodes.replace(at, 4, "node_def");
  }
  std::string text = StrCat("function { signature { name: '", name, "' ", arg_list("input_arg", args),
                            arg_list("output_arg", results), "} ", nodes);
  for (const auto& kv : rets) text += StrCat(" ret { key: '", kv.first, "' value: '", kv.second, "' }");
  return text + " }\n";
}

std::string FuncAttr(const std::string& key, const std::string& fn) {
  return Attr(key, StrCat("func { name: '", fn, "' }"));
}

std::string Library(const std::vector<std::string>& functions) {
  std::string text = "library {\n";
  for (const std::string& f : functions) text += f;
  return text + "}\n";
}

}  // namespace pbtxt

TFModel TextModel(const std::string& pbtxt) { return ModelFromText(pbtxt, "<test>"); }

std::vector<NDArray> RunText(const std::string& pbtxt, const std::map<std::string, NDArray>& feeds,
                             const std::vector<std::string>& fetches, bool fusion) {
  SessionOptions options;
  options.fusion = fusion;
  TFSession session(TextModel(pbtxt), options);
  return session.Run(feeds, fetches);
}

}  // namespace test
}  // namespace tf
}  // namespace ir
