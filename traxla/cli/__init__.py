"""The command-line tools behind ``python -m traxla``: inspect, cache, exported,
profile-dispatch, bench and the coverage tables."""
