"""The default offline embedder: WordLlama static token embeddings, shipped inside its wheel.

WordLlama averages per-token vectors (numpy only, no torch), so it is fast on a CPU and its
weights sit in the installed ``wordllama`` package. We load them from there and never let it
download: ``WordLlama.load`` otherwise looks in ``~/.cache/wordllama`` and fetches from the
Hugging Face hub.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
from collections.abc import Iterator, Sequence
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

_INSTALL_HINT = 'pip install "kgrag-neo4j"  (wordllama is a core dependency)'

_models: dict[tuple[str, int], Any] = {}
_models_lock = threading.Lock()


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


def _shipped_dims(package_dir: Path, config: str) -> list[int]:
    """Dimensions whose weights are in the installed package (``weights/<config>_<dim>.safetensors``)."""
    dims = []
    for path in (package_dir / "weights").glob(f"{config}_*.safetensors"):
        suffix = path.stem[len(config) + 1 :]
        if suffix.isdigit():
            dims.append(int(suffix))
    return sorted(dims)


def _load(config: str, dim: int) -> Any:
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
    float32 sums (in another order), then the mean; for the 3,141 MuSiQue paragraphs in batches
    of 64, 0.11 s against 0.38 s for gathering every token's vector and ``np.add.reduceat``,
    and 1.48 s for WordLlama's own."""

    #: texts per count matrix: at most SLICE x vocabulary float32 (4 MB for 32,000 tokens)
    SLICE = 32

    def __init__(self, model: Any) -> None:
        from tokenizers import Tokenizer

        self.matrix = model.embedding
        # a copy: the model's own tokenizer stays as WordLlama configured it (padding on)
        self.tokenizer = Tokenizer.from_str(model.tokenizer.to_str())
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
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


def _load_uncached(config: str, dim: int) -> Any:
    wordllama = _import_wordllama()
    package_dir = Path(wordllama.__file__).parent
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
        raise ConfigurationError(f"cannot load WordLlama {config!r} at {dim} dims offline: {exc}") from exc


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
