# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`Trainer`: the training and evaluation loop of Hugging Face transformers, on mindnlp.core.

The public surface (arguments, methods, callbacks, checkpoint layout, logged keys) is HF's, so a
script written for HF's Trainer runs after changing its imports. There is one process and one
device here, so the loop has none of HF's distributed, DeepSpeed or accelerate branches.

Resuming is exact: a checkpoint holds the weights, the optimizer and scheduler states, the RNG
states and the step count; the training sampler's order depends only on (seed, epoch); the
consumed batches of the interrupted epoch are skipped by index. A resumed run therefore logs the
same losses as an uninterrupted one.
"""
import contextlib
import inspect
import itertools
import json
import logging
import math
import os
import random
import re
import shutil
import sys
import time
import warnings
from collections.abc import Mapping

import numpy as np

from .. import core
from ..core import distributed as dist
from ..core import nn
from ..core.nn.parallel import DistributedDataParallel
from ..core.serialization import write_text_atomic
from ..core.utils.data import BatchSampler, DataLoader, Sampler, SequentialSampler
from ..core.utils.data.dataset import is_iterable_style
from .data.data_collator import DataCollatorWithPadding, default_data_collator
from .models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
from .optimization import Adafactor, get_scheduler
from .trainer_callback import (CallbackHandler, DefaultFlowCallback, ExportableState, PrinterCallback,
                               ProgressCallback, TrainerControl, TrainerState)
from .trainer_pt_utils import IterableDatasetShard, LabelSmoother, ShardedBatchSampler
from .trainer_utils import (PREFIX_CHECKPOINT_DIR, EpochSeededRandomSampler, EvalLoopOutput, EvalPrediction,
                            PredictionOutput, SaveStrategy, SkipBatchSampler, TrainOutput,
                            denumpify_detensorize, get_last_checkpoint, has_length, loss_curve_svg,
                            rotate_checkpoints, set_seed, sorted_checkpoints, speed_metrics)
from .training_args import ADAMW_NAMES, OptimizerNames, TrainingArguments
from .utils import (ADAPTER_SAFE_WEIGHTS_NAME, ADAPTER_WEIGHTS_NAME, SAFE_WEIGHTS_INDEX_NAME, SAFE_WEIGHTS_NAME,
                    WEIGHTS_NAME)

logger = logging.getLogger(__name__)

TRAINER_STATE_NAME = "trainer_state.json"
TRAINING_ARGS_NAME = "training_args.json"
OPTIMIZER_NAME = "optimizer.pt"
SCHEDULER_NAME = "scheduler.pt"
SCALER_NAME = "scaler.pt"
RNG_STATE_NAME = "rng_state.pth"
LOSS_CURVE_NAME = "loss_curve.png"
LOSS_CURVE_SVG_NAME = "loss_curve.svg"

DEFAULT_CALLBACKS = [DefaultFlowCallback]


def _is_peft_model(model):
    """A `mindnlp.peft` PeftModel, checked without importing peft: if the package was never
    imported, no model can be one of its classes."""
    peft = sys.modules.get("mindnlp.peft")
    peft_classes = tuple(getattr(peft, name) for name in ("PeftModel", "PeftMixedModel") if hasattr(peft, name))
    return bool(peft_classes) and isinstance(model, peft_classes)


def _unwrap_peft(model):
    return model.get_base_model() if _is_peft_model(model) else model


def _is_datasets_dataset(dataset):
    """A `datasets.Dataset`, or a `datasets.IterableDataset` whose columns are known (streamed
    data may not say until read): one whose unused columns can be removed up front."""
    datasets = sys.modules.get("datasets")
    if datasets is None:
        return False
    return isinstance(dataset, datasets.Dataset) or (
        isinstance(dataset, datasets.IterableDataset) and dataset.column_names is not None)


def find_labels(model_class):
    """The forward arguments that carry labels (`labels`, or `start_positions`/`end_positions` for QA)."""
    signature = inspect.signature(model_class.forward)
    if "QuestionAnswering" in model_class.__name__:
        return [p for p in signature.parameters if "label" in p or p in ("start_positions", "end_positions")]
    return [p for p in signature.parameters if "label" in p]


def can_return_loss(model_class):
    """Whether forward has `return_loss=True` (models that compute a loss without labels)."""
    parameter = inspect.signature(model_class.forward).parameters.get("return_loss")
    return parameter is not None and parameter.default is True


def get_parameter_names(model, forbidden_layer_types, forbidden_name_patterns=()):
    """Names of the parameters outside `forbidden_layer_types` whose name matches none of the patterns."""
    patterns = [re.compile(p) for p in forbidden_name_patterns]
    result = []
    for name, child in model.named_children():
        if isinstance(child, tuple(forbidden_layer_types)):
            continue
        for sub in get_parameter_names(child, forbidden_layer_types, forbidden_name_patterns):
            full = f"{name}.{sub}"
            if not any(p.search(full.lower()) for p in patterns):
                result.append(full)
    result += [k for k in model._parameters if not any(p.search(k.lower()) for p in patterns)]
    return result


def _gather_batches(*per_batch_lists):
    """Every process's per-batch results, in the order of the unsharded batches (batch i of rank r
    was global batch i * world_size + r)."""
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, per_batch_lists)
    merged = []
    for kind in range(len(per_batch_lists)):
        ranks = [part[kind] for part in gathered]
        merged.append([r[i] for i in range(max(map(len, ranks))) for r in ranks if i < len(r)])
    return merged


def _all_reduce_scalar(value, op):
    """A Python number reduced over the processes of the data-parallel job."""
    tensor = core.tensor([float(value)], dtype=core.float64)
    dist.all_reduce(tensor, op=op)
    return tensor.item()


class LengthGroupedSampler(Sampler):
    """Random order in which each batch holds examples of similar length (less padding): a random
    permutation is cut into mega-batches of 50 batches, each sorted by length, longest first."""

    def __init__(self, batch_size, lengths, seed=0):
        self.batch_size = batch_size
        self.lengths = list(lengths)
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = int(epoch)

    def __iter__(self):
        generator = core.Generator().manual_seed(self.seed + self.epoch)
        order = core.randperm(len(self.lengths), generator=generator).tolist()
        mega_size = self.batch_size * min(max(len(self.lengths) // (self.batch_size * 4), 1), 50)
        megabatches = [sorted(order[i:i + mega_size], key=lambda i: self.lengths[i], reverse=True)
                       for i in range(0, len(order), mega_size)]
        return iter([index for mega in megabatches for index in mega])

    def __len__(self):
        return len(self.lengths)


class RemoveColumnsCollator:
    """Drops example fields the model's forward does not take, then calls the collator."""

    def __init__(self, data_collator, signature_columns, model_name, description=None):
        self.data_collator = data_collator
        self.signature_columns = signature_columns
        self.model_name = model_name
        self.description = description
        self.message_logged = False

    def __call__(self, features):
        if isinstance(features[0], Mapping):
            ignored = set(features[0]) - set(self.signature_columns)
            if ignored and not self.message_logged:
                where = f" in the {self.description} set" if self.description else ""
                logger.info(f"The following columns{where} don't have a corresponding argument in "
                            f"`{self.model_name}.forward` and have been ignored: {', '.join(sorted(ignored))}.")
                self.message_logged = True
            features = [{k: v for k, v in f.items() if k in self.signature_columns} for f in features]
        return self.data_collator(features)


def _to_numpy(value):
    if isinstance(value, core.Tensor):
        value = value.detach().cpu()  # predictions gathered from a GPU
        return value.float().numpy() if value.dtype in (core.float16, core.bfloat16) else value.numpy()
    return value


def _nested_numpy(value):
    if isinstance(value, (list, tuple)):
        return type(value)(_nested_numpy(v) for v in value)
    return _to_numpy(value)


def _concat_padded(arrays, padding_index=-100):
    """Concatenate along dim 0; arrays of different lengths in dim 1 (token-level outputs of
    dynamically padded batches) are right-padded with padding_index first, as HF does."""
    if isinstance(arrays[0], (list, tuple)):
        return type(arrays[0])(_concat_padded([a[i] for a in arrays], padding_index) for i in range(len(arrays[0])))
    arrays = [np.atleast_1d(a) for a in arrays]
    if arrays[0].ndim < 2 or all(a.shape[1:] == arrays[0].shape[1:] for a in arrays):
        return np.concatenate(arrays, axis=0)
    width = max(a.shape[1] for a in arrays)
    padded = []
    for a in arrays:
        out = np.full((a.shape[0], width) + a.shape[2:], padding_index, dtype=a.dtype)
        out[:, :a.shape[1]] = a
        padded.append(out)
    return np.concatenate(padded, axis=0)


def _find_batch_size(inputs):
    if isinstance(inputs, Mapping):
        for value in inputs.values():
            size = _find_batch_size(value)
            if size is not None:
                return size
    elif isinstance(inputs, (list, tuple)):
        for value in inputs:
            size = _find_batch_size(value)
            if size is not None:
                return size
    elif isinstance(inputs, (core.Tensor, np.ndarray)):
        return inputs.shape[0] if len(inputs.shape) >= 1 else None
    return None


class Trainer:
    """Train, evaluate and predict with a model (HF's Trainer contract).

    `model` is a `PreTrainedModel`, a PEFT model, or any `nn.Module` whose forward returns the loss
    first (or under "loss"). `tokenizer` is the v4 name of `processing_class`.
    """

    def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None,
                 processing_class=None, model_init=None, compute_loss_func=None, compute_metrics=None, callbacks=None,
                 optimizers=(None, None), optimizer_cls_and_kwargs=None, preprocess_logits_for_metrics=None,
                 tokenizer=None):
        if args is None:
            args = TrainingArguments(output_dir="tmp_trainer")
        self.args = args
        set_seed(args.seed)
        if processing_class is None:
            processing_class = tokenizer
        if model is None:
            if model_init is None:
                raise RuntimeError("`Trainer` requires either a `model` or `model_init` argument")
            self.model_init = model_init
            model = self.call_model_init()
        elif model_init is not None:
            raise ValueError("`Trainer` requires either a `model` or `model_init` argument, but not both.")
        else:
            self.model_init = None
        model.to(args.device)
        self.model = model
        self.model_wrapped = model

        inspected = _unwrap_peft(model)
        if hasattr(inspected, "accepts_loss_kwargs"):
            self.model_accepts_loss_kwargs = inspected.accepts_loss_kwargs
        else:
            self.model_accepts_loss_kwargs = any(p.kind == inspect.Parameter.VAR_KEYWORD
                                                 for p in inspect.signature(inspected.forward).parameters.values())
        default_labels = find_labels(type(inspected))
        self.label_names = default_labels if args.label_names is None else args.label_names
        self.can_return_loss = can_return_loss(type(inspected))
        config = getattr(inspected, "config", None)
        self._loss_shifts_labels = (type(inspected).__name__.endswith("ForCausalLM")
                                    and not getattr(config, "is_encoder_decoder", False))
        self.label_smoother = None
        if args.label_smoothing_factor != 0:
            if getattr(config, "problem_type", None) == "multi_label_classification":
                warnings.warn("Label smoothing is not compatible with multi-label classification. Disabling label "
                              "smoothing for this training run.", UserWarning)
            else:
                self.label_smoother = LabelSmoother(epsilon=args.label_smoothing_factor)

        if data_collator is None:
            data_collator = DataCollatorWithPadding(processing_class) if hasattr(processing_class, "pad") else \
                default_data_collator
        self.data_collator = data_collator
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.processing_class = processing_class
        self.compute_loss_func = compute_loss_func
        self.compute_metrics = compute_metrics
        self.preprocess_logits_for_metrics = preprocess_logits_for_metrics
        self.optimizer, self.lr_scheduler = optimizers
        self.optimizer_cls_and_kwargs = optimizer_cls_and_kwargs
        if optimizer_cls_and_kwargs is not None and self.optimizer is not None:
            raise RuntimeError("Passing both `optimizers` and `optimizer_cls_and_kwargs` arguments is incompatible.")
        if self.model_init is not None and (self.optimizer is not None or self.lr_scheduler is not None):
            raise RuntimeError("Passing a `model_init` is incompatible with providing the `optimizers` argument. "
                               "You should subclass `Trainer` and override the `create_optimizer_and_scheduler` "
                               "method.")

        callbacks = DEFAULT_CALLBACKS + list(callbacks or [])
        self.callback_handler = CallbackHandler(callbacks, self.model, self.processing_class, self.optimizer,
                                                self.lr_scheduler)
        self.add_callback(PrinterCallback if args.disable_tqdm else ProgressCallback)
        os.makedirs(args.output_dir, exist_ok=True)

        self.control = TrainerControl()
        self.state = TrainerState(stateful_callbacks=self._stateful_callbacks())
        self.is_in_train = False
        self._signature_columns = None
        self._created_lr_scheduler = False
        self.scaler = core.amp.GradScaler(args.device.type) if args.fp16 else None
        self.current_gradient_accumulation_steps = 1
        self.control = self.callback_handler.on_init_end(self.args, self.state, self.control)

    # ---- callbacks ----
    def add_callback(self, callback):
        self.callback_handler.add_callback(callback)

    def pop_callback(self, callback):
        return self.callback_handler.pop_callback(callback)

    def remove_callback(self, callback):
        self.callback_handler.remove_callback(callback)

    def _stateful_callbacks(self):
        return [cb for cb in self.callback_handler.callbacks + [self.control] if isinstance(cb, ExportableState)]

    def is_local_process_zero(self):
        return self.args.local_process_index == 0

    def is_world_process_zero(self):
        return self.args.process_index == 0

    def _shard(self, batch_sampler):
        """This process's share of the batches in a data-parallel job (all of them otherwise)."""
        if self.args.world_size == 1:
            return batch_sampler
        return ShardedBatchSampler(batch_sampler, self.args.world_size, self.args.process_index)

    def call_model_init(self, trial=None):
        parameters = len(inspect.signature(self.model_init).parameters)
        model = self.model_init() if parameters == 0 else self.model_init(trial)
        if model is None:
            raise RuntimeError("model_init should not return None.")
        return model

    # ---- data ----
    def _set_signature_columns_if_needed(self):
        if self._signature_columns is None:
            signature = inspect.signature(_unwrap_peft(self.model).forward)
            self._signature_columns = list(signature.parameters) + sorted(
                set(["label", "label_ids"] + list(self.label_names)))

    def _remove_unused_columns(self, dataset, description=None):
        """A `datasets.Dataset` without the columns forward does not take (HF's behaviour)."""
        if not self.args.remove_unused_columns:
            return dataset
        self._set_signature_columns_if_needed()
        ignored = [c for c in dataset.column_names if c not in self._signature_columns]
        if ignored:
            where = f" in the {description} set" if description else ""
            logger.info(f"The following columns{where} don't have a corresponding argument in "
                        f"`{type(self.model).__name__}.forward` and have been ignored: {', '.join(ignored)}.")
        if len(ignored) == len(dataset.column_names):
            raise ValueError(
                f"No columns in the dataset match the model's forward method signature: "
                f"({', '.join(self._signature_columns)}). The following columns have been ignored: "
                f"[{', '.join(ignored)}]. Please check the dataset and model. You may need to set "
                "`remove_unused_columns=False` in `TrainingArguments`.")
        return dataset.remove_columns(ignored)

    def _collator_for(self, dataset, description):
        if _is_datasets_dataset(dataset) or not self.args.remove_unused_columns:
            return self.data_collator
        self._set_signature_columns_if_needed()
        return RemoveColumnsCollator(self.data_collator, self._signature_columns, type(self.model).__name__,
                                     description)

    def _get_train_sampler(self, train_dataset=None):
        dataset = self.train_dataset if train_dataset is None else train_dataset
        if dataset is None or not has_length(dataset):
            return None
        seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
        strategy = self.args.train_sampling_strategy
        if strategy == "sequential":
            return SequentialSampler(dataset)
        if strategy == "group_by_length":
            column = self.args.length_column_name
            if _is_datasets_dataset(dataset) and column in dataset.column_names:
                lengths = dataset[column]
            else:
                name = self.processing_class.model_input_names[0] if self.processing_class is not None else \
                    "input_ids"
                lengths = [len(example[name]) for example in dataset]
            return LengthGroupedSampler(self.args.train_batch_size * self.args.gradient_accumulation_steps,
                                        lengths, seed)
        return EpochSeededRandomSampler(dataset, seed)

    def get_train_dataloader(self):
        if self.train_dataset is None:
            raise ValueError("Trainer: training requires a train_dataset.")
        return self._dataloader(self.train_dataset, "training", self.args.train_batch_size, self._get_train_sampler)

    def _get_inference_dataloader(self, dataset, description):
        return self._dataloader(dataset, description, self.args.eval_batch_size, SequentialSampler)

    def _dataloader(self, dataset, description, batch_size, make_sampler):
        """Batches of a map-style dataset (this process's share of them in a data-parallel job), or of
        an iterable one such as a streamed `datasets.IterableDataset` (in a data-parallel job, training
        takes this process's share of each run of world_size batches; evaluation reads all of it)."""
        args = self.args
        if _is_datasets_dataset(dataset):
            dataset = self._remove_unused_columns(dataset, description)
        collator = self._collator_for(dataset, description)
        if is_iterable_style(dataset):
            if args.world_size > 1 and description == "training":
                dataset = IterableDatasetShard(dataset, batch_size, args.world_size, args.process_index,
                                               args.dataloader_drop_last)
            return DataLoader(dataset, batch_size=batch_size, collate_fn=collator,
                              num_workers=args.dataloader_num_workers, drop_last=args.dataloader_drop_last)
        batch_sampler = BatchSampler(make_sampler(dataset), batch_size, args.dataloader_drop_last)
        return DataLoader(dataset, batch_sampler=self._shard(batch_sampler), collate_fn=collator,
                          num_workers=args.dataloader_num_workers)

    def get_eval_dataloader(self, eval_dataset=None):
        if eval_dataset is None and self.eval_dataset is None:
            raise ValueError("Trainer: evaluation requires an eval_dataset.")
        if isinstance(eval_dataset, str):
            eval_dataset = self.eval_dataset[eval_dataset]
        return self._get_inference_dataloader(eval_dataset if eval_dataset is not None else self.eval_dataset,
                                              "evaluation")

    def get_test_dataloader(self, test_dataset):
        return self._get_inference_dataloader(test_dataset, "test")

    @staticmethod
    def num_examples(dataloader):
        return len(dataloader.dataset)

    # ---- optimizer and scheduler ----
    def get_decay_parameter_names(self, model):
        """Every parameter but biases and normalization weights gets weight decay (HF's rule)."""
        patterns = [r"bias", r"layernorm", r"rmsnorm", r"(?:^|\.)norm(?:$|\.)", r"_norm(?:$|\.)"]
        return get_parameter_names(model, [nn.LayerNorm], patterns)

    @staticmethod
    def get_optimizer_cls_and_kwargs(args, model=None):
        """(optimizer class, kwargs) for `args.optim`; `optim_args` ("k=v,k=v") adds options."""
        kwargs = {"lr": args.learning_rate}
        extra = {}
        if args.optim_args:
            for item in args.optim_args.replace(" ", "").split(","):
                key, value = item.split("=")
                extra[key] = value
        if args.optim in ADAMW_NAMES:
            kwargs.update(betas=(args.adam_beta1, args.adam_beta2), eps=args.adam_epsilon)
            return core.optim.AdamW, kwargs
        if args.optim == OptimizerNames.ADAFACTOR:
            # The lr schedule drives the step size, so Adafactor's own relative steps are off (HF's choice).
            kwargs.update(scale_parameter=False, relative_step=False)
            return Adafactor, kwargs
        options = {OptimizerNames.SGD: (core.optim.SGD, ("momentum", "dampening", "weight_decay"), ("nesterov",)),
                   OptimizerNames.ADAGRAD: (core.optim.Adagrad, ("lr_decay", "weight_decay", "eps"), ()),
                   OptimizerNames.RMSPROP: (core.optim.RMSprop, ("momentum", "alpha", "eps", "weight_decay"),
                                            ("centered",))}
        cls, float_keys, bool_keys = options[args.optim]
        for key in float_keys:
            if key in extra:
                kwargs[key] = float(extra[key])
        for key in bool_keys:
            if key in extra:
                kwargs[key] = extra[key].lower() in ("true", "1", "yes")
        return cls, kwargs

    def create_optimizer(self, model=None):
        """AdamW (or args.optim) over two groups: decayed weights, and biases/norms without decay."""
        model = self.model if model is None else model
        if self.optimizer is None:
            decay = set(self.get_decay_parameter_names(model))
            named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
            groups = [{"params": [p for n, p in named if n in decay], "weight_decay": self.args.weight_decay},
                      {"params": [p for n, p in named if n not in decay], "weight_decay": 0.0}]
            groups = [g for g in groups if g["params"]]
            if not groups:
                raise ValueError("The model has no parameter that requires grad: nothing to train.")
            if self.optimizer_cls_and_kwargs is not None:
                optimizer_cls, optimizer_kwargs = self.optimizer_cls_and_kwargs
            else:
                optimizer_cls, optimizer_kwargs = self.get_optimizer_cls_and_kwargs(self.args, model)
            self.optimizer = optimizer_cls(groups, **optimizer_kwargs)
        return self.optimizer

    def create_scheduler(self, num_training_steps, optimizer=None):
        if self.lr_scheduler is None:
            self.lr_scheduler = get_scheduler(
                self.args.lr_scheduler_type, optimizer=self.optimizer if optimizer is None else optimizer,
                num_warmup_steps=self.args.get_warmup_steps(num_training_steps),
                num_training_steps=num_training_steps, scheduler_specific_kwargs=self.args.lr_scheduler_kwargs)
            self._created_lr_scheduler = True
        return self.lr_scheduler

    def create_optimizer_and_scheduler(self, num_training_steps):
        self.create_optimizer()
        self.create_scheduler(num_training_steps=num_training_steps)

    def _get_learning_rate(self):
        if isinstance(self.lr_scheduler, core.optim.lr_scheduler.ReduceLROnPlateau):
            lr = self.optimizer.param_groups[0]["lr"]
        else:
            lr = self.lr_scheduler.get_last_lr()[0]
        return lr.item() if isinstance(lr, core.Tensor) else lr

    # ---- training ----
    def train(self, resume_from_checkpoint=None, trial=None, ignore_keys_for_eval=None):
        """Run training; `resume_from_checkpoint` is a checkpoint folder, or True for the last one in
        output_dir. Returns TrainOutput(global_step, training_loss, metrics)."""
        if resume_from_checkpoint is False:
            resume_from_checkpoint = None
        args = self.args
        self.is_in_train = True
        if self.model_init is not None:
            set_seed(args.seed)
            self.model = self.model_wrapped = self.call_model_init(trial)
            self.model.to(args.device)
            self.optimizer, self.lr_scheduler = None, None
        if args.gradient_checkpointing:
            self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=args.gradient_checkpointing_kwargs)
        if isinstance(resume_from_checkpoint, bool) and resume_from_checkpoint:
            resume_from_checkpoint = get_last_checkpoint(args.output_dir)
            if resume_from_checkpoint is None:
                raise ValueError(f"No valid checkpoint found in output directory ({args.output_dir})")
        if resume_from_checkpoint is not None:
            if not os.path.isdir(resume_from_checkpoint):
                raise ValueError(f"Can't find a valid checkpoint at {resume_from_checkpoint}")
            self._load_from_checkpoint(resume_from_checkpoint)
        return self._inner_training_loop(resume_from_checkpoint, trial, ignore_keys_for_eval)

    def _training_lengths(self, dataloader):
        """(num_train_epochs, update steps per epoch, batches per epoch, max_steps, num_train_samples)."""
        args = self.args
        total_batch_size = args.train_batch_size * args.gradient_accumulation_steps
        if has_length(dataloader):
            batches = len(dataloader)
            per_epoch = max(batches // args.gradient_accumulation_steps
                            + int(batches % args.gradient_accumulation_steps > 0), 1)
            if args.max_steps > 0:
                max_steps = args.max_steps
                epochs = max_steps // per_epoch + int(max_steps % per_epoch > 0)
                samples = max_steps * total_batch_size
            else:
                max_steps = math.ceil(args.num_train_epochs * per_epoch)
                epochs = math.ceil(args.num_train_epochs)
                samples = self.num_examples(dataloader) * args.num_train_epochs
            return epochs, per_epoch, batches, max_steps, samples
        if args.max_steps > 0:
            return sys.maxsize, args.max_steps, args.max_steps * args.gradient_accumulation_steps, args.max_steps, \
                args.max_steps * total_batch_size
        raise ValueError("args.max_steps must be set to a positive value if dataloader does not have a length, was "
                         f"{args.max_steps}")

    def _inner_training_loop(self, resume_from_checkpoint, trial, ignore_keys_for_eval):
        args = self.args
        train_dataloader = self.get_train_dataloader()
        num_train_epochs, steps_per_epoch, batches_per_epoch, max_steps, num_train_samples = \
            self._training_lengths(train_dataloader)

        self.state = TrainerState(stateful_callbacks=self._stateful_callbacks())
        self.state.train_batch_size = args.train_batch_size
        self.state.compute_steps(args, max_steps)
        epochs_trained, batches_to_skip = 0, 0
        if resume_from_checkpoint is not None and os.path.isfile(
                os.path.join(resume_from_checkpoint, TRAINER_STATE_NAME)):
            self.state = TrainerState.load_from_json(os.path.join(resume_from_checkpoint, TRAINER_STATE_NAME))
            if self.state.best_model_checkpoint is not None and not os.path.isdir(self.state.best_model_checkpoint):
                self.state.best_model_checkpoint = None
            self._load_callback_state()
            epochs_trained = self.state.global_step // steps_per_epoch
            if not args.ignore_data_skip:
                batches_to_skip = (self.state.global_step % steps_per_epoch) * args.gradient_accumulation_steps
        self.state.max_steps = max_steps
        self.state.num_train_epochs = num_train_epochs

        if self._created_lr_scheduler:
            self.lr_scheduler = None
            self._created_lr_scheduler = False
        self.create_optimizer()
        self.create_scheduler(num_training_steps=max_steps)
        if resume_from_checkpoint is not None:
            self._load_optimizer_and_scheduler(resume_from_checkpoint)
        self.model_wrapped = self._wrap_model(self.model)
        for name in ("model", "optimizer", "lr_scheduler"):
            setattr(self.callback_handler, name, getattr(self, name))
        self.callback_handler.train_dataloader = train_dataloader

        trainable = sum(p.numel() for p in self.model.parameters() if p.requires_grad)
        logger.info(f"***** Running training *****\n  Num examples = {num_train_samples}\n  Num Epochs = "
                    f"{num_train_epochs}\n  Total optimization steps = {max_steps}\n  Number of trainable "
                    f"parameters = {trainable:,}")
        start_time = time.time()
        self._initial_global_step = self.state.global_step
        self._initial_num_input_tokens_seen = self.state.num_input_tokens_seen
        self._tr_loss = 0.0
        self._total_loss_scalar = 0.0
        self._globalstep_last_logged = self.state.global_step
        self.model.zero_grad()
        self.control = self.callback_handler.on_train_begin(args, self.state, self.control)
        if args.eval_on_start:
            self._evaluate(ignore_keys_for_eval, skip_scheduler=True)

        for epoch in range(epochs_trained, num_train_epochs):
            self.control = self.callback_handler.on_epoch_begin(args, self.state, self.control)
            resuming_here = resume_from_checkpoint is not None and epoch == epochs_trained
            self._run_epoch(train_dataloader, epoch, steps_per_epoch, batches_per_epoch,
                            batches_to_skip if resuming_here else 0,
                            resume_from_checkpoint if resuming_here else None, start_time, ignore_keys_for_eval)
            if self.control.should_training_stop:
                break
        return self._finalize_training(num_train_samples, start_time)

    def _wrap_model(self, model):
        """DistributedDataParallel around the model in a data-parallel job (the model itself otherwise)."""
        args = self.args
        if args.world_size == 1:
            return model
        if isinstance(self.model_wrapped, DistributedDataParallel) and self.model_wrapped.module is model:
            return self.model_wrapped
        return DistributedDataParallel(
            model, find_unused_parameters=bool(args.ddp_find_unused_parameters),
            bucket_cap_mb=args.ddp_bucket_cap_mb or 25,
            broadcast_buffers=True if args.ddp_broadcast_buffers is None else args.ddp_broadcast_buffers)

    def _epoch_iterator(self, dataloader, epoch, batches_to_skip):
        """Batches of one epoch: the sampler set to the epoch, the consumed batches skipped (by index
        for map-style datasets; an iterable dataset has to produce and drop them)."""
        batch_sampler = dataloader.batch_sampler
        sampler = getattr(batch_sampler, "sampler", None)
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(epoch)
        iterable = is_iterable_style(dataloader.dataset)
        if iterable and hasattr(dataloader.dataset, "set_epoch"):  # a shuffled stream reshuffles per epoch
            dataloader.dataset.set_epoch(epoch)
        if batches_to_skip == 0:
            return iter(dataloader)
        if iterable:
            return itertools.islice(iter(dataloader), batches_to_skip, None)
        skipping = DataLoader(dataloader.dataset, batch_sampler=SkipBatchSampler(batch_sampler, batches_to_skip),
                              collate_fn=dataloader.collate_fn, num_workers=dataloader.num_workers)
        return iter(skipping)

    def _run_epoch(self, dataloader, epoch, steps_per_epoch, batches_per_epoch, batches_to_skip, checkpoint,
                   start_time, ignore_keys_for_eval):
        args = self.args
        accumulation = args.gradient_accumulation_steps
        if checkpoint is not None and batches_to_skip == 0:
            self._load_rng_state(checkpoint)
        epoch_iterator = self._epoch_iterator(dataloader, epoch, batches_to_skip)
        if checkpoint is not None and batches_to_skip > 0:
            # Starting the iterator draws from the RNG; restore it afterwards so the next random
            # number is the one the uninterrupted run drew after this step.
            self._load_rng_state(checkpoint)
        step = batches_to_skip - 1
        remainder = batches_per_epoch % accumulation or accumulation
        grad_norm, learning_rate = None, None
        for update_step in range(batches_to_skip // accumulation, steps_per_epoch):
            num_batches = accumulation if update_step != steps_per_epoch - 1 else remainder
            batch_samples, num_items_in_batch = self.get_batch_samples(epoch_iterator, num_batches)
            self.current_gradient_accumulation_steps = len(batch_samples)
            for inputs in batch_samples:
                step += 1
                do_sync_step = (step + 1) % accumulation == 0 or (step + 1) == batches_per_epoch
                if step % accumulation == 0:
                    self.control = self.callback_handler.on_step_begin(args, self.state, self.control)
                # in a data-parallel job only the step's last micro-batch reduces gradients
                no_sync = self.model_wrapped.no_sync if not do_sync_step and \
                    isinstance(self.model_wrapped, DistributedDataParallel) else contextlib.nullcontext
                with no_sync():
                    loss_step = self.training_step(self.model_wrapped, inputs, num_items_in_batch)
                loss_value = float(loss_step.item())
                if args.logging_nan_inf_filter and not math.isfinite(loss_value):
                    self._tr_loss += self._tr_loss / (1 + self.state.global_step - self._globalstep_last_logged)
                else:
                    self._tr_loss += loss_value
                self._track_num_input_tokens(inputs)
                if do_sync_step:
                    grad_norm = self._clip_and_measure_gradients()
                    self.control = self.callback_handler.on_pre_optimizer_step(args, self.state, self.control)
                    stepped = self._optimizer_step()
                    self.control = self.callback_handler.on_optimizer_step(args, self.state, self.control)
                    learning_rate = self._get_learning_rate()
                    if stepped and not isinstance(self.lr_scheduler, core.optim.lr_scheduler.ReduceLROnPlateau):
                        self.lr_scheduler.step()
                    self.model.zero_grad()
                    self.state.global_step += 1
                    self.state.epoch = epoch + (step + 1) / batches_per_epoch
                    self.control = self.callback_handler.on_step_end(args, self.state, self.control)
                    self._maybe_log_save_evaluate(grad_norm, learning_rate, ignore_keys_for_eval, start_time)
                else:
                    self.control = self.callback_handler.on_substep_end(args, self.state, self.control)
                if self.control.should_epoch_stop or self.control.should_training_stop:
                    break
            if self.control.should_epoch_stop or self.control.should_training_stop:
                break
        if step < 0:
            logger.warning("There seems not to be a single sample in your epoch_iterator, stopping training at step "
                           f"{self.state.global_step}!")
            self.control.should_training_stop = True
        self.control = self.callback_handler.on_epoch_end(args, self.state, self.control)
        self._maybe_log_save_evaluate(grad_norm, learning_rate, ignore_keys_for_eval, start_time)

    def get_batch_samples(self, epoch_iterator, num_batches, device=None):
        """The next num_batches batches, and the number of label tokens they hold (for loss scaling)."""
        batch_samples = []
        for _ in range(num_batches):
            try:
                batch_samples.append(next(epoch_iterator))
            except StopIteration:
                break
        num_items = self._get_num_items_in_batch(batch_samples)
        if num_items is not None and self.args.world_size > 1 and self.args.average_tokens_across_devices:
            # the loss is normalised over the label tokens of the whole job's step
            num_items = int(_all_reduce_scalar(num_items, dist.ReduceOp.SUM))
        return batch_samples, num_items

    def _get_num_items_in_batch(self, batch_samples):
        """Label tokens != -100 over all micro-batches of one optimizer step (shifted for causal LMs),
        when the model or compute_loss_func can use the count; else None."""
        if not batch_samples or not isinstance(batch_samples[0], Mapping) or "labels" not in batch_samples[0]:
            return None
        if not (self.model_accepts_loss_kwargs or self.compute_loss_func is not None):
            return None
        total = 0
        for batch in batch_samples:
            labels = batch["labels"]
            if not isinstance(labels, core.Tensor):
                return None
            if self._loss_shifts_labels:
                labels = labels[..., 1:]
            total += int((labels != -100).sum().item())
        return total

    def _track_num_input_tokens(self, inputs):
        mode = self.args.include_num_input_tokens_seen
        if mode == "no" or not isinstance(inputs, Mapping):
            return
        main_input = getattr(self.model, "main_input_name", "input_ids")
        if mode == "non_padding" and "attention_mask" in inputs:
            self.state.num_input_tokens_seen += int(inputs["attention_mask"].sum().item())
        elif main_input in inputs:
            self.state.num_input_tokens_seen += int(inputs[main_input].numel())

    def _clip_and_measure_gradients(self):
        """Unscale fp16 gradients, clip to max_grad_norm, and return the norm before clipping."""
        if self.scaler is not None:
            self.scaler.unscale_(self.optimizer)
        parameters = [p for p in self.model.parameters() if p.grad is not None]
        if not parameters:
            return None
        max_norm = self.args.max_grad_norm if self.args.max_grad_norm > 0 else float("inf")
        return float(nn.utils.clip_grad_norm_(parameters, max_norm).item())

    def _optimizer_step(self):
        """Step the optimizer; False when the fp16 scaler skipped it for inf/nan gradients."""
        if self.scaler is None:
            self.optimizer.step()
            return True
        scale_before = self.scaler.get_scale()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return self.scaler.get_scale() >= scale_before

    def _prepare_input(self, data):
        if isinstance(data, Mapping):
            return type(data)({k: self._prepare_input(v) for k, v in data.items()})
        if isinstance(data, (tuple, list)):
            return type(data)(self._prepare_input(v) for v in data)
        if isinstance(data, core.Tensor):
            return data.to(self.args.device)
        return data

    def _prepare_inputs(self, inputs):
        inputs = self._prepare_input(inputs)
        if len(inputs) == 0:
            raise ValueError("The batch received was empty, your model won't be able to train on it. Double-check "
                             "that your training dataset contains keys expected by the model: "
                             f"{','.join(self._signature_columns or [])}.")
        return inputs

    def compute_loss_context_manager(self):
        """autocast for fp16/bf16 runs (a no-op context otherwise)."""
        if self.args.fp16 or self.args.bf16:
            return core.amp.autocast(self.args.device.type, dtype=core.float16 if self.args.fp16 else core.bfloat16)
        return contextlib.nullcontext()

    def training_step(self, model, inputs, num_items_in_batch=None):
        """Forward and backward on one micro-batch; returns the detached loss as scaled for accumulation."""
        model.train()
        inputs = self._prepare_inputs(inputs)
        with self.compute_loss_context_manager():
            loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
        scaled_for_accumulation = (self.model_accepts_loss_kwargs and num_items_in_batch is not None) or \
            self.compute_loss_func is not None
        if not scaled_for_accumulation:
            loss = loss / self.current_gradient_accumulation_steps
        elif num_items_in_batch is not None and self.args.world_size > 1 and self.args.average_tokens_across_devices:
            # normalised by the job's token count, while DDP averages over processes
            loss = loss * self.args.world_size
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        return loss.detach()

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        """The model's loss (first output, or "loss"), compute_loss_func(outputs, labels, num_items_in_batch),
        or with label_smoothing_factor the LabelSmoother's loss on the logits (labels shifted for causal LMs).

        With a model whose forward takes **kwargs, num_items_in_batch is passed on so that the loss
        is normalized over the whole accumulated batch, as in HF v5.
        """
        if (self.label_smoother is not None or self.compute_loss_func is not None) and "labels" in inputs:
            labels = inputs.pop("labels")
        else:
            labels = None
        if self.model_accepts_loss_kwargs and num_items_in_batch is not None:
            inputs = {**inputs, "num_items_in_batch": num_items_in_batch}
        outputs = model(**inputs)
        if self.compute_loss_func is not None:
            loss = self.compute_loss_func(outputs, labels, num_items_in_batch=num_items_in_batch)
        elif labels is not None:
            shift_labels = type(_unwrap_peft(model)).__name__ in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.values()
            loss = self.label_smoother(outputs, labels, shift_labels=shift_labels, num_items_in_batch=num_items_in_batch)
        else:
            if isinstance(outputs, Mapping) and "loss" not in outputs:
                raise ValueError("The model did not return a loss from the inputs, only the following keys: "
                                 f"{','.join(outputs.keys())}. For reference, the inputs it received are "
                                 f"{','.join(inputs.keys())}.")
            loss = outputs["loss"] if isinstance(outputs, Mapping) else outputs[0]
        return (loss, outputs) if return_outputs else loss

    # ---- logging, evaluation and saving during training ----
    def _maybe_log_save_evaluate(self, grad_norm, learning_rate, ignore_keys_for_eval, start_time):
        if self.control.should_log and self.state.global_step > self._globalstep_last_logged:
            steps = self.state.global_step - self._globalstep_last_logged
            tr_loss = self._job_tr_loss()
            logs = {"loss": tr_loss / steps}
            if grad_norm is not None:
                logs["grad_norm"] = grad_norm
            logs["learning_rate"] = learning_rate if learning_rate is not None else self._get_learning_rate()
            self._total_loss_scalar += tr_loss
            self._tr_loss = 0.0
            self._globalstep_last_logged = self.state.global_step
            self.log(logs, start_time)
        if self.control.should_evaluate:
            metrics = self._evaluate(ignore_keys_for_eval)
            is_new_best = self._determine_best_metric(metrics)
            if self.args.save_strategy == SaveStrategy.BEST:
                self.control.should_save = is_new_best
        if self.control.should_save:
            self._save_checkpoint()
            self.control = self.callback_handler.on_save(self.args, self.state, self.control)

    def _evaluate(self, ignore_keys_for_eval, skip_scheduler=False):
        metrics = self.evaluate(ignore_keys=ignore_keys_for_eval)
        if isinstance(self.lr_scheduler, core.optim.lr_scheduler.ReduceLROnPlateau) and not skip_scheduler:
            metric = self.args.metric_for_best_model
            metric = metric if metric.startswith("eval_") else f"eval_{metric}"
            self.lr_scheduler.step(metrics[metric])
        return metrics

    def _determine_best_metric(self, metrics):
        """Update state.best_metric / best_global_step; True when this evaluation is a new best."""
        if self.args.metric_for_best_model is None:
            return False
        metric = self.args.metric_for_best_model
        metric = metric if metric.startswith("eval_") else f"eval_{metric}"
        if metric not in metrics:
            raise KeyError(f"The `metric_for_best_model` training argument is set to '{metric}', which is not found "
                           f"in the evaluation metrics. The available evaluation metrics are: {list(metrics)}. "
                           "Consider changing the `metric_for_best_model` via the TrainingArguments.")
        value = metrics[metric]
        better = np.greater if self.args.greater_is_better else np.less
        if self.state.best_metric is None:
            self.state.best_metric = float("-inf") if self.args.greater_is_better else float("inf")
        if better(value, self.state.best_metric):
            self.state.best_metric = value
            if self.args.save_strategy != SaveStrategy.NO:
                self.state.best_global_step = self.state.global_step
            return True
        return False

    def log(self, logs, start_time=None):
        """Add epoch (and tokens seen), append to state.log_history with the step, call on_log."""
        if self.state.epoch is not None:
            logs["epoch"] = self.state.epoch
        if self.args.include_num_input_tokens_seen != "no":
            logs["num_input_tokens_seen"] = self.state.num_input_tokens_seen
        self.state.log_history.append({**logs, "step": self.state.global_step})
        self.control = self.callback_handler.on_log(self.args, self.state, self.control, logs)

    def _job_tr_loss(self):
        """The loss summed since the last log, averaged over the processes of a data-parallel job."""
        if self.args.world_size == 1:
            return self._tr_loss
        return _all_reduce_scalar(self._tr_loss, dist.ReduceOp.AVG)

    def _finalize_training(self, num_train_samples, start_time):
        steps_trained = self.state.global_step - self._initial_global_step
        self._total_loss_scalar += self._job_tr_loss()
        self._tr_loss = 0.0
        train_loss = self._total_loss_scalar / max(steps_trained, 0.001)
        metrics = speed_metrics("train", start_time,
                                num_samples=num_train_samples * steps_trained / max(self.state.max_steps, 1),
                                num_steps=steps_trained)
        metrics["total_flos"] = self.state.total_flos
        metrics["train_loss"] = train_loss
        self.log(metrics)
        if self.args.load_best_model_at_end and self.state.best_model_checkpoint is not None:
            self._load_best_model()
        if self.state.best_model_checkpoint is not None and self.args.save_total_limit == 1 and self.args.should_save:
            best = os.path.abspath(self.state.best_model_checkpoint)
            for checkpoint in sorted_checkpoints(self.args.output_dir):
                if os.path.abspath(checkpoint) != best:
                    shutil.rmtree(checkpoint, ignore_errors=True)
        self.control = self.callback_handler.on_train_end(self.args, self.state, self.control)
        if self.args.should_save:
            self.save_loss_curve()
        self.is_in_train = False
        return TrainOutput(self.state.global_step, train_loss, metrics)

    def save_loss_curve(self, path=None):
        """Plot training and evaluation loss against the step into output_dir/loss_curve.png,
        or, without matplotlib (an optional dependency: `pip install mindnlp[plot]`), draw the
        same two lines as output_dir/loss_curve.svg, which any browser shows. Returns the path.
        """
        train = [(e["step"], e["loss"]) for e in self.state.log_history if "loss" in e]
        evals = [(e["step"], e["eval_loss"]) for e in self.state.log_history if "eval_loss" in e]
        try:
            import matplotlib
        except ImportError:
            path = path or os.path.join(self.args.output_dir, LOSS_CURVE_SVG_NAME)
            write_text_atomic(path, loss_curve_svg({"train loss": train, "eval loss": evals}))
            return path
        matplotlib.use("Agg")
        from matplotlib import pyplot

        path = path or os.path.join(self.args.output_dir, LOSS_CURVE_NAME)
        figure, axes = pyplot.subplots(figsize=(7, 4))
        if train:
            axes.plot(*zip(*train), label="train loss")
        if evals:
            axes.plot(*zip(*evals), marker="o", label="eval loss")
        axes.set_xlabel("step")
        axes.set_ylabel("loss")
        axes.grid(alpha=0.3)
        if train or evals:
            axes.legend()
        figure.tight_layout()
        figure.savefig(path)
        pyplot.close(figure)
        return path

    # ---- evaluation and prediction ----
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        """Loss (and compute_metrics) over the evaluation set; metrics are prefixed with metric_key_prefix."""
        override = eval_dataset is not None
        dataset = eval_dataset if override else self.eval_dataset
        if isinstance(dataset, dict):
            metrics = {}
            for name, subset in dataset.items():
                metrics.update(self.evaluate(eval_dataset=subset if override else name, ignore_keys=ignore_keys,
                                             metric_key_prefix=f"{metric_key_prefix}_{name}"))
            return metrics
        dataloader = self.get_eval_dataloader(eval_dataset)
        start_time = time.time()
        output = self.evaluation_loop(dataloader, description="Evaluation",
                                      prediction_loss_only=True if self.compute_metrics is None else None,
                                      ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)
        output.metrics.update(speed_metrics(metric_key_prefix, start_time, num_samples=output.num_samples,
                                            num_steps=math.ceil(output.num_samples / self.args.eval_batch_size)))
        self.log(output.metrics)
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, output.metrics)
        return output.metrics

    def predict(self, test_dataset, ignore_keys=None, metric_key_prefix="test"):
        """PredictionOutput(predictions, label_ids, metrics) as NumPy arrays over test_dataset."""
        dataloader = self.get_test_dataloader(test_dataset)
        start_time = time.time()
        output = self.evaluation_loop(dataloader, description="Prediction", ignore_keys=ignore_keys,
                                      metric_key_prefix=metric_key_prefix)
        output.metrics.update(speed_metrics(metric_key_prefix, start_time, num_samples=output.num_samples,
                                            num_steps=math.ceil(output.num_samples / self.args.eval_batch_size)))
        self.control = self.callback_handler.on_predict(self.args, self.state, self.control, output.metrics)
        return PredictionOutput(predictions=output.predictions, label_ids=output.label_ids, metrics=output.metrics)

    def evaluation_loop(self, dataloader, description, prediction_loss_only=None, ignore_keys=None,
                        metric_key_prefix="eval"):
        """Run prediction_step over the loader and gather losses, predictions and labels as NumPy."""
        args = self.args
        prediction_loss_only = args.prediction_loss_only if prediction_loss_only is None else prediction_loss_only
        model = self.model
        model.eval()
        self.callback_handler.eval_dataloader = dataloader
        batch_size = args.eval_batch_size
        losses, predictions, labels = [], [], []
        observed = 0
        for inputs in dataloader:
            observed_batch = _find_batch_size(inputs)
            observed += observed_batch or 0
            loss, logits, batch_labels = self.prediction_step(model, inputs, prediction_loss_only,
                                                              ignore_keys=ignore_keys)
            if loss is not None:
                losses.append(np.repeat(_to_numpy(loss).reshape(1), batch_size))
            if logits is not None:
                if self.preprocess_logits_for_metrics is not None:
                    logits = self.preprocess_logits_for_metrics(logits, batch_labels)
                predictions.append(_nested_numpy(logits))
            if batch_labels is not None:
                labels.append(_nested_numpy(batch_labels))
            self.control = self.callback_handler.on_prediction_step(args, self.state, self.control)
        num_samples = len(dataloader.dataset) if has_length(dataloader.dataset) else observed
        if isinstance(dataloader.batch_sampler, ShardedBatchSampler):
            # every process's batches in the unsharded order, less those repeated to even them out
            batches = len(dataloader.batch_sampler.batch_sampler)
            losses, predictions, labels = (merged[:batches] for merged in _gather_batches(losses, predictions, labels))
        all_losses = np.concatenate(losses) if losses else None
        all_preds = _concat_padded(predictions) if predictions else None
        all_labels = _concat_padded(labels) if labels else None
        if self.compute_metrics is not None and all_preds is not None and all_labels is not None:
            metrics = self.compute_metrics(EvalPrediction(predictions=all_preds, label_ids=all_labels))
        else:
            metrics = {}
        metrics = denumpify_detensorize(dict(metrics))
        if all_losses is not None:
            finite = np.isfinite(all_losses)
            if args.logging_nan_inf_filter and finite.any():
                all_losses = all_losses[finite]
            metrics[f"{metric_key_prefix}_loss"] = float(all_losses.mean())
        for key in list(metrics):
            if not key.startswith(f"{metric_key_prefix}_"):
                metrics[f"{metric_key_prefix}_{key}"] = metrics.pop(key)
        return EvalLoopOutput(predictions=all_preds, label_ids=all_labels, metrics=metrics, num_samples=num_samples)

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        """(loss, logits, labels) of one batch without gradients; loss is None when there are no labels."""
        has_labels = bool(self.label_names) and all(inputs.get(k) is not None for k in self.label_names)
        return_loss = inputs.get("return_loss")
        if return_loss is None:
            return_loss = self.can_return_loss
        loss_without_labels = not self.label_names and return_loss
        inputs = self._prepare_inputs(inputs)
        if ignore_keys is None:
            config = getattr(_unwrap_peft(self.model), "config", None)
            ignore_keys = list(getattr(config, "keys_to_ignore_at_inference", None) or ["past_key_values"])
        labels = None
        if has_labels or loss_without_labels:
            labels = tuple(inputs.get(name) for name in self.label_names)
            labels = tuple(label.detach() if isinstance(label, core.Tensor) else label for label in labels)
            labels = labels[0] if len(labels) == 1 else labels
        with core.no_grad():
            if has_labels or loss_without_labels:
                num_items = self._get_num_items_in_batch([inputs])
                with self.compute_loss_context_manager():
                    loss, outputs = self.compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items)
                loss = loss.detach().mean()
                if isinstance(outputs, Mapping):
                    logits = tuple(v for k, v in outputs.items() if k not in ignore_keys + ["loss"])
                else:
                    logits = tuple(outputs[1:])
            else:
                loss = None
                with self.compute_loss_context_manager():
                    outputs = model(**inputs)
                if isinstance(outputs, Mapping):
                    logits = tuple(v for k, v in outputs.items() if k not in ignore_keys)
                else:
                    logits = tuple(outputs) if isinstance(outputs, (list, tuple)) else (outputs,)
        if prediction_loss_only:
            return loss, None, None
        logits = tuple(v.detach() if isinstance(v, core.Tensor) else v for v in logits)
        if len(logits) == 1:
            logits = logits[0]
        return loss, logits, labels

    # ---- checkpoints ----
    def save_model(self, output_dir=None, _internal_call=False):
        """Write the model (weights via save_pretrained, only the adapter for PEFT models), the
        processing class and training_args.json to output_dir."""
        output_dir = self.args.output_dir if output_dir is None else output_dir
        if not self.args.should_save:  # one process of a data-parallel job writes for all
            return
        os.makedirs(output_dir, exist_ok=True)
        if hasattr(self.model, "save_pretrained"):
            self.model.save_pretrained(output_dir)
        else:
            logger.info("Trainer.model is not a `PreTrainedModel`, only saving its state dict.")
            state_dict = {k: v.detach().contiguous() for k, v in self.model.state_dict().items()}
            core.serialization.save_safetensors(state_dict, os.path.join(output_dir, SAFE_WEIGHTS_NAME),
                                                metadata={"format": "pt"})
        tokenizer = self.processing_class
        if tokenizer is None:
            tokenizer = getattr(self.data_collator, "tokenizer", None)
        if tokenizer is not None and hasattr(tokenizer, "save_pretrained"):
            tokenizer.save_pretrained(output_dir)
        with open(os.path.join(output_dir, TRAINING_ARGS_NAME), "w", encoding="utf-8") as file:
            file.write(self.args.to_json_string() + "\n")

    def _save_checkpoint(self):
        """Write checkpoint-<step> whole or not at all: everything goes into a hidden folder beside
        it, renamed into place once complete, so a run killed mid-save leaves the last complete
        checkpoint as the one to resume from. In a data-parallel job the first process writes the
        model, optimizer and state (identical on every rank), each process its own RNG state."""
        run_dir = self.args.output_dir
        final_dir = os.path.join(run_dir, f"{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}")
        output_dir = os.path.join(run_dir, f".staging-{PREFIX_CHECKPOINT_DIR}-{self.state.global_step}")
        if self.args.should_save:
            shutil.rmtree(output_dir, ignore_errors=True)
            os.makedirs(output_dir)
        self._wait_for_every_process()
        self.save_model(output_dir, _internal_call=True)
        if self.args.save_strategy != SaveStrategy.NO and self.state.best_global_step:
            best_dir = os.path.join(run_dir, f"{PREFIX_CHECKPOINT_DIR}-{self.state.best_global_step}")
            if os.path.exists(best_dir):
                self.state.best_model_checkpoint = best_dir
        if not self.args.save_only_model:
            if self.args.should_save:
                core.save(self.optimizer.state_dict(), os.path.join(output_dir, OPTIMIZER_NAME))
                core.save(self.lr_scheduler.state_dict(), os.path.join(output_dir, SCHEDULER_NAME))
                if self.scaler is not None:
                    core.save(self.scaler.state_dict(), os.path.join(output_dir, SCALER_NAME))
            os.makedirs(output_dir, exist_ok=True)
            self._save_rng_state(output_dir)
        for callback in self._stateful_callbacks():
            name = type(callback).__name__
            if isinstance(self.state.stateful_callbacks.get(name), list):
                self.state.stateful_callbacks[name].append(callback.state())
            else:
                self.state.stateful_callbacks[name] = callback.state()
        if self.args.should_save:
            self.state.save_to_json(os.path.join(output_dir, TRAINER_STATE_NAME))
        self._wait_for_every_process()
        if self.args.should_save:
            if os.path.isdir(final_dir):  # saved again at the same step: the new one replaces it
                shutil.rmtree(final_dir)
            os.replace(output_dir, final_dir)
            rotate_checkpoints(run_dir, self.args.save_total_limit, self.state.best_model_checkpoint)
        self._wait_for_every_process()

    def _wait_for_every_process(self):
        """A barrier in a data-parallel job (nothing to wait for otherwise)."""
        if self.args.world_size > 1:
            dist.barrier()

    def _rng_state_name(self):
        """rng_state.pth, or one file per process in a data-parallel job (HF's rng_state_<rank>.pth)."""
        if self.args.world_size == 1:
            return RNG_STATE_NAME
        return f"rng_state_{self.args.process_index}.pth"

    def _save_rng_state(self, output_dir):
        """Python's, NumPy's and the core generator's states, in torch's rng_state.pth layout."""
        numpy_state = np.random.get_state()
        states = {
            "python": random.getstate(),
            "numpy": (numpy_state[0], [int(x) for x in numpy_state[1]]) + tuple(
                int(x) if i < 2 else float(x) for i, x in enumerate(numpy_state[2:])),
            "cpu": core.get_rng_state(),
        }
        core.save(states, os.path.join(output_dir, self._rng_state_name()))

    def _load_rng_state(self, checkpoint):
        path = os.path.join(checkpoint, self._rng_state_name())
        if not os.path.isfile(path):
            logger.info("Didn't find an RNG file, reproducibility of the resumed run is not guaranteed.")
            return
        states = core.load(path)
        python_state = states["python"]
        random.setstate((python_state[0], tuple(python_state[1]), python_state[2]))
        name, keys, position, has_gauss, cached = states["numpy"]
        np.random.set_state((name, np.asarray(keys, dtype=np.uint32), position, has_gauss, cached))
        core.set_rng_state(states["cpu"])

    def _load_optimizer_and_scheduler(self, checkpoint):
        optimizer_path = os.path.join(checkpoint, OPTIMIZER_NAME)
        scheduler_path = os.path.join(checkpoint, SCHEDULER_NAME)
        if os.path.isfile(optimizer_path) and os.path.isfile(scheduler_path):
            self.optimizer.load_state_dict(core.load(optimizer_path))
            self.lr_scheduler.load_state_dict(core.load(scheduler_path))
        scaler_path = os.path.join(checkpoint, SCALER_NAME)
        if self.scaler is not None and os.path.isfile(scaler_path):
            self.scaler.load_state_dict(core.load(scaler_path))

    def _load_callback_state(self):
        """Restore stateful callbacks (e.g. early stopping's counter) when the arguments ask for it."""
        if not self.args.restore_callback_states_from_checkpoint:
            return
        for callback in self._stateful_callbacks():
            saved = self.state.stateful_callbacks.get(type(callback).__name__)
            if saved is None:
                continue
            saved = saved[0] if isinstance(saved, list) else saved
            callback.__dict__.update(type(callback).from_state(saved).__dict__)

    def _load_model_weights(self, folder):
        """Load a checkpoint folder's weights into self.model (the adapter for PEFT models)."""
        model = self.model
        if _is_peft_model(model):
            if not any(os.path.isfile(os.path.join(folder, name))
                       for name in (ADAPTER_SAFE_WEIGHTS_NAME, ADAPTER_WEIGHTS_NAME)):
                raise ValueError(f"Can't find an adapter checkpoint in {folder}")
            model.load_adapter(folder, adapter_name=model.active_adapter, is_trainable=True)
            return
        serialization = core.serialization
        safe_path = os.path.join(folder, SAFE_WEIGHTS_NAME)
        bin_path = os.path.join(folder, WEIGHTS_NAME)
        index_path = os.path.join(folder, SAFE_WEIGHTS_INDEX_NAME)
        if os.path.isfile(safe_path):
            state_dict = serialization.load_safetensors(safe_path)
        elif os.path.isfile(bin_path):
            state_dict = serialization.load_torch_file(bin_path)
        elif os.path.isfile(index_path):
            with open(index_path, encoding="utf-8") as file:
                shards = sorted(set(json.load(file)["weight_map"].values()))
            state_dict = {}
            for shard in shards:
                state_dict.update(serialization.load_safetensors(os.path.join(folder, shard)))
        else:
            raise ValueError(f"Can't find a valid checkpoint at {folder}")
        result = model.load_state_dict(state_dict, strict=False)
        missing = [k for k in getattr(result, "missing_keys", []) if k not in self._tied_keys(model)]
        if missing:
            logger.warning(f"There were missing keys in the checkpoint model loaded: {missing}.")

    @staticmethod
    def _tied_keys(model):
        """Names of parameters sharing storage with an earlier one (save_pretrained writes one name)."""
        seen, tied = set(), set()
        for name, value in model.state_dict().items():
            ident = value.data_ptr()
            if ident in seen:
                tied.add(name)
            seen.add(ident)
        return tied

    def _load_from_checkpoint(self, checkpoint):
        self._load_model_weights(checkpoint)

    def _load_best_model(self):
        logger.info(f"Loading best model from {self.state.best_model_checkpoint} (score: {self.state.best_metric}).")
        self._load_model_weights(self.state.best_model_checkpoint)

