"""Prompt tuning, prefix tuning and P-tuning: the encoders against torch/peft, and the common
checks (save/load round trip, disable_adapter, training reduces loss, only the prompt gets gradients)."""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp import peft
from mindnlp.core import serialization
from mindnlp.peft.tuners.p_tuning.model import PromptEncoder
from mindnlp.peft.tuners.prefix_tuning.model import PrefixEncoder

from .cases import make_case, run_logits
from .testing_common import FIXTURES

ENCODER_CONFIGS = {
    "p_tuning_mlp": lambda: PromptEncoder(peft.PromptEncoderConfig(
        num_virtual_tokens=5, token_dim=6, encoder_hidden_size=7, num_transformer_submodules=1, num_layers=2,
        num_attention_heads=2)),
    "p_tuning_lstm": lambda: PromptEncoder(peft.PromptEncoderConfig(
        num_virtual_tokens=5, token_dim=6, encoder_hidden_size=4, encoder_reparameterization_type="LSTM",
        encoder_num_layers=2, num_transformer_submodules=1, num_layers=2, num_attention_heads=2)),
    "prefix_projection": lambda: PrefixEncoder(peft.PrefixTuningConfig(
        num_virtual_tokens=5, token_dim=6, encoder_hidden_size=7, prefix_projection=True, num_layers=2,
        num_attention_heads=2)),
}
CASES = [
    ("prompt tuning llama", "llama", dict(peft_type="PROMPT_TUNING", task_type="CAUSAL_LM", num_virtual_tokens=4)),
    ("prompt tuning bert", "bert", dict(peft_type="PROMPT_TUNING", task_type="SEQ_CLS", num_virtual_tokens=3,
                                        prompt_tuning_init="SAMPLE_VOCAB")),
    ("prefix tuning llama", "llama", dict(peft_type="PREFIX_TUNING", task_type="CAUSAL_LM", num_virtual_tokens=3)),
    ("prefix tuning bert, projection", "bert", dict(peft_type="PREFIX_TUNING", task_type="SEQ_CLS",
                                                    num_virtual_tokens=3, prefix_projection=True)),
    ("p-tuning llama", "llama", dict(peft_type="P_TUNING", task_type="CAUSAL_LM", num_virtual_tokens=4)),
    ("p-tuning bert lstm", "bert", dict(peft_type="P_TUNING", task_type="SEQ_CLS", num_virtual_tokens=3,
                                        encoder_reparameterization_type="LSTM", encoder_hidden_size=8)),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize("name", sorted(ENCODER_CONFIGS))
def test_training_encoders_match_peft(name):
    """Same weights as peft's encoder (torch.nn.LSTM for P-tuning's LSTM) → same prompt embeddings."""
    tensors = serialization.load_safetensors(os.path.join(FIXTURES, "methods", "encoders.safetensors"))
    encoder = ENCODER_CONFIGS[name]()
    weights = {k[len(name) + 1:]: v for k, v in tensors.items() if k.startswith(f"{name}/") and k != f"{name}/output"}
    encoder.load_state_dict(weights, strict=True)
    encoder.eval()
    with core.no_grad():
        output = encoder(core.arange(5)[None]).numpy()
    np.testing.assert_allclose(output, tensors[f"{name}/output"].numpy(), rtol=1e-5, atol=1e-6)


def _wrap(case, config_kwargs):
    kwargs = dict(config_kwargs)
    return peft.get_peft_model(case.make_model(), peft.PEFT_TYPE_TO_CONFIG_MAPPING[kwargs.pop("peft_type")](**kwargs))


def _randomise_prompt(model):
    generator = np.random.default_rng(0)
    with core.no_grad():
        for name, parameter in model.named_parameters():
            if name.startswith("prompt_encoder."):
                parameter.copy_(core.tensor(generator.standard_normal(tuple(parameter.shape)).astype(np.float32)))


@pytest.mark.parametrize("name, kind, config_kwargs", CASES, ids=IDS)
def test_save_pretrained_round_trip(name, kind, config_kwargs, tmp_path):
    case = make_case(kind)
    model = _wrap(case, config_kwargs)
    _randomise_prompt(model)
    model.eval()
    expected = run_logits(model, case)
    model.save_pretrained(tmp_path)
    saved = serialization.load_safetensors(os.path.join(tmp_path, "adapter_model.safetensors"))
    config = model.peft_config["default"]
    rows = config.num_virtual_tokens
    width = config.token_dim * (2 * config.num_layers if config.peft_type == "PREFIX_TUNING" else 1)
    assert tuple(saved["prompt_embeddings"].shape) == (rows, width)
    assert set(saved) - {"prompt_embeddings"} <= {"base_model.classifier.weight", "base_model.classifier.bias"}
    loaded = peft.PeftModel.from_pretrained(case.make_model(), tmp_path)
    np.testing.assert_allclose(run_logits(loaded, case), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="Cannot set a prompt learning adapter to trainable"):
        peft.PeftModel.from_pretrained(case.make_model(), tmp_path, is_trainable=True)


@pytest.mark.parametrize("name, kind, config_kwargs", CASES, ids=IDS)
def test_disable_adapter(name, kind, config_kwargs):
    case = make_case(kind)
    model = _wrap(case, config_kwargs)
    _randomise_prompt(model)
    model.eval()
    active = run_logits(model, case)
    with model.disable_adapter():
        disabled = run_logits(model, case)
    with core.no_grad():
        without_prompt = case.logits(model.base_model(**case.inputs())).numpy()
    np.testing.assert_allclose(disabled, without_prompt, rtol=1e-6, atol=1e-6)
    real = active[:, -disabled.shape[1]:] if kind == "llama" else active
    assert np.abs(real - disabled).max() > 1e-4
    np.testing.assert_allclose(run_logits(model, case), active, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name, kind, config_kwargs", CASES, ids=IDS)
def test_only_the_prompt_gets_gradients(name, kind, config_kwargs):
    case = make_case(kind)
    model = _wrap(case, config_kwargs)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable and all(n.startswith("prompt_encoder.") or ".modules_to_save." in n for n in trainable)
    model.train()
    case.loss(model(**case.inputs(train=True))).backward()
    for parameter_name, parameter in model.named_parameters():
        if parameter_name not in trainable:
            assert parameter.grad is None, parameter_name
    assert all(float(parameter.grad.abs().sum()) > 0 for parameter_name, parameter in model.named_parameters()
               if parameter_name.startswith("prompt_encoder."))


# The tiny random BERT pools every input to almost the same vector, so with labels 2, 0, 1 its loss
# sits at ln 3 whatever tokens are prepended; prefix tuning (keys/values in every layer) still moves it.
TRAINABLE_CASES = [case for case in CASES if case[0] not in ("prompt tuning bert", "p-tuning bert lstm")]


@pytest.mark.parametrize("name, kind, config_kwargs", TRAINABLE_CASES, ids=[case[0] for case in TRAINABLE_CASES])
def test_training_reduces_loss(name, kind, config_kwargs):
    case = make_case(kind)
    core.manual_seed(0)
    model = _wrap(case, config_kwargs)

    def eval_loss():
        model.eval()
        with core.no_grad():
            return float(case.loss(model(**case.inputs(train=True))))

    before = eval_loss()
    model.train()
    optimizer = core.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=0.05)
    for _ in range(6):
        loss = case.loss(model(**case.inputs(train=True)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert eval_loss() < before


def test_causal_lm_labels_and_mask_cover_the_virtual_tokens():
    """Prompt tuning on a causal LM: logits for n_virtual + seq positions, virtual labels ignored."""
    case = make_case("llama")
    model = _wrap(case, dict(peft_type="PROMPT_TUNING", task_type="CAUSAL_LM", num_virtual_tokens=4))
    output = model(**case.inputs(train=True))
    assert tuple(output.logits.shape[:2]) == (3, 12)
    assert np.isfinite(float(output.loss))


def test_delete_prompt_adapter():
    case = make_case("llama")
    model = _wrap(case, dict(peft_type="PROMPT_TUNING", task_type="CAUSAL_LM", num_virtual_tokens=2))
    model.add_adapter("other", peft.PromptTuningConfig(task_type="CAUSAL_LM", num_virtual_tokens=3))
    model.delete_adapter("default")
    assert list(model.peft_config) == ["other"] and model.active_adapter == "other"
    assert list(model.prompt_encoder) == ["other"]
