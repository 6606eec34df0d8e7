"""compile: one ``triton.compile`` per (kernel, launch spec, config, target), for GPUs we do not have.

It takes ``CompileJob``s (``evidence.py``) and gives ``CompileOutcome``s: the SMEM, registers and
spills the compiler and ``cuobjdump`` report, or the error. ``crosscompile`` runs one compile,
``early_smem`` stops one whose shared memory already cannot launch, ``compile_pool`` runs many
(cache first, misses in processes), ``compile_stream`` feeds one pool for a whole run,
``compile_farm`` sends misses to a Dask cluster, ``compile_cache`` keeps outcomes on disk."""
