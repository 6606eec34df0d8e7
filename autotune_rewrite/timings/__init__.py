"""Bench timings as data: what ``bench`` measured on a GPU (``bench_results``: the saved JSON of
one run, per config and batch) and what the timings recommend (``recommend``: a variant from the
numbers, pure). ``bench`` writes them; the rewrite (``rewrite/measured``) and ``apply`` read
them, so neither stage imports the other to share them."""
