#!/usr/bin/env python3
"""Writes a tiny random-weight Llama-architecture GGUF for tests against a real llama-server.

Usage: write-model.py LLAMA_SRC_DIR OUT_PATH

LLAMA_SRC_DIR is the llama.cpp checkout that test/llama/build-server.sh made: its gguf-py
writes the file (the same version as the server that reads it) and its copy of Qwen2.5's
chat template becomes the model's template. Needs numpy (Debian's python3-numpy).

What the tests rely on:
- Byte-level BPE ("gpt2" model, "qwen2" pre-tokenizer) over the 256 byte tokens plus merges
  learned from a small English corpus, so any text tokenizes, English in fewer tokens than
  bytes; <|im_start|>, <|im_end|> and <|endoftext|> are control tokens, so the ChatML the
  template renders counts one token per marker.
- Byte token ids are the byte values: "x" is token 120, which a test can force with
  logit_bias.
- The model never samples a control token, a control byte or a non-ASCII byte (see
  write_weights), so every answer runs to max_tokens (finish_reason "length") and its text
  is printable ASCII: completion token counts are exact and no partial UTF-8 reaches JSON.
- The same bytes every run (fixed corpus, fixed seed).
"""

import os
import re
import sys
from collections import Counter
from pathlib import Path

CONTEXT_LENGTH = 2048
EMBEDDING_LENGTH = 64
FEED_FORWARD_LENGTH = 128
BLOCK_COUNT = 2
HEAD_COUNT = 4
MERGE_COUNT = 200
SEED = 20240611

# Merges are learned from this text: the template's own prose (so the default system prompt
# and the tool instructions cost fewer tokens, as with a real tokenizer) and common English.
CORPUS = """
You are Qwen, created by Alibaba Cloud. You are a helpful assistant.
You may call one or more functions to assist with the user query.
You are provided with function signatures within XML tags.
For each function call, return a json object with function name and arguments.
Hello there! How are you today? What is the weather like in the city?
The quick brown fox jumps over the lazy dog. The cat sat on the mat.
This is a test of the gateway. Please answer the question in one short sentence.
It was the best of times, it was the worst of times, it was the age of wisdom.
There is a house in the town where the people of the island live and work.
She said that they would have been there with them if it had not been for the rain.
We want to know what you think about this and that, and then we will go on.
Tell me a story about a dragon who learns to read the books in the library.
The function returns the current temperature for a location, in celsius or fahrenheit.
"""

SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]

# Qwen2's pre-tokenizer splits words with their leading space; this simpler split is close
# enough for learning merges (the server still tokenizes with the real qwen2 rules).
WORD_PATTERN = re.compile(r" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+")


def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters, which llama.cpp's BPE expects."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


def learn_merges(corpus: str, byte_chars: dict[int, str], count: int) -> list[tuple[str, str]]:
    """Plain BPE training; ties go to the smallest pair so the result never varies."""
    words = Counter(WORD_PATTERN.findall(corpus))
    segmented = {
        tuple(byte_chars[b] for b in word.encode("utf-8")): n for word, n in words.items()
    }
    merges: list[tuple[str, str]] = []
    while len(merges) < count:
        pairs: Counter[tuple[str, str]] = Counter()
        for parts, n in segmented.items():
            for pair in zip(parts, parts[1:]):
                pairs[pair] += n
        if not pairs:
            break
        best_count = max(pairs.values())
        if best_count < 2:
            break
        best = min(pair for pair, n in pairs.items() if n == best_count)
        merges.append(best)
        joined = best[0] + best[1]
        next_segmented: dict[tuple[str, ...], int] = {}
        for parts, n in segmented.items():
            out: list[str] = []
            i = 0
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == best:
                    out.append(joined)
                    i += 2
                else:
                    out.append(parts[i])
                    i += 1
            key = tuple(out)
            next_segmented[key] = next_segmented.get(key, 0) + n
        segmented = next_segmented
    return merges


def build_vocab(gguf):  # type: ignore[no-untyped-def]
    byte_chars = bytes_to_unicode()
    tokens = [byte_chars[b] for b in range(256)]
    types = [gguf.TokenType.NORMAL] * 256
    merges = learn_merges(CORPUS, byte_chars, MERGE_COUNT)
    for left, right in merges:
        tokens.append(left + right)
        types.append(gguf.TokenType.NORMAL)
    special_ids = {}
    for text in SPECIAL_TOKENS:
        special_ids[text] = len(tokens)
        tokens.append(text)
        types.append(gguf.TokenType.CONTROL)
    return tokens, types, [f"{a} {b}" for a, b in merges], special_ids


def sampleable_token_ids(tokens: list[str], types: list[int], gguf) -> list[int]:  # type: ignore[no-untyped-def]
    """Tokens whose bytes are all printable ASCII (space included): the only ones generated."""
    char_bytes = {c: b for b, c in bytes_to_unicode().items()}
    ids = []
    for i, (text, kind) in enumerate(zip(tokens, types)):
        if kind != gguf.TokenType.NORMAL:
            continue
        if all(0x20 <= char_bytes[c] <= 0x7E for c in text):
            ids.append(i)
    return ids


def write_weights(writer, np, vocab_size: int, allowed_ids: list[int]) -> None:  # type: ignore[no-untyped-def]
    """Random weights, except one dimension of the residual stream that steers sampling.

    Every token embedding holds a constant in dimension 0 and no layer writes to it (row 0 of
    attn_output and ffn_down is zero), so after the final RMS norm it is always a large
    positive value. The output rows of tokens that must never be sampled weigh that
    dimension at -30, which puts their logits far below every other token's whatever the
    context: no end-of-generation token, so answers always run to max_tokens.
    """
    rng = np.random.default_rng(SEED)
    n_embd, n_ff = EMBEDDING_LENGTH, FEED_FORWARD_LENGTH

    def normal(*shape: int, std: float = 0.02):  # type: ignore[no-untyped-def]
        return (rng.standard_normal(shape) * std).astype(np.float32)

    token_embd = normal(vocab_size, n_embd, std=0.1)
    token_embd[:, 0] = 1.0
    writer.add_tensor("token_embd.weight", token_embd)

    for layer in range(BLOCK_COUNT):
        prefix = f"blk.{layer}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"{prefix}.attn_q.weight", normal(n_embd, n_embd))
        writer.add_tensor(f"{prefix}.attn_k.weight", normal(n_embd, n_embd))
        writer.add_tensor(f"{prefix}.attn_v.weight", normal(n_embd, n_embd))
        attn_output = normal(n_embd, n_embd)
        attn_output[0, :] = 0.0
        writer.add_tensor(f"{prefix}.attn_output.weight", attn_output)
        writer.add_tensor(f"{prefix}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"{prefix}.ffn_gate.weight", normal(n_ff, n_embd))
        writer.add_tensor(f"{prefix}.ffn_up.weight", normal(n_ff, n_embd))
        ffn_down = normal(n_embd, n_ff)
        ffn_down[0, :] = 0.0
        writer.add_tensor(f"{prefix}.ffn_down.weight", ffn_down)

    writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    # Spread enough that sampling at the default temperature varies between runs.
    output = normal(vocab_size, n_embd, std=0.3)
    output[:, 0] = -30.0
    output[allowed_ids, 0] = 0.0
    writer.add_tensor("output.weight", output)


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: write-model.py LLAMA_SRC_DIR OUT_PATH")
    llama_src = Path(sys.argv[1])
    out_path = Path(sys.argv[2])
    sys.path.insert(0, str(llama_src / "gguf-py"))
    import numpy as np
    import gguf

    chat_template = (llama_src / "models" / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja").read_text()
    tokens, types, merges, special_ids = build_vocab(gguf)
    allowed_ids = sampleable_token_ids(tokens, types, gguf)

    # Written beside the target and renamed, so a concurrent reader never sees half a file.
    tmp_path = out_path.with_name(f".{out_path.name}.{os.getpid()}.tmp")
    writer = gguf.GGUFWriter(str(tmp_path), "llama")
    writer.add_name("lmgate-tiny-random")
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_context_length(CONTEXT_LENGTH)
    writer.add_embedding_length(EMBEDDING_LENGTH)
    writer.add_feed_forward_length(FEED_FORWARD_LENGTH)
    writer.add_block_count(BLOCK_COUNT)
    writer.add_head_count(HEAD_COUNT)
    writer.add_head_count_kv(HEAD_COUNT)
    writer.add_rope_dimension_count(EMBEDDING_LENGTH // HEAD_COUNT)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_vocab_size(len(tokens))

    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    # As in Qwen2.5's GGUFs: no BOS is prepended, <|im_end|> ends a turn.
    writer.add_bos_token_id(special_ids["<|endoftext|>"])
    writer.add_eos_token_id(special_ids["<|im_end|>"])
    writer.add_pad_token_id(special_ids["<|endoftext|>"])
    writer.add_add_bos_token(False)
    writer.add_chat_template(chat_template)

    write_weights(writer, np, len(tokens), allowed_ids)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    tmp_path.replace(out_path)


if __name__ == "__main__":
    main()
