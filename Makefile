# dpsim: two entry points. `make run` and `make test` install missing Debian packages first.
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
SCENARIO ?= scenarios/paper/ds660b-64k.json
# STRICT=ON (CI's `.ci/run`): every warning is an error, and the libraries and dpsim are also built file by
# file, with every C++ test run again against that build (CMakeLists.txt, DPSIM_WERROR and DPSIM_FILE_CHECK).
STRICT  ?= OFF
PKGS    := libsimgrid-dev nlohmann-json3-dev libcli11-dev catch2 libfmt-dev libtcmalloc-minimal4 python3-matplotlib \
           cmake g++ make pkg-config
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps configure build run test bench props format clean test-sanitize fuzz zoo coverage lint docs-check

# Installs the Debian packages of $(1) that are missing.
define install_missing
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
endef

deps:
	$(call install_missing,$(PKGS))

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DDPSIM_WERROR=$(STRICT) -DDPSIM_FILE_CHECK=$(STRICT) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/dpsim demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole ctest suite built with AddressSanitizer + UndefinedBehaviorSanitizer (any report fails the test).
# SimGrid runs its actors on threads there: ASan cannot follow the default contexts' stack switches.
# e2e timeouts are scaled by 10 there: thread contexts and ASan make runs about that much slower.
ASAN_BUILD ?= build-asan
SANITIZE_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
                UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 DPSIM_SG_CONTEXTS=thread DPSIM_E2E_TIMEOUT_SCALE=10
test-sanitize: deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPSIM_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS)

# libFuzzer harnesses (tests/fuzz/README.md): builds them with clang in $(FUZZ_BUILD), then runs each for
# SECONDS on a scratch copy of its seed corpus (new inputs and crashes stay in $(FUZZ_BUILD)/fuzz-work).
FUZZ_BUILD ?= build-fuzz
SECONDS ?= 60
fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DDPSIM_FUZZ=ON >/dev/null
	@cmake --build $(FUZZ_BUILD) --target fuzzers -j $(JOBS)
	@failed=""; for exe in $(FUZZ_BUILD)/tests/fuzz/fuzz_*; do \
	  [ -f "$$exe" ] && [ -x "$$exe" ] || continue; \
	  n=$${exe##*/fuzz_}; work=$(FUZZ_BUILD)/fuzz-work/$$n; \
	  rm -rf "$$work" && mkdir -p "$$work/corpus" "$$work/artifacts" && cp tests/fuzz/corpus/$$n/* "$$work/corpus/"; \
	  dict=tests/fuzz/$$n.dict; [ -f "$$dict" ] || dict=tests/fuzz/json.dict; \
	  echo "fuzz_$$n: $(SECONDS) s ..."; \
	  "$$exe" "$$work/corpus" -dict="$$dict" -max_total_time=$(SECONDS) -timeout=10 -print_final_stats=1 \
	    -artifact_prefix="$$work/artifacts/" </dev/null >"$$work/log" 2>&1 || failed="$$failed $$n"; \
	  grep -E '^#[0-9]+[[:space:]]+DONE|^Done|stat::number_of_executed_units|stat::average_exec_per_sec' \
	    "$$work/log" | sed 's/^/  /'; \
	  ls "$$work/artifacts" | sed 's|^|  crash: '"$$work"'/artifacts/|'; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: crashes in:$$failed (logs in $(FUZZ_BUILD)/fuzz-work/<name>/log)"; exit 1; fi

# Line and function coverage of sim/, per folder (README, "Development"): every target built file by file with
# gcov at -O1 in $(COV_BUILD), the C++ tests run there (e2e timeouts x4: the instrumented build is slower),
# gcovr's report summed per folder by tests/coverage/summary.py, which also names the functions declared
# in sim/'s headers that no test ran. Exits non-zero when a test failed, after printing the figures.
COV_BUILD ?= build-cov
coverage: deps
	$(call install_missing,gcovr)
	@cmake -S . -B $(COV_BUILD) -DCMAKE_BUILD_TYPE=Debug -DDPSIM_COVERAGE=ON -DDPSIM_UNITY=OFF >/dev/null
	@cmake --build $(COV_BUILD) -j $(JOBS)
	@find $(COV_BUILD) -name '*.gcda' -delete
	@status=0; (cd $(COV_BUILD) && DPSIM_E2E_TIMEOUT_SCALE=4 ctest -j $(JOBS) -LE analysis) >$(COV_BUILD)/ctest.log 2>&1 || status=$$?; \
	tail -n 3 $(COV_BUILD)/ctest.log; \
	gcovr -r . --object-directory $(COV_BUILD) --filter 'sim/' -j $(JOBS) --json $(COV_BUILD)/coverage.json && \
	python3 tests/coverage/summary.py $(COV_BUILD)/coverage.json --headers sim && exit $$status

# clang-tidy over sim/ with the checks of .clang-tidy (README, "Development"): a compile database from a
# file-by-file configure without precompiled headers in $(LINT_BUILD) (nothing is compiled), every finding
# printed once (a header's finding comes from every file that includes it), exit 1 when there is any.
LINT_BUILD ?= build-lint
lint: deps
	$(call install_missing,clang-tidy)
	@cmake -S . -B $(LINT_BUILD) -DDPSIM_PCH=OFF -DDPSIM_UNITY=OFF >/dev/null
	@run-clang-tidy -p $(LINT_BUILD) -j $(JOBS) -quiet '$(CURDIR)/sim/.*\.cpp$$' >$(LINT_BUILD)/clang-tidy.log 2>&1; \
	sed 's/\x1b\[[0-9;]*m//g' $(LINT_BUILD)/clang-tidy.log | grep -E '^$(CURDIR)/sim/.*: (warning|error): ' | \
	  sed 's|^$(CURDIR)/||' | sort -u >$(LINT_BUILD)/findings.txt; \
	n=$$(wc -l <$(LINT_BUILD)/findings.txt); cat $(LINT_BUILD)/findings.txt; \
	echo "lint: $$n finding(s) in sim/ (full output: $(LINT_BUILD)/clang-tidy.log)"; [ "$$n" -eq 0 ]

# The model zoo (models/llm/hf/zoo.tsv): each models/llm/<name>.json imported from its shipped config.
zoo: build
	@grep -v '^#' models/llm/hf/zoo.tsv | while IFS='	' read -r name config flags; do \
	  ./$(BUILD)/dpsim model import models/llm/hf/$$config --name $$name $$flags --force | tail -1; done

bench: build
	./$(BUILD)/dpsim bench scenarios/bench --base ds660b-2p4d-2048-dualpath --out out/bench.json

# The full property grid (scenarios/props/README.md): about 200 runs, 6 minutes on 2 cores; resumable.
props: build
	./$(BUILD)/dpsim props scenarios/props/paper-grid.json --jobs $(JOBS) --out out/props/paper-grid

format:
	clang-format -i $$(git ls-files 'sim/*.cpp' 'sim/*.h' 'tests/*.cpp' 'tests/*.h')

clean:
	rm -rf $(BUILD)

# Every output the READMEs quote (a `<!-- docs-check ... -->` marker before the block), rerun and compared, the
# long ones too (the calibration's fit: about 15 minutes on 2 cores): run it before a release. ctest runs the
# quick ones (docs:quick). tests/docs/docs_check.py --list names them.
docs-check: build
	python3 tests/docs/docs_check.py --binary $(BUILD)/dpsim
