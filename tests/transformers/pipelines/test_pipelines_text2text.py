"""text2text-generation, summarization and translation pipelines: HF's output formats, the
tokens generate() gives, task_specific_params, and the language pair of translation_xx_to_yy."""
import pytest

from mindnlp.transformers import (SummarizationPipeline, T5Config, T5ForConditionalGeneration,
                                  Text2TextGenerationPipeline, TranslationPipeline, pipeline)

from ..models.seq2seq_parity import tiny_marian_translator


@pytest.fixture(scope="module")
def translator():
    return tiny_marian_translator()


@pytest.fixture(scope="module")
def tokenizer(translator):
    return translator[1]


@pytest.fixture(scope="module")
def model(translator):
    return translator[0]


@pytest.mark.parametrize("task, cls, field", [
    ("text2text-generation", Text2TextGenerationPipeline, "generated"),
    ("summarization", SummarizationPipeline, "summary"),
    ("translation_en_to_de", TranslationPipeline, "translation"),
])
def test_formats_and_tokens(model, tokenizer, task, cls, field):
    pipe = pipeline(task, model=model, tokenizer=tokenizer, max_new_tokens=6)
    assert type(pipe) is cls
    ids = model.generate(**tokenizer("Hello world", return_tensors="pt"), max_new_tokens=6)
    text = tokenizer.decode(ids[0], skip_special_tokens=True)
    assert pipe("Hello world") == [{f"{field}_text": text}]
    both = pipe(["Hello world", "The quick fox."])
    assert len(both) == 2 and both[0] == {f"{field}_text": text} and set(both[1]) == {f"{field}_text"}
    assert pipe(["Hello world", "The quick fox."], batch_size=2) == both
    two = pipe("Hello world", num_beams=3, num_return_sequences=2)
    assert len(two) == 2 and all(set(record) == {f"{field}_text"} for record in two)
    assert len(pipe(["Hello world", "The quick fox."], num_beams=3, num_return_sequences=2)[1]) == 2
    assert pipe("Hello world", return_tensors=True)[0][f"{field}_token_ids"].tolist() == ids[0].tolist()


def test_translation_languages_come_from_the_task(model, tokenizer):
    pipe = pipeline("translation_en_to_de", model=model, tokenizer=tokenizer)
    assert pipe._preprocess_params == {"src_lang": "en", "tgt_lang": "de"}
    captured = {}

    def build(text, **kwargs):
        captured.update(kwargs)
        return tokenizer(text, return_tensors="pt")

    tokenizer._build_translation_inputs = build
    try:
        pipe("Hello", max_new_tokens=2, tgt_lang="fr")
    finally:
        del tokenizer._build_translation_inputs
    assert (captured["src_lang"], captured["tgt_lang"]) == ("en", "fr")


def test_task_specific_params_give_the_prefix_and_generation_defaults(tokenizer):
    config = T5Config(vocab_size=tokenizer.vocab_size, d_model=16, d_kv=8, d_ff=16, num_layers=1, num_heads=2,
                      pad_token_id=tokenizer.pad_token_id, eos_token_id=0, decoder_start_token_id=tokenizer.pad_token_id,
                      task_specific_params={"summarization": {"prefix": "summarize: ", "max_length": 5,
                                                              "num_beams": 2}})
    model = T5ForConditionalGeneration(config).eval()
    pipe = pipeline("summarization", model=model, tokenizer=tokenizer)
    assert pipe.prefix == "summarize: "
    assert (pipe.generation_config.max_length, pipe.generation_config.num_beams) == (5, 2)
    assert model.generation_config.num_beams in (None, 1)  # the model's own config is left alone
    ids = model.generate(**tokenizer("summarize: Hello world", return_tensors="pt"), max_length=5, num_beams=2)
    assert pipe("Hello world", return_tensors=True)[0]["summary_token_ids"].tolist() == ids[0].tolist()


def test_refuses_decoder_only_models(tokenizer):
    from mindnlp.transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config(vocab_size=tokenizer.vocab_size, n_embd=8, n_layer=1, n_head=2))
    with pytest.raises(ValueError, match="encoder-decoder"):
        pipeline("summarization", model=model, tokenizer=tokenizer)
