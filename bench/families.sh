#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Fast without tuning, per model family: one model of each family users bring (torchvision's
# MobileNet v2 and v3, EfficientNet-B0, SqueezeNet 1.1, ShuffleNet v2, RegNetY-400MF, and a
# 4-layer transformer encoder as plain PyTorch writes it; random weights, batch 1), compiled with
# no tuning database (zero-shot and the shipped logs, or zero-shot alone with --no-shipped),
# against PyTorch eager and TorchScript-optimized in the same run (bench/torch_model.py: median of
# --torch-runs after 10 warm-up runs; each OMP_WAIT_POLICY of --torch-policies in its own process,
# the fastest kept, which can only flatter PyTorch). Our side: run-model --repeat N median with
# OMP_WAIT_POLICY=passive. The two sides alternate for --rounds rounds, so a change of the shared
# machine's speed hits both. Prints per model: median latencies, ours/TorchScript (the median of
# the rounds' own ratios; goal <= 1.0), the outputs' relative error against PyTorch (goal
# < 1e-4), compile time and where the kernels' schedules came from.
#
# Usage: bench/families.sh [options]
#   --tt PATH          tensortune binary (default $TT, else build-main/tools/tensortune/tensortune)
#   --dir DIR          model folder (default /tmp/tt_families); made by
#                      /usr/bin/python3 scripts/make_models.py --family DIR when it lacks a model
#   --models A,B       just these models (default all)
#   --no-shipped       leave out the shipped tuning logs: zero-shot alone
#   --threads N        threads (default 2)
#   --repeat N         run-model --repeat (default 20)
#   --torch-runs N     PyTorch timed runs (default 30, at least 20)
#   --torch-policies L OMP_WAIT_POLICY values tried for PyTorch (default 'passive active unset')
#   --rounds N         alternating rounds of PyTorch and ours (default 3)
#   --json FILE        also write every figure as one JSON document
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
tt=${TT:-"$root/build-main/tools/tensortune/tensortune"}
dir=/tmp/tt_families models="" no_shipped="" threads=2 repeat=20 torch_runs=30
policies="passive active unset" json="" rounds=3
all="mobilenet_v2 mobilenet_v3_small efficientnet_b0 squeezenet1_1 shufflenet_v2_x1_0 regnet_y_400mf transformer_encoder"
die() { echo "families.sh: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
  case $1 in -h | --help) sed -n '3,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
  if [ "$1" = --no-shipped ]; then no_shipped=--no-shipped; shift; continue; fi
  [ $# -ge 2 ] || die "option '$1' needs a value (see the header of $0)"
  case $1 in
    --tt) tt=$2 ;; --dir) dir=$2 ;; --models) models=$2 ;; --threads) threads=$2 ;;
    --repeat) repeat=$2 ;; --torch-runs) torch_runs=$2 ;; --torch-policies) policies=$2 ;;
    --json) json=$2 ;; --rounds) rounds=$2 ;;
    *) die "unknown option '$1' (see the header of $0)" ;;
  esac
  shift 2
done
[ -x "$tt" ] || die "no tensortune binary '$tt' (build it, or pass --tt PATH / set TT)"
models=$(echo "${models:-$all}" | tr ',' ' ')
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
missing=""
for m in $models; do
  [ -f "$dir/$m.onnx" ] && [ -f "$dir/$m.output.0.npy" ] || missing="$missing,$m"
done
if [ -n "$missing" ]; then
  echo "== exporting${missing#,} into $dir" | tr ',' ' '
  "$py" "$root/scripts/make_models.py" --family "$dir" --only "${missing#,}"
fi
[ "$(nproc --all)" = "$threads" ] ||
  echo "families.sh: warning: run-model uses $(nproc --all) threads, not $threads" >&2

for m in $models; do
  rm -rf "${dir:?}/$m.out" "$dir/$m.res" "$dir/$m".torch.*jsonl "$dir/$m".run.*json
  echo "== $m: compile-model (no database $no_shipped)"
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086  # the optional flag splits on purpose
  "$tt" compile-model "$dir/$m.onnx" --target "native -cores=$threads" --out "$dir/$m.out" \
    --json $no_shipped > "$dir/$m.compile.json" 2> "$dir/$m.compile.log" ||
    { cat "$dir/$m.compile.log" >&2; die "compile-model $m failed"; }
  t1=$(date +%s.%N)
  echo "$t0 $t1" > "$dir/$m.compile.time"
  i=0
  while [ "$i" -lt "$rounds" ]; do
    i=$((i + 1))
    echo "== $m: round $i of $rounds: PyTorch ($policies), then run-model --repeat $repeat"
    for p in $policies; do
      if [ "$p" = unset ]; then set -- env -u OMP_WAIT_POLICY; else set -- env OMP_WAIT_POLICY="$p"; fi
      "$@" OMP_NUM_THREADS="$threads" "$py" "$root/bench/torch_model.py" "$dir" --model "$m" \
        --threads "$threads" --runs "$torch_runs" --logits "$dir/$m.torch.npy" \
        >> "$dir/$m.torch.$i.jsonl"
    done
    OMP_WAIT_POLICY=passive "$tt" run-model "$dir/$m.out" --input "input=$dir/$m.input.0.npy" \
      --output-dir "$dir/$m.res" --repeat "$repeat" --json > "$dir/$m.run.$i.json"
  done
done

# shellcheck disable=SC2086  # one argument per model
"$py" - "$dir" "$json" "$no_shipped" "$rounds" $models <<'PY'
import collections, json, math, pathlib, statistics, sys
import numpy as np
d, out, no_shipped, rounds = pathlib.Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
names = sys.argv[5:]
rel = lambda a, b: float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30))
rows = []
for m in names:
    eager, script, ours = [], [], []
    for i in range(1, rounds + 1):
        torch_rows = [json.loads(l) for l in
                      (d / f"{m}.torch.{i}.jsonl").read_text().splitlines() if l]
        eager.append(min(r["eager_ms"] for r in torch_rows))
        script.append(min(r["script_ms"] for r in torch_rows))
        ours.append(json.loads((d / f"{m}.run.{i}.json").read_text())["seconds"] * 1e3)
    run = json.loads((d / f"{m}.run.{rounds}.json").read_text())
    comp = json.loads((d / f"{m}.compile.json").read_text())
    t0, t1 = map(float, (d / f"{m}.compile.time").read_text().split())
    ref = np.load(d / f"{m}.torch.npy")
    got = np.load(run["outputs"][0]["file"]).reshape(ref.shape)
    sources = collections.Counter(f["source"] for f in comp["functions"])
    rows.append({"model": m, "torch_eager_ms": statistics.median(eager),
                 "torchscript_ms": statistics.median(script), "ms": statistics.median(ours),
                 "vs_script": statistics.median(o / s for o, s in zip(ours, script)),
                 "vs_script_rounds": [o / s for o, s in zip(ours, script)],
                 "rel_err": rel(got, ref), "compile_s": t1 - t0,
                 "kernels": comp["kernels"], "sources": dict(sources)})
print(f"\nModel families, no tuning database{' (no shipped logs)' if no_shipped else ''}, batch 1;"
      f" medians of {rounds} rounds, ours/TS the median of the rounds' own ratios")
print(f"{'model':22s} {'eager':>9s} {'TorchScr':>9s} {'ours':>9s} {'ours/TS':>8s} {'rel err':>9s} "
      f"{'compile':>8s}  kernels by source")
for r in rows:
    src = ", ".join(f"{n} {k}" for k, n in sorted(r["sources"].items()))
    print(f"{r['model']:22s} {r['torch_eager_ms']:7.2f}ms {r['torchscript_ms']:7.2f}ms "
          f"{r['ms']:7.2f}ms {r['vs_script']:8.2f} {r['rel_err']:9.1e} {r['compile_s']:7.1f}s  {src}")
g = math.exp(sum(math.log(r["vs_script"]) for r in rows) / len(rows))
met = sum(r["vs_script"] <= 1.0 and r["rel_err"] < 1e-4 for r in rows)
print(f"geomean ours/TorchScript {g:.2f}; goal (<= 1.0x, rel err < 1e-4) met by {met} of {len(rows)}")
if out:
    pathlib.Path(out).write_text(json.dumps({"models": rows, "geomean_vs_script": g}, indent=1) + "\n")
PY
