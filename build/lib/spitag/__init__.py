"""SpiTag: a focused crawler that goes where the semantic content is."""

__version__ = "0.2.0"
