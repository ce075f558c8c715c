"""`save_pretrained` over an existing checkpoint never leaves the folder without complete
weights, a Trainer killed while checkpointing leaves only complete checkpoints, and the files
written get the permissions the umask gives, not 0600."""
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from mindnlp import core
from mindnlp.peft import LoraConfig, PeftModel, get_peft_model
from mindnlp.transformers import GPT2Config, GPT2LMHeadModel

REPO_ROOT = Path(__file__).resolve().parents[2]
TINY = dict(vocab_size=64, n_positions=32, n_embd=32, n_layer=2, n_head=2)


def _model(offset):
    """A tiny GPT-2 whose every weight is shifted by `offset`, so two saves are told apart."""
    core.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(**TINY))
    with core.no_grad():
        for parameter in model.parameters():
            parameter.add_(offset)
    return model


def _saved_offset(folder):
    """Which of the two models the folder holds, loading it as a user would; fails on a mix."""
    loaded = GPT2LMHeadModel.from_pretrained(folder)
    reference = _model(0).state_dict()
    offsets = {round(float((value - reference[key]).mean()), 3) for key, value in loaded.state_dict().items()}
    assert len(offsets) == 1, f"weights of two saves mixed: {offsets}"
    return offsets.pop()


def test_a_failure_while_writing_weights_leaves_the_old_checkpoint(tmp_path, monkeypatch):
    _model(0).save_pretrained(tmp_path)

    def disk_full(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(GPT2LMHeadModel, "_write_weights", staticmethod(disk_full))
    with pytest.raises(OSError, match="No space left"):
        _model(1).save_pretrained(tmp_path)
    monkeypatch.undo()

    assert _saved_offset(tmp_path) == 0
    assert sorted(os.listdir(tmp_path)) == ["config.json", "generation_config.json", "model.safetensors"]


def test_resharding_removes_the_old_shards_only_after_the_new_ones_are_in(tmp_path):
    _model(0).save_pretrained(tmp_path, max_shard_size="20KB")
    assert (tmp_path / "model.safetensors.index.json").exists()
    _model(1).save_pretrained(tmp_path)

    assert sorted(os.listdir(tmp_path)) == ["config.json", "generation_config.json", "model.safetensors"]
    assert _saved_offset(tmp_path) == 1


SAVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.transformers.test_save_faults import _model
models = [_model(1), _model(0)]
print("ready", flush=True)
i = 0
while True:
    models[i % 2].save_pretrained({folder!r})
    i += 1
"""


def test_a_process_killed_at_any_point_of_a_save_leaves_a_complete_checkpoint(tmp_path):
    """Saves alternate between two models while the process is killed at spread-out instants;
    each time the folder must load as one of the two, whole."""
    folders = [tmp_path / f"run{i}" for i in range(6)]
    processes = []
    for folder in folders:
        _model(0).save_pretrained(folder)
        code = SAVER.format(root=str(REPO_ROOT), folder=str(folder))
        processes.append(subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True))
    for process in processes:
        assert process.stdout.readline().strip() == "ready"
    for i, process in enumerate(processes):
        time.sleep(0.013 * (i + 1))  # different phases of the save loop in each process
        process.send_signal(signal.SIGKILL)
        process.wait()
        process.stdout.close()
    for folder in folders:
        assert _saved_offset(folder) in (0, 1)
        assert json.loads((folder / "config.json").read_text())["n_embd"] == 32


def test_saved_files_get_the_mode_the_umask_gives(tmp_path):
    previous = os.umask(0o022)
    try:
        _model(0).save_pretrained(tmp_path / "model")
        peft = get_peft_model(_model(0), LoraConfig(r=2, target_modules=["c_attn"]))
        peft.save_pretrained(tmp_path / "adapter")
    finally:
        os.umask(previous)
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"config.json", "generation_config.json", "model.safetensors",
                                        "adapter_config.json", "adapter_model.safetensors"}
    for path in written:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path


def test_a_failed_adapter_save_leaves_the_old_adapter(tmp_path, monkeypatch):
    peft = get_peft_model(_model(0), LoraConfig(r=2, target_modules=["c_attn"], init_lora_weights=False))
    peft.save_pretrained(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(core.serialization, "save_safetensors", fail)
    with pytest.raises(OSError):
        peft.save_pretrained(tmp_path)
    monkeypatch.undo()

    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    restored = PeftModel.from_pretrained(_model(0), tmp_path)
    key = "base_model.model.transformer.h.0.attn.c_attn.lora_B.default.weight"
    np.testing.assert_array_equal(restored.state_dict()[key].numpy(), peft.state_dict()[key].numpy())


def test_trainer_checkpoints_are_whole_or_absent_when_training_is_killed(tmp_path):
    """Training that saves every step is killed at several instants; every checkpoint-<step>
    folder left behind is complete (weights, optimizer, scheduler, RNG and trainer state), so
    resuming from the last one works."""
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\nfrom mindnlp import core\nfrom mindnlp.transformers import GPT2Config, GPT2LMHeadModel, "
        "Trainer, TrainingArguments\n"
        f"core.manual_seed(0)\nmodel = GPT2LMHeadModel(GPT2Config(**{TINY!r}))\n"
        "rows = [{'input_ids': [i % 60 + 1] * 8, 'labels': [i % 60 + 1] * 8} for i in range(400)]\n"
        "args = TrainingArguments(sys.argv[1], per_device_train_batch_size=2, max_steps=200, save_steps=1, "
        "logging_steps=50, report_to=[], disable_tqdm=True)\n"
        "Trainer(model=model, args=args, train_dataset=rows).train()\n")
    expected = {"config.json", "model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth",
                "trainer_state.json", "training_args.json"}
    for kill_after in (1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0):
        run_dir = tmp_path / f"run_{kill_after}"
        job = subprocess.Popen([sys.executable, str(script), str(run_dir)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
        time.sleep(kill_after)
        job.send_signal(signal.SIGKILL)
        job.wait()
        for checkpoint in run_dir.glob("checkpoint-*") if run_dir.exists() else ():
            assert expected <= set(os.listdir(checkpoint)), (kill_after, checkpoint.name, os.listdir(checkpoint))
            json.loads((checkpoint / "trainer_state.json").read_text())
