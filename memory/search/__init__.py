"""How what is remembered is found: the embedder, the index, the retrievers and the fusion that ranks them."""
