#!/bin/sh
# train_models.sh: make the shipped default predictors of the `predictive` policy,
# models/data/predictive/{util,mem,time}.mlp, from synthetic samples of the model zoo.
# Reproducible: the same clustersim build gives byte-identical model files.
#   usage: bench/predictive/train_models.sh [path/to/clustersim]
# The training data (20,000 synthetic rows) is written to a temporary file and removed;
# the per-model reports (MAE, MSE, R2 on 4,000 held-out rows beside the mean and
# linear-regression baselines) are printed and kept in models/data/predictive/REPORT.txt.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/build/clustersim}
out=$here/models/data/predictive
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
"$bin" model gen samples --out "$tmp/samples.csv" --samples 20000 --seed 1
{
    echo "# Produced by bench/predictive/train_models.sh from 20000 synthetic samples"
    echo "# (clustersim model gen samples --samples 20000 --seed 1: the model zoo, every"
    echo "# catalog GPU type not marked assumed). All figures are on synthetic data."
    for kind in util mem time; do
        echo
        echo "## $kind: clustersim model train --kind $kind --data samples.csv --seed 1"
        "$bin" model train --kind "$kind" --data "$tmp/samples.csv" --out "$out/$kind.mlp" \
            --hidden 64,32 --seed 1 | grep -v '^saved '
    done
    echo
    echo "## time with the predicted utilisation as input"
    "$bin" model eval --kind time --data "$tmp/samples.csv" --model "$out/time.mlp" \
        --util-model "$out/util.mlp" | tail -n 5
} | sed "s|$tmp/||g" | tee "$out/REPORT.txt"
