# make demo / make test work on a fresh machine with only python3, make and a C compiler:
# the first run creates .venv and installs the package with every extra, compiling its
# kernels; a later run rebuilds them when a C source changes. A failed set-up removes the
# half-made .venv, so the next try starts clean.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
KERNEL_SOURCES := $(wildcard $(addprefix src/onnx_upsample/_kernels/_native/*.,c h inc))

.PHONY: demo test test-sanitize test-portable test-aarch64 check-targets lint wheel bench \
	bench-instructions conformance-doc docs clean

$(STAMP): pyproject.toml setup.py $(KERNEL_SOURCES)
	@$(PYTHON) -c 'import sys; assert sys.version_info >= (3, 11), "onnx-upsample needs Python >= 3.11; run make PYTHON=python3.11 (or newer)"' \
		|| exit 1
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
		echo "could not create $(VENV): on Debian/Ubuntu run 'apt-get install python3-venv'"; exit 1; }
	@echo "installing onnx-upsample and its test tools into $(VENV) (compiles the C kernels)..."
	@{ $(BIN)/python -m pip install --quiet --upgrade pip \
		&& $(BIN)/python -m pip install --quiet -e '.[dev]'; } || { rm -rf $(VENV); exit 1; }
	@touch $(STAMP)

demo: $(STAMP)
	@echo "onnx-upsample: the ONNX Upsample operator (versions 1, 7, 9, 10), bit-identical to"
	@echo "onnxruntime, for every element type and rank; tools for legacy models; arrays beyond memory."
	$(BIN)/onnx-upsample demo
	mkdir -p build/demo
	$(BIN)/python scripts/make_legacy_model.py -o build/demo/yolo_head_opset9.onnx --inputs build/demo
	$(BIN)/onnx-upsample inspect examples/yolo_head_opset9.onnx
	$(BIN)/onnx-upsample check examples/yolo_head_opset9.onnx
	$(BIN)/onnx-upsample run examples/yolo_head_opset9.onnx --input feature=build/demo/feature.npy \
		--input route=build/demo/route.npy --output-dir build/demo
	$(BIN)/onnx-upsample upgrade examples/yolo_head_opset9.onnx -o build/demo/yolo_head_opset18.onnx \
		--opset 18 --verify
	$(BIN)/onnx-upsample downgrade build/demo/yolo_head_opset18.onnx -o build/demo/yolo_head_back_opset9.onnx
	$(BIN)/onnx-upsample fold examples/yolo_head_opset9.onnx -o build/demo/yolo_head_folded.onnx
	$(BIN)/onnx-upsample apply docs/compare_input.png build/demo/compare_input_x4.png --scales 4 4 --mode linear
	$(BIN)/onnx-upsample compare docs/compare_input.png -o build/demo/compare.png --scales 1.7
	$(BIN)/onnx-upsample conformance export build/demo/upsample-suite
	$(BIN)/onnx-upsample conformance run --backend onnxruntime --backend onnx-reference \
		--suite build/demo/upsample-suite --cases 'v*' --markdown build/demo/conformance.md

# ruff and mypy, and the C kernels with -Wall -Wextra -Wconversion -Wshadow -Werror (GCC, and
# Clang where it is installed); the code host's workflows with actionlint and cibuildwheel
lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks scripts
	$(BIN)/mypy src
	PYTHON=$(BIN)/python scripts/check_c.sh
	PYTHON=$(PYTHON) scripts/check_workflows.sh

# The differential suites run once more on the baseline instruction set (the default run
# takes AVX2 where the CPU has it) and with streaming stores for every output (the default
# streams only outputs of 16 MiB and more): every variant must give the same bits.
DIFFERENTIAL := tests/test_ort.py tests/test_ort_differences.py tests/test_ort_large.py \
	tests/test_fast_vs_reference.py tests/test_fuzz.py

test: lint
	PYTHON=$(BIN)/python scripts/test_suite.sh $(DIFFERENTIAL)

# The C layer under AddressSanitizer + UndefinedBehaviorSanitizer, then ThreadSanitizer: the
# native, kernel, threading, large differential and fuzz tests (about 2.5 minutes)
test-sanitize: $(STAMP)
	PYTHON=$(BIN)/python scripts/test_sanitize.sh

# The differential suites and the fast paths' counts against the portable C path, what a
# target with no SIMD backend runs (the scalar loops alone), built with ONNX_UPSAMPLE_NO_SIMD
# into build/portable/
test-portable: $(STAMP)
	PYTHON=$(BIN)/python scripts/test_portable.sh $(DIFFERENTIAL) tests/test_fast_paths.py

# The kernels on aarch64 (the NEON backend), emulated by qemu-user: an aarch64 CPython with
# the test requirements' aarch64 wheels, from the package registries into build/aarch64/
# (scripts/aarch64_env.sh; nothing on the system changes), the extension cross-compiled with
# setup.py's flags, and these tests run there; the linear bits are held to the outputs this
# checkout's x86-64 build and onnxruntime's record first (tests/recorded_bits.py). The
# package tested is the manylinux aarch64 wheel that `make wheel` builds (zig's compiler);
# scripts/test_aarch64.sh without --wheel builds the extension with GCC instead
AARCH64_TESTS := tests/test_recorded_bits.py tests/test_fast_paths.py tests/test_kernels.py \
	tests/test_native_constants.py tests/test_fast_vs_reference.py tests/test_ort.py \
	tests/test_identity_block.py tests/test_row_pairs.py tests/test_collapsed_axes.py \
	tests/test_corner_cache.py tests/test_streaming_lines.py tests/test_nearest_rows.py \
	tests/test_nan_bits.py tests/test_reference.py tests/test_layouts.py \
	tests/test_linear_variants.py tests/test_kernel_description.py tests/test_dtypes.py \
	tests/test_native.py tests/test_threads.py
test-aarch64: $(STAMP)
	@mkdir -p build
	@scripts/build_wheel.sh build/wheels manylinux_2_28_aarch64 >build/wheels.log \
		|| { cat build/wheels.log; exit 1; }
	@grep -v '^/' build/wheels.log
	PYTHON=$(BIN)/python scripts/test_aarch64.sh --wheel "$$(tail -n 1 build/wheels.log)" \
		$(AARCH64_TESTS)

# Every C file compiled for every wheel target with the strict warnings (glibc 2.28 and musl
# for x86-64 and aarch64, macOS x86-64 and arm64, Windows x86-64 and arm64), and the
# extension linked and checked for the Linux and Windows ones: zig's Clang, from PyPI, into
# build/targets/
check-targets: $(STAMP)
	PYTHON=$(BIN)/python scripts/check_targets.sh

# The wheels to distribute for Linux, into dist/: manylinux_2_28 and musllinux_1_2, x86_64
# and aarch64, built from the sdist with zig's compiler for each target and checked
# (auditwheel agrees with each tag); scripts/build_wheel.sh says how
wheel: $(STAMP)
	scripts/build_wheel.sh dist all

# bench.py against ORT, then bench_images.py: images side by side with OpenCV (the 'bench'
# extra, installed here), torch where installed, and ORT
BENCH_STAMP := $(VENV)/.bench
$(BENCH_STAMP): $(STAMP)
	@$(BIN)/python -m pip install --quiet -e '.[dev,bench]' && touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/bench.py
	$(BIN)/python benchmarks/bench_images.py

# instructions per output of the compiled kernels under valgrind's callgrind (one thread):
# repeatable on a busy machine, where wall-clock times are not
bench-instructions: $(STAMP)
	$(BIN)/python benchmarks/instructions.py

# docs/conformance.md from real runs of every runtime the 'conformance' extra installs
conformance-doc: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[conformance]'
	$(BIN)/python scripts/make_conformance_doc.py

# The documentation site, into build/docs/html: Sphinx over docs/ (Markdown, with the README
# as its front page) and the public docstrings (the API reference), every warning an error;
# it prints its page count and build time. The 'docs' extra's tools are installed into .venv
# once (the package itself is not reinstalled); the pages' code examples are not run here
# but by make test (tests/test_doc_examples.py)
DOCS_STAMP := $(VENV)/.docs
$(DOCS_STAMP): $(STAMP) pyproject.toml
	@$(BIN)/python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["docs"]))' \
		>$(VENV)/docs-requirements.txt
	@$(BIN)/python -m pip install --quiet -r $(VENV)/docs-requirements.txt && touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	@start=$$(date +%s%N); \
	$(BIN)/python -m sphinx -E -W --keep-going -q -b html docs build/docs/html || exit 1; \
	end=$$(date +%s%N); \
	pages=$$(find build/docs/html -maxdepth 1 -name '*.html' ! -name genindex.html \
		! -name search.html ! -name py-modindex.html | wc -l); \
	echo "make docs: $$pages pages in $$(( (end - start) / 1000000 )) ms: build/docs/html/index.html"

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache .hypothesis
