"""Domain errors. The CLI turns each into a message and an exit code at the edge."""

from __future__ import annotations


class RepobriefError(Exception):
    """Base class: a problem the user can fix. `hint` says how."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message}\n  hint: {self.hint}"


class UsageError(RepobriefError):
    """A flag or argument has an invalid value."""

    exit_code = 2


class ConfigError(RepobriefError):
    """The configuration file or environment has a bad option (`option`, when one is named)."""

    exit_code = 3

    def __init__(self, message: str, hint: str | None = None, *, option: str | None = None) -> None:
        super().__init__(message, hint)
        self.option = option


class SourceError(RepobriefError):
    """The source (a git clone, an API) cannot be read."""

    exit_code = 4


class EngineError(RepobriefError):
    """An analysis engine cannot run at all (not a per-PR failure, which falls back)."""

    exit_code = 5


class StoreError(RepobriefError):
    """The store cannot be opened or written."""

    exit_code = 6


class PublishError(RepobriefError):
    """A publish target refused or could not be reached."""

    exit_code = 7
