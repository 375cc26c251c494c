# phaze: `make demo` and `make test` set up everything they need on a fresh Debian 12 machine.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all build deps configure demo test bench format clean

all: build

deps:
	@./scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# The full default space of GPT-3 175B takes hours on 2 cores (README); the demo searches a restricted one.
demo: build
	./$(BUILD_DIR)/phaze search --model gpt3-175b --tc 4,8,16 --vc 1,2,4 --width 128,256 --glb-mib 32,128

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD_DIR)/phaze_bench

format:
	@find src tests bench -name '*.cpp' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
