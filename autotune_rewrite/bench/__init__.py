"""bench: A/B the configs of each rewrite variant on the local GPU (``bench.run_bench``).

It takes a kernel, its variants' decisions (``plan``, through ``rewrite.diff.decide_compiled``)
and the user's bench entry point (``inputs``), times every config per batch size (``timing``),
and gives a ``BenchResult`` with a recommendation (``timings/recommend.py``), saved as JSON
(``timings/bench_results.py``) for the rewrite and ``apply`` to read, and a PNG (``plot``)."""
