#!/usr/bin/env bash
# gpu_all.sh — what one call on the GPU machine runs, step by step, leaving
# a few files in OUTDIR:
#   build.log  tests.log  run.log  sanitize.log  soak.log  bench.jsonl
#   hostload.jsonl  bench.log  summary.txt
#
#   tools/bench/gpu_all.sh OUTDIR STEP...
#     tests     every suite (cpu and gpu) with meson test; gputests: gpu only
#     run       cudag run on every example graph, with and without --no-pdl,
#               and the checksums of the two compared
#     sanitize  compute-sanitizer memcheck, racecheck and synccheck over every
#               example graph
#     soak      tests/soak/soak: 1 000 000 replays per graph and mode
#     bench     cudag bench on generated topologies, N = 100 … 100 000, and
#               the same graph replayed alone (cudag run with and without
#               --no-pdl, tools/bench/handbuilt with and without it, each in its
#               own process), every program with --gate, compared pair by pair
#               by tools/bench/bench_pairs.py: a FLAG line for each pair more
#               than 3 % apart; then the decode chains.  BENCH_ONLY=REGEX
#               keeps the cases whose name matches (and leaves the decode
#               chains to the decode step); cases ending in _dl are
#               replayed with --device-launch by every program, and cases
#               named _host without --gate (what a loop that replays them
#               back to back waits for)
#     decode    cudag bench on the kernel-library graphs only
#     hostload  the host-time targets: 10 000-node graphs (and 1 000, 100 000)
#               written node by node and with repetition, every stage the
#               median of 7 loads, against tools/bench/handbuilt's median of 7
#     nvtx      cudag bench --nvtx on one graph
#     torch     the decode chain in PyTorch (tools/bench/bench_decode_torch.py)
#     cond      tools/bench/bench_cond: loops as while nodes, unrolled and
#               driven from the host; Jacobi to convergence (cond.json, and
#               the table in the summary)
#     llama     tools/bench/bench_llama.py: the Llama decode step (1B and
#               8B shapes, batch 1 and 8) in cudag against PyTorch,
#               transformers and the weight-streaming floor (llama.json,
#               llama.md, llama.log; the table in the summary).  Its own
#               budget is what GPU_ALL_BUDGET_S leaves (else 480 s);
#               LLAMA_ARGS adds options (--quick, --shapes 1b, …)
#
# Run from the repository root after `. .gpu-deps/env.sh`.  Builds into
# build-gpu (kept between calls while the machine stays warm).  With
# GPU_ALL_BUDGET_S set, cases and steps that would start after that many
# seconds are skipped, each with a line in the summary, so that a call on a
# machine lent for a fixed time ends with its results.
set -u
started=$(date +%s)
over_budget() { # what: true (and says so) once the budget is spent
    [ -n "${GPU_ALL_BUDGET_S:-}" ] || return 1
    [ $(($(date +%s) - started)) -ge "$GPU_ALL_BUDGET_S" ] || return 1
    say "skipped (time budget of $GPU_ALL_BUDGET_S s spent): $1"
}
out=${1:?usage: gpu_all.sh OUTDIR STEP...}
shift
b=build-gpu
C=$b/tools/cudag
export CUDAG_KERNELS_DIR=$PWD/$b/kernels
export PYTHONUNBUFFERED=1
summary=$out/summary.txt
say() { echo "$*" | tee -a "$summary"; }

{
    nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv
    date -u
    [ -f $b/build.ninja ] || meson setup $b -Dtests=true
    ninja -C $b -j16
} >"$out/build.log" 2>&1 || {
    tail -40 "$out/build.log"
    exit 1
}
say "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)  date: $(date -u +%F)"

json() { # COMMAND...: its JSON on one line, or null if it failed
    local j
    j=$(timeout 240 "$@" 2>>"$out/bench.log") && [ -n "$j" ] || j=null
    echo "$j" | tr -d '\n'
}

# The kernel-library graphs through cudag bench, with the bulk kernels as
# shipped and with their _vec variants.
decode_benches() {
    G=/tmp/gen
    mkdir -p $G
    for g in decode_chain decode_chain_fused pdl_deep_chain norms_forkjoin; do
        sed 's/\(rmsnorm_bias_gelu_residual_bf16\|rmsnorm_bf16\|bias_gelu_bf16\|residual_add_bf16\)\b/\1_vec/' \
            graphs/$g.yaml >$G/${g}_vec.yaml
        for f in graphs/$g.yaml $G/${g}_vec.yaml; do
            name=$(basename $f .yaml)
            over_budget "decode $name" && continue
            echo "{\"case\": \"$name\", \"cudag\": $(json $C bench --json -I graphs \
                --iters 500 --warmup 50 $f)}" >>"$out/bench.jsonl"
            $C bench -I graphs --iters 500 --warmup 50 $f >>"$out/bench.log" 2>&1
        done
    done
}

for step in "$@"; do
    case $step in
    tests | gputests)
        suites=""
        [ $step = gputests ] && suites="--suite gpu"
        # shellcheck disable=SC2086
        timeout 400 meson test -C $b $suites --print-errorlogs --num-processes 4 \
            >"$out/tests.log" 2>&1
        say "tests: $(grep -E '^(Ok|Fail|Skipped|Timeout):' "$out/tests.log" | tr -s ' ' | tr '\n' ' ')"
        grep -E "^ *[0-9]+/[0-9]+ .*(FAIL|SKIP|TIMEOUT)" "$out/tests.log" | tee -a "$summary"
        ;;
    run)
        for g in graphs/*.yaml; do
            for mode in pdl nopdl; do
                flag=""
                [ $mode = nopdl ] && flag=--no-pdl
                echo "### cudag run $flag $g"
                timeout 60 $C run $flag --iters 200 --warmup 20 "$g"
                echo "exit $?"
                timeout 60 $C run $flag --iters 200 --warmup 20 --json "$g" \
                    >"/tmp/run-$mode.json" 2>/dev/null
            done
            # Same graph, PDL or not: every buffer's bytes must be the same.
            python3 - "$g" <<'EOF'
import json, sys
a = json.load(open("/tmp/run-pdl.json")); b = json.load(open("/tmp/run-nopdl.json"))
ka = {x["name"]: x.get("fnv1a") for x in a["buffers"]}
kb = {x["name"]: x.get("fnv1a") for x in b["buffers"]}
print("checksums %s: %s" % (sys.argv[1], "identical" if ka == kb else "DIFFER %s %s" % (ka, kb)))
EOF
        done >"$out/run.log" 2>&1
        grep -E "^checksums|median|warning|error" "$out/run.log" | head -60 >>"$summary"
        ;;
    sanitize)
        cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
        for g in graphs/*.yaml; do
            echo "### memcheck $g"
            timeout 120 "$cs" --tool memcheck --error-exitcode 9 \
                $C run --iters 3 --warmup 1 -q "$g" 2>&1 | grep -E "SUMMARY|Program hit|Invalid|error" | head -20
        done >"$out/sanitize.log" 2>&1
        for tool in racecheck synccheck; do
            for g in graphs/*.yaml; do
                echo "### $tool $g"
                timeout 120 "$cs" --tool $tool --error-exitcode 9 \
                    $C run --iters 2 --warmup 1 -q "$g" 2>&1 | grep -E "SUMMARY|Program hit|hazard|Race|Barrier|error" | head -20
            done
        done >>"$out/sanitize.log" 2>&1
        # cudag asks the driver for the parameter after a kernel's last to
        # confirm the count (the driver API has no count query): that one
        # expected CUDA_ERROR_INVALID_VALUE per kernel is an API report, not
        # a memory error.  Anything else is a finding.
        say "sanitizer runs: $(grep -c '^###' "$out/sanitize.log"), API reports from the parameter-count probe: $(grep -c 'cuFuncGetParamInfo' "$out/sanitize.log")"
        findings() {
            grep -E 'Program hit|Invalid|hazard|Race|Barrier|Uninitialized' "$out/sanitize.log" |
                grep -v -e cuFuncGetParamInfo -e ' 0 hazards displayed'
        }
        say "sanitizer findings other than the probe: $(findings | wc -l)"
        findings | head >>"$summary"
        ;;
    soak)
        timeout 300 $b/tests/soak/soak --replays 1000000 --block 10000 \
            --kernels-dir "$CUDAG_KERNELS_DIR" graphs/pdl_chain.yaml \
            graphs/fork_join.yaml >"$out/soak.log" 2>&1
        say "soak (exit $?): $(tail -1 "$out/soak.log")"
        ;;
    bench)
        G=/tmp/gen
        mkdir -p $G
        fat=$CUDAG_KERNELS_DIR/cudag_kernels.fatbin
        H=$b/tools/handbuilt
        # A tree or a random DAG replayed as is waits for the host: the
        # driver's launch call costs ~0.3 µs per node, and that time moves
        # between two levels from one second to the next in every program.
        # So every program times each replay behind a gate (--gate: the
        # device starts it once the host has queued all of it), and the
        # pairs compare the device's times.  The _host cases time the same
        # graphs without the gate, as a loop sees them; _dl adds
        # --device-launch.
        dl="" gate=--gate
        one() { # name N shape kernel [gen options]: cudag bench, then alone
            local name=$1 n=$2 shape=$3 kern=$4
            shift 4
            [ -n "${BENCH_ONLY:-}" ] && ! [[ $name =~ $BENCH_ONLY ]] && return
            over_budget "bench $name" && return
            local iters=$((500000 / (n + 1000)))
            [ $iters -gt 200 ] && iters=200
            [ $iters -lt 10 ] && iters=10
            # Repeated loads for the host medians, except where one
            # instantiate takes seconds (100 000 nodes).
            local reps=3 warm=10
            [ "$n" -gt 10000 ] && reps=1 warm=3
            local it="--iters $iters --warmup $warm"
            python3 tools/bench/gen_graph.py "$shape" "$n" --kernel "$kern" "$@" \
                -o $G/$name.yaml --topo $G/$name.topo
            # shellcheck disable=SC2086
            {
                echo "{\"case\": \"$name\""
                echo ", \"cudag\": $(json $C bench --json $gate $dl $it --host-repeats $reps $G/$name.yaml)"
                echo ", \"run_nopdl\": $(json $C run --json --no-pdl $gate $dl $it $G/$name.yaml)"
                echo ", \"run\": $(json $C run --json $gate $dl $it $G/$name.yaml)"
                echo ", \"handbuilt_nopdl\": $(json $H $G/$name.topo "$fat" --no-pdl $gate $dl $it --repeats $reps)"
                echo ", \"handbuilt\": $(json $H $G/$name.topo "$fat" $gate $dl $it --repeats $reps)}"
            } | tr -d '\n' >>"$out/bench.jsonl"
            echo >>"$out/bench.jsonl"
        }
        one chain_tiny_1000 1000 chain tiny
        one chain_prologue_1000 1000 chain prologue
        one forkjoin_prologue_8x125 1002 forkjoin prologue --branches 8 --edge full
        one forkjoin_tiny_8x125 1002 forkjoin tiny --branches 8
        one random_tiny_1000 1000 random tiny
        one tree_tiny_1000 1000 tree tiny
        for n in 10000 100; do
            one chain_tiny_$n $n chain tiny
            one random_tiny_$n $n random tiny
            one tree_tiny_$n $n tree tiny
            one wavefront_tiny_$n $n wavefront tiny
            one forkjoin_tiny_$n $n forkjoin tiny --branches 8
        done
        one chain_lib_1000 1000 chain lib
        one chain_tiny_100000 100000 chain tiny
        one random_tiny_100000 100000 random tiny
        dl=--device-launch
        for n in 100 10000; do
            one random_tiny_${n}_dl $n random tiny
            one tree_tiny_${n}_dl $n tree tiny
        done
        gate=""
        one random_tiny_10000_host_dl 10000 random tiny
        one tree_tiny_10000_host_dl 10000 tree tiny
        dl=""
        one random_tiny_10000_host 10000 random tiny
        one tree_tiny_10000_host 10000 tree tiny
        gate=--gate
        python3 tools/bench/bench_pairs.py "$out/bench.jsonl" | tee -a "$summary"
        # A filtered run is part of a suite split over calls: the decode
        # step runs the decode chains on its own.
        [ -n "${BENCH_ONLY:-}" ] || decode_benches
        ;;
    hostload)
        G=/tmp/gen
        mkdir -p $G
        fat=$CUDAG_KERNELS_DIR/cudag_kernels.fatbin
        # Host times move by 10-50 % between processes (where the process
        # lands, the driver's heap): the two programs run alternately,
        # several processes each, and the summary takes the median over
        # processes of each one's median of 7 loads.  Pinning to one core
        # made it worse (the driver's own threads then share that core);
        # HOSTLOAD_PIN="taskset -c 0-7" pins to a set instead.
        pin=${HOSTLOAD_PIN:-}
        load_case() { # name N procs shape [gen options]
            local name=$1 n=$2 procs=$3 shape=$4
            shift 4
            python3 tools/bench/gen_graph.py "$shape" "$n" "$@" -o $G/$name.yaml --topo $G/$name.topo
            for p in $(seq "$procs"); do
                echo "{\"case\": \"$name\", \"proc\": $p, \"bytes\": $(wc -c <$G/$name.yaml), \"cudag\": $(timeout 240 $pin $C bench \
                    --json --host-repeats 7 --iters 10 --warmup 3 $G/$name.yaml 2>>"$out/bench.log"), \
                    \"handbuilt\": $(timeout 120 $pin $b/tools/handbuilt $G/$name.topo "$fat" \
                    --repeats 7 --iters 10 --warmup 3 2>>"$out/bench.log")}" | tr -d '\n' >>"$out/hostload.jsonl"
                echo >>"$out/hostload.jsonl"
            done
        }
        load_case load_chain_1000 1000 3 chain
        load_case load_chain_repeat_1000 1000 3 chain --repeat
        load_case load_chain_10000 10000 7 chain
        load_case load_chain_repeat_10000 10000 7 chain --repeat
        load_case load_wavefront_10000 10000 7 wavefront
        load_case load_wavefront_repeat_10000 10000 7 wavefront --repeat
        load_case load_random_10000 10000 5 random
        load_case load_chain_100000 100000 1 chain
        load_case load_chain_repeat_100000 100000 1 chain --repeat
        python3 tools/bench/hostload_summary.py "$out/hostload.jsonl" >>"$summary"
        ;;
    nvtx)
        # The NVTX ranges cost nothing without a profiler attached: bench
        # runs with them on and must give the same picture.
        timeout 120 $C bench --nvtx --iters 50 graphs/pdl_chain.yaml >>"$out/bench.log" 2>&1
        say "bench --nvtx pdl_chain: exit $?"
        ;;
    decode)
        decode_benches
        grep -A8 "^decode_chain\|^pdl_deep\|^norms" "$out/bench.log" | grep -E "^[a-z_]+ on|^[1-5] " >>"$summary"
        ;;
    torch)
        over_budget torch && continue
        timeout 300 python3 tools/bench/bench_decode_torch.py >"/tmp/torch.json" 2>>"$out/bench.log"
        echo "{\"case\": \"torch_decode\", \"torch\": $(cat /tmp/torch.json)}" >>"$out/bench.jsonl"
        say "torch: $(cat /tmp/torch.json)"
        ;;
    cond)
        over_budget cond && continue
        timeout 300 $b/tools/bench_cond --kernels $b/kernels \
            --jacobi graphs/jacobi.yaml >>"$summary" 2>&1
        timeout 300 $b/tools/bench_cond --kernels $b/kernels \
            --jacobi graphs/jacobi.yaml --json >"$out/cond.json" 2>>"$summary"
        ;;
    llama)
        over_budget llama && continue
        lb=480
        [ -n "${GPU_ALL_BUDGET_S:-}" ] &&
            lb=$((GPU_ALL_BUDGET_S - ($(date +%s) - started) - 30))
        # The budget bounds what the bench starts; a compilation under way
        # may overrun it, hence the timeout's margin.  It writes its JSON
        # and table after every configuration, so a timeout keeps those.
        # shellcheck disable=SC2086
        timeout $((lb + 90)) python3 tools/bench/bench_llama.py --build $b \
            --budget-s "$lb" ${LLAMA_ARGS:-} --json "$out/llama.json" \
            --markdown "$out/llama.md" >"$out/llama.log" 2>&1
        say "llama (exit $?): $out/llama.json"
        [ -f "$out/llama.md" ] && cat "$out/llama.md" >>"$summary"
        grep -E "FAILED|Error|error" "$out/llama.log" | head -20 >>"$summary"
        ;;
    *)
        echo "gpu_all.sh: unknown step '$step'" >&2
        ;;
    esac
done
cat "$summary"
