"""What is embedded for an entity: one function, shared by the whole build, the maintained
graph and the re-embed."""

from __future__ import annotations

from ..types.entities import Entity

__all__ = ["entity_embedding_text"]


def entity_embedding_text(entity: Entity) -> str:
    """What is embedded for an entity: its description, prefixed by its name so that a
    description that never names its entity is still found by the name."""
    if not entity.description:
        return entity.name
    return f"{entity.name}: {entity.description}"
