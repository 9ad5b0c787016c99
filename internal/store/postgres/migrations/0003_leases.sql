-- Worker leases: one row per Connection, the fence every hop call is
-- checked against. Acquisitions and releases are also events, for audit; a renewal only
-- moves expires_at, so it wakes no held call. expires_at is nanoseconds since 1970 UTC.
CREATE TABLE worker_leases (
	project    TEXT    NOT NULL REFERENCES projects (id),
	connection TEXT    PRIMARY KEY REFERENCES connections (id),
	worker_id  TEXT    NOT NULL,
	generation BIGINT  NOT NULL CHECK (generation >= 0),
	expires_at BIGINT  NOT NULL
);
