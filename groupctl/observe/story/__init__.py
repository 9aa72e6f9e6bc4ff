"""The story: one RebalanceStory per group (story.py) turns observations into events; its
helpers: a round's life and figures (round.py), KIP-848 convergence (convergence.py), the
cost of a round in unowned partition time (unowned.py), a new coordinator's stale looks
(story_stale.py), pure data (story_data.py), why a group rebalanced (reasons.py), and the
rebalance held for the lag read after it (lag_rounds.py)."""
