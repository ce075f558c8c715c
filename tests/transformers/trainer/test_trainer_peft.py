"""The Trainer with mindnlp.peft models: checkpoints hold only the adapter, and resuming is exact."""
import os
import shutil
import subprocess
import sys

import numpy as np

from mindnlp import core
from mindnlp.peft import LoraConfig, get_peft_model
from mindnlp.transformers.trainer import Trainer
from mindnlp.transformers.training_args import TrainingArguments

from .models import TokenClassifier, parity_data


def lora_model():
    core.manual_seed(0)
    config = LoraConfig(r=2, lora_alpha=4, lora_dropout=0.2, target_modules=["classifier"])
    return get_peft_model(TokenClassifier(), config)


def make_trainer(output_dir, **kwargs):
    args = TrainingArguments(str(output_dir), num_train_epochs=2, per_device_train_batch_size=8, learning_rate=0.05,
                             logging_steps=1, save_steps=5, disable_tqdm=True, **kwargs)
    return Trainer(lora_model(), args, train_dataset=parity_data(48), eval_dataset=parity_data(16, seed=1))


def test_only_adapter_parameters_are_trained_and_saved(tmp_path, capsys):
    trainer = make_trainer(tmp_path)
    frozen_before = trainer.model.get_base_model().embed.weight.numpy().copy()
    trainer.train()
    files = set(os.listdir(tmp_path / "checkpoint-10"))
    assert {"adapter_model.safetensors", "adapter_config.json", "optimizer.pt", "trainer_state.json"} <= files
    assert "model.safetensors" not in files
    saved = core.serialization.load_safetensors(str(tmp_path / "checkpoint-10" / "adapter_model.safetensors"))
    assert saved and all("lora_" in key for key in saved)
    np.testing.assert_array_equal(trainer.model.get_base_model().embed.weight.numpy(), frozen_before)
    optimized = [p for group in trainer.optimizer.param_groups for p in group["params"]]
    assert len(optimized) == 2 and all(p.requires_grad for p in optimized)


def test_resume_restores_the_adapter_exactly(tmp_path, capsys):
    straight = make_trainer(tmp_path / "straight")
    straight.train()
    (tmp_path / "resumed").mkdir()
    shutil.copytree(tmp_path / "straight" / "checkpoint-5", tmp_path / "resumed" / "checkpoint-5")
    resumed = make_trainer(tmp_path / "resumed")
    resumed.train(resume_from_checkpoint=str(tmp_path / "resumed" / "checkpoint-5"))

    def losses(trainer):
        return [e["loss"] for e in trainer.state.log_history if "loss" in e]

    assert losses(resumed) == losses(straight) and len(losses(straight)) == 12


def test_trainer_module_does_not_import_peft():
    code = "import sys, mindnlp.transformers.trainer; print('mindnlp.peft' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
