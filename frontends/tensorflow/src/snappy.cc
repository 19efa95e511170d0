/*!
 * \file snappy.cc
 * \brief Snappy raw-format decompression: each element is a literal (tag 00) or a copy of
 * earlier output at a 1-, 2- or 4-byte offset (tags 01, 10, 11); copies may overlap.
 */
#include "snappy.h"

#include <algorithm>

#include "ir/base.h"

namespace ir {
namespace tf {
namespace {

/*! \brief Most output bytes one input byte can produce (a 3-byte copy element writes 64). */
constexpr uint64_t kMaxExpansion = 22;

}  // namespace

std::string SnappyUncompress(const std::string& in, const std::string& origin) {
  size_t pos = 0;
  auto byte = [&]() -> uint32_t {
    IR_CHECK(pos < in.size()) << "'" << origin << "': truncated snappy block";
    return static_cast<uint8_t>(in[pos++]);
  };
  auto little_endian = [&](int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) v |= byte() << (8 * i);
    return v;
  };
  uint64_t length = 0;
  for (int shift = 0;; shift += 7) {
    IR_CHECK(shift < 35) << "'" << origin << "': bad snappy length";
    uint32_t b = byte();
    length |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) break;
  }
  IR_CHECK(length <= (uint64_t{1} << 32)) << "'" << origin << "': snappy block claims " << length << " bytes";
  std::string out;
  out.reserve(std::min<uint64_t>(length, in.size() * kMaxExpansion));  // the claim is checked as output grows
  while (pos < in.size()) {
    uint32_t tag = byte();
    if ((tag & 3) == 0) {
      uint32_t size = tag >> 2;
      if (size >= 60) size = little_endian(static_cast<int>(size - 59));
      uint64_t n = uint64_t{size} + 1;
      IR_CHECK(n <= in.size() - pos && out.size() + n <= length) << "'" << origin << "': snappy literal out of bounds";
      out.append(in, pos, n);
      pos += n;
      continue;
    }
    uint32_t size, offset;
    if ((tag & 3) == 1) {
      size = 4 + ((tag >> 2) & 7);
      offset = ((tag >> 5) << 8) | byte();
    } else {
      size = (tag >> 2) + 1;
      offset = little_endian((tag & 3) == 2 ? 2 : 4);
    }
    IR_CHECK(offset > 0 && offset <= out.size() && out.size() + size <= length)
        << "'" << origin << "': snappy copy out of bounds";
    for (uint32_t i = 0; i < size; ++i) out.push_back(out[out.size() - offset]);
  }
  IR_CHECK(out.size() == length) << "'" << origin << "': snappy block holds " << out.size() << " bytes, expected "
                                 << length;
  return out;
}

}  // namespace tf
}  // namespace ir
