"""tf.logging: TF1's logging functions over Python's logging, on the "tensorflow" logger, in TF's format
("INFO:tensorflow:message" on stderr); the level is WARN until tf.logging.set_verbosity changes it."""
import logging as _logging
import sys as _sys

__all__ = ["DEBUG", "INFO", "WARN", "WARNING", "ERROR", "FATAL", "get_logger", "set_verbosity", "get_verbosity",
           "debug", "info", "warn", "warning", "error", "fatal", "log", "log_if", "log_every_n", "log_first_n",
           "vlog", "flush"]

DEBUG, INFO, WARN, ERROR, FATAL = _logging.DEBUG, _logging.INFO, _logging.WARN, _logging.ERROR, _logging.FATAL
WARNING = WARN
_logger = None
_counts = {}


def get_logger():
    """The "tensorflow" logger; made on first use with TF's handler (stderr, "LEVEL:tensorflow:message")."""
    global _logger
    if _logger is None:
        logger = _logging.getLogger("tensorflow")
        if not _logging.getLogger().handlers and not logger.handlers:
            handler = _logging.StreamHandler(_sys.stderr)
            handler.setFormatter(_logging.Formatter(_logging.BASIC_FORMAT, None))
            logger.addHandler(handler)
        _logger = logger
    return _logger


def set_verbosity(v):
    """Logs messages at level v (DEBUG, INFO, WARN, ERROR, FATAL) and above."""
    get_logger().setLevel(v)


def get_verbosity():
    return get_logger().getEffectiveLevel()


def log(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    """Logs at FATAL; as in TF, the program goes on."""
    get_logger().fatal(msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def log_if(level, msg, condition, *args):
    if condition:
        log(level, msg, *args)


def _next_count():
    """How often the caller's caller (file and line) logged through log_every_n / log_first_n before."""
    frame = _sys._getframe(2)
    key = (frame.f_code.co_filename, frame.f_lineno)
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    return count


def log_every_n(level, msg, n, *args):
    """Logs at the 1st, (n+1)th, (2n+1)th... call from the same line."""
    if _next_count() % max(int(n), 1) == 0:
        log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    """Logs at the first n calls from the same line."""
    if _next_count() < n:
        log(level, msg, *args)


def flush():
    for handler in get_logger().handlers:
        handler.flush()
