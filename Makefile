# Two commands for a fresh machine: `make run` and `make test`. Each installs what is
# missing (scripts/install-deps.sh), configures and builds Release with all cores.
JOBS   ?= $(shell nproc)
PRESET ?= default
BUILD  := $(if $(filter default,$(PRESET)),build,build-$(PRESET))

FUZZ_SECONDS ?= 300

.PHONY: all deps configure build run test test-asan fuzz ci bench bench-torch format translations clean

all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake --preset $(PRESET) >/dev/null

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

run: build
	@if [ -z "$${DISPLAY:-}$${WAYLAND_DISPLAY:-}" ] && [ -z "$${QT_QPA_PLATFORM:-}" ]; then \
	  echo "make run: no display (DISPLAY/WAYLAND_DISPLAY unset). On a headless machine try:"; \
	  echo "  QT_QPA_PLATFORM=offscreen ./$(BUILD)/bin/shardscope --screenshot shot.png"; exit 2; fi
	./$(BUILD)/bin/shardscope

test: build
	ctest --preset $(PRESET) -j $(JOBS)

test-asan:
	@$(MAKE) --no-print-directory test PRESET=asan

# libFuzzer targets (tests/fuzz), each for FUZZ_SECONDS; fails on any crash or sanitizer report.
fuzz: deps
	@bash tests/fuzz/run.sh $(FUZZ_SECONDS)

# What CI runs (.ci/run): the Release suite, the ASan + UBSan suite, a short fuzz run per target.
ci:
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory test-asan
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=45

bench: build
	@bash scripts/run-bench.sh $(BUILD)

# ShardScope vs PyTorch (PyPI, a venv of its own) on this CPU, every strategy at 1 and 4 ranks,
# and run --pp against torch.distributed.pipelining; then the CPU performance goals as ratios.
# Not part of CI.
bench-torch: build
	@bash scripts/bench-torch.sh $(BUILD) --markdown --ours-precision fp32
	@bash scripts/bench-torch.sh $(BUILD) --markdown --ours-precision bf16
	@bash scripts/bench-torch.sh $(BUILD) --pipeline --markdown
	@./$(BUILD)/bin/shardscope_bench_goals

translations: configure
	cmake --build --preset $(PRESET) --target update_translations

format:
	@git ls-files -- '*.cpp' '*.h' '*.cu' '*.cuh' ':!:third_party/*' | xargs clang-format-14 -i

clean:
	rm -rf build build-asan build-debug build-worker build-fuzz
