# make demo / make test work on a fresh machine with only python3 and make:
# the first run creates .venv and installs the package with every extra.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/onnx-upsample demo
	mkdir -p build/demo
	$(BIN)/python scripts/make_legacy_model.py -o build/demo/yolo_head_opset9.onnx --inputs build/demo
	$(BIN)/onnx-upsample inspect examples/yolo_head_opset9.onnx
	$(BIN)/onnx-upsample run examples/yolo_head_opset9.onnx --input feature=build/demo/feature.npy \
		--input route=build/demo/route.npy --output-dir build/demo
	$(BIN)/onnx-upsample upgrade examples/yolo_head_opset9.onnx -o build/demo/yolo_head_opset18.onnx \
		--opset 18 --verify
	$(BIN)/onnx-upsample apply docs/compare_input.png build/demo/compare_input_x4.png --scales 4 4 --mode linear
	$(BIN)/onnx-upsample compare docs/compare_input.png -o build/demo/compare.png --scale 1.3333334

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy src

test: lint
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache .hypothesis
