#!/usr/bin/env bash
# Chapter 3's GPU paths, on a machine with at least one NVIDIA GPU (a few minutes):
#   1. ddp_train with --backend nccl (one process per GPU, at most 2) and FSDP2 on the GPU mesh;
#   2. ddp_practice with --backend nccl: checkpoint, map_location, a killed rank restarted by torchrun;
#   3. notebooks 3.1-3.4 (solutions) executed top to bottom: their CUDA cells print what they measured,
#      notebook 3.2's later cells must still see the CPU model they started with, and 3.4's gloo runs
#      (FSDP included) must stay on the CPU of a machine that has GPUs.
# Usage: scripts/gpu_check.sh [output folder]   (default: $OUT, else ./gpu_check_out)
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
out=${1:-${OUT:-gpu_check_out}}
mkdir -p "$out"
status=0
{ nvidia-smi -L || true; $PY -c "import torch, torch.distributed as d; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'GPUs', torch.cuda.device_count(), 'nccl', d.is_nccl_available())"; } 2>&1 | tee "$out/env.txt"

$PY - "$out" <<'PY' 2>&1 | tee "$out/scripts.txt" || status=1
import sys, tempfile, torch
from torchcourse.parallel.launch import launch
n = min(2, torch.cuda.device_count())
assert n >= 1, "no CUDA GPU visible"
ok = True
r = launch("torchcourse.parallel.ddp_train", nproc=n, args=["--backend", "nccl", "--fsdp"], timeout=240)
ok &= r.ok and all("nccl backend on cuda:" in t for t in r.lines if "backend on" in t)
ok &= sum("fully_shard: this rank stores" in t for t in r.lines) == n  # FSDP2 on the GPU mesh
ok &= any("one process on the full batch: max difference" in t and float(t.rsplit(" ", 1)[1]) < 1e-12 for t in r.lines)
with tempfile.TemporaryDirectory() as ck:
    r2 = launch("torchcourse.parallel.ddp_practice", nproc=n, max_restarts=1, timeout=240,
                args=["--checkpoint-dir", ck, "--backend", "nccl"] + (["--crash-at-epoch", "1"] if n > 1 else []))
ok &= r2.ok
print("SCRIPTS", "PASS" if ok else "FAIL", f"(ddp_train {r.ok} in {r.seconds:.0f} s, ddp_practice {r2.ok} in {r2.seconds:.0f} s)")
sys.exit(0 if ok else 1)
PY

$PY - "$out" <<'PY' 2>&1 | tee "$out/notebooks.txt" || status=1
import sys, time
import nbformat
from nbclient import NotebookClient
ok = True
for name in ["01-devices-and-cuda", "02-splitting-the-work", "03-ddp-for-real", "04-ddp-in-practice"]:
    nb = nbformat.read(f"solutions/03-parallel/{name}.ipynb", as_version=4)
    t0 = time.time()
    NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True).execute()
    errors = [(i, o.ename, o.evalue) for i, c in enumerate(nb.cells) if c.cell_type == "code"
              for o in c.outputs if o.output_type == "error"
              and "raises-exception" not in c.metadata.get("tags", [])]
    print(f"===== {name}: {time.time() - t0:.0f} s, {len(errors)} errors")
    for i, c in enumerate(nb.cells):
        if c.cell_type == "code" and any(w in c.source for w in ("cuda", "cudnn", "DataParallel", "launch(")):
            text = "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
            print(f"--- cell {i}\n{text.strip()[:2500]}")
    for e in errors:
        print("ERROR", e)
    ok &= not errors
    nbformat.write(nb, f"{sys.argv[1]}/{name}.executed.ipynb")
print("NOTEBOOKS", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
echo "gpu_check: $([ $status = 0 ] && echo PASS || echo FAIL) (outputs in $out)"
exit $status
