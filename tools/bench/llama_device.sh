#!/bin/sh
# One device call for the Llama kernels (run from the repository root, after
# `meson setup b && ninja -C b`): the GPU correctness suite, the GEMV's
# bandwidth against a 1 GiB copy, and the whole 1B step at KV length 128
# (CTX=128: after the warm-up every step attends over 128 positions), with
# programmatic edges and with full edges.  Logs under $OUT.
B=${1:-b}
C="$B/tools/cudag"
[ -x "$C" ] || C="$(find "$B" -name cudag -type f -perm -u+x | head -1)"
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
meson test -C "$B" gpu_llama --print-errorlogs > "$OUT/test.log" 2>&1
echo "gpu_llama rc=$?"; grep -E "step [0-9]|generate|OK|FAIL|SKIP" "$B/meson-logs/testlog.txt" | head -30
cp "$B/meson-logs/testlog.txt" "$OUT/testlog.txt"
for f in llama_bw_copy llama_bw_head llama_bw; do
  "$C" bench -I "$B/kernels" --warmup 20 --iters 100 tools/bench/$f.yaml > "$OUT/$f.txt" 2>&1
  echo "== $f"; grep -E "graph|µs|error" "$OUT/$f.txt" | head -12
done
"$C" bench -I "$B/kernels" -D CTX=128 --warmup 200 --iters 300 graphs/llama_decode.yaml > "$OUT/decode.txt" 2>&1
echo "== decode 1B CTX=128"; grep -E "graph|µs|error" "$OUT/decode.txt" | head -14
"$C" run -I "$B/kernels" -D N=32 graphs/llama_generate.yaml > "$OUT/generate.txt" 2>&1
echo "== generate rc=$?"; tail -5 "$OUT/generate.txt"
grep -B1 -A3 "entry function 'llama" "$B/kernels/cudag_kernels.ptxas.log" > "$OUT/ptxas_llama.txt"
