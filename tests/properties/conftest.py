"""One Hypothesis profile for every property test: reproducible, bounded in time.

``derandomize=True`` makes each run explore the same examples (CI and a laptop
agree, and a failure found once is found again); ``database=None`` keeps no
state between runs. ``deadline=None`` because the CI machine has two busy
cores: a slow example is not a failure. Set ``HYPOTHESIS_PROFILE=thorough`` to
search ten times as many examples locally.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=100,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "thorough",
    parent=settings.get_profile("ci"),
    max_examples=600,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
