"""check: cross-compile each config for each target and judge whether it can launch."""
