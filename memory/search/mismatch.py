"""Why a memory indexed with another embedding model (or other prefixes) is refused, in words that say what to do
(pure)."""
from __future__ import annotations

PREFIXES = "+prefixes:"  # what a server embedder's name records its prefixes after (`embedding_server.server_name`)


def mismatch_text(where: str, recorded: str, recorded_dim: str, name: str, dim: int) -> str:
    """Why a memory indexed with another model is refused, and what to do: `where` is the database as shown (a file,
    or a server's URL without its password); when only the prefixes differ, the prefixes are named, not the model."""
    model = name.split(PREFIXES)[0]
    if recorded.split(PREFIXES)[0] == model and recorded_dim == str(dim):
        return (f"The memory in {where} was indexed with other prefixes for the embedding model {model}"
                " (MNEMO_EMBEDDING_QUERY_PREFIX, MNEMO_EMBEDDING_DOCUMENT_PREFIX). Run `mnemo reindex` to embed it"
                " again with the new ones, or set the prefixes back.")
    return (f"The memory in {where} was indexed with the embedding model {recorded} ({recorded_dim} dims), but {name}"
            f" ({dim} dims) is configured. Run `mnemo reindex` to move the memory to the new model, or set"
            " MNEMO_EMBEDDING_MODEL back to the recorded one.")
