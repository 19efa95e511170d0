/*!
 * \file summary.cc
 * \brief TensorBoard summaries (summary.proto) and event-file records (event.proto in TFRecord framing).
 */
#include "ir_tf/summary.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <fstream>

#include "ir/base.h"
#include "ir_tf/checkpoint.h"
#include "ir_tf_event.pb.h"
#include "ir_tf_summary.pb.h"
#include "proto_parse.h"

namespace ir {
namespace tf {
namespace {

/*! \brief TensorFlow's default histogram bucket right edges (histogram.cc's InitDefaultBuckets). */
const std::vector<double>& DefaultBucketLimits() {
  static const std::vector<double> limits = [] {
    std::vector<double> pos, neg;
    for (double v = 1.0e-12; v < 1.0e20; v *= 1.1) {
      pos.push_back(v);
      neg.push_back(-v);
    }
    pos.push_back(DBL_MAX);
    neg.push_back(-DBL_MAX);
    std::reverse(neg.begin(), neg.end());
    neg.push_back(0.0);
    neg.insert(neg.end(), pos.begin(), pos.end());
    return neg;
  }();
  return limits;
}

tfproto::Summary::Value* OneValue(tfproto::Summary* summary, const std::string& tag) {
  tfproto::Summary::Value* value = summary->add_value();
  value->set_tag(tag);
  return value;
}

}  // namespace

std::string ScalarSummary(const std::string& tag, double value) {
  tfproto::Summary summary;
  OneValue(&summary, tag)->set_simple_value(static_cast<float>(value));
  return summary.SerializeAsString();
}

std::string HistogramSummary(const std::string& tag, const std::vector<double>& values) {
  const std::vector<double>& limits = DefaultBucketLimits();
  std::vector<double> counts(limits.size(), 0.0);
  double min = DBL_MAX, max = -DBL_MAX, sum = 0, sum_squares = 0;
  for (double v : values) {
    IR_CHECK(std::isfinite(v)) << "histogram summary '" << tag << "': " << (std::isnan(v) ? "NaN" : "Inf")
                               << " in summary histogram for: " << tag;
    counts[std::upper_bound(limits.begin(), limits.end(), v) - limits.begin()] += 1;
    min = std::min(min, v);
    max = std::max(max, v);
    sum += v;
    sum_squares += v * v;
  }
  tfproto::Summary summary;
  tfproto::HistogramProto* histo = OneValue(&summary, tag)->mutable_histo();
  histo->set_min(min);
  histo->set_max(max);
  histo->set_num(static_cast<double>(values.size()));
  histo->set_sum(sum);
  histo->set_sum_squares(sum_squares);
  for (size_t i = 0; i < counts.size();) {  // Histogram::EncodeToProto: a run of empty buckets becomes one
    double end = limits[i], count = counts[i++];
    if (count <= 0.0) {
      for (; i < counts.size() && counts[i] <= 0.0; ++i) end = limits[i], count = counts[i];
    }
    histo->add_bucket_limit(end);
    histo->add_bucket(count);
  }
  return summary.SerializeAsString();
}

std::string ImageSummary(const std::string& tag, int height, int width, int colorspace, const std::string& png) {
  IR_CHECK(height > 0 && width > 0 && colorspace >= 1 && colorspace <= 4)
      << "image summary '" << tag << "': bad image " << height << "x" << width << "x" << colorspace;
  tfproto::Summary summary;
  tfproto::Summary::Image* image = OneValue(&summary, tag)->mutable_image();
  image->set_height(height);
  image->set_width(width);
  image->set_colorspace(colorspace);
  image->set_encoded_image_string(png);
  return summary.SerializeAsString();
}

std::string TextSummary(const std::string& tag, const std::vector<int64_t>& shape,
                        const std::vector<std::string>& strings) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  IR_CHECK(n == static_cast<int64_t>(strings.size()))
      << "text summary '" << tag << "': " << strings.size() << " strings for shape " << Shape(shape);
  tfproto::Summary summary;
  tfproto::Summary::Value* value = OneValue(&summary, tag);
  value->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  tfproto::TensorProto* tensor = value->mutable_tensor();
  tensor->set_dtype(tfproto::DT_STRING);
  for (int64_t d : shape) tensor->mutable_tensor_shape()->add_dim()->set_size(d);
  for (const std::string& s : strings) tensor->add_string_val(s);
  return summary.SerializeAsString();
}

std::string EncodeEvent(double wall_time, int64_t step, const std::string& summary, const std::string& file_version) {
  tfproto::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  if (!file_version.empty()) {
    event.set_file_version(file_version);
  } else {
    IR_CHECK(ParseBinary(summary, event.mutable_summary())) << "event: the summary is not a serialized Summary proto";
  }
  return event.SerializeAsString();
}

std::string TFRecord(const std::string& data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<uint64_t>(data.size()) >> (8 * i)) & 0xFF);
  auto put_crc = [&out](const char* bytes, size_t n) {
    uint32_t crc = MaskCrc(Crc32c(bytes, n));
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  };
  put_crc(out.data(), 8);
  out += data;
  put_crc(data.data(), data.size());
  return out;
}

void AppendRecord(const std::string& path, const std::string& record) {
  std::string framed = TFRecord(record);
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(framed.data(), static_cast<std::streamsize>(framed.size()));
  out.flush();
  IR_CHECK(out.good()) << "cannot write the event file '" << path << "'";
}

}  // namespace tf
}  // namespace ir
