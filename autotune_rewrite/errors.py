"""Exit codes (decided here only) and the one exception type that means "bad input"."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0  # nothing to change / every config can launch
    FOUND = 1  # changes found, or some config cannot launch (the CI gate)
    ERROR = 2  # usage, configuration or internal error; nothing was written


class UserError(Exception):
    """Bad input the user can fix. The message is one line naming the file/kernel and the fix.

    Raised before anything is written; the CLI turns it into exit code 2.
    """
