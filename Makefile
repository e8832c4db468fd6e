# The one entry point for people. Each target does its own set-up; the real work is in
# scripts/ and CMakePresets.json.
.PHONY: deps configure build run server test bench package fuzz test-asan format format-check clean

JOBS ?= $(shell nproc)
ARGS ?=

deps:
	@./scripts/install-deps.sh

# Quiet, but what matters is shown: warnings, errors, a tool missing for a test (then, with
# TAXICORE_REQUIRE_ALL_TESTS, configuring stops and names the package: deps installed them all).
configure: deps
	@cmake --preset default -Wno-dev --log-level=NOTICE -DTAXICORE_REQUIRE_ALL_TESTS=ON

build: configure
	@cmake --build --preset default -j $(JOBS)

## make run: build and launch the dispatcher console (ARGS="--mode pool" passes flags)
run: build
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
	  echo "make run: no display found (DISPLAY/WAYLAND_DISPLAY unset)."; \
	  echo "Run the headless server instead: make server, or build/bin/taxicore-server --help"; exit 1; fi
	./build/bin/taxicore $(ARGS)

## make server: build and run the headless server in the foreground
server: build
	./build/bin/taxicore-server $(ARGS)

## make test: build and run the whole suite through ctest, list what skipped and why
## (then each fuzz target for FUZZ_SMOKE_SECONDS, see make fuzz)
test: build
	@ctest --preset default -j $(JOBS); status=$$?; ./scripts/test-skips.sh build; exit $$status
	@./fuzz/run-fuzzers.sh build-fuzz $(FUZZ_SMOKE_SECONDS)

## make bench: the comparison suite (every mode and policy, the seed scenarios, the Node.js peers);
## report in build/bench/report.md, results.csv and PNG charts. BENCH_QUICK=1 for a short run.
bench: build
	@./scripts/bench-suite.sh

## make package: the Debian package build/taxicore_VERSION_ARCH.deb (CPack, packaging/CMakeLists.txt)
package: build
	@cmake --build --preset default --target package

## make fuzz: build the libFuzzer targets (fuzz/, clang, ASan + UBSan) in build-fuzz and run each
## for FUZZ_SECONDS; fails on any finding, the input is kept in build-fuzz/fuzz-artifacts/
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 10
fuzz: deps
	@./fuzz/run-fuzzers.sh build-fuzz $(FUZZ_SECONDS)

## make test-asan: the whole suite under ASan + UBSan (preset asan, build-asan); slow
test-asan: deps
	@./scripts/sanitizers/test-asan.sh

## make format: rewrite every C++ file in the style of .clang-format (clang-format 14)
## make format-check: list the C++ files that differ from it and fail (CI runs this)
format: deps
	@./scripts/check-format.sh --fix

format-check: deps
	@./scripts/check-format.sh

clean:
	rm -rf build build-asan build-fuzz
