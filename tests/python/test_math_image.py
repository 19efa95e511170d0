"""tf.einsum/tensordot/norm/logical and log-sum-exp reductions/sequence_mask/linspace/meshgrid/
matrix helpers and tf.image basics against NumPy references, with finite-difference gradients."""
import numpy as np
import pytest

import tinyflow as tf

RNG = np.random.RandomState(0)


def run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


def fd_grad(build, x0, eps=1e-3):
    """d sum(build(x)) / dx by central differences, and the gradient tinyflow computes."""
    x = tf.placeholder(tf.float32, x0.shape)
    y = tf.reduce_sum(build(x))
    g = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        got = sess.run(g, {x: x0})
        num = np.zeros_like(x0)
        flat = x0.reshape(-1)
        for i in range(flat.size):
            plus, minus = flat.copy(), flat.copy()
            plus[i] += eps
            minus[i] -= eps
            num.reshape(-1)[i] = (sess.run(y, {x: plus.reshape(x0.shape)}) -
                                  sess.run(y, {x: minus.reshape(x0.shape)})) / (2 * eps)
    return got, num


@pytest.mark.parametrize("eq,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("i,i->", [(6,), (6,)]),
    ("ij->ji", [(3, 4)]), ("ij->", [(3, 4)]), ("ij->j", [(3, 4)]), ("i,j->ij", [(3,), (4,)]),
    ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 2)]),
    ("ij,ij->i", [(3, 4), (3, 4)]), ("abc,cd->abd", [(2, 3, 4), (4, 5)]), ("ik,jk", [(2, 3), (4, 3)]),
    ("ij,jk->ki", [(3, 4), (4, 2)]), ("ijk,j->ik", [(2, 3, 4), (3,)])])
def test_einsum_matches_numpy(eq, shapes):
    arrays = [RNG.randn(*s).astype(np.float32) for s in shapes]
    got = run(tf.einsum(eq, *[tf.constant(a) for a in arrays]))
    np.testing.assert_allclose(got, np.einsum(eq, *arrays), rtol=1e-4, atol=1e-5)


def test_einsum_gradient_and_errors():
    b = RNG.randn(4, 2).astype(np.float32)
    got, num = fd_grad(lambda x: tf.einsum("ij,jk->ik", x, tf.constant(b)) ** 2, RNG.randn(3, 4).astype(np.float32))
    np.testing.assert_allclose(got, num, rtol=2e-2, atol=2e-2)
    with pytest.raises(ValueError, match="repeated index"):
        tf.einsum("ii->i", tf.constant(np.eye(3, dtype=np.float32)))
    with pytest.raises(ValueError, match="index 'j' is 4"):
        tf.einsum("ij,jk->ik", tf.zeros([3, 4]), tf.zeros([5, 2]))
    with pytest.raises(ValueError, match="operands"):
        tf.einsum("ij,jk->ik", tf.zeros([3, 4]))


@pytest.mark.parametrize("axes", [1, 2, 0, ([1, 0], [0, 1]), ([2], [0])])
def test_tensordot_matches_numpy(axes):
    a = RNG.randn(2, 3, 4).astype(np.float32)
    b = RNG.randn(4, 3, 2).astype(np.float32) if axes != 2 and axes != ([1, 0], [0, 1]) else \
        RNG.randn(3, 4, 2).astype(np.float32)
    if axes == ([1, 0], [0, 1]):
        b = RNG.randn(3, 2, 5).astype(np.float32)
    if axes == 2:
        b = RNG.randn(3, 4, 5).astype(np.float32)
    np.testing.assert_allclose(run(tf.tensordot(tf.constant(a), tf.constant(b), axes)), np.tensordot(a, b, axes),
                               rtol=1e-4, atol=1e-5)


def test_logical_and_logsumexp_reductions():
    m = np.array([[True, False, True], [True, True, True]])
    np.testing.assert_array_equal(run(tf.reduce_any(tf.constant(m), axis=1)), m.any(1))
    np.testing.assert_array_equal(run(tf.reduce_all(tf.constant(m), axis=1)), m.all(1))
    assert run(tf.reduce_all(tf.constant(m))) == m.all()
    assert run(tf.reduce_any(tf.constant(m), keepdims=True)).shape == (1, 1)
    x = RNG.randn(3, 5).astype(np.float32) * 30 + 500  # exp overflows without the max taken out
    ref = np.log(np.exp((x - x.max(1, keepdims=True)).astype(np.float64)).sum(1)) + x.max(1)
    np.testing.assert_allclose(run(tf.reduce_logsumexp(tf.constant(x), axis=1)), ref, rtol=1e-5)
    assert run(tf.reduce_logsumexp(tf.constant(x), axis=1, keepdims=True)).shape == (3, 1)
    np.testing.assert_allclose(run(tf.reduce_logsumexp(tf.constant(x))), np.log(np.exp(x - x.max()).sum()) + x.max(),
                               rtol=1e-5)
    got, num = fd_grad(lambda t: tf.reduce_logsumexp(t, axis=1), RNG.randn(2, 4).astype(np.float32))
    np.testing.assert_allclose(got, num, rtol=1e-2, atol=1e-3)  # = softmax
    counts = run(tf.count_nonzero(tf.constant(np.array([[0, 1, 2], [0, 0, 3]], np.float32)), axis=1))
    np.testing.assert_array_equal(counts, [2, 1])
    assert counts.dtype == np.int64


@pytest.mark.parametrize("ord_,axis", [("euclidean", None), (1, 1), (np.inf, 0), (3, 1), ("fro", [0, 1])])
def test_norm(ord_, axis):
    x = RNG.randn(3, 4).astype(np.float32)
    ref = {("euclidean", None): np.sqrt((x ** 2).sum()), (1, 1): np.abs(x).sum(1), (np.inf, 0): np.abs(x).max(0),
           (3, 1): (np.abs(x) ** 3).sum(1) ** (1 / 3.), ("fro", (0, 1)): np.sqrt((x ** 2).sum())}
    key = (ord_, tuple(axis) if isinstance(axis, list) else axis)
    np.testing.assert_allclose(run(tf.norm(tf.constant(x), ord=ord_, axis=axis)), ref[key], rtol=1e-5)


def test_sequence_mask_linspace_meshgrid_and_matrix_helpers():
    lengths = np.array([1, 3, 0])
    np.testing.assert_array_equal(run(tf.sequence_mask(lengths, 4)), np.arange(4)[None, :] < lengths[:, None])
    np.testing.assert_array_equal(run(tf.sequence_mask(tf.constant(lengths), 4, dtype=tf.float32)),
                                  (np.arange(4)[None, :] < lengths[:, None]).astype(np.float32))
    fed = tf.placeholder(tf.int32, [None])  # maxlen from the values: max(lengths), known at run time
    np.testing.assert_array_equal(run(tf.sequence_mask(fed), {fed: [1, 3, 2]}),
                                  np.arange(3)[None, :] < np.array([1, 3, 2])[:, None])
    np.testing.assert_allclose(run(tf.linspace(0.0, 1.0, 5)), np.linspace(0, 1, 5))
    np.testing.assert_allclose(run(tf.linspace(tf.constant(2.0), tf.constant(4.0), 3)), [2, 3, 4])
    gx, gy = run(tf.meshgrid(tf.constant([1., 2., 3.]), tf.constant([4., 5.])))
    rx, ry = np.meshgrid([1., 2., 3.], [4., 5.])
    np.testing.assert_array_equal(gx, rx)
    np.testing.assert_array_equal(gy, ry)
    ix, iy = run(tf.meshgrid(tf.constant([1., 2., 3.]), tf.constant([4., 5.]), indexing="ij"))
    np.testing.assert_array_equal(ix, np.meshgrid([1., 2., 3.], [4., 5.], indexing="ij")[0])
    a = RNG.randn(2, 3, 3).astype(np.float32)
    np.testing.assert_allclose(run(tf.linalg.trace(tf.constant(a))), np.trace(a, axis1=1, axis2=2), rtol=1e-5)
    np.testing.assert_allclose(run(tf.matrix_diag_part(tf.constant(a))), np.diagonal(a, axis1=1, axis2=2))
    np.testing.assert_allclose(run(tf.diag(tf.constant([1., 2.]))), np.diag([1., 2.]))
    np.testing.assert_allclose(run(tf.eye(2, 3)), np.eye(2, 3))
    np.testing.assert_allclose(run(tf.matrix_transpose(tf.constant(a))), a.transpose(0, 2, 1))
    np.testing.assert_allclose(run(tf.matrix_band_part(tf.constant(a), 0, -1)), np.triu(a))
    np.testing.assert_allclose(run(tf.math.exp(tf.constant([0.0]))), [1.0])
    with pytest.raises(AttributeError):
        tf.linalg.no_such_function


def resize_reference(img, out_h, out_w, align_corners=False, half_pixel=False, nearest=False):
    """Independent loop implementation of TF's resize_bilinear / resize_nearest_neighbor (NHWC)."""
    n, h, w, c = img.shape
    out = np.zeros((n, out_h, out_w, c), np.float64)

    def scale(i_size, o_size):
        return (i_size - 1) / (o_size - 1) if align_corners and o_size > 1 else i_size / o_size

    sh, sw = scale(h, out_h), scale(w, out_w)
    for y in range(out_h):
        for x in range(out_w):
            if nearest:
                fy, fx = ((y + 0.5) * sh, (x + 0.5) * sw) if half_pixel else (y * sh, x * sw)
                iy = min(int(np.floor(fy + 0.5)) if align_corners else int(np.floor(fy)), h - 1)
                ix = min(int(np.floor(fx + 0.5)) if align_corners else int(np.floor(fx)), w - 1)
                out[:, y, x] = img[:, iy, ix]
                continue
            fy, fx = ((y + 0.5) * sh - 0.5, (x + 0.5) * sw - 0.5) if half_pixel else (y * sh, x * sw)
            y0, x0 = int(np.floor(fy)), int(np.floor(fx))
            dy, dx = fy - y0, fx - x0
            y1, x1 = min(max(int(np.ceil(fy)), 0), h - 1), min(max(int(np.ceil(fx)), 0), w - 1)
            y0, x0 = max(y0, 0), max(x0, 0)
            top = img[:, y0, x0] + (img[:, y0, x1] - img[:, y0, x0]) * dx
            bottom = img[:, y1, x0] + (img[:, y1, x1] - img[:, y1, x0]) * dx
            out[:, y, x] = top + (bottom - top) * dy
    return out


@pytest.mark.parametrize("size,align,half,nearest", [
    ((5, 7), False, False, False), ((2, 3), False, False, False), ((5, 7), True, False, False),
    ((6, 5), False, True, False), ((5, 7), False, False, True), ((2, 2), True, False, True),
    ((7, 3), False, True, True)])
def test_resize_matches_reference(size, align, half, nearest):
    img = RNG.rand(2, 4, 3, 2).astype(np.float32)
    fn = tf.image.resize_nearest_neighbor if nearest else tf.image.resize_bilinear
    got = run(fn(tf.constant(img), size, align_corners=align, half_pixel_centers=half))
    np.testing.assert_allclose(got, resize_reference(img, size[0], size[1], align, half, nearest), rtol=1e-5,
                               atol=1e-6)


def test_resize_gradient_flips_crops_and_standardization():
    got, num = fd_grad(lambda x: tf.image.resize_images(x, [5, 4]) ** 2, RNG.rand(1, 3, 2, 1).astype(np.float32))
    np.testing.assert_allclose(got, num, rtol=2e-2, atol=2e-3)
    img = RNG.rand(2, 4, 5, 3).astype(np.float32)
    t = tf.constant(img)
    np.testing.assert_array_equal(run(tf.image.flip_left_right(t)), img[:, :, ::-1])
    np.testing.assert_array_equal(run(tf.image.flip_up_down(t)), img[:, ::-1])
    np.testing.assert_array_equal(run(tf.image.crop_to_bounding_box(t, 1, 2, 2, 3)), img[:, 1:3, 2:5])
    padded = run(tf.image.pad_to_bounding_box(t, 1, 0, 6, 6))
    assert padded.shape == (2, 6, 6, 3) and padded[:, 0].sum() == 0
    np.testing.assert_array_equal(padded[:, 1:5, :5], img)
    np.testing.assert_array_equal(run(tf.image.central_crop(t, 0.5)), img[:, 1:3, 1:4])
    std = run(tf.image.per_image_standardization(t))
    ref = (img - img.mean((1, 2, 3), keepdims=True)) / np.maximum(img.std((1, 2, 3), keepdims=True),
                                                                  1 / np.sqrt(60))
    np.testing.assert_allclose(std, ref, rtol=1e-4, atol=1e-5)
    u8 = np.array([[[0], [255]]], np.uint8)
    np.testing.assert_allclose(run(tf.image.convert_image_dtype(tf.constant(u8, dtype=tf.float32) / 255.0,
                                                                tf.float32)), u8 / 255.0)
    flips = run(tf.image.random_flip_left_right(t))
    for i in range(2):
        assert np.array_equal(flips[i], img[i]) or np.array_equal(flips[i], img[i, :, ::-1])
    with pytest.raises(ValueError, match="not inside"):
        tf.image.crop_to_bounding_box(t, 3, 0, 2, 2)
    with pytest.raises(ValueError, match="3-D"):
        tf.image.flip_left_right(tf.zeros([4, 5]))
