#!/bin/sh
# device_run.sh — what one call on the GPU machine does for the kernels
# library: build the kernels, their GPU test and benchmark; run the steps
# asked for; leave logs and JSON in OUTDIR (at most 8 files, for the device
# tool).  Run from the repository root after `. .gpu-deps/env.sh`.
#
# usage: tests/kernels/device_run.sh OUTDIR STEP...
#   STEPs: test (GPU test + CPU check incl. SASS), bench, benchquick, torch,
#          torchquick, san (compute-sanitizer memcheck, racecheck, synccheck),
#          ncu (Nsight Compute on the decode chain's row kernels),
#          benchsel (the kernels that missed a target, 64/256/1024 MiB and
#          long rows; bench_sel.{log,json}, bench_old.json),
#          ncusel (Nsight Compute on those at 64 MiB; ncu_sel.{ncu-rep,csv,txt})
#   With CUDAG_KERNELS_OLD=DIR (a folder holding an earlier build's
#   cudag_kernels.fatbin) benchsel and ncusel also measure OLD_SEL from it in
#   the same run, for a before/after comparison.  SEL, NCU_SEL, OLD_SEL and
#   NCU_OLD_SEL are kernel-name regexes (bench_kernels --only, ncu -k regex:).
# The test and benchmark need only cuda.h, CMocka and libdl: when the library
# (someone else's files, maybe mid-edit) does not build, they are compiled
# directly instead.
set -u
out=$1
shift
b=build-gpu
{
    meson setup $b -Dtests=true &&
        ninja -C $b kernels/cudag_kernels.fatbin kernels/cudag_kernels_sm90.ptx \
            kernels/legacy_sm80.ptx
} >"$out/build.log" 2>&1 || {
    tail -40 "$out/build.log"
    exit 1
}
if ! ninja -C $b tests/test_gpu_kernels tools/bench_kernels >>"$out/build.log" 2>&1; then
    echo "library targets did not build; compiling test and benchmark directly" |
        tee -a "$out/build.log"
    flags="-std=c11 -D_POSIX_C_SOURCE=200809L -O2 -I/usr/local/cuda/include"
    mkdir -p $b/tests $b/tools
    # shellcheck disable=SC2086
    cc $flags tests/test_gpu_kernels.c -o $b/tests/test_gpu_kernels -lcmocka -ldl -lm \
        >>"$out/build.log" 2>&1 &&
        cc $flags tools/bench/bench_kernels.c -o $b/tools/bench_kernels -ldl -lm \
            >>"$out/build.log" 2>&1 || {
        tail -40 "$out/build.log"
        exit 1
    }
fi
export CUDAG_KERNELS_DIR=$b/kernels
export PYTHONUNBUFFERED=1
old=${CUDAG_KERNELS_OLD:-}
sel=${SEL:-'^((bias_gelu|rmsnorm|layernorm|softmax|rmsnorm_bias_gelu_residual)_bf16|(layernorm|rmsnorm_bias_gelu_residual)_f32)(_vec)?$'}
ncusel=${NCU_SEL:-'^(copy|bias_gelu|rmsnorm|layernorm|softmax|rmsnorm_bias_gelu_residual)_bf16(_vec)?$'}
oldsel=${OLD_SEL:-'^(layernorm|rmsnorm_bias_gelu_residual)_(bf16|f32)(_vec)?$'}
ncuold=${NCU_OLD_SEL:-'^(layernorm|rmsnorm_bias_gelu_residual)_bf16(_vec)?$'}
# Nsight Compute over bench_kernels --profile: REPORT DIR REGEX LAUNCHES
# TIMEOUT.  Retried once without the extra metrics if no report came out (an
# ncu that names them differently refuses the whole run).
ncu_profile() {
    for extra in "--metrics dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum" ""; do
        # shellcheck disable=SC2086
        timeout "$5" ncu --clock-control none --section SpeedOfLight \
            --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats \
            --section SchedulerStats --section LaunchStats --section ComputeWorkloadAnalysis \
            $extra -k "regex:$3" -c 64 -f -o "$1" $b/tools/bench_kernels --kernels "$2" \
            --only "$3" --sizes 64 --grid default --profile "$4"
        echo "ncu exit $? (extra metrics: ${extra:-none})"
        [ -s "$1.ncu-rep" ] && return 0
    done
    return 1
}
# Appends REPORT's raw page (CSV, base units) to CSV and details to TXT.
ncu_export() {
    { ncu -i "$1.ncu-rep" --page raw --csv --print-units base ||
        ncu -i "$1.ncu-rep" --page raw --csv; } >>"$2" 2>>"$3"
    ncu -i "$1.ncu-rep" --page details >>"$3" 2>&1
}
for step in "$@"; do
    case $step in
    test)
        {
            nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu \
                --format=csv
            timeout 150 $b/tests/test_gpu_kernels
            echo "test_gpu_kernels exit $?"
            python3 tests/kernels/check_kernels.py $b/kernels
            echo "check_kernels exit $?"
        } >"$out/test.log" 2>&1
        grep -E "PASSED|FAILED|exit|ERROR|error|got|SKIP|seed|device|PTX_VERSION|util_stamp|failure" \
            "$out/test.log" | head -60
        ;;
    bench | benchquick)
        q=""
        [ "$step" = benchquick ] && q=--quick
        # shellcheck disable=SC2086
        timeout 240 $b/tools/bench_kernels $q --out "$out/bench_kernels.json" \
            >"$out/bench.log" 2>&1
        echo "bench_kernels exit $?"
        grep -E "^#" "$out/bench.log" | tail -12
        ;;
    torch | torchquick)
        q=""
        [ "$step" = torchquick ] && q=--quick
        # shellcheck disable=SC2086
        timeout 200 python3 tools/bench/bench_torch.py $q --out "$out/bench_torch.json" \
            >"$out/torch.log" 2>&1
        echo "bench_torch exit $?"
        tail -3 "$out/torch.log"
        ;;
    ncu)
        timeout 200 ncu --clock-control none --section SpeedOfLight --section LaunchStats \
            --section Occupancy --section WarpStateStats --section SchedulerStats \
            -k 'regex:^(rmsnorm_bias_gelu_residual_bf16|rmsnorm_bf16|bias_gelu_bf16)$' \
            --launch-skip 30 -c 3 $b/tools/bench_kernels --chain-only --quick \
            --out /dev/null >"$out/ncu.log" 2>&1
        echo "ncu exit $?"
        grep -E "^  [a-z_0-9]+\(|Duration|Memory Throughput|Registers Per|Achieved Occupancy|Stall|Warp Cycles Per Issued" \
            "$out/ncu.log" | head -40
        ;;
    benchsel)
        timeout 120 $b/tools/bench_kernels --only "$sel" --sizes 64,256,1024 --grid default \
            --out "$out/bench_sel.json" >"$out/bench_sel.log" 2>&1
        echo "bench_kernels (new) exit $?"
        if [ -n "$old" ]; then
            echo "# old: $old" >>"$out/bench_sel.log"
            timeout 60 $b/tools/bench_kernels --kernels "$old" --only "$oldsel" \
                --sizes 64,256,1024 --grid default --out "$out/bench_old.json" \
                >>"$out/bench_sel.log" 2>&1
            echo "bench_kernels (old) exit $?"
        fi
        [ -s "$out/bench_sel.json" ] &&
            python3 tests/kernels/bench_sel.py "$out/bench_sel.json" \
                "$([ -s "$out/bench_old.json" ] && echo "$out/bench_old.json")"
        grep -v "^#\|GB/s" "$out/bench_sel.log" | head -5
        ;;
    ncusel)
        : >"$out/ncu_sel.csv"
        ncu_profile "$out/ncu_sel" $b/kernels "$ncusel" 2 150 >"$out/ncu_sel.txt" 2>&1
        tail -2 "$out/ncu_sel.txt"
        [ -s "$out/ncu_sel.ncu-rep" ] && ncu_export "$out/ncu_sel" "$out/ncu_sel.csv" "$out/ncu_sel.txt"
        if [ -n "$old" ]; then
            ncu_profile /tmp/ncu_old "$old" "$ncuold" 1 60 >>"$out/ncu_sel.txt" 2>&1
            tail -1 "$out/ncu_sel.txt"
            if [ -s /tmp/ncu_old.ncu-rep ]; then
                echo "# label: old" >>"$out/ncu_sel.csv"
                echo "==== old build ($old) ====" >>"$out/ncu_sel.txt"
                ncu_export /tmp/ncu_old "$out/ncu_sel.csv" "$out/ncu_sel.txt"
            fi
        fi
        python3 tests/kernels/ncu_summary.py "$out/ncu_sel.csv"
        ;;
    san)
        timeout 200 tests/kernels/sanitize_kernels.sh $b >"$out/san.log" 2>&1
        echo "sanitize exit $?"
        grep -E "^==|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$out/san.log" | head -20
        ;;
    esac
done
if [ -f "$out/bench_kernels.json" ]; then
    python3 tools/bench/bench_torch.py --table "$out/bench_kernels.json" \
        "$([ -f "$out/bench_torch.json" ] && echo "$out/bench_torch.json")" 2>&1 | tail -45
fi
