"""The fair-peer detection of bench/bench_util.py: which BLAS and allocator a maps text and an
environment describe, and when the peer is refused. No torch, no timing."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "bench"))
import bench_util as bu  # noqa: E402


def maps(*paths):
    return "\n".join("7f0000%04x000-7f0000%04x000 r-xp 00000000 08:01 %d                      %s" % (i, i + 1, i, p)
                     for i, p in enumerate(paths)) + "\n7ffd0000-7ffd1000 rw-p 00000000 00:00 0  [stack]\n"


LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
REFERENCE = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"
OPENBLAS_BLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3"
OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblasp-r0.3.21.so"
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"


def test_reference_blas_is_detected():
    assert bu.blas_from_maps(maps(LIBC, REFERENCE)) == ("reference", REFERENCE)


def test_openblas_alternative_is_not_the_reference():
    # Debian's alternative for libblas.so.3 is OpenBLAS's own libblas.so.3, in its directory.
    lapack = "/usr/lib/x86_64-linux-gnu/openblas-openmp/liblapack.so.3"
    assert bu.blas_from_maps(maps(lapack, OPENBLAS_BLAS, OPENBLAS)) == ("openblas", OPENBLAS_BLAS)
    assert bu.blas_from_maps(maps(LIBC, OPENBLAS)) == ("openblas", OPENBLAS)


def test_reference_libblas_wins_over_a_mapped_openblas():
    # libtorch_cpu needs libblas.so.3 and libopenblas.so.0: sgemm_ resolves to the first, so
    # LD_LIBRARY_PATH=.../blas makes torch slow although OpenBLAS is mapped too.
    assert bu.blas_from_maps(maps(LIBC, REFERENCE, OPENBLAS)) == ("reference", REFERENCE)


def test_mkl_blis_and_unknown():
    assert bu.blas_from_maps(maps("/opt/intel/lib/libmkl_core.so.2"))[0] == "mkl"
    assert bu.blas_from_maps(maps("/usr/lib/libblis.so.4"))[0] == "blis"
    assert bu.blas_from_maps(maps("/usr/lib/x86_64-linux-gnu/blis-openmp/libblas.so.3"))[0] == "blis"
    assert bu.blas_from_maps(maps(LIBC)) == ("unknown", "")
    assert bu.blas_from_maps("") == ("unknown", "")


def test_mapped_libraries_skips_anonymous_and_duplicates():
    text = maps(LIBC, LIBC, OPENBLAS)
    assert bu.mapped_libraries(text) == [LIBC, OPENBLAS]


def test_allocator_default_tuned_and_preloaded():
    assert bu.allocator_from({}, maps(LIBC)) == "glibc default"
    assert bu.allocator_from(dict(bu.FAIR_MALLOC_ENV), maps(LIBC)) == "glibc tuned"
    partial = dict(bu.FAIR_MALLOC_ENV, MALLOC_TOP_PAD_="0")
    assert bu.allocator_from(partial, maps(LIBC)) == "glibc default"
    assert bu.allocator_from({"LD_PRELOAD": JEMALLOC}, maps(LIBC, JEMALLOC)) == "jemalloc"
    # Asked for but not loaded (a wrong path): still glibc.
    assert bu.allocator_from({"LD_PRELOAD": "/nope/libjemalloc.so"}, maps(LIBC)) == "glibc default"


def test_reexec_once_only_when_unfair():
    env = bu.fair_malloc_env({"PATH": "/bin"}, maps(LIBC))
    assert env is not None and env["PATH"] == "/bin" and env[bu.REEXEC_MARKER] == "1"
    assert all(env[k] == v for k, v in bu.FAIR_MALLOC_ENV.items())
    assert bu.fair_malloc_env(env, maps(LIBC)) is None  # the re-executed process does not loop
    assert bu.fair_malloc_env({bu.REEXEC_MARKER: "1"}, maps(LIBC)) is None
    assert bu.fair_malloc_env({"LD_PRELOAD": JEMALLOC}, maps(JEMALLOC)) is None


def test_unfair_reasons():
    assert bu.unfair_reasons("openblas", 120.0, "glibc tuned", 2.5, 2.7) == []
    assert len(bu.unfair_reasons("reference", 8.0, "glibc tuned", 2.5, 2.7)) == 2
    assert len(bu.unfair_reasons("unknown", 8.0, "jemalloc", 2.5, 2.7)) == 1  # slow whatever its name
    assert len(bu.unfair_reasons("openblas", 120.0, "glibc default", 2.5, 2.7)) == 1
    page_faulting = bu.unfair_reasons("openblas", 120.0, "glibc tuned", 165.0, 2.7)
    assert len(page_faulting) == 1 and "page-faults" in page_faulting[0]


def test_no_ratio_against_an_unfair_peer():
    assert bu.ratio(3.0, 2.0, {"fair": True}) == 1.5
    assert bu.ratio(3.0, 2.0, {"fair": False}) is None
    assert bu.fmt_ratio(None).strip() == "-"


def test_fusion_bench_workloads_find_their_peer_or_none():
    import fusion_vs_pytorch as fv
    assert fv.peer_for("softmax as 5 ops") is fv.softmax_peer
    assert fv.peer_for("log-softmax 16384x1024") is fv.log_softmax_peer
    assert fv.peer_for("layer norm backward") is fv.layer_norm_backward_peer
    assert fv.peer_for("layer norm dx as 16 ops") is fv.layer_norm_backward_peer  # the name ir-fusion-bench uses
    assert fv.peer_for("layer norm as 9 ops") is fv.layer_norm_peer
    assert fv.peer_for("softmax-xent forward+backward") is fv.xent_peer
    assert fv.peer_for("a workload nobody knows") is None


def test_stream_fraction_uses_the_in_place_loop_for_updates():
    import fusion_vs_pytorch as fv
    ours = {"stream_triad_gbs": 50.0, "stream_update_gbs": 100.0}
    copy = {"name": "x", "min_bytes": 25e6, "fused_ms": 1.0}
    assert abs(fv.stream_fraction(copy, ours) - 0.5) < 1e-9
    assert abs(fv.stream_fraction(dict(copy, in_place=True), ours) - 0.25) < 1e-9
    assert abs(fv.stream_fraction(dict(copy, name="Adam update (w, m, v)"), ours) - 0.25) < 1e-9
    assert fv.stream_fraction(dict(copy, stream_fraction=0.9), ours) == 0.9
