"""SpiTag: a focused crawler that goes where the semantic content is."""
