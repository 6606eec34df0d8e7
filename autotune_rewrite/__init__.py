"""autotune-rewrite: make @triton.autotune configs launchable on the GPU you ship to."""

__version__ = "0.1.0"
