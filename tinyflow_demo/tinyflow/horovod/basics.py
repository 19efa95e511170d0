"""The process group: Horovod's init / shutdown / rank / size ..., over the C API's IRCollective* calls.

The group is the library's collective engine (include/ir/collective.h): under `mpirun` of Open MPI
or MPICH it is the MPI job (the transport plugin libir_mpi_<impl>.so next to libir.so), without a
launcher one process (rank 0 of 1).
"""
import atexit
import json

from .._lib import C

__all__ = ["init", "shutdown", "is_initialized", "rank", "size", "local_rank", "local_size", "transport",
           "mpi_threads_supported", "mpi_enabled", "mpi_built", "gloo_enabled", "gloo_built", "nccl_built",
           "ddl_built", "ccl_built", "cuda_built", "rocm_built", "engine_stats"]

_NOT_INITIALIZED = "Horovod has not been initialized; use hvd.init()."
_atexit_registered = []


def init(comm=None, timeout_s=None, transport=None, timeline=None):
    """Starts the process group (a second call is a no-op). `comm` must be None or the whole world
    (a list of every rank): sub-communicators are not supported. timeout_s: how long a collective
    waits for the other ranks (default IR_COLLECTIVE_TIMEOUT, else 60 s); transport: "" (from the
    launcher), "openmpi", "mpich", "mpi" or "local"; timeline: a chrome-trace JSON file to write
    (default $HOROVOD_TIMELINE, else $IR_TIMELINE)."""
    import os
    if comm is not None and not (isinstance(comm, (list, tuple)) and list(comm) == list(range(len(comm)))):
        raise ValueError("tinyflow.horovod.init: comm must be None or the list of all ranks [0, ..., size-1]; "
                         "sub-communicators are not supported (got %r)" % (comm,))
    options = {}
    if transport:
        options["transport"] = transport
    if timeout_s:
        options["timeout_s"] = float(timeout_s)
    timeline = timeline or os.environ.get("HOROVOD_TIMELINE")
    if timeline:
        options["timeline"] = timeline
    C.collective_init(json.dumps(options))
    if comm is not None and len(comm) != size():
        raise ValueError("tinyflow.horovod.init: comm lists %d ranks but the job has %d" % (len(comm), size()))
    if not _atexit_registered:  # MPI must be finalized before the process exits (as Horovod does)
        atexit.register(shutdown)
        _atexit_registered.append(True)


def shutdown():
    """Waits for submitted collectives and ends the group (a no-op when it is not started)."""
    if is_initialized():
        C.collective_shutdown()


def is_initialized():
    """Whether init() has run (and shutdown() has not)."""
    return C.collective_is_initialized()


def _info():
    if not is_initialized():
        raise ValueError(_NOT_INITIALIZED)
    rank, size, local_rank, local_size, transport = C.collective_info()
    return [rank, size, local_rank, local_size, transport or ""]


def rank():
    """This process's rank in the job (0 .. size()-1)."""
    return _info()[0]


def size():
    """How many processes the job has."""
    return _info()[1]


def local_rank():
    """This process's rank among the job's processes on this host."""
    return _info()[2]


def local_size():
    """How many of the job's processes run on this host."""
    return _info()[3]


def transport():
    """The transport the group runs over: "openmpi", "mpich" or "local"."""
    return _info()[4]


def mpi_threads_supported():
    """True: the engine's own thread makes every MPI call (MPI_THREAD_FUNNELED suffices)."""
    if not is_initialized():
        raise ValueError(_NOT_INITIALIZED)
    return True


def mpi_enabled():
    """Whether the job runs over MPI (mpirun of Open MPI or MPICH)."""
    return transport() in ("openmpi", "mpich")


def mpi_built():
    """True: MPI transports are plugins loaded at init (Open MPI or MPICH, as the launcher)."""
    return True


def _false():
    return False


gloo_enabled = gloo_built = nccl_built = ddl_built = ccl_built = cuda_built = rocm_built = _false


def engine_stats(reset=False):
    """What the engine did since init (or the last reset): {"collectives", "tensors", "bytes", "transport_ms"}."""
    if not is_initialized():
        raise ValueError(_NOT_INITIALIZED)
    return json.loads(C.collective_stats_json(1 if reset else 0))
