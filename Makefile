# phaze: `make demo` and `make test` set up everything they need on a fresh Debian 12 machine.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
SANITIZE_DIR ?= build-sanitize
# The fuzz targets are built in the sanitized tree: one clang build serves the sanitized suite and the fuzzers.
FUZZ_DIR ?= $(SANITIZE_DIR)
# -O1 with line tables only compiles about 30 % faster than -O2 -g, which pays for the fuzzer's coverage
# instrumentation (the tree takes as long as the sanitized tree alone did at -O2 -g); sanitizer reports
# still name files and lines.
SANITIZE_CMAKE ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_COMPILER=clang++ -DPHAZE_SANITIZE=ON -DPHAZE_FUZZ=ON
# Tests left out of the sanitized run, each seconds in the release build and minutes sanitized: the exact
# scheduler on whole backward layers, the thousands of random questions that guard CBC (an uninstrumented
# library) against aborts, and the 21 searches that compare leaving points out with evaluating them all
# (over 2 minutes), the Spotlight-style argmins against brute force (52 s) and the segment DP on every seed
# model's backward layer (37 s). The small solver tests, LeaveOutByBound.NothingIsLeftOut, the other
# Spotlight-style tests and SegmentDp.EqualsTheBranchAndBoundOnRandomDags run the same code sanitized.
SANITIZE_EXCLUDE ?= ^(ScheduleRealLayers\.Backward|MilpStress\.Thousands|LeaveOutByBound\.TheAnswerIs|SearchBaselines\.SpotlightArgminMatchesBruteForce|SegmentDp\.BackwardLayersOfSeedModels)
# Seconds of fuzzing per target in fuzz-smoke (CI), one target per core at once; fuzz/run.sh takes any other
# figure.
FUZZ_SECONDS ?= 10

.PHONY: all build deps configure demo test test-sanitize fuzz-build fuzz-smoke bench format clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The default search of GPT-3 175B: the exact search over the whole space, about 12 s on 2 cores (README).
# Only the command line is built: the tests and benchmarks are not needed for it.
demo: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target phaze
	./$(BUILD_DIR)/phaze search --model gpt3-175b

# Only what the suite runs (the CLI, the C++ tests, the Python package): the benchmarks (about 100 s of a
# 2-core build) are built by `make bench` and `make build`.
test: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target phaze phaze_tests _phaze
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# The whole suite built with AddressSanitizer and UndefinedBehaviorSanitizer: the first error fails the test
# (the tests' phaze child processes are sanitized builds too and inherit these options). clang, because it
# compiles the sanitized build in about half the time g++ takes.
test-sanitize: deps
	@cmake -S . -B $(SANITIZE_DIR) $(SANITIZE_CMAKE) > /dev/null
	@cmake --build $(SANITIZE_DIR) -j $(JOBS)
	cd $(SANITIZE_DIR) && \
	  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0 \
	  UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  ctest --output-on-failure -j $(JOBS) -E "$(SANITIZE_EXCLUDE)"

# libFuzzer targets (clang), one per reader of user input.
fuzz-build: deps
	@cmake -S . -B $(FUZZ_DIR) $(SANITIZE_CMAKE) > /dev/null
	@cmake --build $(FUZZ_DIR) --target phaze_fuzz_targets -j $(JOBS)

# A short run of every fuzz target from its checked-in seeds: any crash, sanitizer error or abort fails.
fuzz-smoke: fuzz-build
	./fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_DIR)

bench: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS) --target phaze_bench
	./$(BUILD_DIR)/phaze_bench

format:
	@find src tests bench -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR) $(SANITIZE_DIR) $(FUZZ_DIR) build-fuzz
