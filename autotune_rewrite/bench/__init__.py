"""``bench``: A/B the configs of each rewrite variant on the local GPU (see ``run.run_bench``).

Modules: ``plan`` (which configs, from the rewrite pipeline's decisions), ``inputs`` (the user's
bench entry point), ``timing`` (GPU), ``recommend`` (pure), ``results`` (JSON), ``plot`` (PNG).
"""
