"""tensorflow.python.client.timeline: `Timeline(step_stats).generate_chrome_trace_format()`.

TF1 programs trace one step with `sess.run(..., options=tf.RunOptions(trace_level=FULL_TRACE),
run_metadata=md)` and write `Timeline(md.step_stats).generate_chrome_trace_format()` to a JSON file for
chrome://tracing. tinyflow leaves `RunMetadata.step_stats` empty (its own per-op profile is
`Session(profile=True)`), so the trace holds no op events then; step stats given as TF's StepStats
structure (dev_stats[].device, node_stats[].node_name / all_start_micros / op_end_rel_micros /
timeline_label) become one process per device and one complete ("X") event per node, as TF writes them.
"""
import json

__all__ = ["Timeline"]


class Timeline(object):
    """A timeline of one step's StepStats (None: an empty trace)."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph

    def _events(self):
        events = []
        dev_stats = getattr(self._step_stats, "dev_stats", None) or []
        for pid, dev in enumerate(dev_stats):
            device = getattr(dev, "device", "") or "device:%d" % pid
            events.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": "%s Compute" % device}})
            events.append({"name": "process_sort_index", "ph": "M", "pid": pid, "args": {"sort_index": pid}})
            for node in getattr(dev, "node_stats", None) or []:
                name = getattr(node, "node_name", "")
                label = getattr(node, "timeline_label", "") or name
                events.append({"name": name.split(":")[0], "cat": "Op", "ph": "X", "pid": pid, "tid": 0,
                               "ts": int(getattr(node, "all_start_micros", 0)),
                               "dur": int(getattr(node, "op_end_rel_micros", 0)),
                               "args": {"name": name, "op": label}})
        return events

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False, op_time="schedule"):
        """The trace as a Chrome trace-format JSON string ({"traceEvents": [...]})."""
        return json.dumps({"traceEvents": self._events()}, separators=(",", ":"))
