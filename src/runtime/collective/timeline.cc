#include "runtime/collective/timeline.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "ir/collective.h"

namespace ir {
namespace collective {
namespace {

struct Event {
  std::string name;
  int row;
  double begin_us, end_us;
};

struct TimelineState {
  std::mutex mutex;
  /*! \brief Read without the lock: the executor asks before every node. */
  std::atomic<bool> enabled{false};
  std::string path;
  int rank = 0;
  std::vector<Event> events;
  // Rows (Chrome's "tid") by category, in order of first use.
  std::map<std::string, int> rows;
  std::vector<std::string> row_names;
};

// Leaked on purpose: the at-exit writer may run after static destructors of this library.
TimelineState& State() {
  static TimelineState* state = new TimelineState();
  return *state;
}

const std::chrono::steady_clock::time_point kEpoch = std::chrono::steady_clock::now();

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

// "t.json" for rank 0, "t.1.json" for rank 1; "%r" in the name is replaced by the rank.
std::string RankPath(const std::string& path, int rank) {
  size_t mark = path.find("%r");
  if (mark != std::string::npos) return path.substr(0, mark) + std::to_string(rank) + path.substr(mark + 2);
  if (rank == 0) return path;
  size_t slash = path.rfind('/'), dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + "." + std::to_string(rank);
  return path.substr(0, dot) + "." + std::to_string(rank) + path.substr(dot);
}

// Caller holds the lock. Writes the whole trace to a temporary file, then renames it.
void WriteLocked(TimelineState& s) {
  std::ostringstream os;
  os.precision(3);
  os << std::fixed << "{\"traceEvents\":[\n";
  os << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" << s.rank << ",\"args\":{\"name\":\"rank " << s.rank
     << "\"}}";
  for (size_t row = 0; row < s.row_names.size(); ++row) {
    os << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" << s.rank << ",\"tid\":" << row
       << ",\"args\":{\"name\":\"" << Escape(s.row_names[row]) << "\"}}";
  }
  for (const Event& e : s.events) {
    os << ",\n{\"name\":\"" << Escape(e.name) << "\",\"cat\":\"" << Escape(s.row_names[e.row])
       << "\",\"ph\":\"X\",\"ts\":" << e.begin_us << ",\"dur\":" << (e.end_us - e.begin_us) << ",\"pid\":" << s.rank
       << ",\"tid\":" << e.row << "}";
  }
  os << "\n]}\n";
  std::string tmp = s.path + ".tmp";
  std::FILE* file = std::fopen(tmp.c_str(), "w");
  if (file == nullptr) return;  // At exit there is nobody left to tell; Close reports below.
  std::string text = os.str();
  bool ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
  ok = std::fclose(file) == 0 && ok;
  if (ok) ok = std::rename(tmp.c_str(), s.path.c_str()) == 0;
  if (!ok) std::remove(tmp.c_str());
}

void WriteAtExit() {
  TimelineState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.enabled) WriteLocked(s);
}

}  // namespace

namespace detail {

double Microseconds() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - kEpoch).count();
}

bool TimelineEnabled() { return State().enabled.load(std::memory_order_relaxed); }

void TimelineRecord(const std::string& name, const std::string& category, double begin_us, double end_us) {
  TimelineState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.enabled) return;
  auto row = s.rows.find(category);
  if (row == s.rows.end()) {
    row = s.rows.emplace(category, static_cast<int>(s.row_names.size())).first;
    s.row_names.push_back(category);
  }
  s.events.push_back(Event{name, row->second, begin_us, end_us});
}

void TimelineOpen(const std::string& path, int rank) {
  std::string chosen = path;
  if (chosen.empty() && std::getenv("IR_TIMELINE") != nullptr) chosen = std::getenv("IR_TIMELINE");
  if (chosen.empty()) return;
  TimelineState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.path = RankPath(chosen, rank);
  s.rank = rank;
  s.events.clear();
  s.rows.clear();
  s.row_names.clear();
  // The file must exist now (a bad path fails Init, not the last step of a long run).
  std::FILE* probe = std::fopen((s.path + ".tmp").c_str(), "w");
  IR_CHECK(probe != nullptr) << "cannot write the timeline " << s.path << ".tmp";
  std::fclose(probe);
  WriteLocked(s);
  s.enabled = true;
  static bool registered = false;
  if (!registered) registered = std::atexit(WriteAtExit) == 0;
}

void TimelineClose() {
  TimelineState& s = State();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.enabled) return;
  WriteLocked(s);
  s.enabled = false;
  s.events.clear();
}

}  // namespace detail
}  // namespace collective
}  // namespace ir
