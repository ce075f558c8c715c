"""The settings objects and small helpers HF's generation API has beside generate():
CompileConfig, GenerationMode, the watermarking configs, output classes, ConfidenceCriteria,
validate_stopping_criteria and AsyncTextIteratorStreamer."""
import asyncio
import dataclasses
import json
import threading
import warnings

import pytest

from mindnlp import core
from mindnlp.transformers import CompileConfig, GenerationConfig, SynthIDTextWatermarkingConfig, WatermarkingConfig
from mindnlp.transformers.generation import (AsyncTextIteratorStreamer, ConfidenceCriteria, GenerateBeamDecoderOnlyOutput,
                                             GenerateBeamEncoderDecoderOutput, GenerateDecoderOnlyOutput,
                                             GenerateEncoderDecoderOutput, GenerationMode, MaxLengthCriteria,
                                             StoppingCriteriaList, validate_stopping_criteria)

from .tiny_lm import load_tiny_lm


def test_compile_config_is_carried_and_never_saved(tmp_path):
    compile_config = CompileConfig(fullgraph=True, dynamic=False)
    compile_config._compile_all_devices = True
    assert compile_config.to_dict() == {"fullgraph": True, "dynamic": False, "backend": "inductor",
                                        "mode": "reduce-overhead", "options": None}
    config = GenerationConfig(compile_config=compile_config)
    assert config.compile_config is compile_config
    assert json.loads(config.to_json_string())["compile_config"]["fullgraph"] is True
    config.save_pretrained(tmp_path)
    assert "compile_config" not in json.loads((tmp_path / "generation_config.json").read_text())
    with pytest.raises(ValueError, match="CompileConfig"):
        GenerationConfig(compile_config={"fullgraph": True})


def test_compile_config_has_no_effect_on_generate():
    model = load_tiny_lm()
    prompt = core.tensor([[3, 17, 250, 99, 4]])
    plain = model.generate(prompt, max_new_tokens=6, do_sample=False)
    model.generation_config.compile_config = CompileConfig()
    try:
        compiled = model.generate(prompt, max_new_tokens=6, do_sample=False, compile_config=CompileConfig(dynamic=True))
    finally:
        model.generation_config.compile_config = None
    assert compiled.tolist() == plain.tolist()


@pytest.mark.parametrize("kwargs, assistant, mode", [
    ({}, None, GenerationMode.GREEDY_SEARCH),
    ({"do_sample": True}, None, GenerationMode.SAMPLE),
    ({"num_beams": 2}, None, GenerationMode.BEAM_SEARCH),
    ({"num_beams": 2, "do_sample": True}, None, GenerationMode.BEAM_SAMPLE),
    ({"num_beams": 4, "num_beam_groups": 2, "diversity_penalty": 1.0}, None, GenerationMode.GROUP_BEAM_SEARCH),
    ({"top_k": 10, "penalty_alpha": 0.6}, None, GenerationMode.CONTRASTIVE_SEARCH),
    ({}, "an assistant", GenerationMode.ASSISTED_GENERATION),
    ({"prompt_lookup_num_tokens": 3, "do_sample": True}, None, GenerationMode.ASSISTED_GENERATION),
    ({"dola_layers": "high"}, None, GenerationMode.DOLA_GENERATION),
])
def test_generation_mode_as_hf(kwargs, assistant, mode):
    assert GenerationConfig(**kwargs).get_generation_mode(assistant_model=assistant) == mode
    assert mode == mode.value and str(mode) == mode.value


def test_watermarking_configs_validate_and_round_trip():
    config = WatermarkingConfig(bias=2.5, seeding_scheme="selfhash")
    assert config.to_dict() == {"greenlist_ratio": 0.25, "bias": 2.5, "hashing_key": 15485863,
                                "seeding_scheme": "selfhash", "context_width": 1}
    assert WatermarkingConfig.from_dict(config.to_dict(), bias=1.0).bias == 1.0
    assert WatermarkingConfig.from_dict(config.to_dict()) == config
    for bad in ({"seeding_scheme": "hash"}, {"greenlist_ratio": 1.5}, {"context_width": 0}):
        with pytest.raises(ValueError):
            WatermarkingConfig(**bad).validate()
    with pytest.raises(ValueError, match="sampling_table_size"):
        SynthIDTextWatermarkingConfig(ngram_len=5, keys=[1], sampling_table_size=2 ** 25).validate()
    generation_config = GenerationConfig()
    generation_config.update(watermarking_config={"ngram_len": 5, "keys": [1, 2]})
    assert isinstance(generation_config.watermarking_config, SynthIDTextWatermarkingConfig)


def test_output_classes_have_hf_fields():
    def names(cls):
        return [field.name for field in dataclasses.fields(cls)]

    assert names(GenerateDecoderOnlyOutput) == ["sequences", "scores", "logits", "attentions", "hidden_states",
                                                "past_key_values"]
    assert names(GenerateEncoderDecoderOutput) == [
        "sequences", "scores", "logits", "encoder_attentions", "encoder_hidden_states", "decoder_attentions",
        "cross_attentions", "decoder_hidden_states", "past_key_values"]
    assert names(GenerateBeamDecoderOnlyOutput) == ["sequences", "sequences_scores", "scores", "logits",
                                                    "beam_indices", "attentions", "hidden_states", "past_key_values"]
    assert names(GenerateBeamEncoderDecoderOutput) == [
        "sequences", "sequences_scores", "scores", "logits", "beam_indices", "encoder_attentions",
        "encoder_hidden_states", "decoder_attentions", "cross_attentions", "decoder_hidden_states",
        "past_key_values"]
    out = GenerateEncoderDecoderOutput(sequences=core.tensor([[1, 2]]))
    assert out[0].tolist() == [[1, 2]] and list(out.keys()) == ["sequences"]


def test_confidence_criteria_and_validate_stopping_criteria():
    criteria = ConfidenceCriteria(assistant_confidence_threshold=0.5)
    confident = (core.tensor([[0.0, 9.0, 0.0]]),)
    unsure = (core.tensor([[1.0, 1.1, 1.0]]),)
    assert criteria(core.tensor([[4, 1]]), confident) is False
    assert criteria(core.tensor([[4, 1]]), unsure) is True
    assert StoppingCriteriaList([criteria])(core.tensor([[4, 1]]), unsure).tolist() == [True]

    empty = StoppingCriteriaList()
    completed = validate_stopping_criteria(empty, 10)
    assert len(empty) == 0 and completed.max_length == 10
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kept = validate_stopping_criteria(StoppingCriteriaList([MaxLengthCriteria(5)]), 10)
    assert kept.max_length == 5 and "different `max_length`" in str(caught[0].message)


class _CharTokenizer:
    def decode(self, ids, **kwargs):
        return "".join(" " if i == 0 else chr(ord("a") + i % 26) for i in ids)


def test_async_streamer_yields_the_text_in_a_coroutine():
    async def consume():
        streamer = AsyncTextIteratorStreamer(_CharTokenizer())

        def produce():
            for piece in ([[1, 2]], [[0]], [[3, 4, 0]], [[5]]):
                streamer.put(core.tensor(piece))
            streamer.end()

        thread = threading.Thread(target=produce)
        thread.start()
        text = "".join([piece async for piece in streamer])
        thread.join()
        return text

    assert asyncio.run(consume()) == "bc de f"


def test_async_streamer_times_out():
    async def wait():
        streamer = AsyncTextIteratorStreamer(_CharTokenizer(), timeout=0.01)
        with pytest.raises(TimeoutError):
            await streamer.__anext__()

    asyncio.run(wait())


def test_default_dynamic_cache_support_as_hf():
    from mindnlp.transformers.generation import GenerationMixin

    assert load_tiny_lm()._supports_default_dynamic_cache()
    assert not type("XLNetLMHeadModel", (GenerationMixin,), {})._supports_default_dynamic_cache()
    assert not type("StatefulLM", (GenerationMixin,), {"_is_stateful": True})._supports_default_dynamic_cache()


def test_low_memory_beam_search_is_refused_as_in_hf():
    with pytest.raises(ValueError, match="low_memory"):
        load_tiny_lm().generate(core.tensor([[3, 17]]), max_new_tokens=2, num_beams=2, low_memory=True)
