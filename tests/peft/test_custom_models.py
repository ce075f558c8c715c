"""The common checks over a table of (model, LoraConfig) cases, as in HF peft's test_custom_models."""
import pytest

from .cases import make_case
from .testing_common import PeftCommonTester

TEST_CASES = [
    ("mlp: lin0", "mlp", dict(target_modules=["lin0"], r=4, lora_alpha=8)),
    ("mlp: lin0 + lin1, dropout", "mlp", dict(target_modules=["lin0", "lin1"], lora_dropout=0.1)),
    ("mlp: regex, rslora", "mlp", dict(target_modules=r"lin\d", use_rslora=True)),
    ("mlp: modules_to_save, bias all", "mlp", dict(target_modules=["lin0"], modules_to_save=["lin1"], bias="all")),
    ("mlp: lora_only bias", "mlp", dict(target_modules=["lin0", "lin1"], bias="lora_only")),
    ("mlp: dora", "mlp", dict(target_modules=["lin0", "lin1"], use_dora=True)),
    ("mlp: rank/alpha pattern", "mlp", dict(target_modules=["lin0", "lin1"], rank_pattern={"lin1": 2},
                                            alpha_pattern={"lin0": 3})),
    ("embedding + Conv1D", "emb_conv1d", dict(target_modules=["emb", "conv1d"])),
    ("embedding dora", "emb_conv1d", dict(target_modules=["emb", "lin0"], use_dora=True)),
    ("conv1d/conv2d", "conv", dict(target_modules=["conv1d", "conv2d", "conv2d_1x1"], r=2)),
    ("conv dora", "conv", dict(target_modules=["conv1d", "conv2d", "conv2d_1x1"], use_dora=True)),
    ("bert: query/value", "bert", dict(task_type="SEQ_CLS", target_modules=["query", "value"])),
    ("bert: all-linear, dora", "bert", dict(task_type="SEQ_CLS", target_modules="all-linear", use_dora=True)),
    ("llama: q/v", "llama", dict(task_type="CAUSAL_LM", target_modules=["q_proj", "v_proj"])),
    # the other methods that inject layers
    ("ia3 mlp", "mlp", dict(peft_type="IA3", target_modules=["lin0", "lin1"], feedforward_modules=["lin0"])),
    ("ia3 Conv1D", "emb_conv1d", dict(peft_type="IA3", target_modules=["conv1d"], feedforward_modules=[])),
    ("ia3 conv2d", "conv", dict(peft_type="IA3", target_modules=["conv2d", "conv2d_1x1"],
                                feedforward_modules=["conv2d_1x1"])),
    ("loha mlp", "mlp", dict(peft_type="LOHA", target_modules=["lin0", "lin1"], r=4, alpha=8, rank_dropout=0.2)),
    ("loha conv", "conv", dict(peft_type="LOHA", target_modules=["conv1d", "conv2d", "conv2d_1x1"], r=2)),
    ("loha conv effective", "conv", dict(peft_type="LOHA", target_modules=["conv1d", "conv2d"], r=2,
                                         use_effective_conv2d=True, module_dropout=0.1)),
    ("lokr mlp", "mlp", dict(peft_type="LOKR", target_modules=["lin0", "lin1"], r=2, decompose_both=True)),
    ("lokr conv effective", "conv", dict(peft_type="LOKR", target_modules=["conv1d", "conv2d", "conv2d_1x1"], r=1,
                                         use_effective_conv2d=True, rank_dropout=0.1, rank_dropout_scale=True)),
    ("lokr bert", "bert", dict(peft_type="LOKR", task_type="SEQ_CLS", target_modules=["query", "value"], r=4,
                               init_weights="lycoris")),
    ("adalora mlp", "mlp", dict(peft_type="ADALORA", target_modules=["lin0", "lin1"], init_r=4, target_r=2,
                                total_step=10)),
    ("adalora bert", "bert", dict(peft_type="ADALORA", task_type="SEQ_CLS", target_modules=["query", "value"],
                                  init_r=4, target_r=2, total_step=10)),
]
IDS = [case[0] for case in TEST_CASES]


class TestCustomModels(PeftCommonTester):
    @pytest.mark.parametrize("name, kind, config_kwargs", TEST_CASES, ids=IDS)
    def test_save_pretrained_round_trip(self, name, kind, config_kwargs, tmp_path):
        self._test_save_pretrained_round_trip(make_case(kind), config_kwargs, tmp_path)

    @pytest.mark.parametrize("name, kind, config_kwargs", TEST_CASES, ids=IDS)
    def test_merge_equivalence(self, name, kind, config_kwargs):
        self._test_merge_equivalence(make_case(kind), config_kwargs)

    @pytest.mark.parametrize("name, kind, config_kwargs", TEST_CASES, ids=IDS)
    def test_disable_adapter_and_unload(self, name, kind, config_kwargs):
        self._test_disable_adapter_and_unload(make_case(kind), config_kwargs)

    @pytest.mark.parametrize("name, kind, config_kwargs", TEST_CASES, ids=IDS)
    def test_training_reduces_loss(self, name, kind, config_kwargs):
        self._test_training_reduces_loss(make_case(kind), config_kwargs)

    @pytest.mark.parametrize("name, kind, config_kwargs", TEST_CASES, ids=IDS)
    def test_only_adapter_parameters_get_gradients(self, name, kind, config_kwargs):
        self._test_only_adapter_parameters_get_gradients(make_case(kind), config_kwargs)
