/*!
 * \file summary.h
 * \brief TensorBoard summaries and event files: serialized Summary protos (scalar, histogram with
 * TensorFlow's default buckets, image, text) and Event records in TFRecord framing.
 */
#ifndef IR_TF_SUMMARY_H_
#define IR_TF_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ir {
namespace tf {

/*! \brief A Summary with one simple_value. */
std::string ScalarSummary(const std::string& tag, double value);
/*!
 * \brief A Summary with one HistogramProto of `values` in TensorFlow's default buckets (edges
 * +-1e-12 * 1.1^k up to 1e20, then +-DBL_MAX, and 0), empty runs merged as TF encodes them.
 * \throws ir::Error naming the tag for a NaN or infinite value (as TF's HistogramSummary does).
 */
std::string HistogramSummary(const std::string& tag, const std::vector<double>& values);
/*! \brief A Summary with one image: `png` holds the encoded image of height x width x colorspace. */
std::string ImageSummary(const std::string& tag, int height, int width, int colorspace, const std::string& png);
/*! \brief A Summary with one text value (a DT_STRING tensor of `shape`, plugin "text"). */
std::string TextSummary(const std::string& tag, const std::vector<int64_t>& shape,
                        const std::vector<std::string>& strings);
/*!
 * \brief The serialized Event{wall_time, step, what}: `summary` (a serialized Summary, checked)
 * when `file_version` is empty, else file_version.
 */
std::string EncodeEvent(double wall_time, int64_t step, const std::string& summary, const std::string& file_version);
/*! \brief `data` as one TFRecord: uint64 length, masked CRC32C of it, data, masked CRC32C of data. */
std::string TFRecord(const std::string& data);
/*! \brief Appends TFRecord(record) to the file at `path` (created if missing) and flushes it. */
void AppendRecord(const std::string& path, const std::string& record);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_SUMMARY_H_
