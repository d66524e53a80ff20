import os

from hypothesis import HealthCheck, settings

# CI runs derandomised (same examples every run); locally the default profile
# explores new examples each time.
settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
