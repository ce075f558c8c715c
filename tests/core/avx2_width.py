"""Running a check against the AVX2 build of the LLVM-IR kernels on a machine that has AVX-512:
a fresh process asking for vector width 8, with a numba cache of its own (numba's cache would
otherwise serve the other width's machine code)."""
import os
import subprocess
import sys
import tempfile

import pytest


def run_at_avx2_width(script):
    """Run `script` (Python source that prints 'ok' when its checks pass) at width 8; skips
    where the CPU has no AVX2."""
    from llvmlite import binding

    if not binding.get_host_cpu_features().get("avx2"):
        pytest.skip("no AVX2 here")
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, MINDNLP_SIMD_WIDTH="8", NUMBA_CACHE_DIR=cache)
        result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]
