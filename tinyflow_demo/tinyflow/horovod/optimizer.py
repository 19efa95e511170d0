"""DistributedOptimizer (gradients averaged over the ranks) and BroadcastGlobalVariablesHook."""
from ..compat import NotSupportedYetError
from ..framework import get_default_graph
from ..train.monitored_session import SessionRunHook
from ..train.optimizer import Optimizer
from . import basics
from .ops import Adasum, Average, Compression, Sum, allreduce, broadcast_global_variables

__all__ = ["DistributedOptimizer", "BroadcastGlobalVariablesHook"]


class _DistributedOptimizer(Optimizer):
    """Wraps an optimizer: compute_gradients allreduces each gradient; everything else is the wrapped one's."""

    def __init__(self, optimizer, name, use_locking, device_dense, device_sparse, compression, sparse_as_dense, op,
                 gradient_predivide_factor):
        Optimizer.__init__(self, use_locking, name or "Distributed%s" % type(optimizer).__name__)
        self._optimizer = optimizer
        self._compression = compression
        self._op = op
        self._predivide = float(gradient_predivide_factor)

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's (gradient, variable) pairs with each gradient replaced by its allreduce
        over the ranks (None gradients pass through). The allreduces are named after the gradients, so
        every rank must build the same model in the same order."""
        gradients = self._optimizer.compute_gradients(*args, **kwargs)
        size = basics.size()  # raises ValueError before hvd.init(), as Horovod
        out = []
        for grad, var in gradients:
            if grad is None:
                out.append((grad, var))
                continue
            name = "DistributedAllreduce_%s" % var.op.name
            if self._op == Average and self._predivide != 1.0:  # sum of g / f, times f / size
                reduced = allreduce(grad, compression=self._compression, op=Sum,
                                    prescale_factor=1.0 / self._predivide, postscale_factor=self._predivide / size,
                                    name=name)
            else:
                reduced = allreduce(grad, compression=self._compression, op=self._op, name=name)
            out.append((reduced, var))
        return out

    def apply_gradients(self, *args, **kwargs):
        """The wrapped optimizer's apply_gradients."""
        return self._optimizer.apply_gradients(*args, **kwargs)

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self, *args, **kwargs):
        return self._optimizer.variables(*args, **kwargs)


def DistributedOptimizer(optimizer, name=None, use_locking=False, device_dense="", device_sparse="",  # noqa: N802
                         compression=Compression.none, sparse_as_dense=False, backward_passes_per_step=1, op=Average,
                         gradient_predivide_factor=1.0, average_aggregated_gradients=False, num_groups=0):
    """Horovod's TF1 DistributedOptimizer: `optimizer` with its gradients allreduced (op=hvd.Average by
    default, or hvd.Sum) before apply_gradients; minimize() goes through both. The device arguments are
    accepted and ignored (the library places the collectives); sparse_as_dense is moot (tinyflow's
    gradients are dense)."""
    if op == Adasum:
        raise NotSupportedYetError("hvd.DistributedOptimizer(op=hvd.Adasum) is not supported by tinyflow; use "
                                   "hvd.Average or hvd.Sum")
    if op not in (Average, Sum):
        raise ValueError("hvd.DistributedOptimizer: op must be hvd.Average or hvd.Sum, got %r" % (op,))
    if gradient_predivide_factor != 1.0 and op != Average:
        raise ValueError("gradient_predivide_factor not supported with op != Average")
    if backward_passes_per_step != 1:
        raise NotSupportedYetError("hvd.DistributedOptimizer(backward_passes_per_step=%d) is not supported by "
                                   "tinyflow: gradients are allreduced at every step" % backward_passes_per_step)
    if num_groups:
        raise NotSupportedYetError("hvd.DistributedOptimizer(num_groups=...) is not supported by tinyflow: the "
                                   "library buckets gradients itself (SessionOptions collective_bucket_bytes)")
    return _DistributedOptimizer(optimizer, name, use_locking, device_dense, device_sparse, compression,
                                 sparse_as_dense, op, gradient_predivide_factor)


class BroadcastGlobalVariablesHook(SessionRunHook):
    """A SessionRunHook that broadcasts every global variable from rank `root_rank` once the session is
    created (after initialization or a restore), so every rank starts from the same model."""

    def __init__(self, root_rank, device=""):
        super(BroadcastGlobalVariablesHook, self).__init__()
        self.root_rank = root_rank
        self.bcast_op = None
        self.device = device

    def begin(self):
        if self.bcast_op is None or self.bcast_op.graph is not get_default_graph():
            self.bcast_op = broadcast_global_variables(self.root_rank)

    def after_create_session(self, session, coord):
        session.run(self.bcast_op)
