-- Docket store schema, SQLite dialect. The PostgreSQL folder holds the same tables.
-- Times are INTEGER nanoseconds since 1970 UTC; digests and hashes are BLOBs.

CREATE TABLE event_heads (
	project TEXT PRIMARY KEY,
	seq     INTEGER NOT NULL,
	hash    BLOB    NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE events (
	project   TEXT    NOT NULL,
	seq       INTEGER NOT NULL,
	id        TEXT    NOT NULL,
	type      TEXT    NOT NULL,
	at        INTEGER NOT NULL,
	actor     TEXT    NOT NULL,
	data      BLOB,            -- NULL when the data is in blobs under data_hash
	data_hash BLOB    NOT NULL,
	prev_hash BLOB    NOT NULL,
	hash      BLOB    NOT NULL,
	PRIMARY KEY (project, seq),
	UNIQUE (project, id) -- an id names one event: a retried write is refused, not doubled
) STRICT, WITHOUT ROWID;

-- Events are immutable.
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
BEGIN SELECT RAISE(ABORT, 'events are immutable'); END;
CREATE TRIGGER events_no_delete BEFORE DELETE ON events
BEGIN SELECT RAISE(ABORT, 'events are immutable'); END;

CREATE TABLE blobs (
	hash BLOB PRIMARY KEY,
	data BLOB NOT NULL
) STRICT;

CREATE TABLE installation (
	id  INTEGER PRIMARY KEY CHECK (id = 1),
	key BLOB NOT NULL
) STRICT;

CREATE TABLE projects (
	id         TEXT PRIMARY KEY,
	name       TEXT    NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE members (
	id              TEXT PRIMARY KEY,
	name            TEXT    NOT NULL UNIQUE,
	passphrase_hash BLOB    NOT NULL,
	created_at      INTEGER NOT NULL,
	revoked_at      INTEGER
) STRICT;

CREATE TABLE memberships (
	project TEXT NOT NULL REFERENCES projects (id),
	member  TEXT NOT NULL REFERENCES members (id),
	PRIMARY KEY (project, member)
) STRICT;
CREATE INDEX memberships_member ON memberships (member);

CREATE TABLE sessions (
	token_digest BLOB PRIMARY KEY,
	member       TEXT    NOT NULL REFERENCES members (id),
	created_at   INTEGER NOT NULL,
	expires_at   INTEGER NOT NULL,
	revoked_at   INTEGER
) STRICT;
CREATE INDEX sessions_member ON sessions (member);

CREATE TABLE agents (
	id           TEXT PRIMARY KEY,
	project      TEXT    NOT NULL REFERENCES projects (id),
	name         TEXT    NOT NULL,
	kind         TEXT    NOT NULL CHECK (kind IN ('agent', 'orchestrator')),
	token_digest BLOB    NOT NULL UNIQUE,
	created_at   INTEGER NOT NULL,
	revoked_at   INTEGER,
	UNIQUE (project, name)
) STRICT;

CREATE TABLE connections (
	id             TEXT PRIMARY KEY,
	project        TEXT    NOT NULL REFERENCES projects (id),
	name           TEXT    NOT NULL,
	key_ciphertext BLOB    NOT NULL,
	created_at     INTEGER NOT NULL,
	revoked_at     INTEGER,
	UNIQUE (project, name)
) STRICT;

CREATE TABLE sources (
	connection TEXT NOT NULL REFERENCES connections (id),
	id         TEXT NOT NULL,
	digest     BLOB NOT NULL,
	data       BLOB NOT NULL,
	PRIMARY KEY (connection, id)
) STRICT;

CREATE TABLE tool_locks (
	connection TEXT NOT NULL REFERENCES connections (id),
	tool       TEXT NOT NULL,
	digest     BLOB NOT NULL,
	PRIMARY KEY (connection, tool)
) STRICT;

CREATE TABLE releases (
	id           TEXT    NOT NULL,
	version      TEXT    NOT NULL,
	digest       BLOB    NOT NULL,
	content_hash BLOB    NOT NULL REFERENCES blobs (hash),
	created_at   INTEGER NOT NULL,
	PRIMARY KEY (id, version)
) STRICT;

-- Releases are immutable.
CREATE TRIGGER releases_no_update BEFORE UPDATE ON releases
BEGIN SELECT RAISE(ABORT, 'releases are immutable'); END;

CREATE TABLE installs (
	project      TEXT    NOT NULL REFERENCES projects (id),
	release_id   TEXT    NOT NULL,
	version      TEXT    NOT NULL,
	installed_at INTEGER NOT NULL,
	PRIMARY KEY (project, release_id),
	FOREIGN KEY (release_id, version) REFERENCES releases (id, version)
) STRICT;

CREATE TABLE nodes (
	project TEXT NOT NULL REFERENCES projects (id),
	id      TEXT NOT NULL,
	kind    TEXT NOT NULL,
	data    BLOB NOT NULL,
	PRIMARY KEY (project, id)
) STRICT;
