-- A log's head moves into the events table (issue 17): one head row per log, keyed
-- (project || x'00', 0), which sorts right after the log's last event, so a commit that
-- appends to a log and moves its head changes one b-tree page where it changed two (the
-- event's leaf and event_heads' page), and each page a commit changes is one more WAL frame
-- and brings the next checkpoint closer. The head row's id is its project; head and
-- head_hash are the seq and hash of the log's last event (its event columns hold
-- placeholders). seq 0 is never an event's (the first is 1), so a log's events (project =
-- p AND seq > n) never include it, and neither does any other log's. A migration that
-- reads events by type reads no head row (its type is docket.head, which the store never
-- appends).
--
-- event_heads stays as the view of the head rows that the store's reads and raw SQL use;
-- an UPDATE of it moves the head row. The unique index on the head rows' ids finds a log's
-- head row and keeps it the only one; it holds one entry per log, written only when the
-- log's head row is created: an append neither adds to it nor changes the columns it holds.
ALTER TABLE events ADD COLUMN head INTEGER;   -- a head row's last seq; NULL on an event
ALTER TABLE events ADD COLUMN head_hash BLOB; -- a head row's last hash; NULL on an event

INSERT INTO events (project, seq, id, type, at, actor, data, data_hash, prev_hash, hash, head, head_hash)
	SELECT project || x'00', 0, project, 'docket.head', 0, '', NULL, x'', x'', x'', seq, hash FROM event_heads;

DROP TABLE event_heads;

CREATE UNIQUE INDEX events_heads ON events (id) WHERE seq = 0;

CREATE VIEW event_heads (project, seq, hash) AS SELECT id, head, head_hash FROM events WHERE seq = 0;

CREATE TRIGGER event_heads_update INSTEAD OF UPDATE ON event_heads
BEGIN UPDATE events SET head = NEW.seq, head_hash = NEW.hash WHERE seq = 0 AND id = OLD.project; END;

-- Events are immutable: no column of an event changes, and no event is deleted. head and
-- head_hash are not an event's (no read, hash or check of an event looks at them), so no
-- trigger watches them: moving a head runs no trigger program and needs no statement
-- journal.
DROP TRIGGER events_no_update;
CREATE TRIGGER events_no_update
BEFORE UPDATE OF project, seq, id, type, at, actor, data, data_hash, prev_hash, hash ON events
BEGIN SELECT RAISE(ABORT, 'events are immutable'); END;
DROP TRIGGER events_no_delete;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events WHEN OLD.seq <> 0
BEGIN SELECT RAISE(ABORT, 'events are immutable'); END;
