-- Docket store schema, PostgreSQL dialect. The SQLite folder holds the same tables.
-- Times are BIGINT nanoseconds since 1970 UTC; digests and hashes are BYTEA.

CREATE TABLE event_heads (
	project TEXT PRIMARY KEY,
	seq     BIGINT  NOT NULL,
	hash    BYTEA NOT NULL
);

CREATE TABLE events (
	project   TEXT    NOT NULL,
	seq       BIGINT  NOT NULL,
	id        TEXT    NOT NULL,
	type      TEXT    NOT NULL,
	at        BIGINT  NOT NULL,
	actor     TEXT    NOT NULL,
	data      BYTEA,            -- NULL when the data is in blobs under data_hash
	data_hash BYTEA NOT NULL,
	prev_hash BYTEA NOT NULL,
	hash      BYTEA NOT NULL,
	PRIMARY KEY (project, seq),
	UNIQUE (project, id) -- an id names one event: a retried write is refused, not doubled
);

-- Events are immutable: no path in the code updates or deletes them, and
-- this trigger refuses anyone who tries with SQL.
CREATE FUNCTION docket_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION '% rows are immutable', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END $$;
CREATE TRIGGER events_immutable BEFORE UPDATE OR DELETE ON events
	FOR EACH ROW EXECUTE FUNCTION docket_refuse_change();

CREATE TABLE blobs (
	hash BYTEA PRIMARY KEY,
	data BYTEA NOT NULL
);

CREATE TABLE installation (
	id  BIGINT  PRIMARY KEY CHECK (id = 1),
	key BYTEA NOT NULL
);

CREATE TABLE projects (
	id         TEXT PRIMARY KEY,
	name       TEXT    NOT NULL,
	created_at BIGINT  NOT NULL
);

CREATE TABLE members (
	id              TEXT PRIMARY KEY,
	name            TEXT    NOT NULL UNIQUE,
	passphrase_hash BYTEA NOT NULL,
	created_at      BIGINT  NOT NULL,
	revoked_at      BIGINT 
);

CREATE TABLE memberships (
	project TEXT NOT NULL REFERENCES projects (id),
	member  TEXT NOT NULL REFERENCES members (id),
	PRIMARY KEY (project, member)
);
CREATE INDEX memberships_member ON memberships (member);

CREATE TABLE sessions (
	token_digest BYTEA PRIMARY KEY,
	member       TEXT    NOT NULL REFERENCES members (id),
	created_at   BIGINT  NOT NULL,
	expires_at   BIGINT  NOT NULL,
	revoked_at   BIGINT 
);
CREATE INDEX sessions_member ON sessions (member);

CREATE TABLE agents (
	id           TEXT PRIMARY KEY,
	project      TEXT    NOT NULL REFERENCES projects (id),
	name         TEXT    NOT NULL,
	kind         TEXT    NOT NULL CHECK (kind IN ('agent', 'orchestrator')),
	token_digest BYTEA NOT NULL UNIQUE,
	created_at   BIGINT  NOT NULL,
	revoked_at   BIGINT ,
	UNIQUE (project, name)
);

CREATE TABLE connections (
	id             TEXT PRIMARY KEY,
	project        TEXT    NOT NULL REFERENCES projects (id),
	name           TEXT    NOT NULL,
	key_ciphertext BYTEA NOT NULL,
	created_at     BIGINT  NOT NULL,
	revoked_at     BIGINT ,
	UNIQUE (project, name)
);

CREATE TABLE sources (
	connection TEXT NOT NULL REFERENCES connections (id),
	id         TEXT NOT NULL,
	digest     BYTEA NOT NULL,
	data       BYTEA NOT NULL,
	PRIMARY KEY (connection, id)
);

CREATE TABLE tool_locks (
	connection TEXT NOT NULL REFERENCES connections (id),
	tool       TEXT NOT NULL,
	digest     BYTEA NOT NULL,
	PRIMARY KEY (connection, tool)
);

CREATE TABLE releases (
	id           TEXT    NOT NULL,
	version      TEXT    NOT NULL,
	digest       BYTEA NOT NULL,
	content_hash BYTEA NOT NULL REFERENCES blobs (hash),
	created_at   BIGINT  NOT NULL,
	PRIMARY KEY (id, version)
);

-- Releases are immutable.
CREATE TRIGGER releases_immutable BEFORE UPDATE ON releases
	FOR EACH ROW EXECUTE FUNCTION docket_refuse_change();

CREATE TABLE installs (
	project      TEXT    NOT NULL REFERENCES projects (id),
	release_id   TEXT    NOT NULL,
	version      TEXT    NOT NULL,
	installed_at BIGINT  NOT NULL,
	PRIMARY KEY (project, release_id),
	FOREIGN KEY (release_id, version) REFERENCES releases (id, version)
);

CREATE TABLE nodes (
	project TEXT NOT NULL REFERENCES projects (id),
	id      TEXT NOT NULL,
	kind    TEXT NOT NULL,
	data    BYTEA NOT NULL,
	PRIMARY KEY (project, id)
);

-- Every commit that moves a log's head tells the instances sharing this database, so their
-- waiters (Store.Wait, SSE streams) wake without polling. NOTIFY is sent at
-- commit and folds repeats of one payload within a transaction.
CREATE FUNCTION docket_notify_head() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('docket_events', NEW.project);
	RETURN NULL;
END $$;
CREATE TRIGGER event_heads_notify AFTER INSERT OR UPDATE ON event_heads
	FOR EACH ROW EXECUTE FUNCTION docket_notify_head();
