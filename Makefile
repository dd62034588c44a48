# Two commands for a fresh machine: `make run` and `make test`. Each installs what is
# missing (scripts/install-deps.sh), configures and builds Release with all cores.
JOBS   ?= $(shell nproc)
PRESET ?= default
BUILD  := $(if $(filter default,$(PRESET)),build,build-$(PRESET))

.PHONY: all deps configure build run test test-asan bench format translations clean

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

bench: build
	@bash scripts/run-bench.sh $(BUILD)

translations: configure
	cmake --build --preset $(PRESET) --target update_translations

format:
	@git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' | xargs clang-format -i

clean:
	rm -rf build build-asan build-debug build-worker
