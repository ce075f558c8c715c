"""Whisper speech recognition speed of mindnlp beside HF transformers + PyTorch, in one run.

    python benchmarks/speech_recognition.py [--seconds 30] [--new-tokens 32] [--repeats 3]

A whisper-tiny-shaped model (4 + 4 layers, 384 wide, 51865 tokens) is built with random
weights by HF transformers, saved, and loaded by both libraries (float32, batch size 1).
Figures, each the best of `repeats` runs:

- features: the log-mel spectrogram of `seconds` of audio (HF computes it with torch.stft
  when torch is installed; mindnlp with NumPy);
- transcribe: generate() of `new_tokens` tokens (no early stop) from those features, the
  30 s encoder pass included.

Each library runs in a process of its own: threads one library leaves spinning would
otherwise slow the other's kernels. Then mindnlp / PyTorch ratios of the rates (above 1:
mindnlp is faster). torch and transformers are needed here only.
"""
import argparse
import multiprocessing
import os
import platform
import tempfile
import time

import numpy as np


def build_whisper_tiny(directory):
    import torch
    import transformers

    config = transformers.WhisperConfig(vocab_size=51865, d_model=384, encoder_layers=4, decoder_layers=4,
                                        encoder_attention_heads=6, decoder_attention_heads=6, encoder_ffn_dim=1536,
                                        decoder_ffn_dim=1536, begin_suppress_tokens=None)
    torch.manual_seed(0)
    transformers.WhisperForConditionalGeneration(config).save_pretrained(directory)
    transformers.WhisperFeatureExtractor().save_pretrained(directory)


def best_time(run, repeats):
    run()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(library, directory, audio, new_tokens, repeats):
    """(feature seconds, transcription seconds) with `library`'s classes."""
    if library == "torch":
        import torch
        import transformers as lib

        no_grad, to_tensor = torch.no_grad, torch.tensor
    else:
        from mindnlp import core
        from mindnlp import transformers as lib

        no_grad, to_tensor = core.no_grad, core.tensor
    extractor = lib.WhisperFeatureExtractor.from_pretrained(directory)
    model = lib.WhisperForConditionalGeneration.from_pretrained(directory).eval()
    features = to_tensor(extractor(audio, sampling_rate=16000, return_tensors="np")["input_features"])

    def transcribe():
        with no_grad():
            model.generate(features, max_new_tokens=new_tokens, min_new_tokens=new_tokens)

    feature_time = best_time(lambda: extractor(audio, sampling_rate=16000, return_tensors="np"), repeats)
    return feature_time, best_time(transcribe, repeats)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    audio = (0.1 * np.random.default_rng(0).standard_normal(int(args.seconds * 16000))).astype(np.float32)
    print(f"whisper-tiny-shaped, batch 1, float32, {args.seconds:g} s of audio, {args.new_tokens} new tokens, best "
          f"of {args.repeats}; {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as directory:
        build_whisper_tiny(directory)
        with multiprocessing.get_context("spawn").Pool(1, maxtasksperchild=1) as pool:
            results = {library: pool.apply(measure, (library, directory, audio, args.new_tokens, args.repeats))
                       for library in ("torch", "mindnlp")}
    print(f"{'library':9} {'features ms':>12} {'transcribe ms':>14}")
    for library, (features, transcribe) in results.items():
        print(f"{library:9} {features * 1e3:12.1f} {transcribe * 1e3:14.1f}")
    (tf, tt), (mf, mt) = results["torch"], results["mindnlp"]
    print(f"{'ratio':9} {tf / mf:11.2f}x {tt / mt:13.2f}x   (mindnlp speed / torch speed)")


if __name__ == "__main__":
    main()
