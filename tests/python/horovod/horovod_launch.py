"""Launching a job of N ranks with Open MPI's or MPICH's launcher, for the tinyflow.horovod tests."""
import os
import shutil
import signal
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))

#: The transports the tests run over (the name hvd.transport() reports).
LAUNCHERS = ["openmpi", "mpich"]
_COMMANDS = {"openmpi": ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-np"],
             "mpich": ["mpiexec.mpich", "-n"]}
# Open MPI in a container: no cross-memory attach between the ranks, shared memory and loopback only.
_OPENMPI_ENV = {"OMPI_MCA_btl_vader_single_copy_mechanism": "none", "OMPI_MCA_btl": "self,vader",
                "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def library_dir():
    """The directory of the libir.so tinyflow loads (its MPI plugins lie next to it)."""
    lib = os.environ.get("TINYFLOW_LIB") or os.path.join(REPO, "build", "lib", "libir.so")
    lib = os.path.abspath(lib)
    return lib if os.path.isdir(lib) else os.path.dirname(lib)


def launcher_or_skip(impl):
    """Skips the test (saying what is missing) unless impl's launcher and the library's plugin are there."""
    launcher = _COMMANDS[impl][0]
    if shutil.which(launcher) is None:
        pytest.skip("%s is not installed (the %s launcher)" % (launcher, impl))
    plugin = os.path.join(library_dir(), "libir_mpi_%s.so" % impl)
    if not os.path.exists(plugin):
        pytest.skip("%s was not built (configure with MPI: see scripts/install_deps.sh)" % plugin)


def job_env(impl, extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI_", "PMIX_", "HYDRA_"))}
    env["PYTHONPATH"] = os.path.join(REPO, "tinyflow_demo") + os.pathsep + env.get("PYTHONPATH", "")
    if env.get("TINYFLOW_LIB"):
        env["TINYFLOW_LIB"] = os.path.abspath(env["TINYFLOW_LIB"])
    env.setdefault("OMP_NUM_THREADS", "1")  # ranks share the cores
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if impl == "openmpi":
        env.update(_OPENMPI_ENV)
    env.update(extra or {})
    return env


def run_job(impl, ranks, argv, cwd, timeout=120, env=None, check=True):
    """Runs `python3 argv...` as `ranks` ranks; returns the CompletedProcess (text output). With check, a
    non-zero exit fails the test with the job's output; a job past `timeout` seconds is killed and fails it."""
    cmd = _COMMANDS[impl] + [str(ranks), sys.executable] + list(argv)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=job_env(impl, env),
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the launcher's session: the launcher and every rank it started
        stdout, stderr = proc.communicate()
        out = (stdout + stderr).decode("utf-8", "replace")
        pytest.fail("%s did not finish within %d s:\n%s" % (" ".join(cmd), timeout, out[-4000:]))
    proc.stdout, proc.stderr = stdout, stderr
    proc.stdout = proc.stdout.decode("utf-8", "replace")
    proc.stderr = proc.stderr.decode("utf-8", "replace")
    if check and proc.returncode != 0:
        pytest.fail("%s exited with %d\n--- stdout\n%s\n--- stderr\n%s" % (" ".join(cmd), proc.returncode,
                                                                         proc.stdout[-3000:], proc.stderr[-6000:]))
    return proc
