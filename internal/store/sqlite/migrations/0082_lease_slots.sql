-- Several workers per Connection: a Connection's leases are rows by slot, each its own
-- fenced lease (worker, generation, expiry). Generations still grow per Connection, across
-- all its slots, so a generation names one lease. Slot 0 always exists once a lease was
-- locked: every hop call locks it first, so it serializes a Connection's hop calls.
CREATE TABLE worker_leases_slots (
	project    TEXT    NOT NULL REFERENCES projects (id),
	connection TEXT    NOT NULL REFERENCES connections (id),
	slot       INTEGER NOT NULL CHECK (slot >= 0),
	worker_id  TEXT    NOT NULL,
	generation INTEGER NOT NULL CHECK (generation >= 0),
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (connection, slot)
) STRICT, WITHOUT ROWID;
INSERT INTO worker_leases_slots (project, connection, slot, worker_id, generation, expires_at)
	SELECT project, connection, 0, worker_id, generation, expires_at FROM worker_leases;
DROP TABLE worker_leases;
ALTER TABLE worker_leases_slots RENAME TO worker_leases;
