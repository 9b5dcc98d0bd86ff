#!/usr/bin/env python3
"""A GPU's GEMM rate in its first second against the rate it holds over a long run (issue 40/44).

A calibration (`mario-executor calibrate`) times each kernel for a few milliseconds on a cool GPU,
at its boost clock. A training step on hundreds of GPUs runs for hours at the power limit, where
the clock settles lower: the bundled H100 preset's calibrated gemm_efficiency (0.61) carries that
difference, with whatever else a production step loses (docs/cost-model.md, hardware presets).
This measures the clock's part on the GPU at hand: one bf16 product back to back for --seconds,
its TFLOP/s per window, and the SM clock, power and temperature nvidia-smi reports beside each.

    python3 tests/bench/sustained_gemm.py [--seconds 90] [--size 8192] [--device cuda:0] [-o OUT.json]

Prints one line per window and a summary: the first window's rate, the median of the last third,
and their ratio (the sustained share of the burst rate). With --device cpu it runs the same loop on
the CPU (float32; no clocks), a check that the script itself works on a machine without a GPU.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time


def gpu_sample(index):
    """SM clock (MHz), power (W) and temperature (C) of GPU `index`, or None without nvidia-smi."""
    try:
        out = subprocess.run(["nvidia-smi", "-i", str(index), "--query-gpu=clocks.sm,power.draw,temperature.gpu",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=5)
        clock, power, temperature = (float(v) for v in out.stdout.strip().split(","))
        return {"sm_clock_mhz": clock, "power_w": power, "temperature_c": temperature}
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=90)
    ap.add_argument("--window", type=float, default=1.0, help="seconds per reported window")
    ap.add_argument("--size", type=int, default=8192, help="M = N = K of the product")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("-o", "--output", help="write the windows and the summary as JSON here")
    args = ap.parse_args(argv)
    import torch  # after the arguments, so that --help works without PyTorch

    device = torch.device(args.device)
    on_gpu = device.type == "cuda"
    dtype = torch.bfloat16 if on_gpu else torch.float32
    n = args.size
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    c = torch.empty(n, n, device=device, dtype=dtype)
    flops = 2.0 * n * n * n
    sync = torch.cuda.synchronize if on_gpu else (lambda: None)
    torch.matmul(a, b, out=c)  # the library's choice of kernel, once, outside the timing
    sync()

    windows, start = [], time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        begin, count = time.perf_counter(), 0
        while time.perf_counter() - begin < args.window:
            torch.matmul(a, b, out=c)
            count += 1
            if count % 8 == 0:
                sync()  # keep the queue short, so that the window's end is the GPU's too
        sync()
        seconds = time.perf_counter() - begin
        window = {"at_s": round(begin - start, 3), "tflops": flops * count / seconds / 1e12}
        sample = gpu_sample(device.index or 0) if on_gpu else None
        if sample:
            window.update(sample)
        windows.append(window)
        print(json.dumps(window), flush=True)

    if not windows:
        print("sustained_gemm: no window ran (--seconds too short)", file=sys.stderr)
        return 2
    last = windows[-max(1, len(windows) // 3):]
    summary = {"device": torch.cuda.get_device_name(device) if on_gpu else "cpu", "dtype": str(dtype).split(".")[-1],
               "size": n, "seconds": args.seconds, "first_tflops": windows[0]["tflops"],
               "sustained_tflops": statistics.median(w["tflops"] for w in last),
               "torch": torch.__version__}
    summary["sustained_over_first"] = summary["sustained_tflops"] / summary["first_tflops"]
    if on_gpu and "sm_clock_mhz" in windows[0]:
        summary["first_sm_clock_mhz"] = windows[0]["sm_clock_mhz"]
        summary["sustained_sm_clock_mhz"] = statistics.median(w["sm_clock_mhz"] for w in last)
    print("summary " + json.dumps(summary), flush=True)
    if args.output:
        with open(args.output, "w") as f:
            json.dump({"summary": summary, "windows": windows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
