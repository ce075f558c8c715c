"""from_pretrained copies a generative model's weights off 4 KiB pages into one block (for the
kernel's 2 MiB pages: decoding streams every weight once per token); encoders and models too
small for a huge page keep the copy-free mapping of the checkpoint."""
import mmap

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import BertConfig, BertModel, LlamaConfig, LlamaForCausalLM


def _root(array):
    """The object whose memory an array views: an owning array, or a file mapping."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array.obj if isinstance(array, memoryview) else array


def _llama(vocab_size, tie):
    core.manual_seed(0)
    config = LlamaConfig(vocab_size=vocab_size, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=tie)
    return LlamaForCausalLM(config).eval()


@pytest.mark.parametrize("tie", [True, False])
def test_decoder_weights_move_into_one_block(tmp_path, tie):
    model = _llama(8192, tie)             # 8192 x 128 float32 embeddings: 4 MiB, a huge page's worth
    model.save_pretrained(tmp_path)
    loaded = LlamaForCausalLM.from_pretrained(tmp_path)
    roots = {id(_root(p._data)) for p in loaded.parameters()}
    block = _root(next(loaded.parameters())._data)
    assert len(roots) == 1 and isinstance(block, np.ndarray) and block.flags.owndata
    for (name, want), (_, got) in zip(model.state_dict().items(), loaded.state_dict().items()):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)
    assert (loaded.lm_head.weight is loaded.model.embed_tokens.weight) == tie
    ids = core.tensor([[5, 900, 17, 4000]])
    with core.no_grad():
        np.testing.assert_array_equal(loaded(ids).logits.numpy(), model(ids).logits.numpy())
        assert loaded.generate(ids, max_new_tokens=4, do_sample=False).tolist() == model.generate(
            ids, max_new_tokens=4, do_sample=False).tolist()


def test_models_beyond_half_the_free_memory_keep_the_mapping(tmp_path, monkeypatch):
    """A model that would take more than half the available memory stays mapped: its pages
    remain the kernel's to drop and read again."""
    from mindnlp.transformers import modeling_utils

    _llama(8192, True).save_pretrained(tmp_path)
    monkeypatch.setattr(modeling_utils, "_available_memory", lambda: 8 << 20)
    loaded = LlamaForCausalLM.from_pretrained(tmp_path)
    assert all(isinstance(_root(p._data), mmap.mmap) for p in loaded.parameters())


def test_small_decoders_and_encoders_keep_the_mapping(tmp_path):
    _llama(256, True).save_pretrained(tmp_path / "small")
    small = LlamaForCausalLM.from_pretrained(tmp_path / "small")
    assert all(isinstance(_root(p._data), mmap.mmap) for p in small.parameters())
    core.manual_seed(0)
    BertModel(BertConfig(vocab_size=8192, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=256)).save_pretrained(tmp_path / "encoder")
    encoder = BertModel.from_pretrained(tmp_path / "encoder")
    assert all(isinstance(_root(p._data), mmap.mmap) for p in encoder.parameters())


def test_weights_viewing_one_small_allocation_still_share_it_packed():
    """A weight may view a small allocation another weight owns or views (a quantized weight is
    a reshape of the array its quantization made; a tied or transposed weight): the whole
    allocation is copied once and each weight views the copy as it viewed the original."""
    from mindnlp.transformers.modeling_utils import _pack_weights

    rng = np.random.default_rng(0)
    owned, reshaped, strided = (rng.random((512, 1024), dtype=np.float32) for _ in range(3))  # 2 MiB each
    module = core.nn.Module()
    module.owned = core.nn.Parameter(core.from_numpy(owned))
    module.register_buffer("transposed", core.from_numpy(owned.T))
    module.register_buffer("reshaped", core.from_numpy(reshaped.reshape(-1)))
    module.strided = core.nn.Parameter(core.from_numpy(strided[:, ::2]))
    expected = {name: np.array(t._data) for name, t in module.state_dict(keep_vars=True).items()}
    assert np.shares_memory(module.owned._data, module.transposed._data)

    _pack_weights(module)

    tensors = module.state_dict(keep_vars=True)
    block = _root(module.owned._data)
    assert isinstance(block, np.ndarray) and block.nbytes >= 3 * owned.nbytes
    for name, tensor in tensors.items():
        assert _root(tensor._data) is block, name
        np.testing.assert_array_equal(tensor._data, expected[name], err_msg=name)
    assert module.transposed._data.strides == owned.T.strides and module.strided._data.strides == strided[:, ::2].strides
    module.owned._data[3, 5] = -1.0          # still one memory: the transposed weight sees the write
    assert module.transposed._data[5, 3] == -1.0


def test_quantized_decoders_are_packed_and_decode_as_unpacked(tmp_path, monkeypatch):
    """Weights quantized at load time (each in its own small allocation) join the block: an int8
    decoding step streams them at the memory's speed only on 2 MiB pages."""
    from mindnlp.transformers import QuantoConfig, modeling_utils

    _llama(8192, True).save_pretrained(tmp_path)
    config = QuantoConfig(weights="int4")
    packed = LlamaForCausalLM.from_pretrained(tmp_path, quantization_config=config)
    q_proj = packed.model.layers[0].self_attn.q_proj
    block = _root(packed.model.embed_tokens.weight._data)
    assert all(_root(t._data) is block for t in (q_proj.weight, q_proj.weight_scale, q_proj.weight_offset))
    monkeypatch.setattr(modeling_utils, "_available_memory", lambda: 8 << 20)     # too big: left unpacked
    unpacked = LlamaForCausalLM.from_pretrained(tmp_path, quantization_config=config)
    assert _root(unpacked.model.layers[0].self_attn.q_proj.weight._data) is not block
    ids = core.tensor([[5, 900, 17, 4000]])
    with core.no_grad():
        np.testing.assert_array_equal(packed(ids).logits.numpy(), unpacked(ids).logits.numpy())
    assert packed.generate(ids, max_new_tokens=4, do_sample=False).tolist() == unpacked.generate(
        ids, max_new_tokens=4, do_sample=False).tolist()
