# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""`TrainingArguments`: the Trainer's settings, with Hugging Face's names, defaults and checks.

The v4 spellings scripts still use (`evaluation_strategy`, `warmup_ratio`, `group_by_length`,
`overwrite_output_dir`, `logging_dir`) are accepted next to the v5 ones. There are no external
experiment trackers here: `report_to` names other than "none"/"all" are accepted and ignored with
a warning, so scripts written for HF run unchanged.
"""
import dataclasses
import json
import logging
import math
import os
import warnings
from dataclasses import dataclass, field
from enum import Enum

from .. import core
from .trainer_utils import ExplicitEnum, IntervalStrategy, SaveStrategy, SchedulerType

logger = logging.getLogger(__name__)


class OptimizerNames(ExplicitEnum):
    """Optimizers the Trainer can build (`optim=`); the AdamW spellings all select core AdamW,
    "adafactor" selects `optimization.Adafactor` driven by the lr schedule."""

    ADAMW_TORCH = "adamw_torch"
    ADAMW_TORCH_FUSED = "adamw_torch_fused"
    ADAMW_HF = "adamw_hf"
    ADAFACTOR = "adafactor"
    SGD = "sgd"
    ADAGRAD = "adagrad"
    RMSPROP = "rmsprop"


ADAMW_NAMES = (OptimizerNames.ADAMW_TORCH, OptimizerNames.ADAMW_TORCH_FUSED, OptimizerNames.ADAMW_HF)


def _distributed_context():
    """(rank, world size, local rank). A process started by `mindnlp run` (WORLD_SIZE above 1)
    joins the job's process group on first use, as HF's TrainingArguments sets up distributed
    training when a launcher started it."""
    from ..core import distributed as dist

    if not dist.is_initialized():
        if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
            return 0, 1, 0
        dist.init_process_group("mpi")
    return dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", dist.get_rank()))


@dataclass
class TrainingArguments:
    """Hyper-parameters and switches of a `Trainer` run (HF's `TrainingArguments`)."""

    output_dir: str = None
    overwrite_output_dir: bool = False
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    eval_strategy: str = "no"
    evaluation_strategy: str = None
    prediction_loss_only: bool = False
    per_device_train_batch_size: int = 8
    per_device_eval_batch_size: int = 8
    gradient_accumulation_steps: int = 1
    eval_delay: float = 0
    learning_rate: float = 5e-5
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    label_smoothing_factor: float = 0.0
    num_train_epochs: float = 3.0
    max_steps: int = -1
    lr_scheduler_type: str = "linear"
    lr_scheduler_kwargs: dict = field(default_factory=dict)
    warmup_steps: float = 0
    warmup_ratio: float = None
    logging_dir: str = None
    logging_strategy: str = "steps"
    logging_first_step: bool = False
    logging_steps: float = 500
    logging_nan_inf_filter: bool = True
    save_strategy: str = "steps"
    save_steps: float = 500
    save_total_limit: int = None
    save_only_model: bool = False
    save_on_each_node: bool = False
    log_on_each_node: bool = True
    seed: int = 42
    data_seed: int = None
    # data-parallel training (a job started by `mindnlp run --nproc-per-node N`)
    ddp_find_unused_parameters: bool = None
    ddp_bucket_cap_mb: int = None
    ddp_broadcast_buffers: bool = None
    average_tokens_across_devices: bool = True
    use_cpu: bool = False
    fp16: bool = False
    bf16: bool = False
    dataloader_drop_last: bool = False
    dataloader_num_workers: int = 0
    eval_steps: float = None
    eval_on_start: bool = False
    run_name: str = None
    disable_tqdm: bool = None
    remove_unused_columns: bool = True
    label_names: list = None
    load_best_model_at_end: bool = False
    metric_for_best_model: str = None
    greater_is_better: bool = None
    ignore_data_skip: bool = False
    restore_callback_states_from_checkpoint: bool = False
    optim: str = "adamw_torch"
    optim_args: str = None
    report_to: object = "none"
    gradient_checkpointing: bool = False
    gradient_checkpointing_kwargs: dict = None
    group_by_length: bool = False
    train_sampling_strategy: str = "random"
    length_column_name: str = "length"
    include_num_input_tokens_seen: object = False

    def __post_init__(self):
        if self.output_dir is None:
            self.output_dir = "trainer_output"
        self.output_dir = os.path.expanduser(os.fspath(self.output_dir))
        if self.logging_dir is None:
            self.logging_dir = os.path.join(self.output_dir, "runs")
        if isinstance(self.lr_scheduler_kwargs, str):
            self.lr_scheduler_kwargs = json.loads(self.lr_scheduler_kwargs) if self.lr_scheduler_kwargs else {}
        elif self.lr_scheduler_kwargs is None:
            self.lr_scheduler_kwargs = {}

        if self.evaluation_strategy is not None:
            warnings.warn("`evaluation_strategy` is deprecated, use `eval_strategy` instead", FutureWarning)
            self.eval_strategy = self.evaluation_strategy
        if self.warmup_ratio is not None:
            if not 0 <= self.warmup_ratio <= 1:
                raise ValueError("warmup_ratio must lie in range [0,1]")
            if self.warmup_steps > 0:
                logger.info("Both warmup_ratio and warmup_steps given, warmup_steps will override any effect of "
                            "warmup_ratio during training")
            else:
                self.warmup_steps = self.warmup_ratio
        if self.group_by_length:
            self.train_sampling_strategy = "group_by_length"
        if self.train_sampling_strategy not in ("random", "sequential", "group_by_length"):
            raise ValueError(f"train_sampling_strategy must be 'random', 'sequential' or 'group_by_length', got "
                             f"{self.train_sampling_strategy!r}")
        if self.disable_tqdm is None:
            self.disable_tqdm = logging.getLogger("mindnlp").getEffectiveLevel() > logging.WARNING
        if isinstance(self.include_num_input_tokens_seen, bool):
            self.include_num_input_tokens_seen = "all" if self.include_num_input_tokens_seen else "no"

        self.eval_strategy = IntervalStrategy(self.eval_strategy)
        self.logging_strategy = IntervalStrategy(self.logging_strategy)
        self.save_strategy = SaveStrategy(self.save_strategy)
        self.lr_scheduler_type = SchedulerType(self.lr_scheduler_type)
        self.optim = OptimizerNames(self.optim)

        if self.do_eval is False and self.eval_strategy != IntervalStrategy.NO:
            self.do_eval = True
        if self.eval_strategy == IntervalStrategy.STEPS and not self.eval_steps:
            if self.logging_steps > 0:
                self.eval_steps = self.logging_steps
            else:
                raise ValueError(f"evaluation strategy {self.eval_strategy} requires either non-zero --eval_steps or "
                                 "--logging_steps")
        if (self.load_best_model_at_end or self.lr_scheduler_type == SchedulerType.REDUCE_ON_PLATEAU) \
                and self.metric_for_best_model is None:
            self.metric_for_best_model = "loss"
        if self.greater_is_better is None and self.metric_for_best_model is not None:
            self.greater_is_better = not self.metric_for_best_model.endswith("loss")
        self.report_to = self._normalize_report_to(self.report_to)
        self._validate()

    @staticmethod
    def _normalize_report_to(report_to):
        """`[]` for "none"; other integrations do not exist here, so they are dropped with a warning."""
        if report_to is None or report_to in ("none", ["none"], "all", ["all"]):
            return []
        names = [report_to] if isinstance(report_to, str) else list(report_to)
        names = [name for name in names if name != "none"]
        if names:
            warnings.warn(f"report_to={names}: mindnlp has no integration for these experiment trackers; logs go to "
                          "trainer_state.json, the progress bar and loss_curve.png only", UserWarning)
        return []

    def _validate(self):
        if self.logging_strategy == IntervalStrategy.STEPS and self.logging_steps == 0:
            raise ValueError(f"logging strategy {self.logging_strategy} requires non-zero --logging_steps")
        for kind, strategy in (("logging", self.logging_strategy), ("eval", self.eval_strategy),
                               ("save", self.save_strategy)):
            steps = getattr(self, f"{kind}_steps")
            if strategy == "steps" and steps > 1:
                if steps != int(steps):
                    raise ValueError(f"--{kind}_steps must be an integer if bigger than 1: {steps}")
                setattr(self, f"{kind}_steps", int(steps))
        if self.load_best_model_at_end and self.save_strategy != SaveStrategy.BEST:
            if self.eval_strategy != self.save_strategy:
                raise ValueError(
                    "--load_best_model_at_end requires the save and eval strategy to match, except when "
                    f'--save_strategy="best", but found\n- Evaluation strategy: {self.eval_strategy}\n- Save '
                    f"strategy: {self.save_strategy}")
            if self.eval_strategy == IntervalStrategy.STEPS and self.save_steps % self.eval_steps != 0:
                raise ValueError("--load_best_model_at_end requires the saving steps to be a round multiple of the "
                                 f"evaluation steps, but found {self.save_steps}, which is not a round multiple of "
                                 f"{self.eval_steps}.")
        if self.fp16 and self.bf16:
            raise ValueError("At most one of fp16 and bf16 can be True, but not both")
        if self.lr_scheduler_type == SchedulerType.REDUCE_ON_PLATEAU and self.eval_strategy == IntervalStrategy.NO:
            raise ValueError("lr_scheduler_type reduce_lr_on_plateau requires an eval strategy")
        if self.warmup_steps < 0:
            raise ValueError(f"Got warmup_steps = {self.warmup_steps}, Expected value warmup_steps >= 0")
        if self.gradient_accumulation_steps < 1:
            raise ValueError(f"gradient_accumulation_steps must be >= 1, got {self.gradient_accumulation_steps}")
        if self.dataloader_num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")

    # --- derived values: one device per process; several processes when launched data-parallel ---
    @property
    def train_batch_size(self):
        return self.per_device_train_batch_size

    @property
    def eval_batch_size(self):
        return self.per_device_eval_batch_size

    @property
    def device(self):
        """cuda when a GPU backend is available and use_cpu is off, else cpu."""
        if not self.use_cpu and core.cuda.is_available():
            return core.device("cuda")
        return core.device("cpu")

    @property
    def n_gpu(self):
        return 1 if self.device.type == "cuda" else 0

    @property
    def world_size(self):
        return _distributed_context()[1]

    @property
    def process_index(self):
        return _distributed_context()[0]

    @property
    def local_process_index(self):
        return _distributed_context()[2]

    @property
    def parallel_mode(self):
        return "distributed" if self.world_size > 1 else "not_parallel"

    @property
    def should_save(self):
        """Whether this process writes checkpoints: the first process (of each node with save_on_each_node)."""
        return (self.local_process_index if self.save_on_each_node else self.process_index) == 0

    @property
    def should_log(self):
        """Whether this process logs: the first of each node (log_on_each_node), or of the job."""
        return (self.local_process_index if self.log_on_each_node else self.process_index) == 0

    def get_warmup_steps(self, num_training_steps):
        """warmup_steps as a count, or as a share of num_training_steps when below 1."""
        if self.warmup_steps >= 1:
            return int(self.warmup_steps)
        return math.ceil(num_training_steps * self.warmup_steps)

    def to_dict(self):
        """The fields with enums replaced by their values, for JSON."""
        values = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Enum):
                value = value.value
            values[f.name] = value
        return values

    def to_json_string(self):
        return json.dumps(self.to_dict(), indent=2)

    def __str__(self):
        items = "".join(f"{key}={value},\n" for key, value in sorted(self.to_dict().items()))
        return f"{type(self).__name__}(\n{items})"

    __repr__ = __str__
