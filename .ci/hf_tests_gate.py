"""Run Hugging Face's own test files (../shared/hf-tests) against mindnlp and fail if any
supported family scores below its committed floor (.ci/hf_tests_floors.json).

Floors only go up: raise a family's floor when it passes more of its baseline.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
HARNESS = os.path.join(HERE, "..", "..", "shared", "hf-tests", "hf_tests.py")


def main():
    if not os.path.exists(HARNESS):
        print(f"hf-tests gate: {HARNESS} is absent, skipped")
        return 0
    floors = json.load(open(os.path.join(HERE, "hf_tests_floors.json")))
    summary_path = os.path.join(tempfile.mkdtemp(), "hf_tests.json")
    subprocess.run([sys.executable, HARNESS, *floors, "--json", summary_path], check=True)
    summary = json.load(open(summary_path))["families"]
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
