"""tf.contrib.tensorboard.plugins.projector: ProjectorConfig and visualize_embeddings, which write the
projector_config.pbtxt TensorBoard's embedding projector reads from a FileWriter's logdir (protobuf text
format, fields in ProjectorConfig's order; unset fields are left out)."""
import os

__all__ = ["ProjectorConfig", "EmbeddingInfo", "SpriteMetadata", "visualize_embeddings"]

PROJECTOR_FILENAME = "projector_config.pbtxt"


class _Message(object):
    _fields = ()  # (name, kind): kind is "str", "uint_list", "message" (a class) or "repeated" (a class)

    def __init__(self, **kwargs):
        for name, kind in self._fields:
            if kind == "uint_list":
                object.__setattr__(self, name, [])
            elif isinstance(kind, tuple):  # ("repeated", cls)
                object.__setattr__(self, name, _Repeated(kind[1]))
            elif isinstance(kind, type):
                object.__setattr__(self, name, kind())
            else:
                object.__setattr__(self, name, "")
        for key, value in kwargs.items():
            setattr(self, key, value)

    def __setattr__(self, name, value):
        if name not in dict(self._fields):
            raise AttributeError("Assignment not allowed (no field \"%s\" in protocol message object)." % name)
        object.__setattr__(self, name, value)

    def _is_empty(self):
        return not self._text_lines("")

    def _text_lines(self, indent):
        lines = []
        for name, kind in self._fields:
            value = getattr(self, name)
            if kind == "str":
                if value:
                    lines.append('%s%s: "%s"' % (indent, name, str(value).replace("\\", "\\\\").replace('"', '\\"')))
            elif kind == "uint_list":
                lines.extend("%s%s: %d" % (indent, name, int(v)) for v in value)
            else:
                for item in (value if isinstance(kind, tuple) else [value]):
                    if isinstance(kind, tuple) or not item._is_empty():
                        lines.append("%s%s {" % (indent, name))
                        lines.extend(item._text_lines(indent + "  "))
                        lines.append("%s}" % indent)
        return lines

    def __str__(self):
        lines = self._text_lines("")
        return "\n".join(lines) + ("\n" if lines else "")


class _Repeated(list):
    def __init__(self, cls):
        super(_Repeated, self).__init__()
        self._cls = cls

    def add(self, **kwargs):
        item = self._cls(**kwargs)
        self.append(item)
        return item


class SpriteMetadata(_Message):
    _fields = (("image_path", "str"), ("single_image_dim", "uint_list"))


class EmbeddingInfo(_Message):
    _fields = (("tensor_name", "str"), ("metadata_path", "str"), ("bookmarks_path", "str"),
               ("tensor_shape", "uint_list"), ("sprite", SpriteMetadata), ("tensor_path", "str"))


class ProjectorConfig(_Message):
    _fields = (("model_checkpoint_path", "str"), ("embeddings", ("repeated", EmbeddingInfo)),
               ("model_checkpoint_dir", "str"))


def visualize_embeddings(summary_writer, config):
    """Writes `config` to <summary_writer's logdir>/projector_config.pbtxt."""
    logdir = summary_writer.get_logdir()
    if logdir is None:
        raise ValueError("Summary writer must have a logdir")
    with open(os.path.join(logdir, PROJECTOR_FILENAME), "w") as f:
        f.write(str(config))
