"""dragoman: a self-hosted batch machine-translation service."""

__version__ = "0.1.0"
