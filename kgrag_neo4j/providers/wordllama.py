"""The default offline embedder: WordLlama static token embeddings, shipped inside its wheel.

WordLlama averages per-token vectors (numpy only, no torch), so it is fast on a CPU and its
weights sit in the installed ``wordllama`` package. We load them from there and never let it
download: ``WordLlama.load`` otherwise looks in ``~/.cache/wordllama`` and fetches from the
Hugging Face hub.

The weights and the tokenizer are read straight from the package's files (safetensors and
tokenizers, which wordllama itself uses) without importing wordllama, whose import (pydantic,
toml and its trainers) and loader cost every ``kgrag ingest`` several times more than this
way (docs/benchmarks.md); the same matrix and the same tokenizer (tested). ``WordLlama.load`` is still the way
for a truncated dimension and when the files are not where this wordllama keeps them.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import logging
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..blas import one_blas_thread
from ..errors import ConfigurationError, InputError
from ..protocols import InputType
from ..validation import check_int, check_text
from ._texts import check_input_type, check_texts

if TYPE_CHECKING:
    from ._word_tokens import WordTokens

__all__ = ["WordLlamaEmbedder"]

log = logging.getLogger("kgrag_neo4j.providers")

_INSTALL_HINT = 'pip install "kgrag-neo4j"  (wordllama is a core dependency)'

_models: dict[tuple[str, int], _Model] = {}
_models_lock = threading.Lock()


@dataclass(frozen=True)
class _Model:
    """What kgrag uses of a WordLlama model."""

    #: float32, C-contiguous, vocabulary x dimensions
    embedding: Any
    #: a ``tokenizers.Tokenizer`` of its own, without padding and truncation
    tokenizer: Any


def _import_wordllama() -> Any:
    # Why: wordllama calls logging.basicConfig(level=INFO) when imported, which would install
    # a handler on the root logger of the host application. A library must not configure
    # logging, so whatever that import added is taken back.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        import wordllama
    except ImportError as exc:
        raise ConfigurationError(f"the WordLlama embedder needs the wordllama package: {_INSTALL_HINT}") from exc
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:
                root.removeHandler(handler)
        root.setLevel(level)
    return wordllama


def _package_dir() -> Path:
    """The installed wordllama package's folder, found without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError(f"the WordLlama embedder needs the wordllama package: {_INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def _shipped_dims(package_dir: Path, config: str) -> list[int]:
    """Dimensions whose weights are in the installed package (``weights/<config>_<dim>.safetensors``)."""
    dims = []
    for path in (package_dir / "weights").glob(f"{config}_*.safetensors"):
        suffix = path.stem[len(config) + 1 :]
        if suffix.isdigit():
            dims.append(int(suffix))
    return sorted(dims)


def _load(config: str, dim: int) -> _Model:
    """The loaded model, once per process and (config, dim)."""
    key = (config, dim)
    with _models_lock:
        model = _models.get(key)
        if model is None:
            model = _models[key] = _load_uncached(config, dim)
        return model


class _Pooler:
    """WordLlama's average of token vectors, without the padding.

    ``WordLlamaInference.embed`` pads every text of a batch to the longest one and gathers a
    (texts x longest x dims) array before it averages. Here each slice of texts becomes a
    (texts x distinct tokens) count matrix, multiplied by those tokens' vectors: the sum of
    every text's token vectors in one BLAS call (on one thread, ``blas.one_blas_thread``). Same
    float32 sums (in another order), then the mean, several times faster than gathering every
    token's vector (``np.add.reduceat``) or WordLlama's own (docs/benchmarks.md has the figures)."""

    #: texts per count matrix: at most SLICE x vocabulary float32 (4 MB for 32,000 tokens)
    SLICE = 32

    def __init__(self, model: _Model) -> None:
        self.matrix = model.embedding
        self.tokenizer = model.tokenizer
        # the same ids without the character offsets nobody reads (tokenizers >= 0.20): a third
        # less time in the tokenizer
        self._encode = getattr(self.tokenizer, "encode_batch_fast", self.tokenizer.encode_batch)

    @functools.cached_property
    def _words(self) -> WordTokens | None:
        """Word by word, each word once, where that gives the same ids (l2_supercat: half the
        time); looked up on the first texts, so a run that embeds nothing never reads the
        vocabulary."""
        from ._word_tokens import WordTokens

        return WordTokens.for_tokenizer(self.tokenizer)

    def _slices(self, texts: list[str]) -> Iterator[tuple[int, Any, Any]]:
        """(start, token counts, every token id in order) for each slice of ``SLICE`` texts."""
        import numpy as np

        if self._words is not None:
            data = self._words.ids(texts)
            for start in range(0, len(data), self.SLICE):
                part = data[start : start + self.SLICE]
                lengths = np.fromiter(map(len, part), dtype=np.int64, count=len(part)) // 2
                yield start, lengths, np.frombuffer(b"".join(part), dtype=np.uint16).astype(np.int64)
            return
        ids = [e.ids for e in self._encode(texts, add_special_tokens=False)]
        for start in range(0, len(ids), self.SLICE):
            chunk = ids[start : start + self.SLICE]
            lengths = np.fromiter(map(len, chunk), dtype=np.int64, count=len(chunk))
            yield start, lengths, np.fromiter(itertools.chain.from_iterable(chunk), dtype=np.int64, count=int(lengths.sum()))

    def mean_vectors(self, texts: list[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.matrix.shape[1]), dtype=np.float32)
        for start, lengths, flat in self._slices(texts):
            if not flat.size:
                continue  # texts without tokens stay zero (refused by the caller)
            np.clip(flat, 0, self.matrix.shape[0] - 1, out=flat)
            tokens, column = np.unique(flat, return_inverse=True)
            row = np.repeat(np.arange(len(lengths)), lengths)
            counts = np.bincount(row * tokens.size + column, minlength=len(lengths) * tokens.size)
            with one_blas_thread():
                sums = counts.reshape(len(lengths), tokens.size).astype(np.float32) @ self.matrix[tokens]
            filled = np.flatnonzero(lengths)
            out[start + filled] = sums[filled] / lengths[filled, None].astype(np.float32)
        return out


_poolers: dict[tuple[str, int], _Pooler] = {}


def _pooler(config: str, dim: int) -> _Pooler:
    model = _load(config, dim)
    with _models_lock:
        pooler = _poolers.get((config, dim))
        if pooler is None:
            pooler = _poolers[(config, dim)] = _Pooler(model)
        return pooler


def _load_uncached(config: str, dim: int) -> _Model:
    package_dir = _package_dir()
    shipped = _shipped_dims(package_dir, config)
    if dim in shipped:
        weights_dim, trunc_dim = dim, None
    else:
        # The vectors are Matryoshka-trained: the first n components of a larger model are a
        # valid n-dim model, so a smaller dimension can come from the weights that are shipped.
        larger = [d for d in shipped if d > dim]
        if not larger:
            raise ConfigurationError(
                f"WordLlama {config!r} has no {dim}-dim weights in {package_dir / 'weights'} "
                f"(shipped: {shipped or 'none'}); kgrag never downloads models"
            )
        weights_dim, trunc_dim = larger[0], dim
    # a truncation goes through wordllama, which knows the dimensions each model was trained for
    model = _from_files(package_dir, config, weights_dim) if trunc_dim is None else None
    return model or _from_library(package_dir, config, weights_dim, trunc_dim)


#: the tensor of the token vectors in a WordLlama weights file (``WordLlama._load``'s default)
_TENSOR = "embedding.weight"
#: what a WordLlama config is named like (``l2_supercat``); anything else goes to its loader
_CONFIG_NAME = re.compile(r"[a-z0-9_]+")


def _from_files(package_dir: Path, config: str, weights_dim: int) -> _Model | None:
    """The model read from the package's files as ``WordLlama.load`` reads them, or None where
    they are not as this wordllama lays them out."""
    import numpy as np

    if not _CONFIG_NAME.fullmatch(config):
        return None  # wordllama's loader refuses it in its own words
    try:
        from safetensors import safe_open
        from tokenizers import Tokenizer
    except ImportError:
        return None
    weights = package_dir / "weights" / f"{config}_{weights_dim}.safetensors"
    tokenizer_file = package_dir / "tokenizers" / f"{config}_tokenizer_config.json"
    if not (weights.is_file() and tokenizer_file.is_file()):
        return None
    try:
        with safe_open(str(weights), framework="np", device="cpu") as f:
            if _TENSOR not in f.keys():
                return None
            embedding = f.get_tensor(_TENSOR)
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as exc:  # noqa: BLE001  tokenizers raises plain Exception; wordllama's loader then decides
        log.debug("WordLlama %s files not read directly (%s); loading through wordllama", config, exc)
        return None
    return _Model(np.ascontiguousarray(embedding.astype(np.float32)), _unpadded(tokenizer))


def _unpadded(tokenizer: Any) -> Any:
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def _library_model(package_dir: Path, config: str, weights_dim: int, trunc_dim: int | None) -> Any:
    """``WordLlama.load`` from the installed package's folder, never downloading."""
    wordllama = _import_wordllama()
    try:
        # Why: cache_dir is the package folder. WordLlama looks for weights in
        # <package>/weights/ first, but for the tokenizer it tries <package>/tokenizer/ (singular)
        # and then <cache_dir>/tokenizers/, where the wheel actually ships it.
        return wordllama.WordLlama.load(
            config=config,
            dim=weights_dim,
            trunc_dim=trunc_dim,
            cache_dir=package_dir,
            disable_download=True,
        )
    except (FileNotFoundError, ValueError, AttributeError) as exc:
        raise ConfigurationError(f"cannot load WordLlama {config!r} at {trunc_dim or weights_dim} dims offline: {exc}") from exc


def _from_library(package_dir: Path, config: str, weights_dim: int, trunc_dim: int | None) -> _Model:
    from tokenizers import Tokenizer

    model = _library_model(package_dir, config, weights_dim, trunc_dim)
    # a copy: the model's own tokenizer stays as WordLlama configured it (padding on)
    return _Model(model.embedding, _unpadded(Tokenizer.from_str(model.tokenizer.to_str())))


class WordLlamaEmbedder:
    """Symmetric static embeddings; unit length; ``input_type`` is checked but ignored.

    The model is loaded on the first ``embed`` (or ``load()``) and shared by every instance
    with the same ``config`` and ``dim`` in the process; loading is thread-safe.
    ``dim`` may be any size the model was trained for that is not larger than the shipped
    weights (256 for ``l2_supercat``; 64 and 128 are truncations of it).
    """

    def __init__(self, config: str = "l2_supercat", *, dim: int = 256) -> None:
        check_text(config, "WordLlama config")
        check_int(dim, "WordLlama dim", minimum=1)
        self.config = config
        self.dimensions = dim
        self.name = f"wordllama-{config}-{dim}"

    @property
    def description(self) -> str:
        return f"{self.name} (WordLlama static embeddings from the installed wheel; offline; {self.dimensions} dims)"

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder({self.config!r}, dim={self.dimensions})"

    def load(self) -> WordLlamaEmbedder:
        """Load the model and its tokenizer now (otherwise on first use); returns ``self``."""
        _pooler(self.config, self.dimensions)
        return self

    def embed(self, texts: Sequence[str], *, input_type: InputType = "document") -> list[list[float]]:
        check_input_type(input_type)
        items = check_texts(texts)
        if not items:
            return []
        import numpy as np

        matrix = np.asarray(_pooler(self.config, self.dimensions).mean_vectors(list(items)), dtype=np.float64)
        norms = np.linalg.norm(matrix, axis=1)
        empty = np.flatnonzero(norms == 0)
        if empty.size:
            raise InputError(f"text {int(empty[0])} has no token the WordLlama vocabulary knows")
        return (matrix / norms[:, None]).tolist()
