# For context: this device's copy bandwidth (device-to-device, bytes read + written), by PyTorch
# (bench/run.sh hook).
python3 - <<'PY' 2>&1 | tee "$OUT/copy_bandwidth.log"
import torch
x = torch.randn(8192 * 8192 * 2, device="cuda", dtype=torch.bfloat16); y = torch.empty_like(x)
for _ in range(5): y.copy_(x)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
times = []
for _ in range(50):
    s.record(); y.copy_(x); e.record(); torch.cuda.synchronize(); times.append(s.elapsed_time(e))
times.sort(); t = times[len(times) // 2]
print(f"# device-to-device copy of {x.numel() * 2 / 1e6:.0f} MB: median {t:.4f} ms, {2 * x.numel() * 2 / (t * 1e9):.3f} TB/s (read + write)")
PY
