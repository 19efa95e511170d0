/*!
 * \file base.h
 * \brief Basic vocabulary of the IR: errors, data types and (partially known) shapes.
 */
#ifndef IR_BASE_H_
#define IR_BASE_H_

#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace dmlc {
class JSONWriter;
class JSONReader;
}  // namespace dmlc

namespace ir {

/*! \brief Every failure of the library is an ir::Error with a message for a human. */
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& msg) : std::runtime_error(msg) {}
};

/*! \brief Concatenates any streamable values into a string. */
template <typename... Args>
std::string StrCat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

namespace detail {
/*! \brief Collects a message with operator<< and throws it as ir::Error when destroyed. */
class ErrorBuilder {
 public:
  ErrorBuilder() = default;
  ErrorBuilder(const ErrorBuilder&) = delete;
  ~ErrorBuilder() noexcept(false) { throw Error(os_.str()); }
  template <typename T>
  ErrorBuilder& operator<<(const T& value) {
    os_ << value;
    return *this;
  }

 private:
  std::ostringstream os_;
};
}  // namespace detail

/*! \brief `IR_CHECK(cond) << "message"` throws ir::Error(message) when cond is false. */
#define IR_CHECK(cond) \
  if (cond) {          \
  } else               \
    ::ir::detail::ErrorBuilder()

#define IR_CONCAT_INNER_(a, b) a##b
#define IR_CONCAT_(a, b) IR_CONCAT_INNER_(a, b)
/*! \brief A file-local variable name unique within a translation unit. */
#define IR_UNIQUE_NAME_(prefix) IR_CONCAT_(prefix, __COUNTER__)

/*! \brief Element types of tensors. Values are stable: they appear in saved graphs. */
enum class DType : int {
  kUnknown = -1,
  kFloat32 = 0,
  kFloat64 = 1,
  kInt32 = 2,
  kInt64 = 3,
  kBool = 4,
};

/*! \brief Number of dtypes with a known value (kFloat32 .. kBool). */
constexpr int kNumDTypes = 5;

/*! \brief Canonical lower-case name: "float32", "int64", "bool", "unknown". */
const char* DTypeName(DType dtype);
/*! \brief Parses a canonical name (and the aliases "float", "double", "int", "long"); throws on others. */
DType DTypeFromName(const std::string& name);
/*! \brief Size of one element in bytes; throws for kUnknown. */
size_t DTypeSize(DType dtype);
/*! \brief True for float32 and float64. */
bool DTypeIsFloat(DType dtype);
std::ostream& operator<<(std::ostream& os, DType dtype);

/*!
 * \brief *out = a * b for sizes a, b >= 0.
 * \return false (leaving *out alone) when a factor is negative or the product exceeds int64.
 */
bool CheckedMul(int64_t a, int64_t b, int64_t* out);

/*! \brief Marker for a dimension whose extent is not known yet. */
constexpr int64_t kUnknownDim = -1;

/*!
 * \brief A tensor shape that may be partially known.
 *
 * A default-constructed Shape has unknown rank. A Shape with known rank may still
 * contain unknown dimensions (kUnknownDim). A scalar is a known shape of rank 0.
 */
class Shape {
 public:
  /*! \brief Unknown rank. */
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : dims_(dims), rank_known_(true) {}
  explicit Shape(std::vector<int64_t> dims) : dims_(std::move(dims)), rank_known_(true) {}
  /*! \brief The shape of a scalar (rank 0). */
  static Shape Scalar() { return Shape(std::vector<int64_t>{}); }
  /*! \brief Known rank, every dimension unknown. */
  static Shape UnknownDims(int ndim) { return Shape(std::vector<int64_t>(ndim, kUnknownDim)); }

  bool rank_known() const { return rank_known_; }
  /*! \brief Rank known and every dimension known. */
  bool is_known() const;
  /*! \brief Rank; -1 when the rank is unknown. */
  int ndim() const { return rank_known_ ? static_cast<int>(dims_.size()) : -1; }
  int64_t operator[](size_t i) const { return dims_[i]; }
  int64_t& operator[](size_t i) { return dims_[i]; }
  const std::vector<int64_t>& dims() const { return dims_; }
  /*! \brief Number of elements; throws unless is_known() and FitsInt64(). */
  int64_t Size() const;
  /*! \brief Product of dims [begin, end); throws when one of them is unknown or it overflows. */
  int64_t ProdDims(int begin, int end) const;
  /*!
   * \brief True when the product of the non-zero known dimensions fits in int64, so that no
   * product of any of them (sizes, strides, blocks) can overflow. Shapes from users are checked
   * with it before any arithmetic.
   */
  bool FitsInt64() const;
  /*! \brief Size() * DTypeSize(dtype); throws, naming the shape and dtype, when it overflows. */
  int64_t Bytes(DType dtype) const;
  /*! \brief "[2,3]", "[?,3]", "[]" for a scalar, "?" for unknown rank. */
  std::string ToString() const;
  /*! \brief Parses the ToString() form, also accepting "(2,3)" and "2,3"; throws on garbage. */
  static Shape Parse(const std::string& text);

  /*!
   * \brief Merges what two descriptions of the same value know.
   * \return false when they contradict each other (different rank or extent).
   */
  static bool Merge(const Shape& a, const Shape& b, Shape* out);

  bool operator==(const Shape& other) const { return rank_known_ == other.rank_known_ && dims_ == other.dims_; }
  bool operator!=(const Shape& other) const { return !(*this == other); }

  void Save(dmlc::JSONWriter* writer) const;
  void Load(dmlc::JSONReader* reader);

 private:
  std::vector<int64_t> dims_;
  bool rank_known_ = false;
};

std::ostream& operator<<(std::ostream& os, const Shape& shape);

/*! \brief Entry-indexed graph attribute "shape". */
using ShapeVector = std::vector<Shape>;
/*! \brief Entry-indexed graph attribute "dtype". */
using DTypeVector = std::vector<DType>;

/*! \brief Joins the elements of a container with a separator, streaming each one. */
template <typename Container>
std::string Join(const Container& items, const std::string& sep) {
  std::ostringstream os;
  bool first = true;
  for (const auto& item : items) {
    if (!first) os << sep;
    os << item;
    first = false;
  }
  return os.str();
}

}  // namespace ir

#endif  // IR_BASE_H_
