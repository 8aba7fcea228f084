"""Speed and concurrency benchmarks (``engram bench``); peers are optional extras."""
