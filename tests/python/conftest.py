"""Makes `import tinyflow` work from the source tree (tinyflow finds libir.so by itself or via TINYFLOW_LIB)."""
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "tinyflow_demo"))

import tinyflow as tf  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_graph():
    """Each test builds its own default graph."""
    tf.reset_default_graph()
    yield
    tf.reset_default_graph()


@pytest.fixture(params=[False, True], ids=["unfused", "fused"])
def fusion(request):
    return request.param
