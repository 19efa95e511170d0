"""tf.nest: nested structures of tuples, namedtuples, lists and dicts (dicts in sorted key order).

RNN states are such structures (an LSTMStateTuple, a tuple of them for a MultiRNNCell).
"""

__all__ = ["is_nested", "is_sequence", "flatten", "pack_sequence_as", "map_structure", "assert_same_structure"]


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


is_sequence = is_nested


def _children(x):
    if isinstance(x, dict):
        return [x[k] for k in sorted(x)]
    return list(x)


def _rebuild(like, children):
    if isinstance(like, dict):
        return type(like)(zip(sorted(like), children))
    if isinstance(like, tuple) and hasattr(like, "_fields"):  # a namedtuple
        return type(like)(*children)
    return type(like)(children)


def flatten(structure):
    """The leaves of structure, depth first (a leaf alone is [leaf])."""
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def pack_sequence_as(structure, flat_sequence):
    """flat_sequence's leaves arranged like structure's."""
    flat = list(flat_sequence)
    if len(flat) != len(flatten(structure)):
        raise ValueError("Could not pack sequence: the structure has %d leaves, the flat sequence %d"
                         % (len(flatten(structure)), len(flat)))
    return _pack(structure, flat)[0]


def _pack(structure, flat):
    if not is_nested(structure):
        return flat[0], flat[1:]
    children = []
    for child in _children(structure):
        packed, flat = _pack(child, flat)
        children.append(packed)
    return _rebuild(structure, children), flat


def assert_same_structure(a, b, check_types=True):
    if is_nested(a) != is_nested(b):
        raise ValueError("The two structures don't have the same nested structure: %r and %r" % (a, b))
    if not is_nested(a):
        return
    if check_types and type(a) is not type(b):
        raise TypeError("The two structures don't have the same sequence type: %s and %s"
                        % (type(a).__name__, type(b).__name__))
    if isinstance(a, dict) and isinstance(b, dict) and set(a) != set(b):
        raise ValueError("The two dictionaries don't have the same set of keys. First structure has keys %s, while "
                         "second structure has keys %s." % (sorted(a), sorted(b)))
    ca, cb = _children(a), _children(b)
    if len(ca) != len(cb):
        raise ValueError("The two structures don't have the same number of elements: %r and %r" % (a, b))
    for x, y in zip(ca, cb):
        assert_same_structure(x, y, check_types)


def map_structure(func, *structures, **kwargs):
    """func applied leaf by leaf to structures of the same shape, packed like the first."""
    for other in structures[1:]:
        assert_same_structure(structures[0], other, kwargs.get("check_types", True))
    leaves = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [func(*args) for args in zip(*leaves)])
