"""tf.app: run(main, argv) parses the flags (tf.app.flags) and exits with main's result, as TF1 does."""
import sys as _sys

from . import flags

__all__ = ["run", "flags"]


def run(main=None, argv=None):
    """Parses argv (default sys.argv) into tf.app.flags.FLAGS, calls main(remaining argv) (main: the __main__
    module's main when None) and exits with its result (sys.exit)."""
    args = flags.FLAGS(_sys.argv if argv is None else argv, known_only=True)
    main = main or _sys.modules["__main__"].main
    _sys.exit(main(args))
