# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Images as the image processors take them: PIL images, NumPy arrays (height x width x channels
or channels x height x width, uint8 or float) and mindnlp tensors, one by one, in a list, or in a
list per prompt; local image files are opened with Pillow (no URL is fetched).

Resizing goes through Pillow, as Hugging Face's PIL-backed image processors do, so that the pixel
values are the ones those processors give. Pillow is the optional `vision` extra; it is imported
when an image is first handled.
"""
import os

import numpy as np

IMAGENET_STANDARD_MEAN = [0.5, 0.5, 0.5]
IMAGENET_STANDARD_STD = [0.5, 0.5, 0.5]
CHANNELS = (1, 3, 4)


def pil():
    """The PIL.Image module, or an error saying how to install it."""
    try:
        import PIL.Image
        import PIL.ImageOps
    except ImportError as error:
        raise ImportError("image processing needs Pillow: pip install 'mindnlp[vision]' (or pip install pillow)") \
            from error
    return PIL


def is_pil_image(image):
    try:
        import PIL.Image
    except ImportError:
        return False
    return isinstance(image, PIL.Image.Image)


def is_valid_image(image):
    from mindnlp import core

    return is_pil_image(image) or isinstance(image, (np.ndarray, core.Tensor))


def load_image(image):
    """A local file's image (EXIF orientation applied, as RGB), or a PIL image unchanged."""
    if is_valid_image(image):
        return image
    if not isinstance(image, (str, os.PathLike)):
        raise TypeError(f"an image is a PIL image, a NumPy array, a tensor or the path of a local file, got "
                        f"{type(image).__name__}")
    image = str(image)
    if image.startswith(("http://", "https://")):
        raise ValueError(f"mindnlp does not download images; open {image} yourself and pass the PIL image")
    if not os.path.isfile(image):
        raise FileNotFoundError(f"no image file at {image}")
    PIL = pil()
    return PIL.ImageOps.exif_transpose(PIL.Image.open(image)).convert("RGB")


def fetch_images(images):
    """Every path in a (nested) list of images opened; the rest unchanged."""
    if isinstance(images, (list, tuple)):
        return [fetch_images(image) for image in images]
    return load_image(images)


def _ndim(image):
    return None if is_pil_image(image) else len(image.shape)


def _is_image_list(images):
    return isinstance(images, (list, tuple)) and len(images) > 0 and all(is_valid_image(i) for i in images)


def make_nested_list_of_images(images):
    """[[the images of prompt 0], [the images of prompt 1], ...] from one image, a list of images
    (one prompt's), a list of lists, or arrays of stacked images (a 4-D array is one prompt's)."""
    if isinstance(images, (list, tuple)) and images and all(isinstance(i, (list, tuple)) for i in images):
        if all(_is_image_list(i) or not i for i in images):
            return [list(i) for i in images]
    if _is_image_list(images):
        if _ndim(images[0]) in (None, 2, 3):
            return [list(images)]
        if _ndim(images[0]) == 4:
            return [list(stack) for stack in images]
    if is_valid_image(images):
        if _ndim(images) in (None, 2, 3):
            return [[images]]
        if _ndim(images) == 4:
            return [list(images)]
    raise ValueError("images must be an image (a PIL image, a NumPy array or a tensor of 2, 3 or 4 dimensions), "
                     f"a list of them, or a list of such lists; got {_describe(images)}")


def make_flat_list_of_images(images):
    """One list of single images, whatever the nesting."""
    return [image for group in make_nested_list_of_images(images) for image in group]


def _describe(images):
    if isinstance(images, (list, tuple)):
        inner = ", ".join(sorted({_describe(i) for i in images})) if images else "nothing"
        return f"a {type(images).__name__} of {inner}"
    shape = getattr(images, "shape", None)
    return f"{type(images).__name__}{'' if shape is None else ' of shape ' + str(tuple(shape))}"


def infer_channels_first(image):
    """Whether a 3-D array holds channels first (1, 3 or 4 of them), as HF decides: first when
    both ends could be channels."""
    if image.ndim != 3:
        raise ValueError(f"an image array has 2 or 3 dimensions, got shape {image.shape}")
    if image.shape[0] in CHANNELS:
        return True
    if image.shape[-1] in CHANNELS:
        return False
    raise ValueError(f"cannot tell the channels of an image of shape {image.shape}: neither the first nor the last "
                     f"dimension is {', '.join(map(str, CHANNELS))}")


def to_channels_first(image, do_convert_rgb=True, channels_first=None):
    """A single image as a channels x height x width NumPy array; with `do_convert_rgb`, three
    channels (gray repeated, transparency composited onto white)."""
    from mindnlp import core

    if isinstance(image, core.Tensor):
        image = image.numpy()
    if is_pil_image(image):
        if do_convert_rgb:
            image = _pil_to_rgb(image)
        array = np.array(image)
        return array[None] if array.ndim == 2 else np.moveaxis(array, -1, 0)
    if not isinstance(image, np.ndarray):
        raise TypeError(f"an image is a PIL image, a NumPy array or a tensor, got {type(image).__name__}")
    if image.ndim == 2:
        image = image[None]
    elif not (infer_channels_first(image) if channels_first is None else channels_first):
        image = np.moveaxis(image, -1, 0)
    if do_convert_rgb:
        image = _array_to_rgb(image)
    return image


def _pil_to_rgb(image):
    if "A" not in image.getbands() and image.info.get("transparency") is None:
        return image.convert("RGB")
    PIL = pil()
    image = image.convert("RGBA")
    white = PIL.Image.new("RGBA", image.size, (255, 255, 255, 255))
    return PIL.Image.alpha_composite(white, image).convert("RGB")


def _array_to_rgb(image):
    """Channels-first: one channel repeated three times; four composited onto white (255 for
    integers, 1.0 for floats, which must then lie in [0, 1])."""
    if image.shape[0] == 1:
        return np.repeat(image, 3, axis=0)
    if image.shape[0] != 4:
        return image
    integer = np.issubdtype(image.dtype, np.integer)
    if not integer and (image.min() < 0.0 or image.max() > 1.0):
        raise ValueError(f"an RGBA float image must lie in [0, 1], got [{image.min()}, {image.max()}]")
    white = 255 if integer else 1.0
    alpha = image[3:4] / white
    composite = alpha * image[:3] + (1 - alpha) * white
    return np.round(composite).astype(image.dtype) if integer else composite.astype(image.dtype)


def _needs_scaling_for_pil(image):
    """Whether a float image in [0, 1] must be scaled to [0, 255] to become a PIL image; values
    that fit neither range cannot."""
    if image.dtype == np.uint8:
        return False
    if np.allclose(image, image.astype(int)):
        if image.min() >= 0 and image.max() <= 255:
            return False
        raise ValueError(f"an image with values outside [0, 255] ([{image.min()}, {image.max()}]) cannot be resized")
    if image.min() >= 0 and image.max() <= 1:
        return True
    raise ValueError(f"a float image with values outside [0, 1] ([{image.min()}, {image.max()}]) cannot be resized")


def rescale(image, scale):
    """image * scale in float64, stored as float32."""
    return (image.astype(np.float64) * scale).astype(np.float32)


def resize(image, height, width, resample):
    """A channels-first image resized by Pillow with the `resample` filter. Float images in [0, 1]
    go through uint8 and come back in [0, 1]."""
    PIL = pil()
    scaled = _needs_scaling_for_pil(image)
    pixels = rescale(image, 255) if scaled else image
    pixels = np.moveaxis(pixels, 0, -1)
    if pixels.shape[-1] == 1:
        pixels = pixels[..., 0]
    resized = PIL.Image.fromarray(pixels.astype(np.uint8)).resize((width, height), resample=resample)
    resized = np.array(resized)
    resized = resized[None] if resized.ndim == 2 else np.moveaxis(resized, -1, 0)
    return rescale(resized, 1 / 255) if scaled else resized


def normalize(image, mean, std):
    """(image - mean) / std per channel, in float32 unless the image is already float."""
    if not np.issubdtype(image.dtype, np.floating):
        image = image.astype(np.float32)
    channels = image.shape[0]
    mean, std = (np.array(_per_channel(value, channels, name), dtype=image.dtype)[:, None, None]
                 for value, name in ((mean, "image_mean"), (std, "image_std")))
    return (image - mean) / std


def _per_channel(value, channels, name):
    if isinstance(value, (list, tuple)):
        if len(value) != channels:
            raise ValueError(f"{name} has {len(value)} values for an image of {channels} channels")
        return list(value)
    return [value] * channels


__all__ = ["IMAGENET_STANDARD_MEAN", "IMAGENET_STANDARD_STD", "fetch_images", "is_valid_image", "load_image",
           "make_flat_list_of_images", "make_nested_list_of_images", "normalize", "rescale", "resize"]
