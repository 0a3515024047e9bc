"""Errors a user must act on: each carries one message that names the culprit."""

from __future__ import annotations


class SpitagError(Exception):
    """Base of SpiTag's own errors."""


class BadInputError(SpitagError):
    """A seed, an argument or a setting is wrong; raised before the crawl starts."""


class BackendUnavailableError(SpitagError):
    """A store or frontier backend cannot be reached or opened."""


class FrontierUnavailableError(BackendUnavailableError):
    """The frontier's server did not answer (restarting, network): try again later."""
