"""tf.contrib.rnn cells beyond tf.nn.rnn_cell's: LSTMBlockCell (the PTB tutorial's default cell)."""
from .rnn_cell import LSTMCell

__all__ = ["LSTMBlockCell"]


class LSTMBlockCell(LSTMCell):
    """TF 1.x tf.contrib.rnn.LSTMBlockCell: the fused-kernel LSTM. Its math is LSTMCell's with the same
    variables (kernel [input + units, 4 * units] with gates i, j, f, o; bias; w_i_diag / w_f_diag / w_o_diag
    peepholes when use_peephole): forget_bias is added to f, cell_clip (None: no clipping) clips the cell state
    before the output gate's peephole and the output."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False, dtype=None, reuse=None,
                 name=None):
        if cell_clip is not None and cell_clip < 0:  # TF: a negative clip means no clipping
            cell_clip = None
        LSTMCell.__init__(self, num_units, use_peepholes=use_peephole, cell_clip=cell_clip, forget_bias=forget_bias,
                          state_is_tuple=True, reuse=reuse, name=name, dtype=dtype)
