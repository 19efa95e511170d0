"""Op wrappers generated from a table, as TF's gen_*_ops are: one row per TF1 function that is one library op.

A row is (signature, op, inputs, attrs, doc):
  signature  the Python signature, TF's: "slice(input_, begin, size, name=None)" (`name` is the node's name)
  op         the library op: "slice"
  inputs     the op's inputs, expressions over the parameters: "input_" or "data, _indices(segment_ids)"
  attrs      {attribute: expression over the parameters}: {"begin": "tuple(begin)"} (None values are left out)
  doc        the docstring's first line

    define_ops(globals(), [("rank(input, name=None)", "rank", "input", {}, "The rank of a tensor."), ...])

writes `rank` into the module as if it were written there (its __module__, __globals__, signature, defaults);
the expressions see the module's globals, so a row may use the module's helpers (_static_shape, _dtypes...).
Functions whose TF semantics are more than one op stay hand-written beside the table.
"""
import re

from .framework import apply_op

_SIGNATURE = re.compile(r"^(?P<name>[A-Za-z_]\w*)\((?P<params>.*)\)$")
_TEMPLATE = '''def {name}({params}):
    return apply_op({op!r}, [{inputs}], {{{attrs}}}, name={node_name})
'''


def _source(signature, op, inputs, attrs, default_name=None):
    m = _SIGNATURE.match(signature.strip())
    if m is None:
        raise ValueError("op table: %r is not a signature like 'fn(x, name=None)'" % signature)
    if not re.search(r"\bname=None\b", m.group("params")):
        raise ValueError("op table: %s has no name=None parameter" % signature)
    node_name = "name" if default_name is None else "name or %r" % default_name
    attr_text = ", ".join("%r: %s" % (k, v) for k, v in attrs.items())
    return m.group("name"), _TEMPLATE.format(name=m.group("name"), params=m.group("params"), op=op, inputs=inputs,
                                             attrs=attr_text, node_name=node_name)


def define_ops(namespace, table):
    """Defines the table's functions in `namespace` (a module's globals()); returns their names. A row's
    optional sixth field names the node when `name` is None (TF's op type: "SegmentSum")."""

    namespace.setdefault("apply_op", apply_op)
    module = namespace.get("__name__", "?")
    names = []
    for row in table:
        signature, op, inputs, attrs, doc = row[:5]
        name, src = _source(signature, op, inputs, attrs, row[5] if len(row) > 5 else None)
        if name in namespace:
            raise ValueError("op table of %s: %s is defined twice" % (module, name))
        # Executed in the module's namespace, so the expressions see its helpers when the function runs.
        exec(compile(src, "<%s op table: %s>" % (module, name), "exec"), namespace)  # noqa: S102 (our source)
        fn = namespace[name]
        fn.__doc__ = doc
        fn._op_table_row = (signature, op, inputs, dict(attrs))
        names.append(name)
    return names
