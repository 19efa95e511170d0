"""tinyflow.horovod: Horovod's TensorFlow 1.x API (`import horovod.tensorflow as hvd`) over the library's
collectives (MPI through Open MPI or MPICH, chosen by the launcher; one process without one).

    import tinyflow as tf
    import tinyflow.horovod as hvd
    hvd.init()
    opt = hvd.DistributedOptimizer(tf.train.AdamOptimizer(0.001 * hvd.size()))
    train_op = opt.minimize(loss, global_step=tf.train.get_or_create_global_step())
    hooks = [hvd.BroadcastGlobalVariablesHook(0), tf.train.StopAtStepHook(last_step=1000 // hvd.size())]
    with tf.train.MonitoredTrainingSession(hooks=hooks, checkpoint_dir="ckpt" if hvd.rank() == 0 else None) as s:
        while not s.should_stop():
            s.run(train_op, feed_dict=...)

Run it with `mpirun -np 2 python3 program.py` (as root, Open MPI also needs --allow-run-as-root).
Every rank must build the same graph in the same order: collectives are matched across ranks by
name, and a rank that runs a different one fails within the timeout naming the tensors.
"""
from .basics import (ccl_built, cuda_built, ddl_built, engine_stats, gloo_built, gloo_enabled, init,  # noqa: F401
                     is_initialized, local_rank, local_size, mpi_built, mpi_enabled, mpi_threads_supported,
                     nccl_built, rank, rocm_built, shutdown, size, transport)
from .ops import (Adasum, Average, Compression, Sum, allgather, allreduce, broadcast,  # noqa: F401
                  broadcast_global_variables, broadcast_variables)
from .optimizer import BroadcastGlobalVariablesHook, DistributedOptimizer  # noqa: F401
