# dpsim: two entry points. `make run` and `make test` install missing Debian packages first.
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
SCENARIO ?= scenarios/paper/ds660b-64k.json
PKGS    := libsimgrid-dev nlohmann-json3-dev libcli11-dev catch2 libfmt-dev python3-matplotlib \
           cmake g++ make pkg-config
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: deps configure build run test bench format clean

deps:
	@missing=""; for p in $(PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

configure: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	./$(BUILD)/dpsim demo

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/dpsim bench scenarios/bench --out out/bench.json

format:
	clang-format -i $$(git ls-files 'sim/*.cpp' 'sim/*.h' 'tests/*.cpp' 'tests/*.h')

clean:
	rm -rf $(BUILD)
