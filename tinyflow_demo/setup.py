"""Builds and installs the tinyflow package with its native parts, offline, with Debian's setuptools:

    python3 -m venv --system-site-packages ~/tf-env        # or pip's --break-system-packages (PEP 668)
    ~/tf-env/bin/pip install --no-build-isolation --no-index ./tinyflow_demo

The native parts come from the repository's CMake build, <repo>/build (TINYFLOW_BUILD_DIR names another):
configured (Release, as scripts/build.sh does) when it has no CMakeCache.txt, else used as it is, then
`cmake --build <dir> --target tinyflow_native` (libir, libir_tensorflow, tinyflow._C; an up-to-date build
compiles nothing). libir.so.0, libir_tensorflow.so, the MPI transport plugins and _C are copied into the
package, where each finds the others by its RUNPATH $ORIGIN: `import tinyflow` then needs no PYTHONPATH
and no TINYFLOW_LIB. setuptools' own build files go to <build dir>/python, not into the source tree.
"""
import glob
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Distribution, find_packages, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
BUILD_DIR = os.path.abspath(os.environ.get("TINYFLOW_BUILD_DIR") or os.path.join(REPO, "build"))
# The CMake cache values scripts/build.sh and scripts/test.sh configure with, so that either reuses the objects.
CONFIGURE_ARGS = ["-DCMAKE_BUILD_TYPE=Release", "-DIR_WERROR=ON"]


def _run(cmd):
    print("tinyflow setup.py: " + " ".join(cmd), flush=True)
    subprocess.check_call(cmd)


def build_native():
    """Builds the CMake target tinyflow_native in BUILD_DIR; returns the files to ship, by their name in the package."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise RuntimeError("tinyflow: building the native parts needs cmake (apt-get install cmake; see README.md)")
    if not os.path.exists(os.path.join(BUILD_DIR, "CMakeCache.txt")):
        _run([cmake, "-S", REPO, "-B", BUILD_DIR] + CONFIGURE_ARGS)
    _run([cmake, "--build", BUILD_DIR, "--target", "tinyflow_native", "-j", str(os.cpu_count() or 2)])
    lib = os.path.join(BUILD_DIR, "lib")
    module = "_C" + sysconfig.get_config_var("EXT_SUFFIX")
    files = {"libir.so.0": os.path.join(lib, "libir.so.0"),  # libir's SONAME: what _C and libir_tensorflow need
             "libir_tensorflow.so": os.path.join(lib, "libir_tensorflow.so"),
             module: os.path.join(lib, module)}
    for plugin in sorted(glob.glob(os.path.join(lib, "libir_mpi_*.so"))):  # dlopened beside libir (tinyflow.horovod)
        files[os.path.basename(plugin)] = plugin
    missing = [path for path in files.values() if not os.path.exists(path)]
    if missing:
        hint = ""
        if module in [os.path.basename(path) for path in missing]:
            hint = ("; tinyflow._C is built for the Python CMake found (Python3_EXECUTABLE in %s/CMakeCache.txt) when "
                    "its headers are installed (apt-get install python3-dev), and this is %s %s"
                    % (BUILD_DIR, sys.executable, sys.version.split()[0]))
        raise RuntimeError("tinyflow: the build in %s did not produce %s%s" % (BUILD_DIR, ", ".join(missing), hint))
    return files


class BuildPyWithNative(build_py):
    """build_py, then the native libraries and _C copied (symbolic links resolved) into the built package."""

    def run(self):
        target = os.path.join(self.build_lib, "tinyflow")
        shutil.rmtree(target, ignore_errors=True)  # build_py keeps files whose source is gone: no stale module
        super().run()
        for name, path in build_native().items():
            dest = os.path.join(target, name)
            if os.path.lexists(dest):
                os.remove(dest)
            shutil.copy2(os.path.realpath(path), dest)
            print("tinyflow setup.py: %s -> %s" % (path, dest), flush=True)


class BinaryDistribution(Distribution):
    """A platform wheel (cp311-cp311-linux_x86_64), not a pure-Python one: the package holds shared libraries."""

    def has_ext_modules(self):
        return True


setup(
    name="tinyflow",
    version="0.1.0",
    description="A TensorFlow-1-like Python API over the IR framework (libir)",
    python_requires=">=3.8",
    install_requires=[],  # numpy comes from Debian (python3-numpy); pip must not fetch one
    packages=find_packages(where=HERE, include=["tinyflow", "tinyflow.*"]),
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildPyWithNative},
    options={"build": {"build_base": os.path.join(BUILD_DIR, "python")},
             "egg_info": {"egg_base": os.path.relpath(os.path.join(BUILD_DIR, "python"))}},
    zip_safe=False,
)
