# Copyright 2026 The MindNLP Authors. Licensed under the Apache License, Version 2.0.
"""Callbacks: hooks the Trainer calls at each event of the loop, and the state they read.

`TrainerState` is what `trainer_state.json` holds (steps, log history, best metric). Callbacks
steer the loop only through `TrainerControl` flags (log, evaluate, save, stop); the default
flow of logging/evaluation/saving by steps or epochs is itself a callback, as in HF.
"""
import dataclasses
import json
import logging
import math
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from .trainer_utils import IntervalStrategy, SaveStrategy, has_length

logger = logging.getLogger(__name__)


@dataclass
class TrainerState:
    """The Trainer's inner state, saved with every checkpoint as trainer_state.json.

    One step is one optimizer update (gradient_accumulation_steps batches).
    """

    epoch: float = 0
    global_step: int = 0
    max_steps: int = 0
    logging_steps: int = 500
    eval_steps: int = 500
    save_steps: int = 500
    train_batch_size: int = None
    num_train_epochs: int = 0
    num_input_tokens_seen: int = 0
    total_flos: float = 0
    log_history: list = None
    best_metric: float = None
    best_global_step: int = None
    best_model_checkpoint: str = None
    is_local_process_zero: bool = True
    is_world_process_zero: bool = True
    is_hyper_param_search: bool = False
    trial_name: str = None
    trial_params: dict = None
    stateful_callbacks: object = None

    def __post_init__(self):
        if self.log_history is None:
            self.log_history = []
        if self.stateful_callbacks is None:
            self.stateful_callbacks = {}
        elif not isinstance(self.stateful_callbacks, dict):
            states = {}
            for callback in self.stateful_callbacks:
                if not isinstance(callback, ExportableState):
                    raise TypeError(f"All callbacks passed to be saved must inherit `ExportableState`, but received "
                                    f"{type(callback)}")
                name = type(callback).__name__
                if name in states:
                    if not isinstance(states[name], list):
                        states[name] = [states[name]]
                    states[name].append(callback.state())
                else:
                    states[name] = callback.state()
            self.stateful_callbacks = states

    def save_to_json(self, json_path):
        text = json.dumps(dataclasses.asdict(self), indent=2, sort_keys=True) + "\n"
        with open(json_path, "w", encoding="utf-8") as file:
            file.write(text)

    @classmethod
    def load_from_json(cls, json_path):
        with open(json_path, encoding="utf-8") as file:
            return cls(**json.load(file))

    def compute_steps(self, args, max_steps):
        """logging/eval/save steps as absolute counts (a value below 1 is a share of max_steps)."""
        for kind in ("logging", "eval", "save"):
            steps = getattr(args, f"{kind}_steps")
            if steps is not None:
                if steps < 1:
                    steps = math.ceil(max_steps * steps)
                setattr(self, f"{kind}_steps", steps)


class ExportableState:
    """A callback whose state is saved in checkpoints: `state()` returns {"args": ..., "attributes": ...}."""

    def state(self):
        raise NotImplementedError("You must implement a `state` function to utilize this class.")

    @classmethod
    def from_state(cls, state):
        instance = cls(**state["args"])
        for key, value in state["attributes"].items():
            setattr(instance, key, value)
        return instance


@dataclass
class TrainerControl(ExportableState):
    """Switches callbacks flip to make the loop log, evaluate, save or stop."""

    should_training_stop: bool = False
    should_epoch_stop: bool = False
    should_save: bool = False
    should_evaluate: bool = False
    should_log: bool = False

    def _new_training(self):
        self.should_training_stop = False

    def _new_epoch(self):
        self.should_epoch_stop = False

    def _new_step(self):
        self.should_save = False
        self.should_evaluate = False
        self.should_log = False

    def state(self):
        return {"args": {"should_training_stop": self.should_training_stop,
                         "should_epoch_stop": self.should_epoch_stop, "should_save": self.should_save,
                         "should_evaluate": self.should_evaluate, "should_log": self.should_log},
                "attributes": {}}


class TrainerCallback:
    """Base class: override the events you need. Each receives (args, state, control, **kwargs) with
    model, processing_class, optimizer, lr_scheduler, train_dataloader, eval_dataloader (and logs or
    metrics where relevant); return a control to change the flow, or None."""

    def on_init_end(self, args, state, control, **kwargs):
        pass

    def on_train_begin(self, args, state, control, **kwargs):
        pass

    def on_train_end(self, args, state, control, **kwargs):
        pass

    def on_epoch_begin(self, args, state, control, **kwargs):
        pass

    def on_epoch_end(self, args, state, control, **kwargs):
        pass

    def on_step_begin(self, args, state, control, **kwargs):
        pass

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        pass

    def on_optimizer_step(self, args, state, control, **kwargs):
        pass

    def on_substep_end(self, args, state, control, **kwargs):
        pass

    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_evaluate(self, args, state, control, **kwargs):
        pass

    def on_predict(self, args, state, control, metrics, **kwargs):
        pass

    def on_save(self, args, state, control, **kwargs):
        pass

    def on_log(self, args, state, control, **kwargs):
        pass

    def on_prediction_step(self, args, state, control, **kwargs):
        pass


class CallbackHandler(TrainerCallback):
    """Calls every callback in order and threads the control object through them."""

    def __init__(self, callbacks, model, processing_class, optimizer, lr_scheduler):
        self.callbacks = []
        for callback in callbacks:
            self.add_callback(callback)
        self.model = model
        self.processing_class = processing_class
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.train_dataloader = None
        self.eval_dataloader = None
        if not any(isinstance(cb, DefaultFlowCallback) for cb in self.callbacks):
            logger.warning("The Trainer will not work properly if you don't have a `DefaultFlowCallback` in its "
                           "callbacks. The current list of callbacks is:\n" + self.callback_list)

    def add_callback(self, callback):
        instance = callback() if isinstance(callback, type) else callback
        cls = callback if isinstance(callback, type) else type(callback)
        if cls in [type(cb) for cb in self.callbacks]:
            logger.warning(f"You are adding a {cls} to the callbacks of this Trainer, but there is already one. The "
                           "current list of callbacks is:\n" + self.callback_list)
        self.callbacks.append(instance)

    def pop_callback(self, callback):
        for cb in self.callbacks:
            if (isinstance(callback, type) and isinstance(cb, callback)) or cb is callback:
                self.callbacks.remove(cb)
                return cb
        return None

    def remove_callback(self, callback):
        self.pop_callback(callback)

    @property
    def callback_list(self):
        return "\n".join(type(cb).__name__ for cb in self.callbacks)

    def on_init_end(self, args, state, control):
        return self.call_event("on_init_end", args, state, control)

    def on_train_begin(self, args, state, control):
        control.should_training_stop = False
        return self.call_event("on_train_begin", args, state, control)

    def on_train_end(self, args, state, control):
        return self.call_event("on_train_end", args, state, control)

    def on_epoch_begin(self, args, state, control):
        control.should_epoch_stop = False
        return self.call_event("on_epoch_begin", args, state, control)

    def on_epoch_end(self, args, state, control):
        return self.call_event("on_epoch_end", args, state, control)

    def on_step_begin(self, args, state, control):
        control.should_log = False
        control.should_evaluate = False
        control.should_save = False
        return self.call_event("on_step_begin", args, state, control)

    def on_pre_optimizer_step(self, args, state, control):
        return self.call_event("on_pre_optimizer_step", args, state, control)

    def on_optimizer_step(self, args, state, control):
        return self.call_event("on_optimizer_step", args, state, control)

    def on_substep_end(self, args, state, control):
        return self.call_event("on_substep_end", args, state, control)

    def on_step_end(self, args, state, control):
        return self.call_event("on_step_end", args, state, control)

    def on_evaluate(self, args, state, control, metrics):
        control.should_evaluate = False
        return self.call_event("on_evaluate", args, state, control, metrics=metrics)

    def on_predict(self, args, state, control, metrics):
        return self.call_event("on_predict", args, state, control, metrics=metrics)

    def on_save(self, args, state, control):
        control.should_save = False
        return self.call_event("on_save", args, state, control)

    def on_log(self, args, state, control, logs):
        control.should_log = False
        return self.call_event("on_log", args, state, control, logs=logs)

    def on_prediction_step(self, args, state, control):
        return self.call_event("on_prediction_step", args, state, control)

    def call_event(self, event, args, state, control, **kwargs):
        for callback in self.callbacks:
            result = getattr(callback, event)(
                args, state, control, model=self.model, processing_class=self.processing_class,
                optimizer=self.optimizer, lr_scheduler=self.lr_scheduler, train_dataloader=self.train_dataloader,
                eval_dataloader=self.eval_dataloader, **kwargs)
            if result is not None:
                control = result
        return control


class DefaultFlowCallback(TrainerCallback):
    """Logging, evaluation and checkpoints on the step/epoch schedule the arguments ask for."""

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == 1 and args.logging_first_step:
            control.should_log = True
        if args.logging_strategy == IntervalStrategy.STEPS and state.global_step % state.logging_steps == 0:
            control.should_log = True
        if (args.eval_strategy == IntervalStrategy.STEPS and state.global_step % state.eval_steps == 0
                and args.eval_delay <= state.global_step):
            control.should_evaluate = True
        if args.save_strategy == SaveStrategy.STEPS and state.save_steps > 0 and \
                state.global_step % state.save_steps == 0:
            control.should_save = True
        if state.global_step >= state.max_steps:
            control.should_training_stop = True
            # The last step is evaluated and saved even off the schedule (once).
            if (args.eval_strategy == IntervalStrategy.STEPS and state.global_step % state.eval_steps != 0
                    and args.eval_delay <= state.global_step):
                control.should_evaluate = True
            if args.save_strategy == SaveStrategy.STEPS:
                control.should_save = True
        return control

    def on_epoch_end(self, args, state, control, **kwargs):
        if args.logging_strategy == IntervalStrategy.EPOCH:
            control.should_log = True
        if args.eval_strategy == IntervalStrategy.EPOCH and args.eval_delay <= state.epoch:
            control.should_evaluate = True
        if args.save_strategy == SaveStrategy.EPOCH:
            control.should_save = True
        return control


def _format_logs(logs, max_str_len=100):
    shown = {}
    for key, value in logs.items():
        if key == "total_flos":
            continue
        if isinstance(value, str) and len(value) > max_str_len:
            value = f"[String too long to display, length: {len(value)} > {max_str_len}.]"
        elif isinstance(value, float):
            value = f"{value:.4g}"
        shown[key] = value
    return shown


class ProgressCallback(TrainerCallback):
    """tqdm bars: one over the training steps, one over each evaluation's batches; logs printed above."""

    def __init__(self, max_str_len=100):
        self.training_bar = None
        self.prediction_bar = None
        self.max_str_len = max_str_len
        self.current_step = 0

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.training_bar = tqdm(total=state.max_steps, initial=state.global_step, dynamic_ncols=True)
        self.current_step = state.global_step

    def on_step_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero and self.training_bar is not None:
            self.training_bar.update(state.global_step - self.current_step)
            self.current_step = state.global_step

    def on_prediction_step(self, args, state, control, eval_dataloader=None, **kwargs):
        if state.is_world_process_zero and has_length(eval_dataloader):
            if self.prediction_bar is None:
                self.prediction_bar = tqdm(total=len(eval_dataloader), leave=self.training_bar is None,
                                           dynamic_ncols=True)
            self.prediction_bar.update(1)

    def _close_prediction_bar(self):
        if self.prediction_bar is not None:
            self.prediction_bar.close()
        self.prediction_bar = None

    def on_evaluate(self, args, state, control, **kwargs):
        self._close_prediction_bar()

    def on_predict(self, args, state, control, **kwargs):
        self._close_prediction_bar()

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero and self.training_bar is not None:
            self.training_bar.write(str(_format_logs(logs, self.max_str_len)))

    def on_train_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero and self.training_bar is not None:
            self.training_bar.close()
            self.training_bar = None


class PrinterCallback(TrainerCallback):
    """Prints the logs (used instead of the progress bars when disable_tqdm=True)."""

    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_local_process_zero and logs is not None:
            print(_format_logs(logs))


class EarlyStoppingCallback(TrainerCallback, ExportableState):
    """Stop training when `metric_for_best_model` has not improved by more than `early_stopping_threshold`
    for `early_stopping_patience` evaluations in a row.

    The best value is the Trainer's `state.best_metric`; use with load_best_model_at_end=True so the
    best checkpoint is what remains loaded.
    """

    def __init__(self, early_stopping_patience=1, early_stopping_threshold=0.0):
        self.early_stopping_patience = early_stopping_patience
        self.early_stopping_threshold = early_stopping_threshold
        self.early_stopping_patience_counter = 0

    def check_metric_value(self, args, state, control, metric_value):
        operator = np.greater if args.greater_is_better else np.less
        if state.best_metric is None or (operator(metric_value, state.best_metric)
                                         and abs(metric_value - state.best_metric) > self.early_stopping_threshold):
            self.early_stopping_patience_counter = 0
        else:
            self.early_stopping_patience_counter += 1

    def on_train_begin(self, args, state, control, **kwargs):
        if not args.load_best_model_at_end:
            logger.warning("Using EarlyStoppingCallback without load_best_model_at_end=True. Once training is "
                           "finished, the best model will not be loaded automatically.")
        if args.metric_for_best_model is None:
            raise ValueError("EarlyStoppingCallback requires metric_for_best_model to be defined")
        if args.eval_strategy == IntervalStrategy.NO:
            raise ValueError("EarlyStoppingCallback requires IntervalStrategy of steps or epoch")

    def on_evaluate(self, args, state, control, metrics, **kwargs):
        metric_to_check = args.metric_for_best_model
        if not metric_to_check.startswith("eval_"):
            metric_to_check = f"eval_{metric_to_check}"
        metric_value = metrics.get(metric_to_check)
        if metric_value is None:
            logger.warning(f"early stopping required metric_for_best_model, but did not find {metric_to_check} so "
                           "early stopping is disabled")
            return
        self.check_metric_value(args, state, control, metric_value)
        if self.early_stopping_patience_counter >= self.early_stopping_patience:
            control.should_training_stop = True

    def state(self):
        return {"args": {"early_stopping_patience": self.early_stopping_patience,
                         "early_stopping_threshold": self.early_stopping_threshold},
                "attributes": {"early_stopping_patience_counter": self.early_stopping_patience_counter}}
