"""tf.image basics over NHWC (or HWC) images: resizing (bilinear, nearest neighbor; TF1's
align_corners / half_pixel_centers coordinate rules), flips, crops and pads, standardization,
dtype conversion, grayscale, brightness/contrast. Resizing is a gather of precomputed source
rows and columns plus interpolation weights, so it has a gradient and fuses like any other op."""
import numpy as np

from .. import dtypes as _dtypes
from ..framework import Tensor, constant, convert_to_tensor
from . import math_ops as _m
from . import array_ops as _a


class ResizeMethod(object):
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


def _image_rank(image, what):
    image = convert_to_tensor(image)
    rank = image.shape.ndims
    if rank not in (3, 4):
        raise ValueError("%s: '%s' must be a 3-D [height, width, channels] or 4-D [batch, height, width, channels] "
                         "image (its shape is %s)" % (what, image.name, image.shape))
    return image, rank


def _hw(image, rank, what):
    dims = image.shape.as_list()
    h, w = dims[rank - 3], dims[rank - 2]
    if h is None or w is None:
        raise ValueError("tinyflow: %s needs the static height and width of '%s' (shape %s)" % (what, image.name,
                                                                                                image.shape))
    return h, w


def _source_coords(in_size, out_size, align_corners, half_pixel):
    """TF's resize coordinate transform: where output index i reads from in the input."""
    if align_corners and out_size > 1:
        scale = (in_size - 1) / float(out_size - 1)
    else:
        scale = in_size / float(out_size)
    i = np.arange(out_size, dtype=np.float64)
    return (i + 0.5) * scale - 0.5 if half_pixel else i * scale, scale


def _gather_axis(x, idx, axis):
    return _a.gather(x, constant(np.asarray(idx, np.int32)), axis=axis)


def _lerp_axis(x, in_size, out_size, axis, rank, align_corners, half_pixel):
    src, _ = _source_coords(in_size, out_size, align_corners, half_pixel)
    if half_pixel:
        src = np.maximum(src, 0.0)
    lo = np.minimum(np.floor(src).astype(np.int64), in_size - 1)
    hi = np.minimum(lo + 1, in_size - 1)
    frac = (src - np.floor(src)).astype(np.float32)
    shape = [1] * rank
    shape[axis] = out_size
    weight = constant(frac.reshape(shape))
    a, b = _gather_axis(x, lo, axis), _gather_axis(x, hi, axis)
    return a + (b - a) * weight


def _nearest_axis(x, in_size, out_size, axis, align_corners, half_pixel):
    src, _ = _source_coords(in_size, out_size, align_corners, half_pixel)
    idx = np.floor(src + 0.5) if align_corners else np.floor(src + (0.5 if half_pixel else 0.0))
    return _gather_axis(x, np.clip(idx, 0, in_size - 1).astype(np.int64), axis)


def _static_size(size):
    if isinstance(size, Tensor):
        raise ValueError("tinyflow: image resizing needs a static size (a list of two ints), not a tensor")
    size = [int(s) for s in size]
    if len(size) != 2 or min(size) <= 0:
        raise ValueError("resize: size must be two positive ints [new_height, new_width] (got %r)" % (size,))
    return size


def resize_images(images, size, method=ResizeMethod.BILINEAR, align_corners=False, preserve_aspect_ratio=False,
                  name=None, half_pixel_centers=False):
    """TF1 tf.image.resize_images: BILINEAR or NEAREST_NEIGHBOR (float output for bilinear)."""
    images, rank = _image_rank(images, "resize_images")
    in_h, in_w = _hw(images, rank, "resize_images")
    out_h, out_w = _static_size(size)
    if preserve_aspect_ratio:
        scale = min(out_h / float(in_h), out_w / float(in_w))
        out_h, out_w = int(round(in_h * scale)), int(round(in_w * scale))
    if method in (ResizeMethod.BILINEAR, "bilinear"):
        x = images if images.dtype == _dtypes.float32 else _m.cast(images, _dtypes.float32)
        x = _lerp_axis(x, in_h, out_h, rank - 3, rank, align_corners, half_pixel_centers)
        x = _lerp_axis(x, in_w, out_w, rank - 2, rank, align_corners, half_pixel_centers)
    elif method in (ResizeMethod.NEAREST_NEIGHBOR, "nearest"):
        x = _nearest_axis(images, in_h, out_h, rank - 3, align_corners, half_pixel_centers)
        x = _nearest_axis(x, in_w, out_w, rank - 2, align_corners, half_pixel_centers)
    else:
        raise ValueError("tinyflow: resize method %r is not supported yet (BILINEAR and NEAREST_NEIGHBOR are)" %
                         (method,))
    return _a.identity(x, name=name)


def resize_bilinear(images, size, align_corners=False, name=None, half_pixel_centers=False):
    return resize_images(images, size, ResizeMethod.BILINEAR, align_corners, name=name,
                         half_pixel_centers=half_pixel_centers)


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    return resize_images(images, size, ResizeMethod.NEAREST_NEIGHBOR, align_corners, name=name,
                         half_pixel_centers=half_pixel_centers)


def resize(images, size, method="bilinear", preserve_aspect_ratio=False, antialias=False, name=None):
    """TF2-style tf.image.resize: half-pixel centers."""
    method = {"bilinear": ResizeMethod.BILINEAR, "nearest": ResizeMethod.NEAREST_NEIGHBOR}.get(method, method)
    return resize_images(images, size, method, False, preserve_aspect_ratio, name, half_pixel_centers=True)


def _flip(image, axis_from_end, name):
    image, rank = _image_rank(image, "flip")
    index = [slice(None)] * rank
    index[rank - axis_from_end] = slice(None, None, -1)
    return _a.identity(image[tuple(index)], name=name)


def flip_left_right(image, name=None):
    return _flip(image, 2, name)


def flip_up_down(image, name=None):
    return _flip(image, 3, name)


def _random_flip(image, axis_from_end, seed, name):
    image, rank = _image_rank(image, "random_flip")
    flipped = _flip(image, axis_from_end, None)
    batch = [image.shape.as_list()[0] if rank == 4 else 1]
    if rank == 4 and batch[0] is None:
        raise ValueError("tinyflow: random flips of a batch need its static batch size (shape %s)" % image.shape)
    coin = _a.random_uniform(batch, seed=seed)
    pick = _m.cast(_m.less(coin, 0.5), image.dtype)  # 1: flip this image
    pick = _a.reshape(pick, (batch if rank == 4 else []) + [1, 1, 1])
    return _m.add(flipped * pick, image * (1 - pick), name=name)


def random_flip_left_right(image, seed=None):
    return _random_flip(image, 2, seed, None)


def random_flip_up_down(image, seed=None):
    return _random_flip(image, 3, seed, None)


def transpose_image(image, name=None):
    image, rank = _image_rank(image, "transpose_image")
    return _a.transpose(image, [1, 0, 2] if rank == 3 else [0, 2, 1, 3], name=name)


def rot90(image, k=1, name=None):
    k = int(k) % 4
    out = image
    for _ in range(k):  # counter-clockwise: transpose, then flip up-down
        out = flip_up_down(transpose_image(out))
    return _a.identity(convert_to_tensor(out), name=name)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    image, rank = _image_rank(image, "crop_to_bounding_box")
    h, w = _hw(image, rank, "crop_to_bounding_box")
    if offset_height < 0 or offset_width < 0 or offset_height + target_height > h or \
            offset_width + target_width > w or target_height <= 0 or target_width <= 0:
        raise ValueError("crop_to_bounding_box: the box (%d, %d) + (%d, %d) is not inside the %dx%d image '%s'" % (
            offset_height, offset_width, target_height, target_width, h, w, image.name))
    begin = [offset_height, offset_width, 0]
    size = [target_height, target_width, -1]
    if rank == 4:
        begin, size = [0] + begin, [-1] + size
    return _a.slice(image, begin, size)


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    image, rank = _image_rank(image, "pad_to_bounding_box")
    h, w = _hw(image, rank, "pad_to_bounding_box")
    after_h, after_w = target_height - offset_height - h, target_width - offset_width - w
    if min(offset_height, offset_width, after_h, after_w) < 0:
        raise ValueError("pad_to_bounding_box: a %dx%d image at (%d, %d) does not fit in %dx%d" % (
            h, w, offset_height, offset_width, target_height, target_width))
    pads = [[offset_height, after_h], [offset_width, after_w], [0, 0]]
    return _a.pad(image, ([[0, 0]] if rank == 4 else []) + pads)


def central_crop(image, central_fraction):
    if not 0.0 < central_fraction <= 1.0:
        raise ValueError("central_fraction must be within (0, 1] (got %r)" % (central_fraction,))
    image, rank = _image_rank(image, "central_crop")
    h, w = _hw(image, rank, "central_crop")
    off_h = int((h - h * central_fraction) / 2)
    off_w = int((w - w * central_fraction) / 2)
    return crop_to_bounding_box(image, off_h, off_w, h - 2 * off_h, w - 2 * off_w)


def resize_image_with_crop_or_pad(image, target_height, target_width):
    image, rank = _image_rank(image, "resize_image_with_crop_or_pad")
    h, w = _hw(image, rank, "resize_image_with_crop_or_pad")
    crop_h, crop_w = max(h - target_height, 0), max(w - target_width, 0)
    out = crop_to_bounding_box(image, crop_h // 2, crop_w // 2, min(h, target_height), min(w, target_width))
    ch, cw = min(h, target_height), min(w, target_width)
    pad_h, pad_w = max(target_height - ch, 0), max(target_width - cw, 0)
    return pad_to_bounding_box(out, pad_h // 2, pad_w // 2, target_height, target_width)


resize_with_crop_or_pad = resize_image_with_crop_or_pad


def per_image_standardization(image):
    """(x - mean) / max(stddev, 1/sqrt(num_elements)) per image, as TF."""
    image, rank = _image_rank(image, "per_image_standardization")
    dims = image.shape.as_list()[-3:]
    if None in dims:
        raise ValueError("tinyflow: per_image_standardization needs static image sizes (shape %s)" % image.shape)
    x = _m.cast(image, _dtypes.float32)
    axes = [rank - 3, rank - 2, rank - 1]
    mean = _m.reduce_mean(x, axes, keepdims=True)
    var = _m.reduce_mean(_m.square(x - mean), axes, keepdims=True)
    floor = 1.0 / np.sqrt(float(np.prod(dims)))
    return (x - mean) / _m.maximum(_m.sqrt(var), floor)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """Integer images scale to [0, 1] floats (uint8 / 255) and back, as TF."""
    image = convert_to_tensor(image)
    dtype = _dtypes.as_dtype(dtype)
    src = image.dtype
    if src == dtype:
        return _a.identity(image, name=name)
    if src.is_floating and dtype.is_floating:
        return _m.cast(image, dtype, name=name)
    if src.is_integer and dtype.is_floating:
        return _m.multiply(_m.cast(image, dtype), 1.0 / src.max, name=name)
    if src.is_floating and dtype.is_integer:
        scaled = _m.multiply(image, dtype.max + 0.5)
        if saturate:
            scaled = _m.clip_by_value(scaled, 0.0, float(dtype.max))
        return _m.cast(scaled, dtype, name=name)
    raise ValueError("tinyflow: convert_image_dtype from %s to %s is not supported yet" % (src.name, dtype.name))


def rgb_to_grayscale(images, name=None):
    images = convert_to_tensor(images)
    x = _m.cast(images, _dtypes.float32)
    weights = constant(np.array([0.2989, 0.5870, 0.1140], np.float32))
    gray = _m.reduce_sum(x * weights, -1, keepdims=True)
    return _m.cast(gray, images.dtype, name=name) if images.dtype != _dtypes.float32 else _a.identity(gray, name=name)


def grayscale_to_rgb(images, name=None):
    images = convert_to_tensor(images)
    rank = images.shape.ndims
    return _a.tile(images, [1] * (rank - 1) + [3], name=name)


def adjust_brightness(image, delta):
    return _m.add(_m.cast(image, _dtypes.float32), float(delta)) if not isinstance(delta, Tensor) else \
        _m.add(_m.cast(image, _dtypes.float32), delta)


def adjust_contrast(images, contrast_factor):
    images, rank = _image_rank(images, "adjust_contrast")
    x = _m.cast(images, _dtypes.float32)
    mean = _m.reduce_mean(x, [rank - 3, rank - 2], keepdims=True)
    return (x - mean) * contrast_factor + mean


def random_brightness(image, max_delta, seed=None):
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative (got %r)" % (max_delta,))
    delta = _a.random_uniform([], -max_delta, max_delta, seed=seed)
    return _m.add(_m.cast(image, _dtypes.float32), delta)


def random_contrast(image, lower, upper, seed=None):
    if not 0 <= lower < upper:
        raise ValueError("random_contrast: need 0 <= lower < upper (got %r, %r)" % (lower, upper))
    return adjust_contrast(image, _a.random_uniform([], lower, upper, seed=seed))
