"""HF models on a CUDA GPU: the recorded HF logits and greedy generations of every tiny decoder
and encoder fixture, reached with the model moved to the GPU (`.to("cuda")` and
`from_pretrained(device_map=...)`), and LoRA training there. Skipped where CuPy sees no GPU.
"""
import os

import numpy as np
import pytest

from mindnlp import core, transformers
from mindnlp.transformers import AutoModel, AutoModelForCausalLM

from .encoder_fixtures import ROOT as ENCODER_ROOT
from .encoder_fixtures import EncoderFixtures
from .models.decoder_parity import ATOL, FIXTURES as DECODER_ROOT, PAD, Case, assert_close

pytestmark = pytest.mark.skipif(not core.cuda.is_available(), reason="needs a CUDA GPU visible to CuPy")

DECODER_CASES = sorted(os.listdir(DECODER_ROOT))
ENCODER_FAMILIES = sorted(d for d in os.listdir(ENCODER_ROOT) if os.path.isdir(os.path.join(ENCODER_ROOT, d)))


def _decoder_case(name):
    """The fixture case, its checkpoint loaded through the Auto class (Case.load takes AutoModel + head)."""
    return Case(name, transformers, "AutoModel")


@pytest.mark.parametrize("name", DECODER_CASES)
@pytest.mark.parametrize("attn", ["eager", "sdpa"])
def test_decoder_logits_on_cuda_equal_hf(name, attn):
    case = _decoder_case(name)
    model = case.load(attn_implementation=attn).to("cuda")
    assert all(p.is_cuda for p in model.parameters())
    for row, prompt in enumerate(case.prompts):
        with core.no_grad():
            logits = model(core.tensor([prompt], device="cuda")).logits[0]
        assert logits.is_cuda
        assert_close(logits.cpu(), case.expected[f"unpadded/{row}"], f"{name} row {row} on cuda")


@pytest.mark.parametrize("name", DECODER_CASES)
def test_decoder_greedy_generation_on_cuda_equals_hf(name):
    case = _decoder_case(name)
    model = case.load(device_map="cuda")
    ids, mask = case.padded("left")
    out = model.generate(ids.cuda(), attention_mask=mask.cuda(), do_sample=False, max_new_tokens=10,
                         pad_token_id=PAD)
    assert out.is_cuda
    np.testing.assert_array_equal(out.cpu().numpy(), case.expected["greedy"])


@pytest.mark.parametrize("family", ENCODER_FAMILIES)
def test_encoder_hidden_states_on_cuda_equal_hf(family):
    fixtures = EncoderFixtures(family)
    model = AutoModel.from_pretrained(fixtures.checkpoint, device_map={"": "cuda:0"})
    inputs = {k: v.cuda() for k, v in fixtures.inputs().items()}
    with core.no_grad():
        hidden = model(**inputs).last_hidden_state
    assert hidden.is_cuda
    error = float(np.abs(hidden.cpu().numpy() - fixtures.outputs["model/last_hidden_state"]).max())
    assert error <= ATOL, f"{family}: max |diff| {error:.3g} on cuda"


def test_lora_training_on_cuda_matches_cpu():
    from mindnlp.peft import LoraConfig, get_peft_model

    path = os.path.join(DECODER_ROOT, "llama", "model")
    ids = core.tensor([[1, 17, 93, 45, 61, 8, 77, 120]])
    losses = {}
    for device in ("cpu", "cuda"):
        core.manual_seed(0)
        model = get_peft_model(AutoModelForCausalLM.from_pretrained(path).to(device),
                               LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"], lora_dropout=0.0))
        opt = core.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
        trace = []
        for _ in range(3):
            opt.zero_grad()
            loss = model(ids.to(device), labels=ids.to(device)).loss
            loss.backward()
            opt.step()
            trace.append(float(loss.item()))
        losses[device] = trace
        assert all(p.is_cuda for p in model.parameters()) == (device == "cuda")
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=1e-4, atol=1e-5)
    assert losses["cuda"][-1] < losses["cuda"][0]


def test_trainer_trains_and_evaluates_on_the_gpu_as_on_the_cpu(tmp_path):
    from mindnlp.transformers.trainer import Trainer
    from mindnlp.transformers.training_args import TrainingArguments

    from .trainer.models import TokenClassifier, parity_data

    predictions = {}
    for use_cpu in (True, False):
        core.manual_seed(0)
        args = TrainingArguments(str(tmp_path / str(use_cpu)), use_cpu=use_cpu, per_device_train_batch_size=8,
                                 learning_rate=0.1, max_steps=6, save_strategy="no", disable_tqdm=True,
                                 report_to="none")
        trainer = Trainer(TokenClassifier(), args, train_dataset=parity_data(48), eval_dataset=parity_data(16))
        trainer.train()
        assert {p.device.type for p in trainer.model.parameters()} == {"cpu" if use_cpu else "cuda"}
        predictions[use_cpu] = trainer.predict(parity_data(16)).predictions
    np.testing.assert_allclose(predictions[False], predictions[True], rtol=1e-4, atol=1e-5)
