"""The reads the pipeline and one-shot commands share: the read model (model.py, share.py,
streams.py), the one describe path (describe.py), listing, offsets, the coordinator's
records decoded (records.py) and replayed into descriptions (replay.py), who may describe
what (acl.py), one-shot looks (snapshot.py)."""
