"""Typer commands: parse options, call observe/coordinator, hand results to render."""
