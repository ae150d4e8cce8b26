# Two commands do all the set-up on a fresh Debian machine:
#   make demo   install missing packages, configure, build the command line, run the quick-start
#               example
#   make test   the same set-up, then build everything and run every test through ctest
#               (C++, command line, Python)
#   make python build the Python package alone (build/python; docs/python.md)
BUILD ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all deps configure build cli python demo test test-sanitize fuzz fuzz-build fuzz-short format clean

all: build

deps:
	@bash tools/install-deps.sh

# -g1 (line tables and functions) rather than -g: backtraces keep their source lines, and the
# build takes minutes less of make test's 20 on two cores.
$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Only what the demo runs: a new user's first wait is the command line's build, not the tests'.
cli: configure
	cmake --build $(BUILD) -j $(JOBS) --target cotangent

python: configure
	cmake --build $(BUILD) -j $(JOBS) --target python

demo: cli
	$(BUILD)/cotangent run examples/quickstart.cot main --input examples/quickstart.json

test: build fuzz-short
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole test suite under AddressSanitizer and UBSan. -O1, as the sanitizers' documentation
# recommends, with assertions on: at -O0 the interpreter-heavy suites ran 40 times slower than
# in the main build and the whole suite took hours on two cores.
ASAN_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DCOTANGENT_SANITIZE=ON
$(ASAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(ASAN_BUILD) $(GENERATOR) $(ASAN_FLAGS)

test-sanitize: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake -S . -B $(ASAN_BUILD) $(ASAN_FLAGS) >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# libFuzzer, built with clang (sanitizers on). `make test` runs fuzz_parse_check (parse and check,
# the front end, which is all this build then compiles) for 30 s; `make fuzz` runs fuzz_load
# (the whole load: parse, check, optimize, derive) for ten minutes over the same corpus.
# -O1 -gline-tables-only, as libFuzzer's documentation builds targets: sanitizer reports keep
# their source lines, and the code compiles in much less time than at -O2 -g (this build is
# part of `make test`'s 20 minutes).
$(FUZZ_BUILD)/CMakeCache.txt: | deps
	CXX=clang++ cmake -S . -B $(FUZZ_BUILD) $(GENERATOR) -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" \
	  -DCOTANGENT_SANITIZE=ON -DCOTANGENT_FUZZ=ON -DCOTANGENT_TESTS=OFF -DCOTANGENT_PYTHON=OFF

fuzz-build: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_parse_check

FUZZ_FLAGS = -timeout=5 -rss_limit_mb=2048 -max_len=4096 $(FUZZ_BUILD)/corpus fuzz/corpus
fuzz-short: fuzz-build
	@mkdir -p $(FUZZ_BUILD)/corpus
	$(FUZZ_BUILD)/fuzz_parse_check -max_total_time=30 $(FUZZ_FLAGS)

FUZZ_SECONDS ?= 600
fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_load
	@mkdir -p $(FUZZ_BUILD)/corpus
	$(FUZZ_BUILD)/fuzz_load -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS)

# Long campaigns (docs/campaigns.md), not part of `make test`: libFuzzer on both targets with
# the corpus in fuzz/corpus growing, the random AD programs, a soak of the native cache with
# processes killed at random, and every test program at --opt 0/1/2 x interp/native. Each runs
# for CAMPAIGN_SECONDS (the fuzz campaign: per target) and writes its figures to standard output
# and to $(BUILD)/campaigns/NAME-latest.txt.
CAMPAIGN_SECONDS ?= 3600
.PHONY: campaign-fuzz campaign-ad campaign-cache campaign-differential
campaign-fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_parse_check fuzz_load
	bash campaigns/fuzz.sh $(CAMPAIGN_SECONDS) $(FUZZ_BUILD) $(BUILD)/campaigns

campaign-ad: build
	bash campaigns/ad.sh $(CAMPAIGN_SECONDS) $(BUILD) $(BUILD)/campaigns

campaign-cache: build
	/usr/bin/python3 campaigns/cache_soak.py $(CAMPAIGN_SECONDS) --build $(BUILD)

campaign-differential: build
	/usr/bin/python3 campaigns/differential.py $(CAMPAIGN_SECONDS) --build $(BUILD)

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

# Benchmarks (docs/benchmarks.md): the op-count ratios over the corpus, the scaling of the
# introduction programs beside PyTorch, native code beside hand-written C++, GradBench's
# evals beside PyTorch and the Python package's per-call overhead, built in their
# own directory; refreshes the tables of docs/benchmarks.md and its plots in place.
BENCH_BUILD ?= build-bench
.PHONY: bench
bench: deps
	BENCH_BUILD=$(BENCH_BUILD) bash bench/run_cost_ratios.sh
	BENCH_BUILD=$(BENCH_BUILD) bash bench/run_intro_scaling.sh
	BENCH_BUILD=$(BENCH_BUILD) bash bench/run_native.sh
	BENCH_BUILD=$(BENCH_BUILD) bash bench/run_gradbench.sh
	BENCH_BUILD=$(BENCH_BUILD) bash bench/run_python_overhead.sh
	python3 bench/update_docs.py $(BENCH_BUILD)/results docs/benchmarks.md

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
