"""The error every wrong or missing setting raises, whichever core module finds it."""


class SettingsError(ValueError):
    """A setting is missing or wrong; the message says which and where to set it."""
