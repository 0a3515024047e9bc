"""What a host's name says about its semantic richness, learnt during the crawl.

Before a site's first page is fetched, its URL is all a crawler knows of it. Host
names carry real signal: sites under one registered domain share a platform and its
templates (``*.wordpress.com``, ``*.blogspot.com``), public suffixes and name words
track the kind of site (``news``, ``zeitung``, ``magazin``, ``.com.br`` news portals),
as in URL-based page classification (Kan & Thi 2005; Baykan et al. 2009). Nothing is
assumed about which names are rich: a ridge regression learns it from the site means
the crawl has measured, so it adapts to whatever correlation the crawled web has, and
predicts "average" when there is none.

Model: ``log(1 + mean score of site) = μ + Σ_f w_f`` over the binary features f of the
host name (public suffix, registered domain, first subdomain label, word tokens, and
character 4-grams of the domain label), fitted by a few sweeps of coordinate descent on
the ridge objective ``Σ_i (y_i − μ − x_i·w)² + λ·|w|²`` (exact per coordinate, warm
started). Cost: a few sweeps over ~20 features per learnt site, pure Python; the model
learns from the first ``max_sites`` sites (2,000: a refit then takes ~0.05 s, and the
crawler refits when the pages learnt grew by 2 %), later sites only update the means
of those.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from functools import lru_cache

from spitag.urls import registered_domain, split_host

_WORD = re.compile(r"[a-z0-9]+")
NGRAM = 4


@lru_cache(maxsize=65536)
def host_features(host: str) -> tuple[str, ...]:
    """The binary features of a host name (see the module docstring)."""
    subdomain, domain, suffix = split_host(host)
    if not suffix:  # an IP address, or a name the public suffix list does not know
        return ("host:" + host.lower(),)
    features = {"sfx:" + suffix, "dom:" + registered_domain(host)}
    first = subdomain.split(".", 1)[0] if subdomain else ""
    features.add("sub:" + first)
    for word in _WORD.findall(f"{subdomain}.{domain}"):
        features.add("tok:" + word)
    padded = f"^{domain}$"
    for i in range(len(padded) - NGRAM + 1):
        features.add("g4:" + padded[i : i + NGRAM])
    return tuple(sorted(features))


class HostNameModel:
    """Online ridge regression of log(1 + site mean score) on host-name features.

    ``learn(host, mean)`` records (or updates) a site's measured mean;
    ``refit()`` runs the coordinate-descent sweeps; ``deviation(host)`` is the
    predicted log-ratio of the host's value to an average site's (0 until
    ``min_sites`` sites are learnt, and 0 for a name with no learnt feature).
    """

    def __init__(
        self, ridge: float = 3.0, sweeps: int = 4, min_sites: int = 8, clip: float = 2.0, max_sites: int = 2000
    ) -> None:
        self.ridge = ridge
        self.max_sites = max_sites
        self.sweeps = sweeps
        self.min_sites = min_sites
        self.clip = clip
        self.targets: dict[str, float] = {}  # host → log(1 + mean)
        self.weights: dict[str, float] = defaultdict(float)
        self._members: dict[str, list[str]] = defaultdict(list)  # feature → learnt hosts
        self._fitted = False

    def learn(self, host: str, mean: float) -> None:
        if host not in self.targets:
            if len(self.targets) >= self.max_sites:
                return
            for f in host_features(host):
                self._members[f].append(host)
        self.targets[host] = math.log1p(max(mean, 0.0))

    def refit(self) -> None:
        n = len(self.targets)
        if n < self.min_sites:
            self._fitted = False
            return
        mu = sum(self.targets.values()) / n
        w = self.weights
        # residual r_i = y_i − μ − Σ_f w_f, kept up to date per coordinate
        resid = {h: y - mu - sum(w[f] for f in host_features(h)) for h, y in self.targets.items()}
        for _ in range(self.sweeps):
            for f, hosts in self._members.items():
                old = w[f]
                # minimise Σ_{i∋f} (r_i + old − w_f)² + λ w_f²
                new = sum(resid[h] for h in hosts) / (len(hosts) + self.ridge) + old * len(hosts) / (
                    len(hosts) + self.ridge
                )
                if new != old:
                    delta = new - old
                    w[f] = new
                    for h in hosts:
                        resid[h] -= delta
        self._fitted = True

    def deviation(self, host: str) -> float:
        """Predicted log(value / average value) of ``host``'s pages, clipped to ±clip."""
        if not self._fitted:
            return 0.0
        w = self.weights
        dev = sum(w.get(f, 0.0) for f in host_features(host))
        return max(-self.clip, min(self.clip, dev))
