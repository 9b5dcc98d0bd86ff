#!/usr/bin/env python3
"""tests/bench/sustained_gemm.py on the CPU (the GPU lease runs it on the GPU): its windows cover
the run, and its summary is what its windows say, recomputed here (the first window's rate, the
median of the last third, their ratio)."""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "bench", "sustained_gemm.py")


def main():
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "sustained.json")
        done = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--size", "256", "--seconds", "3",
                               "--window", "0.5", "-o", out], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        result = json.load(open(out))
    windows, summary = result["windows"], result["summary"]
    # 3 s of 0.5 s windows: 6, or 7 when the last one starts just before the end.
    assert 6 <= len(windows) <= 7, len(windows)
    assert all(w["tflops"] > 0 for w in windows)
    assert all(b["at_s"] > a["at_s"] for a, b in zip(windows, windows[1:]))
    last = windows[-max(1, len(windows) // 3):]
    assert summary["first_tflops"] == windows[0]["tflops"]
    assert abs(summary["sustained_tflops"] - statistics.median(w["tflops"] for w in last)) < 1e-12
    assert abs(summary["sustained_over_first"] - summary["sustained_tflops"] / summary["first_tflops"]) < 1e-12
    assert summary["device"] == "cpu" and summary["dtype"] == "float32" and summary["size"] == 256
    # An unusable run says so in one line and exits non-zero.
    bad = subprocess.run([sys.executable, SCRIPT, "--device", "cpu", "--size", "64", "--seconds", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0, (bad.returncode, bad.stderr)
    print(f"sustained_gemm on the CPU: {len(windows)} windows, first {summary['first_tflops']:.3f} TFLOP/s, "
          f"sustained {summary['sustained_tflops']:.3f}")


if __name__ == "__main__":
    main()
