# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`Pipeline`: tokenizer → model → readable answer, with Hugging Face's call conventions.

A pipeline splits the work as HF does: `preprocess` turns one input into model inputs,
`_forward` runs the model, `postprocess` turns the outputs into Python objects, and
`_sanitize_parameters` routes call keywords to those three steps. `ChunkPipeline`s let one
input become several model calls (long texts split into windows) whose outputs
`postprocess` receives together.

A single input gives a single answer; a list gives a list. With `batch_size` > 1, inputs
are padded to the longest of their batch and run together, then split back into items
before `postprocess`, exactly as HF's DataLoader-based loop does (so, as in HF,
feature-extraction returns the padded length for items of a padded batch).
"""
import inspect
import types

from ... import core
from ..utils.generic import ModelOutput


class PipelineException(Exception):
    """An input the pipeline's task cannot handle (HF's name and fields)."""

    def __init__(self, task, model, reason):
        super().__init__(reason)
        self.task = task
        self.model = model


def _pad_value(key, tokenizer):
    if key == "input_ids":
        return tokenizer.pad_token_id
    if key in ("p_mask", "special_tokens_mask"):
        return 1
    return 0


def _pad_and_stack(values, padding_value, padding_side):
    """Items of shape (1, length, ...) → (batch, longest, ...), filled with padding_value."""
    if values[0].ndim == 1:
        return core.cat(values, dim=0)
    longest = max(v.shape[1] for v in values)
    if all(v.shape[1] == longest for v in values):
        return core.cat(values, dim=0)
    shape = (len(values), longest) + tuple(values[0].shape[2:])
    batch = core.full(shape, padding_value, dtype=values[0].dtype)
    for i, value in enumerate(values):
        length = value.shape[1]
        if padding_side == "left":
            batch[i, longest - length:] = value[0]
        else:
            batch[i, :length] = value[0]
    return batch


def _item_of(value, index):
    """Row `index` of a batched model output, kept with a batch dimension of 1."""
    if value is None:
        return None
    if isinstance(value, core.Tensor):
        return value[index:index + 1]
    if isinstance(value, tuple) and value and isinstance(value[0], core.Tensor):
        return tuple(v[index:index + 1] for v in value)
    return value[index]


class Pipeline:
    """Base class: holds model and tokenizer, routes keywords, runs single inputs and batches."""

    def __init__(self, model, tokenizer=None, task="", device=None, batch_size=None, **kwargs):
        kwargs.pop("dtype", None)
        kwargs.pop("torch_dtype", None)
        self.task = task
        self.model = model
        self.tokenizer = tokenizer
        if device is not None:
            self.model.to(_as_device(device))
        self.device = self.model.device
        self._batch_size = batch_size
        self._preprocess_params, self._forward_params, self._postprocess_params = self._sanitize_parameters(**kwargs)

    def __repr__(self):
        return f"{self.__class__.__name__}(task={self.task!r}, model={self.model.__class__.__name__})"

    # --- the three steps, defined by each task ---
    def _sanitize_parameters(self, **pipeline_parameters):
        """Split call keywords into (preprocess, forward, postprocess) parameter dicts."""
        raise NotImplementedError(f"{self.__class__.__name__} must implement _sanitize_parameters")

    def preprocess(self, input_, **preprocess_parameters):
        raise NotImplementedError(f"{self.__class__.__name__} must implement preprocess")

    def _forward(self, input_tensors, **forward_parameters):
        raise NotImplementedError(f"{self.__class__.__name__} must implement _forward")

    def postprocess(self, model_outputs, **postprocess_parameters):
        raise NotImplementedError(f"{self.__class__.__name__} must implement postprocess")

    # --- running ---
    def _model_accepts(self, name):
        return name in inspect.signature(self.model.forward).parameters

    def forward(self, model_inputs, **forward_params):
        """_forward without autograd, with the tensors on the model's device; the outputs come
        back on the CPU (as HF's do), where postprocess reads them."""
        model_inputs = {k: v.to(self.device) if isinstance(v, core.Tensor) else v for k, v in model_inputs.items()}
        with core.no_grad():
            outputs = self._forward(model_inputs, **forward_params)
        return outputs if self.device.type == "cpu" else _on_cpu(outputs)

    def __call__(self, inputs, *args, batch_size=None, **kwargs):
        if args:
            raise TypeError(f"{self.__class__.__name__} takes one input (a text, a list, or a generator); got "
                            f"{len(args)} more positional arguments")
        batch_size = batch_size if batch_size is not None else (self._batch_size or 1)
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        preprocess_params, forward_params, postprocess_params = self._sanitize_parameters(**kwargs)
        params = ({**self._preprocess_params, **preprocess_params}, {**self._forward_params, **forward_params},
                  {**self._postprocess_params, **postprocess_params})
        if isinstance(inputs, list):
            return list(self._iterate(inputs, batch_size, *params))
        if isinstance(inputs, types.GeneratorType):
            return self._iterate(inputs, batch_size, *params)
        if isinstance(self, ChunkPipeline):
            return next(self._iterate([inputs], batch_size, *params))
        return self.run_single(inputs, *params)

    def run_single(self, inputs, preprocess_params, forward_params, postprocess_params):
        model_inputs = self.preprocess(inputs, **preprocess_params)
        model_outputs = self.forward(dict(model_inputs), **forward_params)
        return self.postprocess(model_outputs, **postprocess_params)

    def _features(self, item, preprocess_params):
        """The model inputs of one item: one dict (a chunk pipeline yields several)."""
        return [dict(self.preprocess(item, **preprocess_params))]

    def _iterate(self, inputs, batch_size, preprocess_params, forward_params, postprocess_params):
        """Yield one answer per input, running the model on batches of `batch_size` features."""
        pending = []  # features of the current batch: (item number, is last feature of its item, features)
        finished = {}  # item number → per-feature outputs collected so far
        for number, item in enumerate(inputs):
            features = self._features(item, preprocess_params)
            for i, feature in enumerate(features):
                pending.append((number, i == len(features) - 1, feature))
                if len(pending) == batch_size:
                    yield from self._flush(pending, finished, forward_params, postprocess_params)
                    pending = []
        if pending:
            yield from self._flush(pending, finished, forward_params, postprocess_params)

    def _flush(self, pending, finished, forward_params, postprocess_params):
        outputs = self._run_batch([feature for _, _, feature in pending], forward_params)
        for (number, is_last, _), output in zip(pending, outputs):
            finished.setdefault(number, []).append(output)
            if is_last:
                yield self._postprocess_item(finished.pop(number), postprocess_params)

    def _postprocess_item(self, outputs, postprocess_params):
        return self.postprocess(outputs[0], **postprocess_params)

    def _run_batch(self, features, forward_params):
        if len(features) == 1:
            return [self.forward(features[0], **forward_params)]
        batch = self._collate(features)
        output = self.forward(batch, **forward_params)
        return [self._unbatch(output, i) for i in range(len(features))]

    def _collate(self, features):
        keys = set(features[0])
        for feature in features:
            if set(feature) != keys:
                raise ValueError(f"The elements of the batch contain different keys. Cannot batch them "
                                 f"({set(feature)} != {keys})")
        if self.tokenizer.pad_token_id is None:
            raise ValueError("Pipeline with tokenizer without pad_token cannot do batching. You can try to set it "
                             "with `pipe.tokenizer.pad_token_id = model.config.eos_token_id`.")
        batch = {}
        for key in features[0]:
            values = [feature[key] for feature in features]
            if isinstance(values[0], core.Tensor):
                batch[key] = _pad_and_stack(values, _pad_value(key, self.tokenizer), self.tokenizer.padding_side)
            else:
                batch[key] = values
        return batch

    @staticmethod
    def _unbatch(output, index):
        items = {key: _item_of(value, index) for key, value in output.items()}
        if isinstance(output, ModelOutput):
            return output.__class__(**items)
        return items


class ChunkPipeline(Pipeline):
    """A pipeline whose `preprocess` yields several model inputs per item (windows of a long
    text); `postprocess` receives the list of their outputs."""

    def run_single(self, inputs, preprocess_params, forward_params, postprocess_params):
        outputs = [self.forward(features, **forward_params) for features in self.preprocess(inputs,
                                                                                           **preprocess_params)]
        return self.postprocess(outputs, **postprocess_params)

    def _features(self, item, preprocess_params):
        return [dict(features) for features in self.preprocess(item, **preprocess_params)]

    def _postprocess_item(self, outputs, postprocess_params):
        return self.postprocess(outputs, **postprocess_params)


def _on_cpu(value):
    """`value` with every tensor in it (nested in outputs, dicts, lists, tuples) moved to the CPU."""
    if isinstance(value, core.Tensor):
        return value.cpu()
    if isinstance(value, ModelOutput):
        return value.__class__(**{k: _on_cpu(v) for k, v in value.items()})
    if isinstance(value, dict):
        return {k: _on_cpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_on_cpu(v) for v in value)
    return value


def _as_device(device):
    """HF's device spellings: an int (-1 = cpu, n = cuda:n), a string, or a device."""
    if isinstance(device, core.device):
        return device
    if isinstance(device, int):
        return core.device("cpu") if device < 0 else core.device(f"cuda:{device}")
    return core.device(device)
