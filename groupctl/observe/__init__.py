"""groupctl.observe: reading groups, and one pipeline that turns what is read into events.

    sources/ -> story/ -> events -> sinks/ and state/ (the reducer)
         (reads/: the read model and the cluster reads they share)

- **Sources** (sources/; what the Watcher asks of one: sources/interface.py, GroupSource)
  yield typed observations (sources/observations.py), each with the time it was made and
  a label that becomes the events' `source`: `Seen(group, at, source, desc)` (a
  GroupDescription), `Missing`, `Appeared`, and the faults `ContactLost` /
  `ContactRegained` / `ContactLate` (decided in one place: sources/contact.py). The describe poller (sources/poller.py, `DescribePoller`: `--all`
  relisting, back-off, "this group's type only") is the one place that describes groups
  in a loop: `watch`, `wait`, the KIP-848 probe, force-rebalance's waits and the CLI use
  it. A replay of the coordinator's records yields the same `Seen` with the records'
  timestamps ("records"): `history` (sources/history.py) reads them once, `watch --source
  records` tails them (sources/records_tail.py, `RecordsTail`: long-poll Fetch through
  client/topic_tail.py); the probe's own member adds BeforeJoin, MemberState,
  RebalanceNoticed, MemberSynced and GenerationDescribed ("probe").
- **The story** (story/story.py): one `RebalanceStory` per group, `feed(observation) ->
  [Event]` its only entry: `snapshot` on the first look (and after a gap), `state`,
  `type_changed`, `generation` / `epoch`, members joined and left, assignments, and one
  `rebalance` per settled round (a round whose start was not seen: `started` null, the
  duration a lower bound).
- **Events** (groupctl/events.py): the event vocabulary (EventKind), put in the envelope
  (`envelope(event, group=, source=, at=, cluster=)`).
- **Sinks and the reducer**: the ndjson / record / live-view sinks (render/watch.py), the
  metrics (sinks/), and one reducer (state/reducer.py: `Reducer.apply(event) ->
  GroupStatus`) whose per-group state the live view, `watch`'s summary, `wait`'s
  conditions and the metrics read: what the story told, folded (the story owns what was
  observed; ARCHITECTURE.md, "One owner each").

reads/: describe.py and described.py (the one describe path: every type's API batched per
coordinator), listing.py, offsets.py, model.py (the read model), snapshot.py (one-shot
looks). At the top: watch.py (the Watcher) and wait.py put the pipeline together.
"""
