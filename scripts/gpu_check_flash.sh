#!/usr/bin/env bash
# The flash_gpu part of the GPU check (scripts/gpu_check.sh calls it; it can run alone):
#   scripts/gpu_check_flash.sh BUILD_DIR OUT_DIR
# 1. flash_bench --check: every kernel family against a double reference (layout sanity), and
#    flash_bench --digest: hashes of every kernel's outputs beside the recorded ones;
# 2. simprec validate, bit for bit against the cuda-fa2 emulation with the plugin's own exp2:
#    every forward kernel x head dimension x input kind x {plain, causal, beta-rowmax, sr-p};
#    every backward kernel x head dimension x input kind x causal, fed with the forward kernel's
#    O and LSE; the e4m3 forward at long N (up to 128k keys);
# 3. examples/gpu_bias.toml: the kernel's bias with and without mitigations beside the emulation;
# 4. flash_bench beside scripts/torch_sdpa_bench.py (one run), as a table (bench.md); the
#    mitigations also on keys in equal pairs (every row max repeats).
# Appends to OUT_DIR/summary.txt; exits 1 when a check or a validation fails.
# SIMPREC_GPU_CHECK_SPEED=0 leaves out step 4 (correctness only).
set -uo pipefail
build=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
summary="$out/summary.txt"
note() { echo "$*" | tee -a "$summary"; }
simprec="$build/bin/simprec"
plugin="$build/plugins/lib/flash_gpu.so"
status=0

note "== flash: layout check against a double reference (flash_bench --check)"
if "$build/bin/flash_bench" --check > "$out/flash_check.txt" 2>&1; then
  note "flash check ok ($(grep -c ' ok$' "$out/flash_check.txt") comparisons)"
else
  status=1
  note "flash check FAILED:"; grep -v ' ok$' "$out/flash_check.txt" | tee -a "$summary"
fi

note "== flash: output digests (flash_bench --digest) against the recorded H100 ones"
# Not a pass/fail check (validate below is): a kernel change meant to keep the arithmetic should
# keep every line of tests/data/h100_flash_digest.txt, recorded by a build that passed.
recorded="$repo/tests/data/h100_flash_digest.txt"
if ! "$build/bin/flash_bench" --digest > "$out/flash_digest.txt" 2>&1; then
  status=1
  note "flash_bench --digest FAILED: $(tail -1 "$out/flash_digest.txt")"
elif [ ! -f "$recorded" ]; then
  note "digests: $(wc -l < "$out/flash_digest.txt") outputs; none recorded to compare with"
else
  differ=$(diff "$recorded" "$out/flash_digest.txt" | grep -c '^>')
  note "digests: $(wc -l < "$out/flash_digest.txt") outputs, $differ differ from the recorded ones"
fi

note "== flash: validate against cuda-fa2 (bit for bit; B=4 H=2 N=256, seed 7)"
mkdir -p "$out/validate_flash"
validate() {  # label, then validate's arguments
  local label=$1; shift
  local log="$out/validate_flash/$label.txt"
  "$simprec" validate --plugin "$plugin" --seed 7 "$@" > "$log" 2>&1
  local rc=$?
  if [ $rc -ne 0 ]; then
    status=1
    # Keep the tensors of a failing case for a look on another machine.
    "$simprec" validate --plugin "$plugin" --seed 7 "$@" --save "$out/validate_flash/$label.failed" \
      > /dev/null 2>&1
  fi
  local line
  line=$(grep -E "^output|^result" "$log" | sed -E 's/ shape=\[[^]]*\]//; s/ both-nan=0 nan-mismatch=0//' | tr '\n' ' ')
  note "$label: ${line:-$(tail -1 "$log")}"
}
kinds="normal repeated-max low-rank"
for kernel in flash_fwd_bf16_64x64 flash_fwd_bf16_128x64 flash_fwd_bf16_wg128x64 \
              flash_fwd_fp16_64x64 flash_fwd_fp16_128x64 flash_fwd_fp16_wg128x64 flash_fwd_e4m3_64x128; do
  dims="64 128"; mitigations="plain causal beta sr"
  [[ $kernel == *wg128x64 ]] && dims="128"
  [[ $kernel == *e4m3* ]] && { dims="128"; mitigations="plain causal beta"; }
  for d in $dims; do
    for kind in $kinds; do
      [ "$d" = 64 ] && [ "$kind" != normal ] && continue  # d = 64: one input kind is enough
      for m in $mitigations; do
        case $m in
          plain) params=() ;;
          causal) params=(--param causal=true) ;;
          beta) params=(--param beta_rowmax=true --param beta=2) ;;
          sr) params=(--param sr_p_bits=8 --param seed=11) ;;
        esac
        validate "$kernel.d$d.$kind.$m" --kernel "$kernel" --generate "$kind" \
          --dim B=4 --dim H=2 --dim Sq=256 --dim D="$d" "${params[@]}"
      done
    done
  done
done
# beta-rowmax with a beta that is not a power of two, whose product with the max rounds (with
# beta = 2 it is exact): fp32(fp32(beta) * max), RunningMax::update
for kernel in flash_fwd_bf16_64x64 flash_fwd_bf16_wg128x64; do
  validate "$kernel.d128.repeated-max.beta1.5" --kernel "$kernel" --generate repeated-max \
    --dim B=4 --dim H=2 --dim Sq=256 --dim D=128 --param beta_rowmax=true --param beta=1.5
done
for element in bf16 fp16; do
  for d in 64 128; do
    for kind in $kinds; do
      for causal in false true; do
        label="flash_bwd_${element}_64x64.d$d.$kind.causal-$causal"
        saved="$out/validate_flash/$label.forward"
        "$simprec" validate --plugin "$plugin" --kernel "flash_fwd_${element}_64x64" --seed 7 \
          --generate "$kind" --dim B=4 --dim H=2 --dim Sq=256 --dim D="$d" \
          --param causal=$causal --save "$saved" > "$saved.txt" 2>&1
        validate "$label" --kernel "flash_bwd_${element}_64x64" --generate "$kind" \
          --dim B=4 --dim H=2 --dim Sq=256 --dim D="$d" --param causal=$causal \
          --input Q="$saved/Q.npy" --input K="$saved/K.npy" --input V="$saved/V.npy" \
          --input O="$saved/O.kernel.npy" --input LSE="$saved/LSE.kernel.npy"
        rm -rf "$saved"
      done
    done
  done
done

note "== flash: the e4m3 forward at long N (up to 128k keys)"
# Where fp8 P.V accumulation loses accuracy: the wgmma fp8 accumulator chained over up to 1024
# key blocks. One query tile (64 rows, the kernel's smallest) keeps the emulation on the CPU
# short; one head is emulated on one thread, so heads are what spreads it over the cores.
# --timeout bounds the emulation too: these long heads get ten minutes.
for sk in 8192 32768 131072; do
  heads=2
  [ "$sk" = 131072 ] && heads=8
  for kind in normal repeated-max; do
    validate "flash_fwd_e4m3_64x128.d128.$kind.sk$sk" --kernel flash_fwd_e4m3_64x128 \
      --generate "$kind" --dim B=1 --dim H=$heads --dim Sq=64 --dim Sk="$sk" --dim D=128 \
      --timeout 600
  done
done

note "== flash: bias on repeated maxima, kernel vs emulation (examples/gpu_bias.toml)"
sed "s|^plugin = .*|plugin = \"$plugin\"|" "$repo/examples/gpu_bias.toml" > "$out/gpu_bias.toml"
if "$simprec" run "$out/gpu_bias.toml" --out "$out/gpu_bias" --force --quiet > "$out/gpu_bias.log" 2>&1; then
  note "gpu_bias ok: $out/gpu_bias/report.md"
else
  status=1
  note "gpu_bias FAILED (see gpu_bias.log)"; tail -5 "$out/gpu_bias.log" | tee -a "$summary"
fi

[ "${SIMPREC_GPU_CHECK_SPEED:-1}" = 0 ] && exit $status
note "== flash: speed beside PyTorch (B=4 H=16 N=4096 d=128 bf16, non-causal)"
{
  "$build/bin/flash_bench" --iters 30
  "$build/bin/flash_bench" --iters 30 --repeated-keys  # beta-rowmax's worst case
  PYTHONPATH="$repo/python" python3 "$repo/scripts/torch_sdpa_bench.py" --iters 30 --determinism
} > "$out/bench.jsonl" 2> "$out/bench.err" || { status=1; note "benchmark FAILED (see bench.err)"; }
PYTHONPATH="$repo/python" python3 "$repo/scripts/flash_bench_table.py" "$out/bench.jsonl" \
  > "$out/bench.md" 2>> "$out/bench.err"
tee -a "$summary" < "$out/bench.md"
grep determinism "$out/bench.jsonl" | tee -a "$summary"
exit $status
