"""Runs a TF 1.x eager program in its own Python process (tf.enable_eager_execution is process-wide)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from tinyflow._lib import C

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The tape's C API (IRLazyTape*) comes with the lazy tape; a library built before it cannot run
# GradientTape programs (everything else of eager mode still runs).
needs_tape = pytest.mark.skipif(not hasattr(C, "tape_create"), reason="tinyflow._C has no tape functions")


def run_program(source=None, path=None, args=(), timeout=120):
    """Runs `source` (or the file `path`) with tinyflow importable; fails the test with its output
    when it exits non-zero; returns its stdout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [os.path.join(REPO, "tinyflow_demo"), env.get("PYTHONPATH")]))
    env.setdefault("OMP_WAIT_POLICY", "passive")
    command = [sys.executable] + (["-c", textwrap.dedent(source)] if source is not None else [path]) + list(args)
    proc = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          universal_newlines=True)
    assert proc.returncode == 0, "program failed:\n%s\n%s" % (proc.stdout, proc.stderr)
    return proc.stdout


def last_json(stdout):
    """The JSON object a program printed on its last line."""
    return json.loads(stdout.strip().splitlines()[-1])
