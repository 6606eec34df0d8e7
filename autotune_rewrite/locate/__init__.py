"""locate: every ``@triton.autotune`` site of a checkout, with its configs and launches.

It takes a folder or files and the settings, and gives a ``ScanResult`` (``model.py``): each
site's kernel and parameters, its configs resolved statically (per target where a device query
chooses them), its key, and every ``kernel[grid](...)`` launch that reaches it, followed across
imports. LibCST does the locating: ``focus`` picks what it parses, ``parsed`` holds a parsed
file, ``sites``/``kernels``/``launches`` read one file, ``facts`` is what a file says (the
worker's answer), ``linking`` joins files, ``per_target`` answers device queries as each target
would, ``scan`` runs it all and the ``*_cache`` modules keep it on disk."""
