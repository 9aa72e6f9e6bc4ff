"""State: the one owner of each group's state, the reducer (reducer.py), folding events
into what the live view, `watch`'s summary, `wait`'s conditions and the metrics read."""
