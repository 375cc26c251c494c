#!/usr/bin/env bash
# Installs the Debian packages phaze needs to build and test, skipping those already present.
set -euo pipefail

# clang and its runtime libraries build the sanitized suite and the libFuzzer targets (docs/hardening.md);
# pybind11, Python's headers, pandas and setuptools the Python package (python/); Chart.js the HTML
# report's charts, and headless Chromium the test that opens a report.
packages=(build-essential cmake pkg-config nlohmann-json3-dev libcli11-dev libfmt-dev libgtest-dev libgmock-dev
          libbenchmark-dev libsqlite3-dev libmimalloc-dev
          coinor-libcbc-dev
          openmpi-bin libopenmpi-dev
          clang libclang-rt-14-dev
          pybind11-dev python3-dev python3-pandas python3-setuptools python3-venv
          libjs-chart.js chromium)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null 2>&1; then
  sudo=(sudo)
else
  echo "error: missing packages ${missing[*]} and no root rights to install them" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
