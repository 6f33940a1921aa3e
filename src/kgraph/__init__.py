"""kgraph: a knowledge graph of pull-request review digests."""

__version__ = "0.1.0"
