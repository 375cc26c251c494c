#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each, starting from its checked-in seeds (fuzz/corpus/<target>/),
# and fails on the first crash, sanitizer error, abort, timeout or memory blow-up. New inputs the fuzzer
# finds go to a scratch copy of the corpus, never into the repository; a failing input is kept as
# crash-* in the scratch directory, whose path is printed.
#
#   fuzz/run.sh SECONDS [BUILD_DIR] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: fuzz/run.sh SECONDS [BUILD_DIR] [TARGET...]}
build=${2:-build-sanitize}
case $build in /*) ;; *) build="$(pwd)/$build" ;; esac
shift $(( $# < 2 ? $# : 2 ))
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(model_config architecture placement schedule results_db estimate_cache system measured_runs piper
  kernel_measurements megatron_args)


# A target's seeds: its own in fuzz/corpus and the test suite's inputs of the same format.
seeds() {
  ls fuzz/corpus/"$1"/*
  case $1 in
    model_config) ls tests/data/hf/*/config.json tests/data/bad/*.json ;;
    placement) ls tests/data/placement/*.json ;;
    schedule) ls tests/data/schedule/*.json ;;
    piper) ls tests/data/piper/*.json ;;
  esac
}

scratch=$(mktemp -d "${TMPDIR:-/tmp}/phaze-fuzz-run.XXXXXX")
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# One target's run: seeds copied to its scratch corpus, then the fuzzer; its log stays in the scratch.
fuzz_one() {
  local t=$1 max_len
  mkdir -p "$scratch/$t/corpus"
  for f in $(seeds "$t"); do cp "$f" "$scratch/$t/corpus/$(echo "$f" | tr / _)"; done
  # SQLite files need pages of 4 KiB and more; JSON questions stay small.
  case $t in results_db|estimate_cache) max_len=65536 ;; *) max_len=16384 ;; esac
  (cd "$scratch/$t" && "$build/fuzz_$t" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=$max_len -print_final_stats=1 corpus > log.txt 2>&1)
}
# The fuzzers run one per core at once (FUZZ_JOBS, default: the cores), each for SECONDS: on two cores the
# smoke run takes half as long as one after the other.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
declare -A running=()  # pid -> target
finish_one() {
  local pid=$1 status=$2 t=${running[$1]}
  unset "running[$pid]"
  if [ "$status" -ne 0 ]; then
    tail -n 60 "$scratch/$t/log.txt" >&2
    echo "fuzz: $t failed; inputs and log in $scratch/$t" >&2
    kill "${!running[@]}" 2>/dev/null || true
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)" "$scratch/$t/log.txt" | sed "s/^/fuzz: $t /" >&2 || true
}
wait_one() {
  local pid status=0
  wait -n -p pid "${!running[@]}" || status=$?
  finish_one "$pid" "$status"
}
for t in "${targets[@]}"; do
  [ ${#running[@]} -lt "$jobs" ] || wait_one
  echo "fuzz: $t for ${seconds} s" >&2
  fuzz_one "$t" &
  running[$!]=$t
done
while [ ${#running[@]} -gt 0 ]; do wait_one; done
rm -rf "$scratch"
