"""AdaLoRA: the RankAllocator against HF peft's on fixed weights and gradients, the schedule's
math, and the orthogonality penalty added to the loss."""
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp import peft

from .cases import make_case
from .testing_common import FIXTURES


def test_rank_allocator_matches_peft():
    record = dict(np.load(os.path.join(FIXTURES, "methods", "rank_allocator.npz")))
    config = peft.AdaLoraConfig(target_modules=["lin0", "lin1"], init_r=6, target_r=2, tinit=1, tfinal=2,
                                total_step=7, init_lora_weights=False)
    model = peft.get_peft_model(make_case("mlp").make_model(), config)
    parameters = [(n, p) for n, p in model.base_model.model.named_parameters() if "lora_" in n and p.requires_grad]
    with core.no_grad():
        for name, parameter in parameters:
            parameter.copy_(core.tensor(record[f"init/{name}"]))
    for step in range(config.total_step):
        for name, parameter in parameters:
            parameter.grad = core.tensor(record[f"grad/{step}/{name}"])
        model.base_model.update_and_allocate(step)
        for name, parameter in parameters:
            if "lora_E" in name:
                np.testing.assert_allclose(parameter.detach().numpy(), record[f"lora_E/{step}/{name}"],
                                           rtol=1e-6, atol=1e-7, err_msg=f"step {step}, {name}")
    pattern = model.peft_config["default"].rank_pattern
    assert {k: list(v) for k, v in pattern.items()} == {
        key[len("rank_pattern/"):]: record[key].tolist() for key in record if key.startswith("rank_pattern/")}
    assert sum(sum(kept) for kept in pattern.values()) == 2 * 2  # target_r per layer


def test_budget_schedule_is_cubic_between_warmups():
    config = peft.AdaLoraConfig(target_modules=["lin0", "lin1"], init_r=6, target_r=2, tinit=2, tfinal=3,
                                total_step=15)
    allocator = peft.get_peft_model(make_case("mlp").make_model(), config).base_model.rankallocator
    assert (allocator.init_bgt, allocator.target_bgt) == (12, 4)
    assert allocator.budget_schedule(2) == (12, False)
    assert allocator.budget_schedule(7) == (int(8 * (1 - 5 / 10) ** 3 + 4), True)
    assert allocator.budget_schedule(13) == (4, True)


def test_orthogonal_regularisation_is_added_to_the_loss():
    case = make_case("bert")
    config = peft.AdaLoraConfig(task_type="SEQ_CLS", target_modules=["query", "value"], init_r=4, total_step=10,
                                orth_reg_weight=0.3)
    model = peft.get_peft_model(case.make_model(), config)
    model.eval()
    inputs = case.inputs(train=True)
    with core.no_grad():
        with_penalty = float(model(**inputs).loss)
        plain = float(model.get_base_model()(**inputs).loss)
    penalties = []
    for name, parameter in model.base_model.model.named_parameters():
        if ("lora_A" in name or "lora_B" in name) and "default" in name:
            value = parameter.detach().numpy()
            covariance = value @ value.T if "lora_A" in name else value.T @ value
            penalties.append(np.linalg.norm(covariance - np.eye(len(covariance))))
    assert len(penalties) == 8
    assert with_penalty == pytest.approx(plain + 0.3 * np.mean(penalties), rel=1e-5)


def test_config_checks():
    with pytest.raises(ValueError, match="total_step"):
        peft.AdaLoraConfig(target_modules=["lin0"])
    with pytest.raises(ValueError, match="budgeting phase"):
        peft.AdaLoraConfig(target_modules=["lin0"], total_step=5, tinit=3, tfinal=2)
