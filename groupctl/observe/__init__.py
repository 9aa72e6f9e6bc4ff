"""groupctl.observe: reading groups, and one pipeline that turns what is read into events.

    source -> story -> events -> sinks / reducer

- **Sources** (source.py) yield typed observations (observations.py), each with the time
  it was made and a label that becomes the events' `source`: `Seen(group, at, source,
  desc)` (a GroupDescription), `Missing`, `Appeared`, and the faults `ContactLost` /
  `ContactRegained`. The describe poller (`DescribePoller`: `--all` relisting, back-off,
  "this group's type only") is the one place that describes groups in a loop: `watch`,
  `wait`, the KIP-848 probe, force-rebalance's waits and the CLI use it. A replay of the
  coordinator's records yields the same `Seen` with the records' timestamps ("records"):
  `history` (history.py) reads them once, `watch --source records` tails them live
  (records_source.py, `RecordsTail`: long-poll Fetch through client/topic_tail.py);
  the probe's own member adds BeforeJoin, MemberState, RebalanceNoticed, MemberSynced and
  GenerationDescribed ("probe").
- **The story** (story.py): one `RebalanceStory` per group, `feed(observation) ->
  [Event]` its only entry: `snapshot` on the first look (and after a gap), `state`,
  `type_changed`, `generation` / `epoch`, members joined and left, assignments, and one
  `rebalance` per settled round (a round whose start was not seen: `started` null, the
  duration a lower bound).
- **Events** (groupctl/events.py): the event vocabulary (EventKind), put in the envelope
  (`envelope(event, group=, source=, at=, cluster=)`).
- **Sinks and the reducer**: the ndjson / record / live-view sinks (render/watch.py), and
  one reducer (reducer.py: `Reducer.apply(event) -> GroupStatus`) whose per-group state the
  live view, `watch`'s summary, `wait`'s conditions and a metrics exporter read.

Besides: describe.py (the one describe path: every type's API batched per coordinator),
listing.py, offsets.py, model.py (the read model), snapshot.py (one-shot looks), wait.py.
"""
