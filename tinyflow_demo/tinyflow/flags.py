"""tf.app.flags / tf.flags: absl-style command-line flags (DEFINE_string, DEFINE_integer, ..., FLAGS).

FLAGS parses sys.argv on the first read of a flag (or tf.app.run / FLAGS(argv) parse explicitly):
"--name=value" and "--name value", "--name" / "--noname" for booleans, "--" ends the flags.
Arguments that name no defined flag are passed through (returned to tf.app.run's main), as TF does.
"""
import sys as _sys

__all__ = ["FLAGS", "FlagValues", "Error", "IllegalFlagValueError", "DuplicateFlagError", "UnrecognizedFlagError",
           "DEFINE_string", "DEFINE_integer", "DEFINE_float", "DEFINE_boolean", "DEFINE_bool", "DEFINE_list",
           "DEFINE_enum", "mark_flag_as_required"]


class Error(Exception):
    """Base class of the flag errors (absl.flags.Error)."""


class IllegalFlagValueError(Error):
    """A flag's value could not be parsed or is not allowed."""


class DuplicateFlagError(Error):
    """A flag name was defined twice."""


class UnrecognizedFlagError(Error):
    """An argument names no defined flag (when parsing with known_only=False)."""


_TRUE, _FALSE = ("true", "t", "1", "yes", "y"), ("false", "f", "0", "no", "n")


class _Flag(object):
    def __init__(self, name, default, help_text, parse, kind):
        self.name, self.help, self._parse, self.kind = name, help_text, parse, kind
        self.default = None if default is None else self.parse(default)
        self.value = self.default
        self.present = 0
        self.required = False

    def parse(self, text):
        try:
            return self._parse(text)
        except (TypeError, ValueError) as err:
            raise IllegalFlagValueError("flag --%s=%s: %s" % (self.name, text, err))


def _parse_bool(value):
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError("Non-boolean argument to boolean flag")


def _parse_list(value):
    if isinstance(value, (list, tuple)):
        return list(value)
    return [item.strip() for item in str(value).split(",") if item.strip()]


def _parse_int(value):
    if isinstance(value, float) or isinstance(value, bool):
        raise ValueError("expected an integer, got %r" % (value,))
    return int(value, 0) if isinstance(value, str) else int(value)


class FlagValues(object):
    """The defined flags and their values: FLAGS.name reads (parsing sys.argv first if needed), FLAGS.name = v sets."""

    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    def _define(self, flag):
        if flag.name in self._flags:
            raise DuplicateFlagError("The flag '%s' is defined twice." % flag.name)
        self._flags[flag.name] = flag

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        object.__setattr__(self, "_parsed", True)

    def __call__(self, argv, known_only=False):
        """Parses argv (argv[0]: the program); returns [argv[0]] + the positional arguments, and with known_only
        the arguments naming no defined flag too (else those raise UnrecognizedFlagError, as in absl)."""
        argv = list(argv)
        rest, i = argv[:1], 1
        while i < len(argv):
            arg = argv[i]
            i += 1
            if arg == "--":
                rest.extend(argv[i:])
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            name, eq, value = arg.lstrip("-").partition("=")
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not eq and name[2:] in self._flags \
                    and self._flags[name[2:]].kind == "bool":
                flag, value, eq = self._flags[name[2:]], "false", "="
            if flag is None:
                if not known_only:
                    raise UnrecognizedFlagError("Unknown command line flag '%s'" % name)
                rest.append(arg)
                continue
            if not eq:
                if flag.kind == "bool":
                    value = "true"
                elif i < len(argv):
                    value, i = argv[i], i + 1
                else:
                    raise IllegalFlagValueError("flag --%s needs a value" % name)
            flag.value = flag.parse(value)
            flag.present += 1
        missing = [f.name for f in self._flags.values() if f.required and f.value is None]
        if missing:
            raise IllegalFlagValueError("flag --%s must have a value other than None." % missing[0])
        self.mark_as_parsed()
        return rest

    def __getattr__(self, name):
        flags = self._flags
        if name not in flags:
            raise AttributeError(name)
        if not self._parsed:
            self(_sys.argv, known_only=True)
        return flags[name].value

    def __setattr__(self, name, value):
        flag = self._flags.get(name)
        if flag is None:
            raise AttributeError("Unknown flag '%s': define it with tf.app.flags.DEFINE_*" % name)
        flag.value = value if value is None else flag.parse(value)

    def __getitem__(self, name):
        return self._flags[name]

    def __contains__(self, name):
        return name in self._flags

    def __iter__(self):
        return iter(self._flags)

    def flag_values_dict(self):
        return {name: flag.value for name, flag in self._flags.items()}

    def reset(self):
        """Forgets every parsed value (back to the defaults), so that the next read parses again."""
        for flag in self._flags.values():
            flag.value, flag.present = flag.default, 0
        object.__setattr__(self, "_parsed", False)


FLAGS = FlagValues()


def _define(name, default, help_text, parse, kind, flag_values):
    (flag_values or FLAGS)._define(_Flag(name, default, help_text, parse, kind))


def DEFINE_string(name, default, help=None, flag_values=None, **kwargs):  # noqa: N802,A002 (TF's names)
    _define(name, default, help, str, "string", flag_values)


def DEFINE_integer(name, default, help=None, lower_bound=None, upper_bound=None, flag_values=None,  # noqa: N802,A002
                   **kwargs):
    def parse(value):
        number = _parse_int(value)
        if (lower_bound is not None and number < lower_bound) or (upper_bound is not None and number > upper_bound):
            raise ValueError("%d is outside [%s, %s]" % (number, lower_bound, upper_bound))
        return number
    _define(name, default, help, parse, "int", flag_values)


def DEFINE_float(name, default, help=None, lower_bound=None, upper_bound=None, flag_values=None,  # noqa: N802,A002
                 **kwargs):
    def parse(value):
        number = float(value)
        if (lower_bound is not None and number < lower_bound) or (upper_bound is not None and number > upper_bound):
            raise ValueError("%g is outside [%s, %s]" % (number, lower_bound, upper_bound))
        return number
    _define(name, default, help, parse, "float", flag_values)


def DEFINE_boolean(name, default, help=None, flag_values=None, **kwargs):  # noqa: N802,A002
    _define(name, default, help, _parse_bool, "bool", flag_values)


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name, default, help=None, flag_values=None, **kwargs):  # noqa: N802,A002
    _define(name, default, help, _parse_list, "list", flag_values)


def DEFINE_enum(name, default, enum_values, help=None, flag_values=None, **kwargs):  # noqa: N802,A002
    def parse(value):
        if value not in enum_values:
            raise ValueError("value should be one of <%s>" % "|".join(enum_values))
        return value
    _define(name, default, help, parse, "enum", flag_values)


def mark_flag_as_required(name, flag_values=None):
    (flag_values or FLAGS)[name].required = True
