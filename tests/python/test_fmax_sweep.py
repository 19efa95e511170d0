"""bench/fmax_sweep.py's core on the tiny Transformer's training step (2 steps per configuration): a
larger F_max launches no more kernels, fewer than fusion off, and the fused steps' losses equal the
unfused ones; the F_max refusals it counts are the Fusion pass's log lines naming the bound."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "bench"))
import fmax_sweep as fs  # noqa: E402


def tiny_transformer():
    return fs.build_step("transformer", "tiny", batch=4)


def test_larger_fmax_fewer_kernels_same_loss():
    unfused = fs.run_config(tiny_transformer, False, None, 1)
    narrow = fs.run_config(tiny_transformer, True, 1, 1)
    wide = fs.run_config(tiny_transformer, True, 8, 1)
    assert unfused["kernels"] > narrow["kernels"] >= wide["kernels"]
    assert unfused["refused_fmax"] == 0 and unfused["fusion_groups"] == 0
    assert narrow["refused_fmax"] > wide["refused_fmax"]
    for row in (narrow, wide):
        assert len(row["losses"]) == 2
        np.testing.assert_allclose(row["losses"], unfused["losses"], rtol=0, atol=1e-5)
        # every refusal line names its node's op: the regex follows the Fusion pass's wording
        assert "?" not in row["refused_fmax_by_op"]
        assert sum(row["refused_fmax_by_op"].values()) == row["refused_fmax"]
