"""A series is compared with the median of the *other* series: itself left out, ties handled."""

import random
from statistics import median

from lazarus.straggler.detector import _median_without


def test_the_peer_median_equals_the_median_of_the_others():
    rng = random.Random(7)
    for _ in range(500):
        values = [rng.choice([1.0, 2.0, 3.0, rng.random()]) for _ in range(rng.randint(2, 12))]
        left_out = rng.choice(values)
        others = list(values)
        others.remove(left_out)
        assert _median_without(sorted(values), left_out) == median(others)
