"""The `decode` command group, apart from its commands so that both of its modules can add
to it without importing each other: offline.py (consumer-protocol bytes) and records.py
(`__consumer_offsets` segment files)."""
from __future__ import annotations

import typer

from .app import app

decode_app = typer.Typer(
    name="decode",
    help="Decode offline: consumer-protocol bytes (JoinGroup metadata, SyncGroup "
         "assignment, sticky user data) and `records`, the group coordinator's records in "
         "__consumer_offsets segment files. Never touches the network.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
)
app.add_typer(decode_app, name="decode")
