"""tf.gfile / tf.io.gfile over the local file system (TF's file API without its cloud file systems:
a gs://, s3:// or hdfs:// path raises a clear error)."""
import glob as _glob
import os
import shutil

from . import errors as _errors

__all__ = ["GFile", "Open", "FastGFile", "Exists", "exists", "IsDirectory", "isdir", "MakeDirs", "makedirs",
           "MkDir", "mkdir", "Remove", "remove", "DeleteRecursively", "rmtree", "ListDirectory", "listdir",
           "Glob", "glob", "Copy", "copy", "Rename", "rename", "Stat", "stat", "Walk", "walk"]


def _local(path):
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = path.decode("utf-8")
    if "://" in path and not path.startswith("file://"):
        raise _errors.UnimplementedError("tinyflow's gfile reads local files only; '%s' needs a file system tinyflow "
                                         "does not have" % path)
    return path[len("file://"):] if path.startswith("file://") else path


def _not_found(path, e):
    return _errors.NotFoundError(None, None, "%s; No such file or directory (%s)" % (path, e))


class GFile(object):
    """A file object (read, readline(s), write, iteration, context manager) like tf.gfile.GFile."""

    def __init__(self, name, mode="r"):
        self.name = _local(name)
        self.mode = mode
        try:
            self._f = open(self.name, mode)
        except FileNotFoundError as e:
            raise _not_found(self.name, e)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __iter__(self):
        return iter(self._f)

    def read(self, n=-1):
        return self._f.read(n)

    def readline(self):
        return self._f.readline()

    def readlines(self):
        return self._f.readlines()

    def write(self, data):
        if "b" not in self.mode and isinstance(data, bytes):
            data = data.decode("utf-8")
        self._f.write(data)

    def flush(self):
        self._f.flush()

    def seek(self, offset, whence=0):
        return self._f.seek(offset, whence)

    def tell(self):
        return self._f.tell()

    def size(self):
        return os.path.getsize(self.name)

    def close(self):
        self._f.close()


Open = FastGFile = GFile


def Exists(filename):  # noqa: N802
    return os.path.exists(_local(filename))


def IsDirectory(dirname):  # noqa: N802
    return os.path.isdir(_local(dirname))


def MakeDirs(dirname):  # noqa: N802
    os.makedirs(_local(dirname), exist_ok=True)


def MkDir(dirname):  # noqa: N802
    path = _local(dirname)
    if os.path.exists(path):
        raise _errors.AlreadyExistsError(None, None, "%s already exists" % path)
    os.mkdir(path)


def Remove(filename):  # noqa: N802
    try:
        os.remove(_local(filename))
    except FileNotFoundError as e:
        raise _not_found(filename, e)


def DeleteRecursively(dirname):  # noqa: N802
    path = _local(dirname)
    if not os.path.exists(path):
        raise _not_found(path, "nothing to delete")
    shutil.rmtree(path) if os.path.isdir(path) else os.remove(path)


def ListDirectory(dirname):  # noqa: N802
    try:
        return sorted(os.listdir(_local(dirname)))
    except FileNotFoundError as e:
        raise _not_found(dirname, e)


def Glob(filename):  # noqa: N802
    return sorted(_glob.glob(_local(filename)))


def Copy(oldpath, newpath, overwrite=False):  # noqa: N802
    src, dst = _local(oldpath), _local(newpath)
    if os.path.exists(dst) and not overwrite:
        raise _errors.AlreadyExistsError(None, None, "%s already exists (pass overwrite=True)" % dst)
    shutil.copyfile(src, dst)


def Rename(oldname, newname, overwrite=False):  # noqa: N802
    src, dst = _local(oldname), _local(newname)
    if os.path.exists(dst) and not overwrite:
        raise _errors.AlreadyExistsError(None, None, "%s already exists (pass overwrite=True)" % dst)
    os.replace(src, dst)


class _FileStatistics(object):
    def __init__(self, st, path):
        self.length = st.st_size
        self.mtime_nsec = int(st.st_mtime * 1e9)
        self.is_directory = os.path.isdir(path)


def Stat(filename):  # noqa: N802
    path = _local(filename)
    try:
        return _FileStatistics(os.stat(path), path)
    except FileNotFoundError as e:
        raise _not_found(path, e)


def Walk(top, in_order=True):  # noqa: N802
    for root, dirs, files in os.walk(_local(top), topdown=in_order):
        yield root, sorted(dirs), sorted(files)


# tf.io.gfile's (TF 1.14+ / TF 2) lower-case names.
exists, isdir, makedirs, mkdir, remove, rmtree = Exists, IsDirectory, MakeDirs, MkDir, Remove, DeleteRecursively
listdir, glob, copy, rename, stat, walk = ListDirectory, Glob, Copy, Rename, Stat, Walk
