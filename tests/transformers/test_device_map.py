"""from_pretrained(device_map=...): HF's device maps place the model on one device, and maps
mindnlp cannot honour (split models, disk offload, unknown devices) are refused by name."""
import os

import pytest

from mindnlp import core
from mindnlp.transformers import AutoModel

from .encoder_fixtures import ROOT

CHECKPOINT = os.path.join(ROOT, "roberta", "checkpoint")


@pytest.mark.parametrize("device_map", ["auto", "sequential", "cpu", {"": "cpu"}, core.device("cpu"),
                                        {"embeddings": "cpu", "encoder": "cpu"}])
def test_maps_onto_the_cpu_place_every_weight_there(device_map):
    if isinstance(device_map, str) and device_map in ("auto", "sequential") and core.cuda.is_available():
        pytest.skip("'auto' fills the GPU first where there is one: see test_cuda_models")
    model = AutoModel.from_pretrained(CHECKPOINT, device_map=device_map)
    assert model.hf_device_map == {"": "cpu"}
    assert {t.device.type for t in list(model.parameters()) + list(model.buffers())} == {"cpu"}


def test_without_a_device_map_the_model_has_no_map():
    assert not hasattr(AutoModel.from_pretrained(CHECKPOINT), "hf_device_map")


@pytest.mark.parametrize("device_map,message", [
    ({"embeddings": "cpu", "encoder": "cuda:0"}, "several devices"),
    ({"": "disk"}, "disk"),
    ("gpu", "'gpu' is not a device"),
])
def test_maps_it_cannot_honour_are_refused_by_name(device_map, message):
    with pytest.raises(ValueError, match=message):
        AutoModel.from_pretrained(CHECKPOINT, device_map=device_map)


@pytest.mark.skipif(core.cuda.is_available(), reason="checks the error raised without a GPU")
def test_a_cuda_map_without_a_gpu_says_so_before_reading_the_weights():
    with pytest.raises(RuntimeError, match="no CUDA GPU is visible"):
        AutoModel.from_pretrained(CHECKPOINT, device_map="cuda")
