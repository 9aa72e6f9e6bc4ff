"""Offline commands: decode, errors (filled in by the protocol work)."""
