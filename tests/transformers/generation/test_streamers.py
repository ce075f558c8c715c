"""TextStreamer / TextIteratorStreamer: the same text pieces as Hugging Face's (fixtures)."""
import json
import os

import pytest

from mindnlp import core
from mindnlp.transformers import PreTrainedTokenizerFast
from mindnlp.transformers.generation import TextIteratorStreamer, TextStreamer

from .tiny_lm import FIXTURES

with open(os.path.join(FIXTURES, "streamer.json")) as _fh:
    CASES = json.load(_fh)


class Recorder(TextStreamer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.pieces = []

    def on_finalized_text(self, text, stream_end=False):
        self.pieces.append([text, stream_end])


def load(folder):
    return PreTrainedTokenizerFast.from_pretrained(os.path.join(FIXTURES, "..", "tokenizers", folder))


@pytest.mark.parametrize("name", sorted(CASES))
def test_pieces_match_transformers(name):
    folder, skip = name.rsplit("_skip", 1)
    case = CASES[name]
    streamer = Recorder(load(folder), skip_prompt=skip == "True", skip_special_tokens=True)
    ids = case["ids"]
    streamer.put(core.tensor([ids[:2]]))  # the "prompt"
    for token in ids[2:]:
        streamer.put(core.tensor([token]))
    streamer.end()
    assert streamer.pieces == case["pieces"]


def test_iterator_streamer_yields_pieces_then_stops():
    case = CASES["gpt2_bpe_skipFalse"]
    streamer = TextIteratorStreamer(load("gpt2_bpe"), skip_special_tokens=True)
    for token in case["ids"]:
        streamer.put(core.tensor([token]))
    streamer.end()
    assert list(streamer) == [text for text, _ in _pieces_one_by_one(case["ids"])]


def _pieces_one_by_one(ids):
    recorder = Recorder(load("gpt2_bpe"), skip_special_tokens=True)
    for token in ids:
        recorder.put(core.tensor([token]))
    recorder.end()
    return recorder.pieces


def test_batched_input_refused():
    with pytest.raises(ValueError, match="batch size 1"):
        TextStreamer(load("gpt2_bpe")).put(core.tensor([[1, 2], [3, 4]]))


def test_iterator_timeout():
    import queue

    streamer = TextIteratorStreamer(load("gpt2_bpe"), timeout=0.01)
    with pytest.raises(queue.Empty):
        next(streamer)
