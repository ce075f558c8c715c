"""dataset.with_format("mindnlp"): core tensors from Hugging Face datasets, with torch's
formatter's dtype rules, and views of the Arrow buffers where the dtype allows."""
import subprocess
import sys

import numpy as np
import pytest

datasets = pytest.importorskip("datasets")

from mindnlp import core  # noqa: E402


@pytest.fixture
def saved(tmp_path):
    """A dataset written to disk and loaded back, so its Arrow buffers are memory-mapped."""
    table = datasets.Dataset.from_dict({
        "ids64": [[1, 2, 3], [4, 5, 6], [7, 8, 9]],
        "ids32": [[1, 2], [3, 4], [5, 6]],
        "ragged": [[1], [2, 3], [4, 5, 6]],
        "label": [0, 1, 0],
        "score": np.array([0.5, 1.5, 2.5], dtype=np.float32),
        "wide": np.array([0.25, 0.5, 0.75], dtype=np.float64),
        "flag": [True, False, True],
        "text": ["a", "bb", "ccc"],
    }, features=datasets.Features({
        "ids64": datasets.Sequence(datasets.Value("int64")), "ids32": datasets.Sequence(datasets.Value("int32")),
        "ragged": datasets.Sequence(datasets.Value("int64")), "label": datasets.Value("int64"),
        "score": datasets.Value("float32"), "wide": datasets.Value("float64"), "flag": datasets.Value("bool"),
        "text": datasets.Value("string")}))
    table.save_to_disk(str(tmp_path / "ds"))
    return datasets.load_from_disk(str(tmp_path / "ds")).with_format("mindnlp")


def test_batches_follow_torchs_dtype_rules(saved):
    batch = saved[:3]
    assert batch["ids64"].dtype == core.int64 and batch["ids64"].tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert batch["ids32"].dtype == core.int64  # integers become int64, as torch's formatter makes them
    assert batch["score"].dtype == core.float32 and batch["wide"].dtype == core.float32
    assert batch["flag"].dtype == core.bool and batch["flag"].tolist() == [True, False, True]
    assert batch["text"] == ["a", "bb", "ccc"] and all(type(t) is str for t in batch["text"])
    assert [t.tolist() for t in batch["ragged"]] == [[1], [2, 3], [4, 5, 6]]  # ragged rows: a list


def test_rows_and_columns(saved):
    row = saved[1]
    assert row["ids64"].tolist() == [4, 5, 6] and row["label"].item() == 1 and row["text"] == "bb"
    assert row["label"].shape == ()
    assert saved["label"][:].tolist() == [0, 1, 0] and saved["ids64"][:].shape == (3, 3)  # columns whole


def test_int64_and_float32_columns_view_the_memory_mapped_file(saved):
    batch = saved[:3]
    for name in ("ids64", "label", "score"):
        array = batch[name]._data
        assert not array.flags.owndata and not array.flags.writeable, name  # a view of the Arrow buffer
    assert batch["ids32"]._data.flags.owndata  # int32 -> int64 had to copy
    with pytest.raises(ValueError):  # read-only, as the file it maps
        batch["label"]._data[0] = 5


def test_dtype_and_device_arguments_convert(saved):
    batch = saved.with_format("mindnlp", dtype=core.float64)[:2]
    assert batch["ids64"].dtype == core.float64 and batch["label"].dtype == core.float64
    assert batch["text"] == ["a", "bb"]


def test_the_format_exists_whichever_is_imported_first():
    for order in ("import mindnlp, datasets", "import datasets, mindnlp"):
        code = (f"{order}\nimport sys\n"
                "d = datasets.Dataset.from_dict({'x': [1, 2]}).with_format('mindnlp')\n"
                "print(type(d[:2]['x']).__module__)")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "mindnlp.core._tensor", order


def test_importing_mindnlp_does_not_import_datasets():
    code = "import sys, mindnlp\nprint('datasets' in sys.modules, 'mindnlp.core' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False False"
