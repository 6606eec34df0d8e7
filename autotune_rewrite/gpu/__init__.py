"""gpu: launch specs and figures read off a real GPU's run: ``capture`` (Triton's hooks in a live
program, or a tritonparse trace) gives ``[[kernels]]`` spec tables; ``inspect_cache`` reads a
production Triton cache (SMEM, registers, spills, the autotuner's timings)."""
