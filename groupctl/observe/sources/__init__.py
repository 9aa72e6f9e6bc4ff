"""Sources: what yields observations (observations.py) for the story, through one interface
(interface.py, what the Watcher asks of a source): the describe poller (poller.py), the
tail of the coordinator's records (records_tail.py, with each group's past:
records_past.py), `history`'s replay of them (history.py), and beside them the lag poller
(lag.py)."""
