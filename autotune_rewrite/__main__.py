from autotune_rewrite.cli import main

# Guarded: process-pool workers started with "spawn" (macOS) import __main__ again.
if __name__ == "__main__":
    main()
