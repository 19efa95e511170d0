"""tf.errors: TensorFlow's error classes. Each is a TinyflowError (what the C++ library raises), so
`except tf.errors.OpError` catches every run-time error, as in TF."""
from . import _lib
from ._lib import TinyflowError


class OpError(TinyflowError):
    """An error while running a graph (TF's base class). node_def/op are None here; message is the text."""

    def __init__(self, node_def=None, op=None, message="", error_code=None):
        if message == "" and isinstance(node_def, str) and op is None:  # OpError("text")
            node_def, message = None, node_def
        super(OpError, self).__init__(message)
        self.node_def, self.op, self.message, self.error_code = node_def, op, message, error_code


def _subclass(name, doc):
    return type(name, (OpError,), {"__doc__": doc})


CancelledError = _subclass("CancelledError", "The operation was cancelled.")
UnknownError = _subclass("UnknownError", "An unknown error.")
InvalidArgumentError = _subclass("InvalidArgumentError", "An argument (a fed value, a shape, an index) was invalid.")
DeadlineExceededError = _subclass("DeadlineExceededError", "A deadline expired.")
NotFoundError = _subclass("NotFoundError", "A file, checkpoint key or other entity was not found.")
AlreadyExistsError = _subclass("AlreadyExistsError", "An entity already exists.")
PermissionDeniedError = _subclass("PermissionDeniedError", "The caller may not do this.")
ResourceExhaustedError = _subclass("ResourceExhaustedError", "Memory or another resource ran out.")
FailedPreconditionError = _subclass("FailedPreconditionError", "The system is not in a state for this (e.g. "
                                    "an uninitialized variable).")
AbortedError = _subclass("AbortedError", "The operation was aborted.")
OutOfRangeError = _subclass("OutOfRangeError", "Iterated past the end (e.g. a tf.data iterator is exhausted).")
UnimplementedError = _subclass("UnimplementedError", "The operation is not implemented (in tinyflow).")
InternalError = _subclass("InternalError", "An internal invariant broke.")
UnavailableError = _subclass("UnavailableError", "The service is unavailable.")
DataLossError = _subclass("DataLossError", "Unrecoverable data loss or corruption (e.g. a checkpoint CRC mismatch).")




def _from_library(message):
    """The error for a failed library call: a host function (py_func, tf.Assert) that raised one of tf.errors'
    classes fails the run with that class (an assertion is an InvalidArgumentError, as in TF); else OpError."""
    marker = "the host function failed: "
    at = message.find(marker)
    if at >= 0:
        cls = globals().get(message[at + len(marker):].split(":", 1)[0])
        if isinstance(cls, type) and issubclass(cls, OpError):
            return cls(None, None, message)
    return OpError(message)


_lib.set_error_class(_from_library)  # tinyflow._C raises these for every failed library call
