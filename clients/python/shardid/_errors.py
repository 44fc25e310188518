"""The error type of the shardid client: a ValueError with an SQLSTATE."""


class ShardidError(ValueError):
    """An input the extension refuses too.

    ``sqlstate`` is the SQLSTATE the extension raises for the same input
    (22003 a number out of range, 22008 a time out of range, 22023 a bad
    argument, 22P02 bad text, 55000 no public-ID keys configured; for JSON
    also 22021 bytes that are not UTF-8 and 54001 nested too deep), the
    same as the JavaScript package's.
    """

    def __init__(self, sqlstate, message, hint=None):
        super().__init__(message if hint is None else f"{message} (hint: {hint})")
        self.sqlstate = sqlstate
        self.hint = hint
