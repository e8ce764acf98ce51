#!/usr/bin/env bash
# The whole GPU check in one run, for a machine with an NVIDIA GPU (sm_90 for the wgmma probes)
# and the CUDA toolkit in /usr/local/cuda:
#   1. configure and build simprec with the CUDA plugins (run scripts/setup.sh once first for the
#      Debian packages), or use a build made elsewhere: SIMPREC_PREBUILT=DIR (a build folder of
#      this checkout, copied over; it may sit at another path),
#   2. run the tests labelled gpu (the *_gpu_test programs: live probes against the recorded H100
#      ground truth),
#   3. validate every probe kernel against the emulation model it declares, bit for bit,
#   4. re-measure the raw probes (scripts/gpu_probe.sh),
#   5. the flash_gpu plugin: a sanity check against a double reference (flash_bench --check);
#      `simprec validate` of every flash kernel x input kind x mitigation against the cuda-fa2
#      emulation (forward, then the backward fed with the forward kernel's O and LSE); the bias
#      experiment examples/gpu_bias.toml (kernel vs emulation, with and without mitigations);
#      the benchmark beside PyTorch's SDPA backends (flash_bench, scripts/torch_sdpa_bench.py),
#   6. the Python package (scripts/gpu_python_check.sh): built for the machine's Python with
#      PyTorch, its pytest suite, and PyTorch's SDPA flash, FlexAttention and the Triton example
#      validated through simprec.validate; then the same GEMM and attention bits at every x86-64
#      level of the host's CPU (scripts/check_cpu_levels.py: its AVX-512 kernels where it has them),
#   7. cuBLAS and _scaled_mm GEMMs and F.linear recorded again and checked against the committed
#      bits of tests/data/gemm and tests/data/linear (scripts/gpu_check_gemm.sh),
#   8. the attention variants (grouped heads, masks, biases, windows, soft-caps, cuDNN) recorded
#      again (scripts/gpu_record_variants.sh) and compared with the presets through the Python
#      package of part 6 (scripts/compare_attention_variants.py; needs the python part), and
#      simprec.torch.flex_attention beside PyTorch's own FlexAttention (scripts/check_flex_api.py),
# and write everything plus summary.txt into OUT_DIR (default: gpu_check_out).
# SIMPREC_GPU_CHECK_PARTS (default "probe flash python gemm variants") chooses the parts after the gpu
# tests.
# On a machine without Debian's build dependencies (SIMPREC_DEPS_DEBS: scripts/gpu_deps.sh), the
# CUDA plugins and gpu tests may come from a build made elsewhere (SIMPREC_PREBUILT) while the
# command-line tool and the plugin runner, which hold the emulation, are built here by the Python
# part and used for every validation: the check then validates this checkout's emulation.
#   scripts/gpu_check.sh [OUT_DIR]
set -uo pipefail
out=${1:-gpu_check_out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$repo/build-gpu}
summary="$out/summary.txt"
: > "$summary"
note() { echo "$*" | tee -a "$summary"; }

note "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee -a "$summary"

if [ -n "${SIMPREC_PREBUILT:-}" ]; then
  build=$(cd "$SIMPREC_PREBUILT" && pwd)
  note "== using the build in $build"
else
  note "== build ($build)"
  if ! cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSIMPREC_BENCHMARKS=OFF \
        > "$out/configure.log" 2>&1; then
    note "configure FAILED (see configure.log)"; exit 1
  fi
  if ! cmake --build "$build" -j "$(nproc)" > "$out/build.log" 2>&1; then
    note "build FAILED (see build.log)"; tail -30 "$out/build.log"; exit 1
  fi
  note "build ok"
fi
parts=${SIMPREC_GPU_CHECK_PARTS:-probe flash python gemm variants}
python_status=0
if [[ " $parts " == *" python "* ]]; then
  note "== python package (scripts/gpu_python_check.sh, in the background)"
  python_build=$repo/build-python-gpu
  rm -f "$python_build/bin/simprec" "$python_build/bin/simprec-plugin-runner"
  BUILD_DIR=$python_build bash "$repo/scripts/gpu_python_check.sh" "$out/python" \
    > "$out/python.log" 2>&1 &
  python_pid=$!
  if [ -n "${SIMPREC_PREBUILT:-}" ]; then
    # The host side from this checkout, the CUDA side from the prebuilt folder.
    for _ in $(seq 300); do
      [ -x "$python_build/bin/simprec-plugin-runner" ] && [ -x "$python_build/bin/simprec" ] && break
      kill -0 $python_pid 2>/dev/null || break
      sleep 2
    done
    [ -x "$python_build/bin/simprec" ] || { note "python build FAILED (see python.log)"; exit 1; }
    composite=$out/build-composite
    mkdir -p "$composite/bin" "$composite/plugins/lib"
    ln -sf "$build"/bin/* "$composite/bin/"
    ln -sf "$build"/plugins/lib/*.so "$composite/plugins/lib/"
    ln -sf "$python_build/bin/simprec" "$python_build/bin/simprec-plugin-runner" "$composite/bin/"
    export SIMPREC_PLUGIN_RUNNER=$composite/bin/simprec-plugin-runner
    build=$composite
    note "host side (simprec, runner) built from this checkout; CUDA plugins from the prebuilt folder"
  fi
fi
for so in gpu_probe flash_gpu; do
  [ -f "$build/plugins/lib/$so.so" ] || { note "no $so plugin in $build (built without nvcc?)"; exit 1; }
done

note "== tests labelled gpu"
# The programs directly rather than through ctest, so that a build copied to another path works.
export SIMPREC_GPU_PROBE_PLUGIN="$build/plugins/lib/gpu_probe.so" SIMPREC_TC_DATA="$repo/tests/data/tensor_core"
status_tests=0
for test in "$build"/bin/*_gpu_test; do
  "$test" > "$out/$(basename "$test").log" 2>&1 || status_tests=1
  note "$(basename "$test"): $(grep -E '^\[  (PASSED|FAILED)' "$out/$(basename "$test").log" | tr '\n' ' ')"
done

status_validate=0
status_flash=0
if [[ " $parts " == *" probe "* ]]; then
note "== validate: every gpu_probe matmul kernel against its declared model, bit for bit"
plugin="$build/plugins/lib/gpu_probe.so"
for kernel in $("$build/bin/simprec" plugins list "$plugin" 2>/dev/null | awk '$1 == "kernel" && $3 == "kind=matmul" {print $2}'); do
  for range in "-1 1" "-400 400"; do
    set -- $range
    line=$("$build/bin/simprec" validate --plugin "$plugin" --kernel "$kernel" --require-bit-exact \
             --low "$1" --high "$2" --seed 7 2>&1 | tee -a "$out/validate.log" | grep -E "^result|^output" | tr '\n' ' ')
    rc=${PIPESTATUS[0]}
    [ "$rc" -ne 0 ] && status_validate=1
    note "$kernel [$1,$2): ${line:-no result}"
  done
done

note "== raw probes"
mkdir -p "$out/probe"
if bash "$repo/scripts/gpu_probe.sh" "$out/probe" > "$out/probe.log" 2>&1; then
  note "probes ok: $out/probe/summary.txt"
else
  note "probes FAILED (see probe.log)"
fi

fi

if [[ " $parts " == *" flash "* ]]; then
  bash "$repo/scripts/gpu_check_flash.sh" "$build" "$out" || status_flash=1
fi

if [[ " $parts " == *" python "* ]]; then
  wait $python_pid || python_status=1
  note "== python (validations through simprec.validate)"
  if [ -f "$out/python/summary.txt" ]; then
    tee -a "$summary" < "$out/python/summary.txt"
    grep -qE "^(FAIL|NOT RUN)" "$out/python/summary.txt" && python_status=1
  else
    python_status=1
    note "no python summary (see python.log)"; tail -5 "$out/python.log" | tee -a "$summary"
  fi
  note "== the same bits at every CPU level of this host (scripts/check_cpu_levels.py)"
  # The libraries of SIMPREC_DEPS_DEBS, where the package was built against them.
  deps_lib=$python_build/deps/usr/lib/x86_64-linux-gnu
  LD_LIBRARY_PATH=$deps_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONPATH=$python_build/python \
    "${PYTHON:-python3}" "$repo/scripts/check_cpu_levels.py" > "$out/cpu_levels.txt" 2>&1 ||
    python_status=1
  tee -a "$summary" < "$out/cpu_levels.txt"
fi

status_gemm=0
if [[ " $parts " == *" gemm "* ]]; then
  note "== GEMMs and linear layers recorded again (scripts/gpu_check_gemm.sh)"
  bash "$repo/scripts/gpu_check_gemm.sh" "$out/gemm" > "$out/gemm.log" 2>&1 || status_gemm=1
  grep -E "committed bits" "$out/gemm.log" | tee -a "$summary"
fi

status_variants=0
if [[ " $parts " == *" variants "* && " $parts " == *" python "* ]]; then
  note "== attention variants recorded again and compared (docs/attention_variants.md)"
  SIMPREC_SKIP_TANH=1 bash "$repo/scripts/gpu_record_variants.sh" "$out/variants" \
    > "$out/variants.log" 2>&1 || status_variants=1
  fresh=$(mktemp -d)
  tar -C "$fresh" -xzf "$out/variants/variants.tar.gz" 2>/dev/null || status_variants=1
  LD_LIBRARY_PATH=$deps_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONPATH=$python_build/python \
    "${PYTHON:-python3}" "$repo/scripts/compare_attention_variants.py" --data "$fresh/variants" \
    --markdown > "$out/variants_table.md" 2>> "$out/variants.log" || status_variants=1
  tee -a "$summary" < "$out/variants_table.md"
  LD_LIBRARY_PATH=$deps_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} PYTHONPATH=$python_build/python \
    "${PYTHON:-python3}" "$repo/scripts/check_flex_api.py" 2>&1 | grep -E "^(ok|FAIL)" |
    tee -a "$summary"
  grep -q "^FAIL" "$summary" && status_variants=1
fi

verdict() { [ "$1" -eq 0 ] && echo PASS || echo FAIL; }
note "== result: gpu tests $(verdict $status_tests), validate $(verdict $status_validate), flash $(verdict $status_flash), python $(verdict $python_status), gemm $(verdict $status_gemm), variants $(verdict $status_variants)"
[ $status_tests -eq 0 ] && [ $status_validate -eq 0 ] && [ $status_flash -eq 0 ] && [ $python_status -eq 0 ] && [ $status_gemm -eq 0 ] && [ $status_variants -eq 0 ]
