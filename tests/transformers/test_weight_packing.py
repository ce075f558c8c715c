"""from_pretrained copies a generative model's weights off 4 KiB pages into one block (for the
kernel's 2 MiB pages: decoding streams every weight once per token); encoders and models too
small for a huge page keep the copy-free mapping of the checkpoint."""
import mmap
import os

import numpy as np
import pytest

from mindnlp import core
from mindnlp.transformers import BertConfig, BertModel, LlamaConfig, LlamaForCausalLM, modeling_utils


def _root(array):
    """The object whose memory an array views: an owning array, a file mapping, or the block."""
    while getattr(array, "base", None) is not None:
        array = array.base
    return array.obj if isinstance(array, memoryview) else array


def _file_mapped(array):
    root = _root(array)
    return isinstance(root, mmap.mmap) and not isinstance(root, modeling_utils._PageBlock)


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
    assert len(roots) == 1 and isinstance(block, modeling_utils._PageBlock)
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
    _llama(8192, True).save_pretrained(tmp_path)
    monkeypatch.setattr(modeling_utils, "_available_memory", lambda: 8 << 20)
    loaded = LlamaForCausalLM.from_pretrained(tmp_path)
    assert all(_file_mapped(p._data) for p in loaded.parameters())


def test_small_decoders_and_encoders_keep_the_mapping(tmp_path):
    _llama(256, True).save_pretrained(tmp_path / "small")
    small = LlamaForCausalLM.from_pretrained(tmp_path / "small")
    assert all(_file_mapped(p._data) for p in small.parameters())
    core.manual_seed(0)
    BertModel(BertConfig(vocab_size=8192, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=256)).save_pretrained(tmp_path / "encoder")
    encoder = BertModel.from_pretrained(tmp_path / "encoder")
    assert all(_file_mapped(p._data) for p in encoder.parameters())


def test_weights_viewing_one_allocation_still_share_it_packed():
    """A weight may view an allocation another weight owns or views (a quantized weight is a
    reshape of the array its quantization made; a tied or transposed weight): the whole
    allocation is copied once and each weight views the copy as it viewed the original. Large
    allocations are copied too (malloc may have served them from 4 KiB pages), once: packing
    again leaves the block as it is."""
    rng = np.random.default_rng(0)
    owned, reshaped, strided = (rng.random((512, 1024), dtype=np.float32) for _ in range(3))  # 2 MiB each
    large = rng.random((2048, 1024), dtype=np.float32)                                          # 8 MiB
    module = core.nn.Module()
    module.owned = core.nn.Parameter(core.from_numpy(owned))
    module.register_buffer("transposed", core.from_numpy(owned.T))
    module.register_buffer("reshaped", core.from_numpy(reshaped.reshape(-1)))
    module.strided = core.nn.Parameter(core.from_numpy(strided[:, ::2]))
    module.large = core.nn.Parameter(core.from_numpy(large))
    expected = {name: np.array(t._data) for name, t in module.state_dict(keep_vars=True).items()}
    assert np.shares_memory(module.owned._data, module.transposed._data)

    modeling_utils._pack_weights(module)

    tensors = module.state_dict(keep_vars=True)
    block = _root(module.owned._data)
    assert isinstance(block, modeling_utils._PageBlock) and len(block) >= 3 * owned.nbytes + large.nbytes
    for name, tensor in tensors.items():
        assert _root(tensor._data) is block, name
        np.testing.assert_array_equal(tensor._data, expected[name], err_msg=name)
    assert module.transposed._data.strides == owned.T.strides and module.strided._data.strides == strided[:, ::2].strides
    module.owned._data[3, 5] = -1.0          # still one memory: the transposed weight sees the write
    assert module.transposed._data[5, 3] == -1.0
    arrays = {name: t._data for name, t in tensors.items()}
    modeling_utils._pack_weights(module)
    assert all(t._data is arrays[name] for name, t in module.state_dict(keep_vars=True).items())


def _mapping_of(address):
    """The /proc/self/smaps fields of the mapping holding `address`."""
    fields, inside = {}, False
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                low, high = (int(bound, 16) for bound in head.split("-"))
                inside = low <= address < high
            elif inside:
                fields[head.rstrip(":")] = line.split()[1]
    return fields


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="reads Linux's /proc/self/smaps")
def test_the_block_is_fresh_private_memory_on_a_huge_page_boundary():
    """The block is a private mapping of its own, aligned to 2 MiB, that the kernel may back
    with 2 MiB pages: not memory malloc recycles (on 4 KiB pages already), nor a shared
    anonymous mapping (shared memory, which gets no 2 MiB pages)."""
    block = modeling_utils._huge_page_block(6 << 20)
    assert isinstance(_root(block), modeling_utils._PageBlock) and block.nbytes == 6 << 20
    assert block.ctypes.data % (2 << 20) == 0
    block[:] = 1
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as setting:
        offered = "[never]" not in setting.read()
    assert _mapping_of(block.ctypes.data).get("THPeligible") == ("1" if offered else "0")


def test_quantized_decoders_are_packed_and_decode_as_unpacked(tmp_path, monkeypatch):
    """Weights quantized at load time (each in its own small allocation) join the block: an int8
    decoding step streams them at the memory's speed only on 2 MiB pages."""
    from mindnlp.transformers import QuantoConfig

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
