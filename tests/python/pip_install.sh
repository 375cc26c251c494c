#!/usr/bin/env bash
# `pip install .` from the checkout into a fresh virtual environment, without network (Debian's setuptools
# and pybind11), then the installed package run from outside the checkout against the command line's JSON.
set -euo pipefail
root=$1 phaze=$2 python=${3:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy of the checkout as a clone has it: no build trees.
mkdir "$work/checkout"
tar -C "$root" --exclude=./build --exclude='./build-*' --exclude=./.git --exclude='*.egg-info' -cf - . |
  tar -C "$work/checkout" -xf -
"$python" -m venv --system-site-packages "$work/env"
"$work/env/bin/pip" install --no-index --quiet "$work/checkout"
cd "$work/env"
"$work/env/bin/python" - "$phaze" <<'PY'
import json, subprocess, sys
import phaze
assert phaze.__file__.startswith(sys.prefix), phaze.__file__
args = ["--model", "llama2-7b", "--system", "dgx-h100", "--tp", "2", "--dp", "4", "--global-batch", "64"]
cli = json.loads(subprocess.run([sys.argv[1], "predict", *args, "--json"], check=True, capture_output=True).stdout)
got = phaze.predict(model="llama2-7b", system="dgx-h100", tp=2, dp=4, global_batch=64).to_dict()
assert got == cli, "the installed package's answer differs from the command line's"
print("installed package:", phaze.__file__)
PY
