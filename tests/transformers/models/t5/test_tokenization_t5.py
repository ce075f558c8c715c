"""T5TokenizerFast over a small Unigram tokenizer.json built in the test: T5's special
tokens, the sentinels it adds, and the errors it gives without a tokenizer.json."""
import os

import pytest
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

from mindnlp.transformers import AutoTokenizer, T5TokenizerFast

VOCAB = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("▁hello", -1.0), ("▁world", -1.5), ("▁", -2.0),
         ("h", -3.0), ("e", -3.0), ("l", -3.0), ("o", -3.0)]


@pytest.fixture()
def tokenizer_file(tmp_path):
    tokenizer = Tokenizer(models.Unigram(VOCAB, unk_id=2))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    tokenizer.post_processor = processors.TemplateProcessing(single="$A </s>", pair="$A </s> $B </s>",
                                                             special_tokens=[("</s>", 1)])
    path = os.path.join(tmp_path, "tokenizer.json")
    tokenizer.save(path)
    return path


def test_encodes_with_eos_and_adds_sentinels(tokenizer_file):
    tokenizer = T5TokenizerFast(tokenizer_file=tokenizer_file, extra_ids=3)
    assert tokenizer("hello world")["input_ids"] == [3, 4, 1]
    assert (tokenizer.eos_token_id, tokenizer.pad_token_id, tokenizer.unk_token_id) == (1, 0, 2)
    assert tokenizer.get_sentinel_tokens() == ["<extra_id_0>", "<extra_id_1>", "<extra_id_2>"]
    assert tokenizer.get_sentinel_token_ids() == [10, 11, 12]
    ids = tokenizer("hello <extra_id_1> world")["input_ids"]
    assert ids[0] == 3 and 11 in ids and ids[-2:] == [4, 1]
    assert tokenizer.decode(tokenizer("hello world")["input_ids"], skip_special_tokens=True) == "hello world"


def test_auto_tokenizer_maps_t5_checkpoints(tokenizer_file, tmp_path):
    with open(os.path.join(tmp_path, "config.json"), "w", encoding="utf-8") as fh:
        fh.write('{"model_type": "t5"}')
    assert type(AutoTokenizer.from_pretrained(str(tmp_path))) is T5TokenizerFast


def test_needs_a_tokenizer_json():
    with pytest.raises(ValueError, match="tokenizer.json"):
        T5TokenizerFast(vocab_file="spiece.model")
