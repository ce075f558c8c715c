"""Run Hugging Face's own test files (../shared/hf-tests) against mindnlp and fail if any
supported family scores below its committed floor (.ci/hf_tests_floors.json).

Floors only go up: raise a family's floor when it passes more of its baseline.

A few baseline tests compare random-weight models on random inputs against a fixed tolerance,
so their outcome is the draw's: test_eager_padding_matches_padding_free_with_position_ids
(bfloat16 logits within 2^-7) failed 2 of 300 seeded draws for roberta on mindnlp, whose
largest difference was 0.0095, where torch's largest was 0.0078, at the tolerance's edge. A
family below its floor is therefore run once more, and fails the gate only if it is below
again; the tests that failed the first time are printed.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, "..", "..", "shared", "hf-tests", "hf_tests.py")


def _run(families):
    """The harness's per-family summary of one run of `families`."""
    summary_path = os.path.join(tempfile.mkdtemp(), "hf_tests.json")
    subprocess.run([sys.executable, HARNESS, *families, "--json", summary_path], check=True)
    with open(summary_path) as fh:
        return json.load(fh)["families"]


def main():
    if not os.path.exists(HARNESS):
        print(f"hf-tests gate: {HARNESS} is absent, skipped")
        return 0
    floors = json.load(open(os.path.join(HERE, "hf_tests_floors.json")))
    summary = _run(floors)
    retry = [family for family, floor in floors.items() if summary.get(family, {}).get("passed", 0) < floor]
    if retry:
        for family in retry:
            failing = ", ".join(t.split("::")[-1] for t in summary.get(family, {}).get("failing", {}))
            print(f"hf-tests gate: {family} below its floor, running it again; it failed: {failing}")
        summary.update(_run(retry))
    below = []
    for family, floor in floors.items():
        passed = summary.get(family, {}).get("passed", 0)
        status = "ok" if passed >= floor else "BELOW FLOOR"
        print(f"hf-tests gate: {family:12s} {passed:4d} passed, floor {floor:4d}  {status}")
        if passed < floor:
            below.append(family)
    if below:
        print(f"hf-tests gate: failed for {', '.join(below)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
